//! Log-sum-exp of columns (neighbouring outputs whose elements lie one row apart) in the
//! canonical order of each column, without gathering: log-sum-exp lanes over a block of
//! columns, walked by [`crate::column_lanes`] (which says why the bits are each column's
//! alone). A lane's maxima and sums are two arrays over the block's columns, updated with
//! [`push_lane`] and [`merge_lanes`], the steps of the tile code in log_sum_exp.rs.
//!
//! A row of the block updates all its columns before the next row starts: the
//! exponential's 13 dependent fused multiply-adds then have a whole row of independent
//! columns in flight, as log-sum-exp's tiles push a whole row of lanes. Before this, each
//! task copied a tile of 64 columns out of its rows into scratch and reduced the columns
//! one by one; on 8192×8192 f32 the copy took twice the time of the arithmetic, its
//! row stride (32 KiB) mapping every row to the same L1 sets.
//!
//! The AVX-512 build is chosen at run time where the CPU has one (same operations on
//! twice the columns, so the same bits).

use std::mem::MaybeUninit;

use redlab_core::canonical::ROWS;
use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, DType, Error, Packed};

use crate::column_lanes::{
    finished_columns, for_present_lanes, states_of_columns, ColumnLanes, LaneArrays,
};
use crate::columns_moments::columns_run;
use crate::exp_merge_avx2::{self, Element};
use crate::log_sum_exp::{any_nan, merge_lanes, push_lane, ExpSum, PUSHED_INTO_EMPTY};

/// The canonical log-sum-exp states of every output of `selection` over `data`, where
/// the outputs are columns of f32 or f64; `None` where they are not.
pub(crate) fn columns(
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Vec<ExpSum>, Error>> {
    let (plan, run) = columns_run(selection)?;
    Some(match data.dtype() {
        DType::F32 => data
            .typed::<f32>()
            .map(|src| states_of_columns::<ExpLanes, _, _>(src, plan, run, f64::from)),
        DType::F64 => data
            .typed::<f64>()
            .map(|src| states_of_columns::<ExpLanes, _, _>(src, plan, run, |x| x)),
        _ => return None,
    })
}

/// Log-sum-exp of every output of `selection` over `data`, where the outputs are
/// columns of f32 or f64, as one typed array of the input's type (each column's value
/// computed in f64, then narrowed, as the `Value` path does); `None` where they are not.
/// The finish is [`ExpSum::value_inline`], for the lanes' vector finishing loop;
/// columns of several tiles finish outside it, one per 8193 or more rows, where its
/// library `fma` calls cost nothing measurable (same bits either way).
pub(crate) fn columns_packed(
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Packed, Error>> {
    let (plan, run) = columns_run(selection)?;
    Some(match data.dtype() {
        DType::F32 => data.typed::<f32>().map(|src| {
            Packed::of_vec(finished_columns::<ExpLanes, _, _, _>(
                src,
                plan,
                run,
                f64::from,
                |e| e.value_inline() as f32,
            ))
        }),
        DType::F64 => data.typed::<f64>().map(|src| {
            Packed::of_vec(finished_columns::<ExpLanes, _, _, _>(
                src,
                plan,
                run,
                |x| x,
                ExpSum::value_inline,
            ))
        }),
        _ => return None,
    })
}

/// The lanes of a block's columns: maxima (first) and sums (second).
#[derive(Default)]
struct ExpLanes(LaneArrays);

impl ColumnLanes for ExpLanes {
    type State = ExpSum;

    /// On the 2-core development machine, log-sum-exp of 32–512 f32 columns read
    /// 7.3–8.5 GB/s row by row against 4–6.5 lane by lane
    /// (results/cpu-dev-2core-column-lanes).
    const NARROW: usize = 512;

    fn reset(&mut self, lanes: usize, width: usize, empty: bool) {
        self.0
            .reset(lanes, width, empty.then_some((f64::NEG_INFINITY, 0.0)));
    }

    fn push_rows<T: Element>(
        &mut self,
        lane: usize,
        rows: &[&[T]],
        _count: usize,
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        let width = self.0.width();
        let (max, sum) = self.0.slots(lane, rows.len());
        push_exp_rows(max, sum, width, rows, to_f64);
    }

    fn full_lane<T: Element>(
        &mut self,
        lane: usize,
        rows: [&[T]; ROWS],
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        self.clear(lane);
        let (max, sum) = self.0.slots(lane, 1);
        let width = max.len();
        for row in rows {
            // One lane's slot (at most 1024 columns) stays in L1: the vector pushes read
            // 8192×8192 columns 1.27× as fast as the compiler's loop there. Narrow runs'
            // batches (`push_rows`) update up to 512 KiB of slots, where they were
            // 1.09–1.20× slower (results/cpu-dev-2core-stat-wide-steps), so those keep it.
            let done = exp_merge_avx2::push_columns(max, sum, &row[..width]);
            if done < width {
                let rest = [&row[done..width]];
                push_exp_rows(
                    &mut max[done..],
                    &mut sum[done..],
                    width - done,
                    &rest,
                    to_f64,
                );
            }
        }
    }

    fn clear(&mut self, lane: usize) {
        let (max, sum) = self.0.slots(lane, 1);
        max.fill(f64::NEG_INFINITY);
        sum.fill(0.0);
    }

    /// Without NaN in the row, a push into an empty lane is `(x, 1)`
    /// ([`PUSHED_INTO_EMPTY`]): no exponential. Columns of 3 rows had pushed lane 1's
    /// row through the general steps, one exponential of three per column.
    fn single_lane<T: Element>(
        &mut self,
        lane: usize,
        row: &[T],
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        if any_nan(row, to_f64) {
            self.clear(lane);
            self.push_rows(lane, &[row], 1, to_f64);
            return;
        }
        let (max, sum) = self.0.slots(lane, 1);
        for ((m, s), &x) in max.iter_mut().zip(sum.iter_mut()).zip(row) {
            (*m, *s) = (to_f64(x), PUSHED_INTO_EMPTY);
        }
    }

    /// Two single-element lanes merged in one pass: without NaN in either row, each
    /// push into an empty lane is `(x, 1)` ([`PUSHED_INTO_EMPTY`]), so a pair costs one
    /// exponential (the merge's) instead of three.
    fn single_pair<T: Element>(
        &mut self,
        lane: usize,
        low: &[T],
        high: &[T],
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        let (max, sum) = self.0.slots(lane, 1);
        exp_single_pair(max, sum, low, high, to_f64);
    }

    /// Eight single-element lanes (the first `present`) and their three merge steps in
    /// one pass, in registers: the same pushes and merges as pairs and two passes over
    /// the slots. Only partial octets: whole ones stay with the pairs (one thread, on
    /// the 2-core machine: columns of 300 and 100 rows, whose octets are partial and
    /// whose lanes without a partner were pushed one exponential each, took 0.62–0.64×
    /// and 0.67–0.82× the time; 1000×100, all octets whole, took 1.01–1.06× with them in
    /// one pass, results/cpu-dev-2core-lse-octets).
    fn single_octet<T: Element>(
        &mut self,
        lane: usize,
        rows: [&[T]; ROWS],
        present: usize,
        to_f64: impl Fn(T) -> f64 + Copy,
    ) -> bool {
        if present == ROWS {
            return false;
        }
        let (max, sum) = self.0.slots(lane, 1);
        for_present_lanes!(present, exp_octet_columns(max, sum, rows, to_f64));
        true
    }

    fn merge(&mut self, low: usize, high: usize, _low_count: usize, _high_count: usize) {
        let [(low_max, high_max), (low_sum, high_sum)] = self.0.pair(low, high);
        merge_exp_columns(low_max, low_sum, high_max, high_sum);
    }

    fn finish_into<R>(
        &self,
        lane: usize,
        _count: usize,
        out: &mut [MaybeUninit<R>],
        finish: impl Fn(ExpSum) -> R,
    ) {
        self.0
            .finish_into(lane, out, |max, sum| finish(ExpSum { max, sum }));
    }

    fn width(&self) -> usize {
        self.0.width()
    }
}

/// One more row of consecutive lanes over the block's columns, `rows[i]` into the i-th
/// `width` columns of `max` and `sum` ([`ExpSum::push`] per column): one dispatch for a
/// batch (8 columns read 4.8–5.0 GB/s with a call per row, 5.6–5.8 in batches of 64).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn push_exp_rows<T: Element>(
    max: &mut [f64],
    sum: &mut [f64],
    width: usize,
    rows: &[&[T]],
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    for ((max, sum), row) in max
        .chunks_exact_mut(width)
        .zip(sum.chunks_exact_mut(width))
        .zip(rows)
    {
        for ((m, s), &x) in max.iter_mut().zip(sum.iter_mut()).zip(&row[..width]) {
            (*m, *s) = push_lane(*m, *s, to_f64(x));
        }
    }
}

/// `ExpLanes`' `single_pair` over the block's columns.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn exp_single_pair<T: Copy>(
    max: &mut [f64],
    sum: &mut [f64],
    low: &[T],
    high: &[T],
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    let width = max.len();
    let (low, high) = (&low[..width], &high[..width]);
    if !any_nan(low, to_f64) && !any_nan(high, to_f64) {
        // Each lane is (x, 1): the pairs' merges are the columns' merges of those lanes,
        // on the vector path where there is one (converted BATCH columns at a time).
        const BATCH: usize = 64;
        let done = if exp_merge_avx2::available() {
            width - width % BATCH
        } else {
            0
        };
        if done > 0 {
            let (mut high_max, high_sum) = ([0.0; BATCH], [PUSHED_INTO_EMPTY; BATCH]);
            for at in (0..done).step_by(BATCH) {
                for (h, &y) in high_max.iter_mut().zip(&high[at..at + BATCH]) {
                    *h = to_f64(y);
                }
                let (m, s) = (&mut max[at..at + BATCH], &mut sum[at..at + BATCH]);
                for (m, &x) in m.iter_mut().zip(&low[at..at + BATCH]) {
                    *m = to_f64(x);
                }
                s.fill(PUSHED_INTO_EMPTY);
                exp_merge_avx2::merge_columns(m, s, &high_max, &high_sum);
            }
        }
        let lanes = max[done..].iter_mut().zip(&mut sum[done..]);
        for ((m, s), (&x, &y)) in lanes.zip(low[done..].iter().zip(&high[done..])) {
            (*m, *s) = merge_lanes(to_f64(x), PUSHED_INTO_EMPTY, to_f64(y), PUSHED_INTO_EMPTY);
        }
    } else {
        let lanes = max.iter_mut().zip(sum.iter_mut());
        for ((m, s), (&x, &y)) in lanes.zip(low.iter().zip(high)) {
            let (low_max, low_sum) = push_lane(f64::NEG_INFINITY, 0.0, to_f64(x));
            let (high_max, high_sum) = push_lane(f64::NEG_INFINITY, 0.0, to_f64(y));
            (*m, *s) = merge_lanes(low_max, low_sum, high_max, high_sum);
        }
    }
}

/// `ExpLanes`' `single_octet` with `K` lanes present: per column, lane m holds row m's
/// element (m < K) or nothing, and the fold's widths 4, 2 and 1 merge them, skipping
/// empty upper sides as the walk does. A lane of one element is `(x, 1)`, or NaN's
/// `(NaN, NaN)` as [`push_lane`] gives it (the merges then give NaN, as they do after
/// the push; a NaN's bits are not promised).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn exp_octet_columns<const K: usize, T: Copy>(
    max: &mut [f64],
    sum: &mut [f64],
    rows: [&[T]; ROWS],
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    let n = max.len();
    let rows = rows.map(|r| &r[..n]);
    let done = if exp_merge_avx2::available() {
        exp_octet_batches::<K, T>(max, sum, rows, to_f64)
    } else {
        0
    };
    let lanes = max[done..].iter_mut().zip(sum[done..].iter_mut());
    for (c, (m, s)) in lanes.enumerate().map(|(c, lane)| (c + done, lane)) {
        let mut lanes: [(f64, f64); ROWS] = std::array::from_fn(|j| {
            if j < K {
                let x = to_f64(rows[j][c]);
                (x, if x.is_nan() { x } else { PUSHED_INTO_EMPTY })
            } else {
                (f64::NEG_INFINITY, 0.0)
            }
        });
        octet_merges(K, |low, high| {
            let ((lo_max, lo_sum), (hi_max, hi_sum)) = (lanes[low], lanes[high]);
            lanes[low] = merge_lanes(lo_max, lo_sum, hi_max, hi_sum);
        });
        (*m, *s) = lanes[0];
    }
}

/// The merges of an octet whose first `present` lanes hold an element, in the fold's
/// order: widths 4, 2 and 1, lane `low` with lane `high`, skipping the empty upper sides
/// as the walk does (after width w's step the first min(present, w) lanes hold elements).
#[inline(always)]
fn octet_merges(present: usize, mut merge: impl FnMut(usize, usize)) {
    for width in [4, 2, 1] {
        for low in 0..width {
            if low + width < present.min(2 * width) {
                merge(low, low + width);
            }
        }
    }
}

/// [`exp_octet_columns`]' lanes and merges for whole batches of columns, each merge
/// over a batch's columns on the vector path (its exponentials side by side; one merge
/// depends on the last, so a column at a time waited on each in turn). Returns the
/// columns done.
fn exp_octet_batches<const K: usize, T: Copy>(
    max: &mut [f64],
    sum: &mut [f64],
    rows: [&[T]; ROWS],
    to_f64: impl Fn(T) -> f64 + Copy,
) -> usize {
    const BATCH: usize = 32;
    let n = max.len();
    let mut lane_max = [[0.0f64; BATCH]; ROWS];
    let mut lane_sum = [[0.0f64; BATCH]; ROWS];
    for at in (0..n - n % BATCH).step_by(BATCH) {
        for j in 0..K {
            let values = &rows[j][at..at + BATCH];
            for ((m, s), &x) in lane_max[j].iter_mut().zip(&mut lane_sum[j]).zip(values) {
                let x = to_f64(x);
                (*m, *s) = (x, if x.is_nan() { x } else { PUSHED_INTO_EMPTY });
            }
        }
        // The same steps as the column loop's, a batch at a time.
        octet_merges(K, |low, high| {
            let (low_max, high_max) = lane_max.split_at_mut(high);
            let (low_sum, high_sum) = lane_sum.split_at_mut(high);
            let merged = exp_merge_avx2::merge_columns(
                &mut low_max[low],
                &mut low_sum[low],
                &high_max[0],
                &high_sum[0],
            );
            debug_assert_eq!(merged, BATCH);
        });
        max[at..at + BATCH].copy_from_slice(&lane_max[0]);
        sum[at..at + BATCH].copy_from_slice(&lane_sum[0]);
    }
    n - n % BATCH
}

/// Lane ← lane (the lower indices) merged with a higher one, per column:
/// [`ExpSum::merge`].
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn merge_exp_columns(low_max: &mut [f64], low_sum: &mut [f64], high_max: &[f64], high_sum: &[f64]) {
    let done = exp_merge_avx2::merge_columns(low_max, low_sum, high_max, high_sum);
    let lanes = low_max[done..].iter_mut().zip(&mut low_sum[done..]);
    for ((m, s), (&hm, &hs)) in lanes.zip(high_max[done..].iter().zip(&high_sum[done..])) {
        (*m, *s) = merge_lanes(*m, *s, hm, hs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statistics::canonical;
    use crate::test_values::awkward;
    use redlab_core::shape::{AxisPlan, Layout};
    use redlab_core::Value;

    /// Columns of several shapes (narrow and wide runs, partial first and last tiles,
    /// several tiles, a 3-D array's middle axis) give the states of each column gathered
    /// and reduced alone, bit for bit.
    #[test]
    fn columns_equal_each_column_reduced_alone_bit_for_bit() {
        for (dims, axes) in [
            (vec![2usize, 9usize], vec![0isize]),
            (vec![7, 40], vec![0]),
            (vec![1023, 9], vec![0]),
            (vec![1025, 40], vec![0]),
            (vec![8192, 40], vec![0]),
            (vec![9000, 5], vec![0]),
            (vec![16_385, 17], vec![0]),
            (vec![3000, 1030], vec![0]),
            (vec![8193, 513], vec![0]),
            // Whole lanes over a block whose width is a multiple of the vector step.
            (vec![8192, 520], vec![0]),
            (vec![1000, 600], vec![0]),
            (vec![2, 700], vec![0]),
            // Lane 1 has no partner (3 is past the rows): written without an
            // exponential where its row holds no NaN, through the pushes where it does.
            (vec![3, 600], vec![0]),
            (vec![4, 2500, 6], vec![1]),
        ] {
            let n: usize = dims.iter().product();
            let rows = dims[dims.len() - 1 - axes.len()];
            // Few rows keep the infinities and NaN; longer columns would be all ∞ or NaN,
            // so there they are finite (repeats and signed zeros stay).
            let data: Vec<f64> = awkward(n, n as u64 + 7, true)
                .into_iter()
                .enumerate()
                .map(|(i, x)| {
                    if rows > 8 && !x.is_finite() {
                        (i % 61) as f64 - 30.0
                    } else {
                        x
                    }
                })
                .collect();
            check(&dims, &axes, &data);
        }
        // Wide runs of at most 1024 rows build lanes in pairs: a NaN or an infinity in one
        // row of a pair (and not in its other row) takes the general pushes.
        // Narrow runs of such columns go lane by lane too (1000×40).
        for (rows, cols) in [(1000, 600), (1000, 40)] {
            let mut data: Vec<f64> = awkward(rows * cols, 11, false)
                .into_iter()
                .map(|x| if x.is_finite() { x } else { 1.5 })
                .collect();
            for (row, col, x) in [
                (3, 5, f64::NAN),
                (515, 6, f64::NAN),
                (700, 9, f64::INFINITY),
                (10, 9, f64::NEG_INFINITY),
                (0, 0, f64::INFINITY),
            ] {
                data[row * cols + col] = x;
            }
            check(&[rows, cols], &[0], &data);
        }
    }

    /// Each column of `data` (of shape `dims`, reduced along `axes`) against the same
    /// column gathered and reduced alone, in f64 and f32.
    fn check(dims: &[usize], axes: &[isize], data: &[f64]) {
        {
            let data32: Vec<f32> = data.iter().map(|&x| x as f32).collect();
            let plan = AxisPlan::new(Layout::c_order(dims), Some(axes), false).expect("plan");
            for view in [ArrayRef::from_slice(data), ArrayRef::from_slice(&data32)] {
                let states = columns(view, Selection::Axes(&plan))
                    .expect("columns")
                    .expect("computes");
                assert_eq!(states.len(), plan.outputs());
                // The typed results are the states' values, narrowed as the values are.
                let packed = columns_packed(view, Selection::Axes(&plan))
                    .expect("columns")
                    .expect("computes");
                assert_eq!(packed.dtype, view.dtype());
                let values: Vec<_> = states
                    .iter()
                    .map(|e| crate::statistics::float_value(view.dtype(), e.value()))
                    .collect();
                let same_value = |a: &Value, b: &Value| match (a, b) {
                    (Value::Scalar(a), Value::Scalar(b)) => a.bits() == b.bits(),
                    _ => false,
                };
                let unpacked = packed.scalar_values();
                assert_eq!(unpacked.len(), values.len());
                assert!(unpacked.iter().zip(&values).all(|(a, b)| same_value(a, b)));
                for (k, state) in states.iter().enumerate() {
                    let column: Vec<f64> = plan.segment(k).map(|o| data[o]).collect();
                    let column32: Vec<f32> = plan.segment(k).map(|o| data32[o]).collect();
                    let alone: ExpSum = if view.dtype() == DType::F64 {
                        canonical(ArrayRef::from_slice(&column))
                    } else {
                        canonical(ArrayRef::from_slice(&column32))
                    }
                    .expect("alone");
                    let same =
                        |a: f64, b: f64| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
                    assert!(
                        same(state.max, alone.max) && same(state.sum, alone.sum),
                        "{dims:?} {} column {k}: {state:?} against {alone:?}",
                        view.dtype()
                    );
                }
            }
        }
    }
}
