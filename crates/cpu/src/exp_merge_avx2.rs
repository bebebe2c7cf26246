//! Log-sum-exp's lane steps with AVX2 and FMA, over many lanes or columns, several
//! vectors of four side by side: [`crate::log_sum_exp::merge_lanes`],
//! [`crate::log_sum_exp::push_lane`] and the canonical exponential
//! (`redlab_core::canonical_exp::exp`), step for step, so the same bits.
//!
//! Why by hand: the exponential is a chain of about twenty dependent operations (thirteen
//! multiply-adds in Horner's rule alone), and the compiler's vector loop took one vector
//! at a time, waiting on that chain. Here each step is issued for several vectors before
//! the next, so one's latency hides behind the others' work: eight vectors (32 columns)
//! per push, where two read whole tiles 1.2–1.3× slower, and two per merge, where more
//! measured no faster (results/cpu-dev-2core-stat-wide-steps). (Arrays of eight columns
//! in plain Rust, tried first, compiled to shuffles and ran 1.2× slower.)

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The fewest columns a step takes (two vectors of four): the functions here leave
/// fewer than this many to their callers.
#[cfg(target_arch = "x86_64")]
const STEP: usize = 8;

/// Columns per push where there are enough: eight vectors of four.
#[cfg(target_arch = "x86_64")]
const WIDE_STEP: usize = 32;

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

/// An element type that the statistics read in place (f32 or f64, widened to f64
/// exactly), as [`push_columns`] reads it.
pub(crate) trait Element: Copy + Send + Sync {
    /// Four elements from `at` as f64.
    ///
    /// # Safety
    /// AVX2 must be present and `at + 4 <= values.len()`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn load4(values: &[Self], at: usize) -> __m256d;
}

impl Element for f64 {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load4(values: &[f64], at: usize) -> __m256d {
        // SAFETY: within `values` (the caller's promise); AVX is part of AVX2.
        unsafe { _mm256_loadu_pd(values.as_ptr().add(at)) }
    }
}

impl Element for f32 {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load4(values: &[f32], at: usize) -> __m256d {
        // SAFETY: within `values` (the caller's promise); AVX is part of AVX2.
        unsafe { _mm256_cvtps_pd(_mm_loadu_ps(values.as_ptr().add(at))) }
    }
}

/// Lane ← lane after [`crate::log_sum_exp::push_lane`] of `values[j]`, per column `j`,
/// over the first multiple of eight columns; returns how many it pushed (the caller
/// pushes the rest). Zero where [`available`] is false.
///
/// Why by hand: the compiler's loop took one vector at a time through the exponential's
/// chain, reloaded its constants every four columns and stored each lane's maximum with
/// a masked store (`vmaskmovpd`). Where the lanes' slots are larger than L1 (the narrow
/// column walk's batches) that loop still measured faster on two threads, so only
/// callers whose slots stay in L1 use this.
pub(crate) fn push_columns<T: Element>(max: &mut [f64], sum: &mut [f64], values: &[T]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if available() {
        return push_prefix(max, sum, values);
    }
    let _ = (max, sum, values);
    0
}

/// [`push_columns`] wherever AVX2 and FMA are present (the tests call it directly).
#[cfg(target_arch = "x86_64")]
fn push_prefix<T: Element>(max: &mut [f64], sum: &mut [f64], values: &[T]) -> usize {
    assert!(has_avx2_fma(), "the vector push needs AVX2 and FMA");
    let n = max.len().min(sum.len()).min(values.len());
    let whole = n - n % STEP;
    // SAFETY: the CPU has AVX2 and FMA (checked above), and every access below is
    // within the first `whole` elements of each slice.
    unsafe { push_whole(max, sum, values, whole) };
    whole
}

/// The pushes into columns `0 … whole` (a multiple of [`STEP`]).
///
/// # Safety
/// AVX2 and FMA must be present, and every slice must hold `whole` elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn push_whole<T: Element>(max: &mut [f64], sum: &mut [f64], values: &[T], whole: usize) {
    let mut at = 0;
    while at + WIDE_STEP <= whole {
        // SAFETY: `at + WIDE_STEP <= whole`, within every slice (the caller's promise).
        unsafe { push_at::<{ WIDE_STEP / 4 }, T>(max, sum, values, at) };
        at += WIDE_STEP;
    }
    while at < whole {
        // SAFETY: `at + STEP <= whole` (a multiple of STEP), as above.
        unsafe { push_at::<{ STEP / 4 }, T>(max, sum, values, at) };
        at += STEP;
    }
}

/// The pushes into the `4·V` columns from `at`.
///
/// # Safety
/// AVX2 and FMA must be present, and every slice must hold `at + 4·V` elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn push_at<const V: usize, T: Element>(
    max: &mut [f64],
    sum: &mut [f64],
    values: &[T],
    at: usize,
) {
    let sign = _mm256_set1_pd(-0.0);
    let one = _mm256_set1_pd(1.0);
    // SAFETY: within every slice (the caller's promise).
    let (m, s, x): ([__m256d; V], [__m256d; V], [__m256d; V]) = unsafe {
        let load = |v: &[f64], k: usize| _mm256_loadu_pd(v.as_ptr().add(at + 4 * k));
        (
            std::array::from_fn(|k| load(max, k)),
            std::array::from_fn(|k| load(sum, k)),
            std::array::from_fn(|k| T::load4(values, at + 4 * k)),
        )
    };
    // exp(−|x − max|): the difference with its sign bit set.
    let e = exp_vectors::<V>(std::array::from_fn(|k| {
        _mm256_or_pd(_mm256_sub_pd(x[k], m[k]), sign)
    }));
    for k in 0..V {
        // Equal elements add exactly 1 (equal infinities would give exp(NaN)).
        let e = _mm256_blendv_pd(e[k], one, _mm256_cmp_pd::<_CMP_EQ_OQ>(x[k], m[k]));
        let kept = _mm256_add_pd(s[k], e);
        // sum × e + 1, rounded twice as the scalar steps are (no fused multiply-add).
        let rescaled = _mm256_add_pd(_mm256_mul_pd(s[k], e), one);
        // x <= max keeps the maximum (false for NaN, which then becomes the maximum).
        let keep = _mm256_cmp_pd::<_CMP_LE_OQ>(x[k], m[k]);
        // SAFETY: as the loads.
        unsafe {
            _mm256_storeu_pd(
                max.as_mut_ptr().add(at + 4 * k),
                _mm256_blendv_pd(x[k], m[k], keep),
            );
            _mm256_storeu_pd(
                sum.as_mut_ptr().add(at + 4 * k),
                _mm256_blendv_pd(rescaled, kept, keep),
            );
        }
    }
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
    // Merges, unlike pushes, measured no faster in steps of four or eight vectors
    // (rows of 1024, columns of 1024 rows: results/cpu-dev-2core-stat-wide-steps).
    for at in (0..whole).step_by(STEP) {
        // SAFETY: `at + STEP <= whole`, within every slice (the caller's promise).
        unsafe { merge_at::<{ STEP / 4 }>(low_max, low_sum, high_max, high_sum, at) };
    }
}

/// The merges of the `4·V` columns from `at`.
///
/// # Safety
/// AVX2 and FMA must be present, and every slice must hold `at + 4·V` elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn merge_at<const V: usize>(
    low_max: &mut [f64],
    low_sum: &mut [f64],
    high_max: &[f64],
    high_sum: &[f64],
    at: usize,
) {
    // SAFETY: within every slice (the caller's promise).
    let load = |s: &[f64]| -> [__m256d; V] {
        std::array::from_fn(|k| unsafe { _mm256_loadu_pd(s.as_ptr().add(at + 4 * k)) })
    };
    let (lo_max, lo_sum) = (load(low_max), load(low_sum));
    let (hi_max, hi_sum) = (load(high_max), load(high_sum));
    let (max, sum) = merge_vectors(lo_max, lo_sum, hi_max, hi_sum);
    for k in 0..V {
        // SAFETY: as the loads.
        unsafe {
            _mm256_storeu_pd(low_max.as_mut_ptr().add(at + 4 * k), max[k]);
            _mm256_storeu_pd(low_sum.as_mut_ptr().add(at + 4 * k), sum[k]);
        }
    }
}

/// `merge_lanes` on `N` vectors of four lanes each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn merge_vectors<const N: usize>(
    lo_max: [__m256d; N],
    lo_sum: [__m256d; N],
    hi_max: [__m256d; N],
    hi_sum: [__m256d; N],
) -> ([__m256d; N], [__m256d; N]) {
    let sign = _mm256_set1_pd(-0.0);
    // −|lo_max − hi_max|: the difference with its sign bit set.
    let e = exp_vectors::<N>(std::array::from_fn(|k| {
        _mm256_or_pd(_mm256_sub_pd(lo_max[k], hi_max[k]), sign)
    }));
    let mut max = [_mm256_setzero_pd(); N];
    let mut sum = [_mm256_setzero_pd(); N];
    for k in 0..N {
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

/// The canonical exp of `N` vectors, each step for all of them before the next.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn exp_vectors<const N: usize>(t: [__m256d; N]) -> [__m256d; N] {
    const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const DOWN: i32 = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
    let log2e = _mm256_set1_pd(std::f64::consts::LOG2_E);
    let k = t.map(|t| _mm256_round_pd::<NEAREST>(_mm256_mul_pd(t, log2e)));
    // fma(−k, c, x) is −(k·c) + x with one rounding: _mm256_fnmadd_pd.
    let (hi, lo) = (_mm256_set1_pd(LN2_HI), _mm256_set1_pd(LN2_LO));
    let r: [__m256d; N] = std::array::from_fn(|j| _mm256_fnmadd_pd(k[j], hi, t[j]));
    let r: [__m256d; N] = std::array::from_fn(|j| _mm256_fnmadd_pd(k[j], lo, r[j]));
    let mut p = [_mm256_set1_pd(TAYLOR[0]); N];
    for c in &TAYLOR[1..] {
        let c = _mm256_set1_pd(*c);
        p = std::array::from_fn(|j| _mm256_fmadd_pd(p[j], r[j], c));
    }
    let one = _mm256_set1_pd(1.0);
    for _ in 0..2 {
        p = std::array::from_fn(|j| _mm256_fmadd_pd(p[j], r[j], one));
    }
    let half = _mm256_set1_pd(0.5);
    let k1 = k.map(|k| _mm256_round_pd::<DOWN>(_mm256_mul_pd(k, half)));
    std::array::from_fn(|j| {
        let v = _mm256_mul_pd(
            _mm256_mul_pd(p[j], pow2(k1[j])),
            pow2(_mm256_sub_pd(k[j], k1[j])),
        );
        let v = _mm256_blendv_pd(
            v,
            _mm256_setzero_pd(),
            _mm256_cmp_pd::<_CMP_LT_OQ>(t[j], _mm256_set1_pd(-746.0)),
        );
        _mm256_blendv_pd(
            v,
            _mm256_set1_pd(f64::INFINITY),
            _mm256_cmp_pd::<_CMP_GT_OQ>(t[j], _mm256_set1_pd(710.0)),
        )
    })
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
    use crate::log_sum_exp::{merge_lanes, push_lane};

    /// A seeded xorshift stream of uniform values in [0, 1).
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The `i`-th of a mix of classes: NaN, infinities and signed zeros, values far
    /// apart, small integers (which tie) and nearby values.
    fn awkward_value(i: usize, next: &mut impl FnMut() -> f64) -> f64 {
        let special = [f64::NAN, f64::NEG_INFINITY, f64::INFINITY, -0.0, 0.0];
        match i % 11 {
            0 => special[(next() * 5.0) as usize % 5],
            1 => next() * 1500.0 - 750.0,
            2 => (next() * 8.0).floor(),
            _ => next() * 40.0 - 20.0,
        }
    }

    /// Every merge is `merge_lanes`' bits, over lanes with infinities, NaN, equal
    /// maxima, signed zeros and wide and narrow gaps.
    #[test]
    fn merges_are_the_scalar_merges_bits() {
        if !has_avx2_fma() {
            eprintln!("no AVX2 and FMA here: nothing to compare");
            return;
        }
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        let n = 4099;
        let mut value = |i: usize| awkward_value(i, &mut next);
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

    /// Every push is `push_lane`'s bits, for f64 and f32 elements, over lanes and
    /// elements with infinities, NaN, ties, signed zeros and wide and narrow gaps.
    #[test]
    fn pushes_are_the_scalar_pushes_bits() {
        if !has_avx2_fma() {
            eprintln!("no AVX2 and FMA here: nothing to compare");
            return;
        }
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        let n = 4099;
        let mut value = |i: usize| awkward_value(i, &mut next);
        let lane_max: Vec<f64> = (0..n).map(&mut value).collect();
        let elements: Vec<f64> = (0..n).map(&mut value).collect();
        let lane_sum: Vec<f64> = (0..n).map(|i| (i % 7) as f64 * 13.25).collect();
        let narrow: Vec<f32> = elements.iter().map(|&x| x as f32).collect();
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let mut compared = 0;
        let mut check = |name: &str, xs: &[f64], done: usize, max: &[f64], sum: &[f64]| {
            assert_eq!(done, n - n % STEP, "{name}");
            for i in 0..done {
                let (m, s) = push_lane(lane_max[i], lane_sum[i], xs[i]);
                assert!(same(max[i], m), "{name} column {i}: max");
                assert!(same(sum[i], s), "{name} column {i}: sum");
                compared += usize::from(!m.is_nan() && s > 0.0 && s.is_finite());
            }
        };
        let (mut max, mut sum) = (lane_max.clone(), lane_sum.clone());
        let done = push_prefix(&mut max, &mut sum, &elements);
        check("f64", &elements, done, &max, &sum);
        let widened: Vec<f64> = narrow.iter().map(|&x| f64::from(x)).collect();
        let (mut max, mut sum) = (lane_max.clone(), lane_sum.clone());
        let done = push_prefix(&mut max, &mut sum, &narrow);
        check("f32", &widened, done, &max, &sum);
        assert!(compared > n, "most pushes give finite sums ({compared})");
    }
}
