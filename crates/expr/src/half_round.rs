//! Rounding to the 16-bit float formats, as the casts `f16(…)` and `bf16(…)` do: to the
//! nearest value of the format, ties to even, overflow to ±∞, NaN kept (quiet, its sign
//! and top payload bits kept), the result widened back to `f32`.
//!
//! Written here rather than taken from a conversion library because an `f64` operand
//! must round once, straight from all its 53 bits: a conversion that drops the low bits
//! first, or goes through `f32`, rounds twice and can land on the other neighbour of a
//! near-tie. The generated OpenCL C ([`OPENCL_F32`], [`OPENCL_F64`]) follows the same
//! steps, so every backend gives the same bits.

/// A 16-bit float format: its precision and exponent range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    /// IEEE binary16: 11 bits of precision, normal exponents −14 … 15.
    F16,
    /// bfloat16: 8 bits of precision, f32's exponent range.
    BF16,
}

impl Half {
    /// Bits of precision, the implicit bit included.
    fn precision(self) -> i32 {
        match self {
            Half::F16 => 11,
            Half::BF16 => 8,
        }
    }

    /// The smallest normal exponent: below it the spacing stays `2^(emin − p + 1)`.
    fn min_exponent(self) -> i32 {
        match self {
            Half::F16 => -14,
            Half::BF16 => -126,
        }
    }

    /// The largest finite value's exponent.
    fn max_exponent(self) -> i32 {
        match self {
            Half::F16 => 15,
            Half::BF16 => 127,
        }
    }

    /// The f32 bits of a NaN that keeps `bits`' sign and the payload bits this format
    /// holds, quiet.
    fn nan_from_f32_bits(self, bits: u32) -> f32 {
        let kept = match self {
            Half::F16 => 0xffff_e000,
            Half::BF16 => 0xffff_0000,
        };
        f32::from_bits((bits | 0x0040_0000) & kept)
    }

    /// `x` rounded to this format, as f32.
    pub fn round_f32(self, x: f32) -> f32 {
        let bits = x.to_bits();
        if x.is_nan() {
            return self.nan_from_f32_bits(bits);
        }
        if x.is_infinite() || x == 0.0 {
            return x;
        }
        let biased = ((bits >> 23) & 0xff) as i32;
        let fraction = u64::from(bits & 0x7f_ffff);
        // value = mantissa · 2^exponent, the implicit bit made explicit for normals.
        let (mantissa, exponent) = if biased == 0 {
            (fraction, -149)
        } else {
            (fraction | 0x80_0000, biased - 150)
        };
        self.round_parts(x.is_sign_negative(), mantissa, exponent)
    }

    /// `x` rounded to this format straight from its 53 bits, as f32.
    pub fn round_f64(self, x: f64) -> f32 {
        let bits = x.to_bits();
        if x.is_nan() {
            // The top 23 fraction bits stand where an f32 NaN holds its payload.
            let top = ((bits >> 32) as u32 & 0x8000_0000) | 0x7f80_0000;
            let payload = ((bits >> 29) as u32) & 0x7f_ffff;
            return self.nan_from_f32_bits(top | payload);
        }
        if x.is_infinite() || x == 0.0 {
            return x as f32;
        }
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & 0xf_ffff_ffff_ffff;
        let (mantissa, exponent) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | 0x10_0000_0000_0000, biased - 1075)
        };
        self.round_parts(x.is_sign_negative(), mantissa, exponent)
    }

    /// `±mantissa · 2^exponent` (mantissa ≠ 0, at most 53 bits) to the nearest value of
    /// the format: the spacing there is `2^quantum`, the mantissa is shifted down to it
    /// and rounded half to even on the bits shifted out.
    fn round_parts(self, negative: bool, mantissa: u64, exponent: i32) -> f32 {
        let p = self.precision();
        let top = 63 - mantissa.leading_zeros() as i32 + exponent;
        let quantum = top.max(self.min_exponent()) - (p - 1);
        let shift = quantum - exponent;
        let mut q = if shift <= 0 {
            mantissa << (-shift)
        } else if shift >= 64 {
            0
        } else {
            let q = mantissa >> shift;
            let rest = mantissa & ((1u64 << shift) - 1);
            let half = 1u64 << (shift - 1);
            q + u64::from(rest > half || (rest == half && q & 1 == 1))
        };
        // A carry out of the top bit moves to the next binade: still exact below.
        let mut quantum = quantum;
        if q == 1u64 << p {
            q >>= 1;
            quantum += 1;
        }
        let magnitude = if quantum > self.max_exponent() - (p - 1) {
            f32::INFINITY
        } else {
            // q < 2^p and the product is a value of the format: exact in f64 and in f32.
            (q as f64 * 2f64.powi(quantum)) as f32
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// OpenCL C for `rl_f16_f(float)` and `rl_bf16_f(float)`: the same rounding as
/// [`Half::round_f32`], in 32-bit integer steps (no `double` needed).
pub const OPENCL_F32: &str = "\
inline float rl_f16_f(float x) {
    uint u = as_uint(x), s = u & 0x80000000u, a = u ^ s;
    if (a > 0x7f800000u) return as_float((u | 0x00400000u) & 0xffffe000u);
    if (a >= 0x477ff000u) return as_float(s | 0x7f800000u);
    if (a >= 0x38800000u) return as_float(s | ((a + 0xfffu + ((a >> 13) & 1u)) & 0xffffe000u));
    if (a <= 0x33000000u) return as_float(s);
    uint sh = 126u - (a >> 23), m = (a & 0x7fffffu) | 0x800000u;
    uint q = m >> sh, r = m & ((1u << sh) - 1u), h = 1u << (sh - 1u);
    q += (r > h || (r == h && (q & 1u) != 0u)) ? 1u : 0u;
    return as_float(s | as_uint((float)q * 5.9604644775390625e-8f));
}
inline float rl_bf16_f(float x) {
    uint u = as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return as_float((u | 0x00400000u) & 0xffff0000u);
    return as_float((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
}
";

/// OpenCL C for `rl_f16_d(double)` and `rl_bf16_d(double)` (devices with `double`):
/// [`Half::round_f64`]'s steps, the spacing exponent found from the binary exponent
/// (zeros and f64 subnormals, far below both formats' smallest values, give ±0).
pub const OPENCL_F64: &str = "\
inline float rl_half_round_d(double x, int p, int emin, int emax) {
    ulong u = as_ulong(x), a = u & 0x7fffffffffffffffUL;
    uint s = (uint)(u >> 32) & 0x80000000u;
    if (a > 0x7ff0000000000000UL)
        return as_float(((s | 0x7fc00000u | ((uint)(a >> 29) & 0x7fffffu))) & (p == 11 ? 0xffffe000u : 0xffff0000u));
    if (a == 0x7ff0000000000000UL) return as_float(s | 0x7f800000u);
    int biased = (int)(a >> 52);
    if (biased == 0) return as_float(s);
    ulong m = (a & 0xfffffffffffffUL) | 0x10000000000000UL;
    int e = biased - 1075;
    int quantum = max(biased - 1023, emin) - (p - 1);
    int sh = quantum - e;
    ulong q;
    if (sh >= 64) q = 0UL;
    else {
        ulong h = 1UL << (sh - 1), r = m & ((1UL << sh) - 1UL);
        q = m >> sh;
        q += (r > h || (r == h && (q & 1UL) != 0UL)) ? 1UL : 0UL;
    }
    if (q == (1UL << p)) { q >>= 1; quantum += 1; }
    if (quantum > emax - (p - 1)) return as_float(s | 0x7f800000u);
    float mag = (float)((double)q * as_double((ulong)(quantum + 1023) << 52));
    return as_float(s | as_uint(mag));
}
inline float rl_f16_d(double x) { return rl_half_round_d(x, 11, -14, 15); }
inline float rl_bf16_d(double x) { return rl_half_round_d(x, 8, -126, 127); }
";

#[cfg(test)]
mod tests {
    use super::Half;
    use half::{bf16, f16};

    /// Seeded 64-bit values (splitmix64), so the tests need no generator crate.
    fn seeded(count: usize, mut state: u64) -> impl Iterator<Item = u64> {
        (0..count).map(move |_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
    }

    /// Every f32 whose top 16 bits are `hi`, with low halves that sit on, next to and
    /// between the rounding points of both formats.
    fn f32_cases() -> impl Iterator<Item = f32> {
        let lows = [
            0u32, 1, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x7fff, 0x8000, 0x8001, 0xffff,
        ];
        (0..=0xffffu32).flat_map(move |hi| {
            lows.into_iter()
                .map(move |lo| f32::from_bits(hi << 16 | lo))
        })
    }

    #[test]
    fn f32_rounding_agrees_with_the_half_crate_on_every_binade() {
        for x in f32_cases().chain(seeded(200_000, 7).map(|b| f32::from_bits(b as u32))) {
            let want_h = f16::from_f32(x).to_f32();
            let want_b = bf16::from_f32(x).to_f32();
            let got_h = Half::F16.round_f32(x);
            let got_b = Half::BF16.round_f32(x);
            if x.is_nan() {
                assert!(got_h.is_nan() && got_b.is_nan(), "{x:?}");
                assert_eq!(got_h.is_sign_negative(), x.is_sign_negative());
                continue;
            }
            assert_eq!(
                got_h.to_bits(),
                want_h.to_bits(),
                "f16 of {:#010x}",
                x.to_bits()
            );
            assert_eq!(
                got_b.to_bits(),
                want_b.to_bits(),
                "bf16 of {:#010x}",
                x.to_bits()
            );
        }
    }

    /// The nearest value of `format` to a positive normal f64 `x`, by f64 arithmetic:
    /// the spacing `2^quantum` from `x`'s exponent, the two multiples around `x`, and
    /// the midpoint between them (all exact in f64).
    fn nearest_by_division(format: Half, x: f64) -> f64 {
        let exponent = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let quantum = exponent.max(format.min_exponent()) - (format.precision() - 1);
        let spacing = 2f64.powi(quantum);
        let down = (x / spacing).floor() * spacing;
        let mid = down + spacing / 2.0;
        let even_down = ((down / spacing) as u64) % 2 == 0;
        let r = if x < mid || (x == mid && even_down) {
            down
        } else {
            down + spacing
        };
        let max = (2f64 - 2f64.powi(1 - format.precision())) * 2f64.powi(format.max_exponent());
        if r > max {
            f64::INFINITY
        } else {
            r
        }
    }

    #[test]
    fn f64_rounding_is_to_the_nearest_from_all_53_bits() {
        for (format, top) in [(Half::F16, 70000.0), (Half::BF16, 3.5e38)] {
            for (k, b) in seeded(100_000, 11).enumerate() {
                // Random values, and near-ties: a format value plus half a spacing nudged.
                let u = (b >> 11) as f64 / (1u64 << 53) as f64;
                let mut x = u * top * 2f64.powi(-((k % 40) as i32));
                if k % 3 == 1 {
                    let exponent = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
                    let quantum = exponent.max(format.min_exponent()) - (format.precision() - 1);
                    let nudge = [0.0, 2f64.powi(-40), -(2f64.powi(-40))][(k / 3) % 3];
                    x = f64::from(format.round_f32(x as f32)) + 2f64.powi(quantum) * (0.5 + nudge);
                }
                if !x.is_finite() || x < f64::from(f32::MIN_POSITIVE) {
                    continue;
                }
                let want = nearest_by_division(format, x);
                assert_eq!(f64::from(format.round_f64(x)), want, "{x:e} ({format:?})");
                assert_eq!(
                    f64::from(format.round_f64(-x)),
                    -want,
                    "{:e} ({format:?})",
                    -x
                );
            }
        }
    }

    #[test]
    fn f64_rounding_sees_bits_below_the_top_32() {
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10 in f16; a 2^-40 above it must round up.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(Half::F16.round_f64(x), 1.0 + 2f32.powi(-10));
        assert_eq!(Half::F16.round_f64(1.0 + 2f64.powi(-11)), 1.0);
        let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-50);
        assert_eq!(Half::BF16.round_f64(y), 1.0 + 2f32.powi(-7));
        // Overflow, the largest finite value, subnormals and the signs.
        assert_eq!(Half::F16.round_f64(65520.0), f32::INFINITY);
        assert_eq!(Half::F16.round_f64(65519.99), 65504.0);
        assert_eq!(Half::F16.round_f64(-2f64.powi(-25)), -0.0);
        assert!(Half::F16.round_f64(-2f64.powi(-25)).is_sign_negative());
        assert_eq!(Half::F16.round_f64(2f64.powi(-25) * 1.5), 2f32.powi(-24));
        assert_eq!(Half::BF16.round_f64(1e-45), 0.0);
        assert_eq!(Half::BF16.round_f64(f64::from(f32::MAX)), f32::INFINITY);
        assert!(Half::BF16.round_f64(f64::NAN).is_nan());
    }
}
