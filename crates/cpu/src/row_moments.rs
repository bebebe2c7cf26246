//! Var and std of one row of at most 1024 elements, one partial canonical tile
//! ([`LANES`](redlab_core::canonical::LANES) lanes of one element each). The general
//! tile code clears 1024 lanes of state, pushes one element into each and folds them in
//! memory, four times the row's bytes in state; here the pushes are fused with the
//! fold's first steps. Rows of 1024 f32 read 9 GB/s the general way and 19–21 GB/s this
//! way (results/cpu-dev-2core-row-moments). Every lane takes the operations of
//! [`Moments::push`] and [`Moments::merge`] in the canonical fold's order, so the bits
//! are the general code's (`statistics`' test `moments_tiles_equal_the_written_steps`).

use crate::statistics::Moments;

/// The fold's steps while every lane holds the same count (`count` before the first):
/// Chan's weights are then exact constants, `c / 2c` = 0.5 and `c·c / 2c` = `c / 2`, so
/// no division is needed and the bits are the general merge's. Starts at `width` and
/// halves down to 1; returns the folded state.
#[inline(always)]
pub(crate) fn fold_equal_counts(
    mean: &mut [f64],
    m2: &mut [f64],
    count: f64,
    width: usize,
) -> Moments {
    let mut count = count;
    let mut width = width;
    while width >= 1 {
        let weight = count * 0.5;
        // Both halves sliced to `width` and zipped: indexing the upper half, whose
        // length the compiler does not know, kept a bounds check that made it scalar.
        let (low_mean, high_mean) = mean[..2 * width].split_at_mut(width);
        let (low_m2, high_m2) = m2[..2 * width].split_at_mut(width);
        merge_weighted(low_mean, low_m2, high_mean, high_m2, 0.5, weight);
        count += count;
        width /= 2;
    }
    Moments {
        count,
        mean: mean[0],
        m2: m2[0],
    }
}

/// [`Moments::push`] of `x` into an empty lane (count 1, so the reciprocal is 1): the
/// lane's mean and M2.
#[inline(always)]
pub(crate) fn push_into_empty(x: f64) -> (f64, f64) {
    let d = x - 0.0;
    let m = 0.0 + d * 1.0;
    (m, 0.0 + d * (x - m))
}

/// One row of a power of two `n` elements, 8 ≤ n ≤ 1024: lane `j` of a quarter row
/// takes elements `j`, `j + n/2`, `j + n/4` and `j + 3n/4` straight from the input,
/// pushes each into an empty lane and merges them as the fold's first two steps would;
/// only a quarter of the lanes are stored, and the rest of the fold runs on them. `Q` ≥
/// n/4 lanes of state.
#[inline(always)]
pub(crate) fn row_pow2<const Q: usize, T: Copy>(
    values: &[T],
    to_f64: impl Fn(T) -> f64,
) -> Moments {
    let quarter = values.len() / 4;
    let mut mean = [0.0f64; Q];
    let mut m2 = [0.0f64; Q];
    let push = |x: T| push_into_empty(to_f64(x));
    let (first, rest) = values.split_at(quarter);
    let (second, rest) = rest.split_at(quarter);
    let (third, fourth) = rest.split_at(quarter);
    for (j, (m, s)) in mean[..quarter]
        .iter_mut()
        .zip(&mut m2[..quarter])
        .enumerate()
    {
        // Step n/2 joins j with j + n/2 and j + n/4 with j + 3n/4 (count 1 each) ...
        let low = merge_equal(push(first[j]), push(third[j]), 0.5);
        let high = merge_equal(push(second[j]), push(fourth[j]), 0.5);
        // ... and step n/4 joins those two (count 2 each).
        (*m, *s) = merge_equal(low, high, 1.0);
    }
    fold_equal_counts(&mut mean, &mut m2, 4.0, quarter / 2)
}

/// One row of `n` elements, 2 ≤ n ≤ 1024, in arrays of means and M2 (vectorized, where
/// the general code walks whole states one by one). With `w` the largest power of two
/// below `n`, the fold's steps above `w` merge nothing (their upper lanes are empty);
/// step `w` joins the pushes of elements `j` and `j + w` (count 1 each) and is fused
/// with the pushes; the steps below it merge with [`Moments::merge`]'s arithmetic, every
/// lane filled. `H` ≥ w lanes of state.
///
/// A lane's count follows from its position: before the step of width `v`, lane `j`
/// holds the elements `i ≡ j (mod 2v)`, so `k + 1` of them for `j < r` and `k` for the
/// others, where `k` and `r` are the quotient and remainder of `n` by `2v`. A step's
/// merges therefore take at most three pairs of counts, each over a run of consecutive
/// lanes, and Chan's weights are computed once per run from the same operands instead
/// of with two divisions per lane (rows of 1000 and 300 read 10–15% faster).
#[inline(always)]
pub(crate) fn row_any<const H: usize, T: Copy>(values: &[T], to_f64: impl Fn(T) -> f64) -> Moments {
    let n = values.len();
    let half = n.next_power_of_two() / 2;
    let mut mean = [0.0f64; H];
    let mut m2 = [0.0f64; H];
    let push = |x: T| push_into_empty(to_f64(x));
    let (low, high) = values.split_at(half);
    // Every loop zips slices of its exact length: indexing, the compiler kept bounds
    // checks that made the loops scalar (half the time of rows of 100).
    for ((m, s), &x) in mean[..half].iter_mut().zip(&mut m2[..half]).zip(low) {
        (*m, *s) = push(x);
    }
    let rest = high.len();
    for ((m, s), &x) in mean[..rest].iter_mut().zip(&mut m2[..rest]).zip(high) {
        // Counts 1 and 1: both weights, 1/2 and 1·1/2, are 0.5 exactly.
        (*m, *s) = merge_equal((*m, *s), push(x), 0.5);
    }
    fold_runs(&mut mean, &mut m2, n, half / 2)
}

/// One row of `n` elements, 512 < n < 1024, the first two fold steps fused with the
/// pushes as in [`row_pow2`]: lane `j` of a quarter (256 lanes) takes elements `j`,
/// `j + 256`, `j + 512` and `j + 768` where they exist. Step 512 joins `j` with `j + 512`
/// and `j + 256` with `j + 768` (counts 1 and 1), step 256 the two results, whose counts
/// are 2 and 2 below `n − 768`, 2 and 1 below `n − 512`, and 1 and 1 above; only the
/// quarter is stored, where [`row_any`] stored half the row's lanes and merged them in
/// memory. The same operations on the same lanes in the same order, so the same bits.
#[inline(always)]
pub(crate) fn row_quarters<T: Copy>(values: &[T], to_f64: impl Fn(T) -> f64) -> Moments {
    const QUARTER: usize = 256;
    let n = values.len();
    debug_assert!(n > 2 * QUARTER && n < 4 * QUARTER);
    let mut mean = [0.0f64; QUARTER];
    let mut m2 = [0.0f64; QUARTER];
    let push = |x: T| push_into_empty(to_f64(x));
    let (first, rest) = values.split_at(QUARTER);
    let (second, rest) = rest.split_at(QUARTER);
    let (third, fourth) = rest.split_at(rest.len().min(QUARTER));
    // Lanes below `all` have four elements, below `three` three, the rest two.
    let (all, three) = (fourth.len(), third.len());
    let lanes = mean.iter_mut().zip(&mut m2);
    let quads = first.iter().zip(second).zip(third).zip(fourth);
    for ((m, s), (((&a, &b), &c), &d)) in lanes.zip(quads) {
        let low = merge_equal(push(a), push(c), 0.5);
        let high = merge_equal(push(b), push(d), 0.5);
        (*m, *s) = merge_equal(low, high, 1.0);
    }
    // Counts 2 and 1: Moments::merge's weights b / n and a·b / n from the same operands.
    let (a, b) = (2.0f64, 1.0f64);
    let (to_mean, to_m2) = (b / (a + b), a * b / (a + b));
    let lanes = mean[all..three].iter_mut().zip(&mut m2[all..three]);
    let triples = first[all..three]
        .iter()
        .zip(&second[all..three])
        .zip(&third[all..three]);
    for ((m, s), ((&x, &y), &z)) in lanes.zip(triples) {
        let (low_mean, low_m2) = merge_equal(push(x), push(z), 0.5);
        let (high_mean, high_m2) = push(y);
        let d = high_mean - low_mean;
        *m = low_mean + d * to_mean;
        *s = low_m2 + high_m2 + d * d * to_m2;
    }
    let lanes = mean[three..].iter_mut().zip(&mut m2[three..]);
    let pairs = first[three..].iter().zip(&second[three..]);
    for ((m, s), (&x, &y)) in lanes.zip(pairs) {
        (*m, *s) = merge_equal(push(x), push(y), 0.5);
    }
    fold_runs(&mut mean, &mut m2, n, QUARTER / 2)
}

/// The fold of a row of `n` elements from the step of `width` down, every lane below
/// `2·width` filled; a step's merges run per run of lanes with equal counts (see
/// [`row_any`]).
#[inline(always)]
fn fold_runs(mean: &mut [f64], m2: &mut [f64], n: usize, width: usize) -> Moments {
    let mut width = width;
    while width >= 1 {
        let span = 2 * width;
        let (k, r) = ((n / span) as f64, n % span);
        // Lanes below `both` merge k + 1 with k + 1; below `r`, k + 1 with k; then k with k.
        let both = r.saturating_sub(width);
        let mixed = r.min(width);
        let (low_mean, high_mean) = mean[..span].split_at_mut(width);
        let (low_m2, high_m2) = m2[..span].split_at_mut(width);
        for (lanes, (a, b)) in [
            (0..both, (k + 1.0, k + 1.0)),
            (both..mixed, (k + 1.0, k)),
            (mixed..width, (k, k)),
        ] {
            let total = a + b;
            merge_weighted(
                &mut low_mean[lanes.clone()],
                &mut low_m2[lanes.clone()],
                &high_mean[lanes.clone()],
                &high_m2[lanes],
                b / total,
                a * b / total,
            );
        }
        width /= 2;
    }
    Moments {
        count: n as f64,
        mean: mean[0],
        m2: m2[0],
    }
}

/// Chan's merge of two lanes of equal count `c` (mean and M2 each): the weights are
/// then exact constants, `c / 2c` = 0.5 and `c·c / 2c` = `weight` = `c / 2`.
#[inline(always)]
pub(crate) fn merge_equal(
    (low_mean, low_m2): (f64, f64),
    (high_mean, high_m2): (f64, f64),
    weight: f64,
) -> (f64, f64) {
    let d = high_mean - low_mean;
    (low_mean + d * 0.5, low_m2 + high_m2 + d * d * weight)
}

/// Chan's merge of lanes whose counts give the weights `to_mean` = `b / n` and `to_m2`
/// = `a·b / n` ([`Moments::merge`]'s arithmetic), lane by lane.
#[inline(always)]
pub(crate) fn merge_weighted(
    low_mean: &mut [f64],
    low_m2: &mut [f64],
    high_mean: &[f64],
    high_m2: &[f64],
    to_mean: f64,
    to_m2: f64,
) {
    for (((m, s), &hm), &hs) in low_mean.iter_mut().zip(low_m2).zip(high_mean).zip(high_m2) {
        let d = hm - *m;
        *m += d * to_mean;
        *s = *s + hs + d * d * to_m2;
    }
}
