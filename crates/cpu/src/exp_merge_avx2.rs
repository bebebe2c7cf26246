//! Log-sum-exp's lane merge over many columns with AVX2 and FMA, two vectors of four
//! columns side by side: [`crate::log_sum_exp::merge_lanes`] and the canonical
//! exponential (`redlab_core::canonical_exp::exp`), step for step, so the same bits.
//!
//! Why by hand: the exponential is a chain of about twenty dependent operations (thirteen
//! multiply-adds in Horner's rule alone), and the compiler's vector loop took one vector
//! of columns at a time, waiting on that chain. Here each step is issued for two vectors
//! before the next, so one's latency hides behind the other's work. (Arrays of eight
//! columns in plain Rust, tried first, compiled to shuffles and ran 1.2× slower.)

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Columns per step: two vectors of four.
#[cfg(target_arch = "x86_64")]
const STEP: usize = 8;

/// The canonical exp's constants: the vector steps must use the very same.
#[cfg(target_arch = "x86_64")]
use redlab_core::canonical_exp::{LN2_HI, LN2_LO, POW2_SHIFTER, TAYLOR};

/// Whether the CPU can run this file's code.
fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether [`merge_columns`] runs here: with AVX2 and FMA, but not where AVX-512 is
/// present, whose builds of the callers keep the compiler's 8-wide loop (measured
/// faster than AVX2 for the statistics when it was added; this path was measured only
/// on a machine without AVX-512).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx2_fma() && !is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Lane ← lane merged with the higher one, per column, over the first multiple of eight
/// columns; returns how many columns it merged (the caller merges the rest). Zero where
/// [`available`] is false.
pub(crate) fn merge_columns(
    low_max: &mut [f64],
    low_sum: &mut [f64],
    high_max: &[f64],
    high_sum: &[f64],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if available() {
        return merge_prefix(low_max, low_sum, high_max, high_sum);
    }
    let _ = (low_max, low_sum, high_max, high_sum);
    0
}

/// [`merge_columns`] wherever AVX2 and FMA are present (the tests call it directly).
#[cfg(target_arch = "x86_64")]
fn merge_prefix(
    low_max: &mut [f64],
    low_sum: &mut [f64],
    high_max: &[f64],
    high_sum: &[f64],
) -> usize {
    assert!(has_avx2_fma(), "the vector merge needs AVX2 and FMA");
    let n = low_max
        .len()
        .min(low_sum.len())
        .min(high_max.len())
        .min(high_sum.len());
    let whole = n - n % STEP;
    // SAFETY: the CPU has AVX2 and FMA (checked above), and every access below is
    // within the first `whole` elements of each slice.
    unsafe { merge_whole(low_max, low_sum, high_max, high_sum, whole) };
    whole
}

/// The merges of columns `0 … whole` (a multiple of [`STEP`]).
///
/// # Safety
/// AVX2 and FMA must be present, and every slice must hold `whole` elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn merge_whole(
    low_max: &mut [f64],
    low_sum: &mut [f64],
    high_max: &[f64],
    high_sum: &[f64],
    whole: usize,
) {
    for at in (0..whole).step_by(STEP) {
        // SAFETY: `at + 8 <= whole`, within every slice (the caller's promise).
        let (lo_max, lo_sum, hi_max, hi_sum) = unsafe {
            let load = |s: &[f64], k: usize| _mm256_loadu_pd(s.as_ptr().add(at + 4 * k));
            (
                [load(low_max, 0), load(low_max, 1)],
                [load(low_sum, 0), load(low_sum, 1)],
                [load(high_max, 0), load(high_max, 1)],
                [load(high_sum, 0), load(high_sum, 1)],
            )
        };
        let (max, sum) = merge_pair(lo_max, lo_sum, hi_max, hi_sum);
        for k in 0..2 {
            // SAFETY: as the loads.
            unsafe {
                _mm256_storeu_pd(low_max.as_mut_ptr().add(at + 4 * k), max[k]);
                _mm256_storeu_pd(low_sum.as_mut_ptr().add(at + 4 * k), sum[k]);
            }
        }
    }
}

/// `merge_lanes` on two vectors of four lanes each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn merge_pair(
    lo_max: [__m256d; 2],
    lo_sum: [__m256d; 2],
    hi_max: [__m256d; 2],
    hi_sum: [__m256d; 2],
) -> ([__m256d; 2], [__m256d; 2]) {
    let sign = _mm256_set1_pd(-0.0);
    // −|lo_max − hi_max|: the difference with its sign bit set.
    let t = [0, 1].map(|k| _mm256_or_pd(_mm256_sub_pd(lo_max[k], hi_max[k]), sign));
    let e = exp_pair(t);
    let mut max = [_mm256_setzero_pd(); 2];
    let mut sum = [_mm256_setzero_pd(); 2];
    for k in 0..2 {
        // lo_max >= hi_max ? lo_max : hi_max (false for NaN, as in Rust).
        let m = _mm256_blendv_pd(
            hi_max[k],
            lo_max[k],
            _mm256_cmp_pd::<_CMP_GE_OQ>(lo_max[k], hi_max[k]),
        );
        let low = _mm256_blendv_pd(
            _mm256_mul_pd(lo_sum[k], e[k]),
            lo_sum[k],
            _mm256_cmp_pd::<_CMP_EQ_OQ>(lo_max[k], m),
        );
        let high = _mm256_blendv_pd(
            _mm256_mul_pd(hi_sum[k], e[k]),
            hi_sum[k],
            _mm256_cmp_pd::<_CMP_EQ_OQ>(hi_max[k], m),
        );
        let nan = _mm256_cmp_pd::<_CMP_UNORD_Q>(lo_max[k], hi_max[k]);
        let not_a_number = _mm256_set1_pd(f64::NAN);
        max[k] = _mm256_blendv_pd(m, not_a_number, nan);
        sum[k] = _mm256_blendv_pd(_mm256_add_pd(low, high), not_a_number, nan);
    }
    (max, sum)
}

/// The canonical exp of two vectors, each step for both before the next.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn exp_pair(t: [__m256d; 2]) -> [__m256d; 2] {
    const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const DOWN: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    let log2e = _mm256_set1_pd(std::f64::consts::LOG2_E);
    let k = t.map(|t| _mm256_round_pd::<NEAREST>(_mm256_mul_pd(t, log2e)));
    // fma(−k, c, x) is −(k·c) + x with one rounding: _mm256_fnmadd_pd.
    let (hi, lo) = (_mm256_set1_pd(LN2_HI), _mm256_set1_pd(LN2_LO));
    let r = [0, 1].map(|j| _mm256_fnmadd_pd(k[j], hi, t[j]));
    let r = [0, 1].map(|j| _mm256_fnmadd_pd(k[j], lo, r[j]));
    let mut p = [_mm256_set1_pd(TAYLOR[0]); 2];
    for c in &TAYLOR[1..] {
        let c = _mm256_set1_pd(*c);
        p = [0, 1].map(|j| _mm256_fmadd_pd(p[j], r[j], c));
    }
    let one = _mm256_set1_pd(1.0);
    for _ in 0..2 {
        p = [0, 1].map(|j| _mm256_fmadd_pd(p[j], r[j], one));
    }
    let half = _mm256_set1_pd(0.5);
    let k1 = k.map(|k| _mm256_round_pd::<DOWN>(_mm256_mul_pd(k, half)));
    let mut y = [_mm256_setzero_pd(); 2];
    for j in 0..2 {
        let v = _mm256_mul_pd(
            _mm256_mul_pd(p[j], pow2(k1[j])),
            pow2(_mm256_sub_pd(k[j], k1[j])),
        );
        let v = _mm256_blendv_pd(
            v,
            _mm256_setzero_pd(),
            _mm256_cmp_pd::<_CMP_LT_OQ>(t[j], _mm256_set1_pd(-746.0)),
        );
        y[j] = _mm256_blendv_pd(
            v,
            _mm256_set1_pd(f64::INFINITY),
            _mm256_cmp_pd::<_CMP_GT_OQ>(t[j], _mm256_set1_pd(710.0)),
        );
    }
    y
}

/// 2^k for integral k in [−1022, 1023], as the canonical exp builds it: k + 1.5·2^52
/// leaves k in the low bits, plus the bias, shifted into the exponent field.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn pow2(k: __m256d) -> __m256d {
    let shifted = _mm256_add_pd(k, _mm256_set1_pd(POW2_SHIFTER));
    let biased = _mm256_add_epi64(_mm256_castpd_si256(shifted), _mm256_set1_epi64x(1023));
    _mm256_castsi256_pd(_mm256_slli_epi64::<52>(biased))
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::log_sum_exp::merge_lanes;

    /// Every merge is `merge_lanes`' bits, over lanes with infinities, NaN, equal
    /// maxima, signed zeros and wide and narrow gaps.
    #[test]
    fn merges_are_the_scalar_merges_bits() {
        if !has_avx2_fma() {
            eprintln!("no AVX2 and FMA here: nothing to compare");
            return;
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let n = 4099;
        let special = [f64::NAN, f64::NEG_INFINITY, f64::INFINITY, -0.0, 0.0];
        let mut value = |i: usize| match i % 11 {
            0 => special[(next() * 5.0) as usize % 5],
            1 => next() * 1500.0 - 750.0,
            2 => (next() * 8.0).floor(),
            _ => next() * 40.0 - 20.0,
        };
        let low_max: Vec<f64> = (0..n).map(&mut value).collect();
        // Both sides of a column draw from the same class, so that signed zeros,
        // infinities and NaN meet each other, and small integers tie.
        let high_max: Vec<f64> = (0..n).map(&mut value).collect();
        let low_sum: Vec<f64> = (0..n).map(|_| 1.0 + next() * 100.0).collect();
        let high_sum: Vec<f64> = (0..n).map(|_| 1.0 + next() * 100.0).collect();
        let (mut max, mut sum) = (low_max.clone(), low_sum.clone());
        let done = merge_prefix(&mut max, &mut sum, &high_max, &high_sum);
        assert_eq!(done, n - n % STEP);
        let mut compared = 0;
        for i in 0..done {
            let (m, s) = merge_lanes(low_max[i], low_sum[i], high_max[i], high_sum[i]);
            if m.is_nan() {
                assert!(max[i].is_nan() && sum[i].is_nan(), "column {i}");
                continue;
            }
            assert_eq!(max[i].to_bits(), m.to_bits(), "column {i}: max");
            assert_eq!(sum[i].to_bits(), s.to_bits(), "column {i}: sum");
            compared += 1;
        }
        assert!(
            compared > done / 2,
            "most columns hold numbers ({compared})"
        );
        let signed_zero_ties = (0..done)
            .filter(|&i| {
                low_max[i] == 0.0
                    && high_max[i] == 0.0
                    && low_max[i].is_sign_negative() != high_max[i].is_sign_negative()
            })
            .count();
        assert!(signed_zero_ties > 0, "−0.0 met 0.0 in some column");
    }
}
