//! The one natural logarithm behind every log-sum-exp result, bit for bit on every
//! platform: `logsumexp = ln(s) + max` (docs/canonical-order.md, "The canonical ln").
//!
//! The `ln` of the platform's C library (glibc, musl, macOS, Windows) is free to differ
//! in its last bit, so a log-sum-exp finished with it would give other bits under another
//! library even with identical states. This one uses only operations IEEE 754 fixes
//! exactly (integer operations on the bits, `+ − × /` and fused multiply-add), in this
//! order, for `x` positive and finite:
//!
//! 1. a subnormal `x` is first multiplied by `2^54` (exact), and 54 is taken off its
//!    exponent below;
//! 2. `x = z × 2^k` with `z` in `[√½, √2)`, read from the bits: `k` is the exponent of
//!    `x / √½` (the bits' difference from those of the f64 nearest to `√½`, shifted),
//!    and `z` is `x` with `k` taken off its exponent field;
//! 3. `f = z − 1` (exact), `s = f / (2 + f)`, `w = s × s`, `h = (0.5 × f) × f`;
//! 4. `R = w × P(w)`, where `P(w) = c₀ + c₁w + … + c₉w⁹` is the Taylor polynomial of
//!    `2·atanh(s)/s − 2` in `w`, `cᵢ` the f64 nearest to `2/(2i + 3)`, by Estrin's
//!    scheme: `w2 = w × w`, `w4 = w2 × w2`, `w8 = w4 × w4`; `qⱼ = fma(c₂ⱼ₊₁, w, c₂ⱼ)` for
//!    `j = 0 … 4`; `q03 = fma(q₁, w2, q₀)`, `q47 = fma(q₃, w2, q₂)`,
//!    `q07 = fma(q47, w4, q03)`, `P = fma(q₄, w8, q07)` (a chain of four `fma`s where
//!    Horner's rule has ten: the finish of 4096 columns took 0.69× the time);
//! 5. with `a = k × ln2_hi` (exact: `ln2_hi` is `ln 2` rounded to 42 bits) and
//!    `ln2_lo` the f64 nearest to `ln 2 − ln2_hi`, the sum `a + f − h` is carried as
//!    two doubles: `u = f − h`, `u_lo = (f − u) − h`, `hi = a + u`, `lo = (a − hi) + u`
//!    (each pair exact, as `|f| > |h|` and `|a| > |u|` unless `a = 0`), and
//!    `h_lo = fma(0.5 × f, f, −h)` is what `h` rounded off;
//! 6. the result is `hi + (lo + ((u_lo − h_lo) + fma(s, h + R, k × ln2_lo)))`: one
//!    rounding of the large part, the corrections added below it.
//!
//! Since `ln(1 + f) = 2·atanh(s) = f − h + s × (h + R)`, the large part `f` is exact and
//! the roundings fall on small corrections. Zero gives −∞, +∞ gives +∞, and negative
//! numbers and NaN give NaN. The polynomial's truncation is below a hundredth of a unit
//! in the last place. Against the exact logarithm (50 digits) on 30 000 seeded samples
//! from [0.7, 1.42], [1, 10^6] and around 1, the worst error was 0.60 units in the last
//! place and 0.4% of the results were not the nearest double (glibc: 0.52 and 0.08%);
//! the tests hold it within one unit of the platform's `ln` over the whole range.
//!
//! Branch-free (the special cases are selected), so loops over many results vectorize.
//! Changing any step changes results, so [`VERSION`] goes up with them.

/// The version of the steps above (recorded with the statistics rule's).
pub const VERSION: u32 = 1;

/// `ln 2` rounded to 42 significant bits: `k × LN2_HI` is exact for `|k| < 2^11`, which
/// covers every exponent of an f64 (subnormals included after their scaling).
pub const LN2_HI: f64 = 0.6931471805598903;
/// `ln 2 − LN2_HI`, rounded to f64.
pub const LN2_LO: f64 = 5.497923018708371e-14;
/// `2/(2i + 3)` rounded to f64, for `i` from 0 to 9: the Taylor coefficients of
/// `2·atanh(s)` past its first term, as a polynomial in `s²`.
pub const ATANH: [f64; 10] = [
    0.6666666666666666,
    0.4,
    0.2857142857142857,
    0.2222222222222222,
    0.18181818181818182,
    0.15384615384615385,
    0.13333333333333333,
    0.11764705882352941,
    0.10526315789473684,
    0.09523809523809523,
];

/// The bits of the f64 nearest to `√½`: mantissas at or above it keep their exponent.
const SQRT_HALF_BITS: u64 = 0x3fe6_a09e_667f_3bcd;
/// `2^52` as bits: or-ed with an integer below `2^52`, it gives `2^52 + that integer`.
const TWO_52_BITS: u64 = 0x4330_0000_0000_0000;
/// Added to the bits before the shift, `2^63 − SQRT_HALF_BITS` keeps the difference
/// non-negative for every positive `x`, offsetting the exponent by 2048.
const EXPONENT_OFFSET: u64 = (2048u64 << 52) - SQRT_HALF_BITS;

/// The canonical natural logarithm of `x` (see the module's steps). Callers in vector
/// loops should be compiled with FMA enabled (`mul_add` is a library call otherwise,
/// correct but slow).
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    // Step 1: subnormals become normal, their exponent corrected below.
    let subnormal = x < f64::MIN_POSITIVE;
    let scaled = if subnormal { x * TWO_54 } else { x };
    let correction = if subnormal { -54.0 } else { 0.0 };
    // Step 2: the exponent of x / √½ (plus 2048), and z with that exponent taken off.
    let bits = scaled.to_bits();
    let biased = bits.wrapping_add(EXPONENT_OFFSET) >> 52;
    let z = f64::from_bits(bits.wrapping_sub(biased.wrapping_sub(2048) << 52));
    // The integer to f64 without a conversion instruction (AVX2 has none for 64 bits).
    let k = (f64::from_bits(biased | TWO_52_BITS) - (TWO_52 + 2048.0)) + correction;
    // Steps 3 and 4.
    let f = z - 1.0;
    let s = f / (2.0 + f);
    let w = s * s;
    let h = (0.5 * f) * f;
    let (w2, q) = (w * w, |j: usize| ATANH[2 * j + 1].mul_add(w, ATANH[2 * j]));
    let (w4, q03, q47) = (w2 * w2, q(1).mul_add(w2, q(0)), q(3).mul_add(w2, q(2)));
    let (w8, q07) = (w4 * w4, q47.mul_add(w4, q03));
    let r = w * q(4).mul_add(w8, q07);
    // Step 5: a + f − h as two doubles, and the bits h rounded off.
    let a = k * LN2_HI;
    let u = f - h;
    let u_low = (f - u) - h;
    let high = a + u;
    let low = (a - high) + u;
    let h_low = (0.5 * f).mul_add(f, -h);
    // Step 6: the corrections below the large part, then its one rounding.
    let small = s.mul_add(h + r, k * LN2_LO);
    let y = high + (low + ((u_low - h_low) + small));
    // The special cases, selected rather than branched around.
    let y = if x == f64::INFINITY { x } else { y };
    let y = if x == 0.0 { f64::NEG_INFINITY } else { y };
    if x < 0.0 || x.is_nan() {
        f64::NAN
    } else {
        y
    }
}

/// `2^54`, which makes every subnormal normal.
const TWO_54: f64 = 18014398509481984.0;
/// `2^52`.
const TWO_52: f64 = 4503599627370496.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical_exp::tests::{seeded_walk, ulps};

    #[test]
    fn constants_are_what_their_names_say() {
        assert_eq!(LN2_HI.to_bits() & 0x7ff, 0, "42 significant bits");
        assert!((LN2_HI - std::f64::consts::LN_2).abs() < 1e-12);
        // ln2_hi + ln2_lo is ln 2 to far more than f64's precision.
        assert_eq!(LN2_HI + LN2_LO, std::f64::consts::LN_2);
        for (i, c) in ATANH.iter().enumerate() {
            let odd = 2 * i + 3;
            assert_eq!(*c, 2.0 / odd as f64, "2/{odd}");
        }
        assert_eq!(
            f64::from_bits(SQRT_HALF_BITS),
            std::f64::consts::FRAC_1_SQRT_2
        );
        assert_eq!(TWO_54, 2f64.powi(54));
        assert_eq!(f64::from_bits(TWO_52_BITS), TWO_52);
    }

    #[test]
    fn exact_points_and_special_values() {
        assert_eq!(ln(1.0).to_bits(), 0f64.to_bits());
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert_eq!(ln(-0.0), f64::NEG_INFINITY);
        assert_eq!(ln(f64::INFINITY), f64::INFINITY);
        assert!(ln(f64::NAN).is_nan());
        assert!(ln(-1.0).is_nan());
        assert!(ln(f64::NEG_INFINITY).is_nan());
        assert!(ln(-5e-324).is_nan());
        assert_eq!(ln(2.0), std::f64::consts::LN_2);
        assert_eq!(ln(std::f64::consts::E), 1.0);
        assert_eq!(ln(f64::MAX), f64::MAX.ln());
        assert_eq!(ln(5e-324), 5e-324f64.ln());
        assert_eq!(ln(f64::MIN_POSITIVE), f64::MIN_POSITIVE.ln());
    }

    #[test]
    fn version_one_gives_these_bits() {
        // The steps are the specification: a change that moves any of these bits is a
        // new version (and new results for every log-sum-exp).
        let pinned = [
            (3.0, 0x3ff1_93ea_7aad_030b),
            (10.0, 0x4002_6bb1_bbb5_5516),
            (1e-300, 0xc085_9634_47f8_7fb5),
            (12345.678, 0x4022_d795_5979_1e31),
            (0.9999, 0xbf1a_3738_d2cf_1cc2),
            (4097.0, 0x4020_a2d2_3e3b_b61e),
            (5e-324, 0xc087_4385_446d_71c3),
            (1.7e308, 0x4086_2dd0_8fdc_6f88),
            // Horner's rule for the polynomial would give ...656 here.
            (1.5400000000000018, 0x3fdb_a252_b762_4657),
        ];
        assert_eq!(VERSION, 1);
        for (x, bits) in pinned {
            assert_eq!(ln(x).to_bits(), bits, "ln({x:e}) = {:e}", ln(x));
        }
    }

    #[test]
    fn powers_of_two_are_k_ln2() {
        for k in -1074..=1023 {
            // powi's reciprocal underflows for the smallest subnormals: build them.
            let x = if k < -1022 {
                f64::from_bits(1u64 << (k + 1074))
            } else {
                2f64.powi(k)
            };
            let expected = f64::from(k) * std::f64::consts::LN_2;
            assert!(
                ulps(ln(x), expected) <= 1,
                "ln(2^{k}) = {:e}, k·ln2 = {expected:e}",
                ln(x)
            );
        }
    }

    #[test]
    fn within_one_ulp_of_the_platform_everywhere() {
        // A seeded walk: sums of exponentials (log-sum-exp's s lies in [1, n]), values
        // near 1 where the result is small, and random bit patterns over every exponent.
        let mut worst = 0;
        let mut differ = 0;
        for (i, state, u) in seeded_walk(0x2545_f491_4f6c_dd1d, 600_000) {
            let x = match i % 4 {
                0 => 1.0 + u * 1e9,
                1 => 1.0 + (u - 0.5) * 1e-6,
                2 => 0.5 + u * 1.5,
                _ => f64::from_bits(state >> 1),
            };
            if !x.is_finite() {
                continue;
            }
            let (ours, theirs) = (ln(x), x.ln());
            let d = if ours.signum() == theirs.signum() || ours == 0.0 || theirs == 0.0 {
                ulps(ours.abs(), theirs.abs())
            } else {
                u64::MAX
            };
            worst = worst.max(d);
            differ += usize::from(d > 0);
            assert!(d <= 1, "ln({x:e}): {ours:e} vs {theirs:e}, {d} ulps");
        }
        // The two differ somewhere (neither is correctly rounded everywhere), so the walk
        // really compared two computations.
        assert!(
            worst == 1 && differ > 0,
            "the walk met no difference at all"
        );
    }

    #[test]
    fn monotonic_around_exponent_steps() {
        // z switches from above √2 to √½·2 at each step: no jump where the reduction
        // changes its k.
        for k in [-1000, -3, -1, 0, 1, 2, 40, 1000] {
            let edge = std::f64::consts::FRAC_1_SQRT_2 * 2f64.powi(k);
            let mut x = f64::from_bits(edge.to_bits() - 20);
            let mut last = ln(x);
            for _ in 0..40 {
                x = f64::from_bits(x.to_bits() + 1);
                let y = ln(x);
                assert!(y >= last, "ln not monotonic at {x:e}");
                last = y;
            }
        }
    }
}
