//! Numeric traits over the element types: integers as exact `i128`, floats as exact
//! `f64`, and the float accumulator types with their conversions from input types.

use std::ops::{Add, Mul};

use half::{bf16, f16};

use crate::value::IntoScalar;
use crate::Element;

/// An integer element type.
pub trait IntElement: Element + IntoScalar + Ord {
    /// The value, exactly.
    fn to_i128(self) -> i128;
    /// The value sign- or zero-extended to 64 bits, as raw bits: the form integer sums
    /// and products wrap in (wrapping arithmetic modulo 2^64 truncates exactly to any
    /// narrower accumulator).
    fn to_u64_bits(self) -> u64;
}

macro_rules! impl_int {
    ($($t:ty),*) => {
        $(impl IntElement for $t {
            #[inline(always)]
            fn to_i128(self) -> i128 { self as i128 }
            #[inline(always)]
            fn to_u64_bits(self) -> u64 { self as i64 as u64 }
        })*
    };
}
impl_int!(i8, i16, i32, i64);

macro_rules! impl_uint {
    ($($t:ty),*) => {
        $(impl IntElement for $t {
            #[inline(always)]
            fn to_i128(self) -> i128 { self as i128 }
            #[inline(always)]
            fn to_u64_bits(self) -> u64 { self as u64 }
        })*
    };
}
impl_uint!(u8, u16, u32, u64);

/// A floating-point element type.
pub trait FloatElement: Element + IntoScalar {
    /// The value, exactly (every supported float type embeds in f64).
    fn to_f64(self) -> f64;
    /// Whether the value is NaN.
    fn is_nan(self) -> bool {
        self.to_f64().is_nan()
    }
}

/// f16 → f32, exactly, without branches, so loops over it vectorize.
///
/// `half` converts with a CPU-feature check per element, which keeps f16 sums far from
/// memory speed. This is the bit-level conversion: move exponent and mantissa into
/// place and rebias; infinities and NaNs get the larger rebias; zeros and subnormals are
/// renormalized by one exact float subtraction. Every f16 maps to the f32 of the same
/// value (NaNs stay NaN), as the exhaustive test below checks.
#[inline(always)]
pub fn f16_to_f32(h: f16) -> f32 {
    const MAGIC: f32 = f32::from_bits(113 << 23);
    const SHIFTED_EXP: u32 = 0x7c00 << 13;
    let h = h.to_bits() as u32;
    let bits = (h & 0x7fff) << 13;
    let exp = bits & SHIFTED_EXP;
    let normal = bits + ((127 - 15) << 23);
    let inf_nan = normal + ((128 - 16) << 23);
    let subnormal = (f32::from_bits(normal + (1 << 23)) - MAGIC).to_bits();
    let magnitude = if exp == SHIFTED_EXP {
        inf_nan
    } else if exp == 0 {
        subnormal
    } else {
        normal
    };
    f32::from_bits(magnitude | ((h & 0x8000) << 16))
}

impl FloatElement for f16 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f16_to_f32(self) as f64
    }
}
impl FloatElement for bf16 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}
impl FloatElement for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}
impl FloatElement for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// A float accumulator type (f32 or f64).
pub trait AccFloat:
    FloatElement + Add<Output = Self> + Mul<Output = Self> + Default + 'static
{
    /// -0.0: the additive identity inside the canonical order (x + -0.0 == x for every x,
    /// including +0.0, which +0.0 as identity would turn -0.0 into).
    const NEG_ZERO: Self;
    /// +0.0: the sum of no elements, as numpy returns it.
    const POS_ZERO: Self;
    /// 1.0: the multiplicative identity.
    const ONE: Self;
}

impl AccFloat for f32 {
    const NEG_ZERO: Self = -0.0;
    const POS_ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}
impl AccFloat for f64 {
    const NEG_ZERO: Self = -0.0;
    const POS_ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}

/// A float input type that accumulates in `A` (the conversion is exact).
pub trait FloatInput<A: AccFloat>: FloatElement {
    /// Converts to the accumulator type, exactly.
    fn to_acc(self) -> A;

    /// `lanes[j] = combine(lanes[j], src[j].to_acc())` for every `j` (the slices have one
    /// length): how the canonical order folds one row of elements into its lanes. Types
    /// whose conversion has a faster form where the CPU allows it override this.
    #[inline(always)]
    fn combine_row(src: &[Self], lanes: &mut [A], combine: impl Fn(A, A) -> A + Copy) {
        for (lane, &s) in lanes.iter_mut().zip(src) {
            *lane = combine(*lane, s.to_acc());
        }
    }

    /// `lanes[j] = combine(low[j].to_acc(), high[j].to_acc())` for every `j` (the three
    /// slices have one length): the canonical fold's first step over a row of two full
    /// halves, read in one pass. Types with a faster [`FloatInput::combine_row`] take
    /// the halves in two passes through it.
    #[inline(always)]
    fn combine_pairs(
        low: &[Self],
        high: &[Self],
        lanes: &mut [A],
        combine: impl Fn(A, A) -> A + Copy,
    ) {
        for ((lane, &a), &b) in lanes.iter_mut().zip(low).zip(high) {
            *lane = combine(a.to_acc(), b.to_acc());
        }
    }
}

/// Rows shorter than this fold with the bit-level conversion: the F16C loop is a call
/// that cannot inline into code built without F16C, which a row of a few values would
/// not repay.
#[cfg(target_arch = "x86_64")]
const F16C_ROW: usize = 64;

impl FloatInput<f32> for f16 {
    #[inline(always)]
    fn to_acc(self) -> f32 {
        f16_to_f32(self)
    }

    /// The hardware conversion where the CPU has one (F16C, detected at run time), inside
    /// the loop that combines: eight halves per instruction where the bit-level
    /// conversion costs about a dozen operations per element, and no converted copy of
    /// the row written and read again. Exact for every value, so the same bits; a
    /// signaling NaN comes back quiet, which the sum would make of it anyway.
    #[inline(always)]
    fn combine_row(src: &[Self], lanes: &mut [f32], combine: impl Fn(f32, f32) -> f32 + Copy) {
        #[cfg(target_arch = "x86_64")]
        if src.len() >= F16C_ROW && std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has F16C (and so AVX), checked just above.
            unsafe { combine_row_f16c(src, lanes, combine) };
            return;
        }
        for (lane, &s) in lanes.iter_mut().zip(src) {
            *lane = combine(*lane, f16_to_f32(s));
        }
    }

    /// Through [`FloatInput::combine_row`], twice, for its F16C conversion.
    #[inline(always)]
    fn combine_pairs(
        low: &[Self],
        high: &[Self],
        lanes: &mut [f32],
        combine: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        Self::combine_row(low, lanes, |_, x| x);
        Self::combine_row(high, lanes, combine);
    }
}

/// [`FloatInput::combine_row`] of halves, eight at a time with F16C. The loop is compiled
/// for AVX, so the combine of eight lanes (inlined from the caller's closure) becomes
/// one vector operation.
///
/// # Safety
///
/// The CPU must have F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
unsafe fn combine_row_f16c(
    src: &[f16],
    lanes: &mut [f32],
    combine: impl Fn(f32, f32) -> f32 + Copy,
) {
    use std::arch::x86_64::{__m128i, _mm256_cvtph_ps, _mm256_storeu_ps, _mm_loadu_si128};
    let len = src.len().min(lanes.len());
    let whole = len / 8 * 8;
    for (lanes, src) in lanes[..whole]
        .chunks_exact_mut(8)
        .zip(src[..whole].chunks_exact(8))
    {
        let mut wide = [0f32; 8];
        // SAFETY: `src` holds eight halves (16 bytes) and `wide` eight floats; unaligned
        // load and store.
        unsafe {
            let halves = _mm_loadu_si128(src.as_ptr().cast::<__m128i>());
            _mm256_storeu_ps(wide.as_mut_ptr(), _mm256_cvtph_ps(halves));
        }
        for (lane, x) in lanes.iter_mut().zip(wide) {
            *lane = combine(*lane, x);
        }
    }
    for (lane, &s) in lanes[whole..len].iter_mut().zip(&src[whole..len]) {
        *lane = combine(*lane, f16_to_f32(s));
    }
}
impl FloatInput<f32> for bf16 {
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
}
impl FloatInput<f32> for f32 {
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self
    }
}
impl<T: FloatElement> FloatInput<f64> for T {
    #[inline(always)]
    fn to_acc(self) -> f64 {
        self.to_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversion_is_exact_for_every_value() {
        for bits in 0..=u16::MAX {
            let h = f16::from_bits(bits);
            let ours = f16_to_f32(h);
            let theirs = h.to_f32();
            if theirs.is_nan() {
                assert!(ours.is_nan(), "{bits:#06x}");
            } else {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{bits:#06x}");
            }
        }
    }
}
