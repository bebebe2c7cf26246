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

impl FloatElement for f16 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
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
}

impl FloatInput<f32> for f16 {
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self.to_f32()
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

/// Runs `$body` with `$t` bound to the Rust type of a float accumulator tag (f32/f64).
#[macro_export]
macro_rules! with_float_acc {
    ($acc:expr, $t:ident => $body:expr, else $other:expr) => {
        match $acc {
            $crate::DType::F32 => {
                type $t = f32;
                $body
            }
            $crate::DType::F64 => {
                type $t = f64;
                $body
            }
            _ => $other,
        }
    };
}
