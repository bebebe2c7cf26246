//! The one `exp` that every backend computes, bit for bit: the exponential inside
//! log-sum-exp's lanes and merges (docs/canonical-order.md, "The canonical exp").
//!
//! Platform `exp` functions differ in their last bit (glibc, CUDA's libdevice and PoCL
//! each round their own way), and a log-sum-exp built on them could not promise the same
//! bits on every device. This one uses only operations that IEEE 754 fixes exactly:
//! multiply, add, fused multiply-add, round-to-nearest-even and floor. Its steps, in
//! order, for `t` in `[-746, 710]`:
//!
//! 1. `k = roundeven(t × log2(e))`;
//! 2. `r = fma(−k, ln2_hi, t)`, then `r = fma(−k, ln2_lo, r)` (`|r| ≤ 0.347`);
//! 3. `p` = the Taylor polynomial of degree 13 of `exp(r)` by Horner's rule, one `fma` per
//!    coefficient `1/13!, 1/12!, …, 1/2!, 1, 1`;
//! 4. `k1 = floor(k × 0.5)`, `k2 = k − k1`, and the result is `(p × 2^k1) × 2^k2` (the
//!    first product is exact; the second rounds once, also into the subnormals).
//!
//! Below −746 the result is 0 (−∞ included), above 710 it is +∞, and NaN stays NaN. Its
//! error against the exact exponential is about one unit in the last place (the tests
//! hold it within two of the platform's `exp`). The same steps are in
//! `crates/kernels/cl/canonical_exp.h` for OpenCL and CUDA; changing any of them changes
//! results, so [`VERSION`] goes up with them.

/// The version of the steps above (recorded with the canonical order's).
pub const VERSION: u32 = 1;

/// `ln 2` rounded to f64.
pub const LN2_HI: f64 = std::f64::consts::LN_2;
/// `ln 2 − LN2_HI`, rounded to f64.
pub const LN2_LO: f64 = 2.3190468138462996e-17;
/// `1/i!` rounded to f64, for `i` from 13 down to 2.
pub const TAYLOR: [f64; 12] = [
    1.6059043836821613e-10,
    2.08767569878681e-09,
    2.505210838544172e-08,
    2.755731922398589e-07,
    2.7557319223985893e-06,
    2.48015873015873e-05,
    0.0001984126984126984,
    0.001388888888888889,
    0.008333333333333333,
    0.041666666666666664,
    0.16666666666666666,
    0.5,
];

/// 1.5 × 2^52: added to an integral `k`, it leaves `k` in the low bits of the sum.
pub const POW2_SHIFTER: f64 = 6755399441055744.0;

/// `2^k` for an integral `k` in `[-1022, 1023]` held in an f64, by placing `k + 1023` in
/// the exponent field. Adding `1.5 × 2^52` puts `k` in the low bits of the sum's
/// mantissa (two's complement), so no float-to-integer conversion is needed and the
/// compiler can keep it in vector registers.
#[inline(always)]
fn pow2(k: f64) -> f64 {
    f64::from_bits((k + POW2_SHIFTER).to_bits().wrapping_add(1023) << 52)
}

/// The canonical exponential of `t` (see the module's steps). Branch-free, so that loops
/// over lanes vectorize; callers in vector loops should be compiled with FMA enabled
/// (`mul_add` is a library call otherwise, correct but slow).
#[inline(always)]
pub fn exp(t: f64) -> f64 {
    let k = (t * std::f64::consts::LOG2_E).round_ties_even();
    let r = (-k).mul_add(LN2_HI, t);
    let r = (-k).mul_add(LN2_LO, r);
    let mut p = TAYLOR[0];
    for c in &TAYLOR[1..] {
        p = p.mul_add(r, *c);
    }
    p = p.mul_add(r, 1.0);
    p = p.mul_add(r, 1.0);
    let k1 = (k * 0.5).floor();
    let y = p * pow2(k1) * pow2(k - k1);
    // Outside the range the exponent bits above wrap; the limits are selected instead.
    let y = if t < -746.0 { 0.0 } else { y };
    if t > 710.0 {
        f64::INFINITY
    } else {
        y
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Distance in units in the last place between two finite doubles of one sign
    /// (the canonical `ln`'s tests use it too).
    pub(crate) fn ulps(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    /// `(i, bits, u)` for `i` in `0..n`: a xorshift generator's state from `seed` and
    /// that state as a uniform `u` in `[0, 1)`, for the seeded walks over a range.
    pub(crate) fn seeded_walk(seed: u64, n: usize) -> impl Iterator<Item = (usize, u64, f64)> {
        let mut state = seed;
        (0..n).map(move |i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (i, state, (state >> 11) as f64 / (1u64 << 53) as f64)
        })
    }

    #[test]
    fn exact_points_and_limits() {
        assert_eq!(exp(0.0).to_bits(), 1f64.to_bits());
        assert_eq!(exp(-0.0).to_bits(), 1f64.to_bits());
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(-746.5), 0.0);
        assert_eq!(exp(-1e300), 0.0);
        assert_eq!(exp(711.0), f64::INFINITY);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
        // The smallest subnormal and its neighbourhood round as the platform's do.
        assert_eq!(exp(-745.0).to_bits(), (-745f64).exp().to_bits());
        assert!(exp(-745.0) > 0.0);
        assert_eq!(exp(-745.2), 0.0);
    }

    #[test]
    fn within_two_ulps_of_the_platform_everywhere() {
        // A seeded walk over the whole range, denser near 0 where log-sum-exp lives.
        let mut worst = 0;
        for (i, _, u) in seeded_walk(0x9e37_79b9_7f4a_7c15, 400_000) {
            let t = match i % 4 {
                0 => -u * 746.0,
                1 => -u * 40.0,
                2 => -u * 1e-3,
                _ => u * 1420.0 - 710.0,
            };
            let (ours, theirs) = (exp(t), t.exp());
            if theirs >= f64::MIN_POSITIVE && theirs.is_finite() {
                let d = ulps(ours, theirs);
                worst = worst.max(d);
                assert!(d <= 2, "exp({t:e}): {ours:e} vs {theirs:e}, {d} ulps");
            } else if theirs.is_infinite() {
                assert_eq!(ours, theirs, "exp({t:e}) overflows");
            } else {
                // Subnormal results: within two of the smallest steps.
                assert!((ours - theirs).abs() <= 2.0 * 4.9e-324, "exp({t:e})");
            }
        }
        assert!(worst >= 1, "the walk met no rounding difference at all");
    }

    #[test]
    fn powers_of_two_are_built_exactly() {
        for k in -1022..=1023 {
            assert_eq!(pow2(k as f64), 2f64.powi(k), "2^{k}");
        }
    }
}
