//! Variance and standard deviation of columns (neighbouring outputs whose elements lie
//! one row apart, as along axis 0 of a C-order matrix) in the canonical order of each
//! column, without gathering: Welford lanes over a block of columns, walked by
//! [`crate::column_lanes`] (which says why the bits are each column's alone).
//!
//! A lane's mean and M2 are two arrays over the block's columns; the lane's count is
//! shared by all of them, so Welford's reciprocal and Chan's weights are scalars.
//!
//! Before this, each column was gathered element by element and reduced alone, which
//! read 8192×8192 f32 columns at 1.0–1.8 GB/s on the 2-core development machine
//! (results/cpu-dev-2core-stats).
//!
//! Wide blocks of columns run an AVX-512 build where the CPU has one (same operations,
//! same bits; see [`full_lane`]).

use std::mem::MaybeUninit;

use redlab_core::canonical::ROWS;
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, DType, Error, Packed};

use crate::column_lanes::{finished_columns, for_present_lanes, ColumnLanes, LaneArrays};
use crate::exp_merge_avx2::Element;
use crate::row_moments::{merge_equal, merge_weighted, push_into_empty};
use crate::statistics::{spread, Moments, Statistic};

/// The lanes of a block's columns: means (first) and M2 (second).
#[derive(Default)]
struct MomentLanes(LaneArrays);

impl ColumnLanes for MomentLanes {
    type State = Moments;

    /// On the 2-core development machine, var of 32–128 f32 columns read 12–19 GB/s row
    /// by row against 9–12 lane by lane; 256 columns read as fast either way, 512
    /// columns 17–18 row by row against 21–22 (results/cpu-dev-2core-column-lanes).
    const NARROW: usize = 256;

    fn reset(&mut self, lanes: usize, width: usize, empty: bool) {
        self.0.reset(lanes, width, empty.then_some((0.0, 0.0)));
    }

    fn push_rows<T: Element>(
        &mut self,
        lane: usize,
        rows: &[&[T]],
        count: usize,
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        let width = self.0.width();
        let (mean, m2) = self.0.slots(lane, rows.len());
        push_rows(mean, m2, width, rows, 1.0 / count as f64, to_f64);
    }

    fn full_lane<T: Element>(
        &mut self,
        lane: usize,
        rows: [&[T]; ROWS],
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        let (mean, m2) = self.0.slots(lane, 1);
        full_lane(mean, m2, rows, to_f64);
    }

    fn clear(&mut self, lane: usize) {
        let (mean, m2) = self.0.slots(lane, 1);
        mean.fill(0.0);
        m2.fill(0.0);
    }

    /// Both pushes into empty lanes and Chan's merge of counts 1 and 1 (weights 0.5 and
    /// 0.5), column by column, in one pass: two clears, two pushes and a merge had
    /// passed over the lanes' state five times.
    fn single_pair<T: Element>(
        &mut self,
        lane: usize,
        low: &[T],
        high: &[T],
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        let (mean, m2) = self.0.slots(lane, 1);
        single_pair(mean, m2, low, high, to_f64);
    }

    fn single_octet<T: Element>(
        &mut self,
        lane: usize,
        rows: [&[T]; ROWS],
        present: usize,
        to_f64: impl Fn(T) -> f64 + Copy,
    ) -> bool {
        let (mean, m2) = self.0.slots(lane, 1);
        single_octet(mean, m2, rows, present, to_f64);
        true
    }

    /// Chan's merge for every column: the arithmetic of [`Moments::merge`].
    fn merge(&mut self, low: usize, high: usize, low_count: usize, high_count: usize) {
        let [(low_mean, high_mean), (low_m2, high_m2)] = self.0.pair(low, high);
        if low_count == 0 {
            low_mean.copy_from_slice(high_mean);
            low_m2.copy_from_slice(high_m2);
        } else {
            let (a, b) = (low_count as f64, high_count as f64);
            let n = a + b;
            let (to_mean, to_m2) = (b / n, a * b / n);
            merge_columns(low_mean, low_m2, high_mean, high_m2, to_mean, to_m2);
        }
    }

    fn finish_into<R>(
        &self,
        lane: usize,
        count: usize,
        out: &mut [MaybeUninit<R>],
        finish: impl Fn(Moments) -> R,
    ) {
        self.0.finish_into(lane, out, |mean, m2| {
            finish(Moments {
                count: count as f64,
                mean,
                m2,
            })
        });
    }

    fn width(&self) -> usize {
        self.0.width()
    }
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn merge_columns(
    low_mean: &mut [f64],
    low_m2: &mut [f64],
    high_mean: &[f64],
    high_m2: &[f64],
    to_mean: f64,
    to_m2: f64,
) {
    merge_weighted(low_mean, low_m2, high_mean, high_m2, to_mean, to_m2);
}

/// One row's Welford update of consecutive lanes of one count over the block's columns,
/// `rows[i]` into the i-th `width` columns of `mean` and `m2` (one dispatch for a batch):
/// each lane has seen `count − 1` rows before, `inverse` is `1 / count`.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn push_rows<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    width: usize,
    rows: &[&[T]],
    inverse: f64,
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    let lanes = mean.chunks_exact_mut(width).zip(m2.chunks_exact_mut(width));
    for ((mean, m2), row) in lanes.zip(rows) {
        for ((m, s), &x) in mean.iter_mut().zip(m2.iter_mut()).zip(&row[..width]) {
            let x = to_f64(x);
            let d = x - *m;
            *m += d * inverse;
            *s += d * (x - *m);
        }
    }
}

/// [`MomentLanes`]' `single_pair` over the block's columns.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn single_pair<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    low: &[T],
    high: &[T],
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    let pushes = low.iter().zip(high);
    for ((m, s), (&x, &y)) in mean.iter_mut().zip(m2.iter_mut()).zip(pushes) {
        let low = push_into_empty(to_f64(x));
        let high = push_into_empty(to_f64(y));
        (*m, *s) = merge_equal(low, high, 0.5);
    }
}

/// [`MomentLanes`]' `single_octet` over the block's columns: each column's first
/// `present` values (the others are past the rows) pushed into empty lanes and folded
/// in registers, lane `m` with `m + 4`, then `m + 2`, then `m + 1`, by
/// [`Moments::merge`] itself, its counts constants in each build (one per `present`),
/// so that its tests and weights fold away.
fn single_octet<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    rows: [&[T]; ROWS],
    present: usize,
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    for_present_lanes!(present, octet_columns(mean, m2, rows, to_f64));
}

/// [`single_octet`] with `K` lanes present.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn octet_columns<const K: usize, T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    rows: [&[T]; ROWS],
    to_f64: impl Fn(T) -> f64 + Copy,
) {
    let n = mean.len();
    let rows = rows.map(|r| &r[..n]);
    for (c, (m, s)) in mean.iter_mut().zip(m2.iter_mut()).enumerate() {
        let mut lanes: [Moments; ROWS] = std::array::from_fn(|j| {
            if j < K {
                let (mean, m2) = push_into_empty(to_f64(rows[j][c]));
                Moments {
                    count: 1.0,
                    mean,
                    m2,
                }
            } else {
                Moments::EMPTY
            }
        });
        for width in [4, 2, 1] {
            for j in 0..width {
                lanes[j] = lanes[j].merge(lanes[j + width]);
            }
        }
        (*m, *s) = (lanes[0].mean, lanes[0].m2);
    }
}

/// A lane's eight rows over the block's columns, from no elements: Welford's update
/// row after row (the reciprocals 1, 1/2, … 1/8), as [`push_rows`] eight times.
///
/// Blocks of at least [`WIDE_BLOCK`] columns run the AVX-512 build where the CPU has
/// one (8192×8192 f32 columns: 22–23 against 28–29 GB/s); narrower ones the AVX2 build,
/// which was faster there (2^22×32: 10.0 against 6.6 GB/s), results/cpu-dev-2core-avx512.
fn full_lane<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    rows: [&[T]; ROWS],
    to_f64: impl Fn(T) -> f64,
) {
    if mean.len() >= WIDE_BLOCK {
        full_lane_wide(mean, m2, rows, to_f64)
    } else {
        full_lane_narrow(mean, m2, rows, to_f64)
    }
}

/// Columns from which [`full_lane`] takes the AVX-512 build.
const WIDE_BLOCK: usize = 256;

/// [`full_lane_body`] with AVX-512 where the CPU has it.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn full_lane_wide<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    rows: [&[T]; ROWS],
    to_f64: impl Fn(T) -> f64,
) {
    full_lane_body(mean, m2, rows, to_f64)
}

/// [`full_lane_body`] with AVX2 at most.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn full_lane_narrow<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    rows: [&[T]; ROWS],
    to_f64: impl Fn(T) -> f64,
) {
    full_lane_body(mean, m2, rows, to_f64)
}

/// The steps of [`full_lane`].
#[inline(always)]
fn full_lane_body<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    rows: [&[T]; ROWS],
    to_f64: impl Fn(T) -> f64,
) {
    // BLOCK columns at a time, rows outside: each column's update is a chain through
    // its eight rows, and BLOCK independent chains keep the floating-point units busy
    // (one column at a time waited on each chain's latency: 2.3 against 1.1 GB/s
    // before, rows of var at 7.5).
    const BLOCK: usize = 16;
    let n = mean.len();
    let rows = rows.map(|r| &r[..n]);
    let inverses: [f64; ROWS] = std::array::from_fn(|j| 1.0 / (j + 1) as f64);
    let whole = n - n % BLOCK;
    for c0 in (0..whole).step_by(BLOCK) {
        let mut m = [0.0f64; BLOCK];
        let mut s = [0.0f64; BLOCK];
        for (row, &inverse) in rows.iter().zip(&inverses) {
            let row = &row[c0..c0 + BLOCK];
            for q in 0..BLOCK {
                let x = to_f64(row[q]);
                let d = x - m[q];
                m[q] += d * inverse;
                s[q] += d * (x - m[q]);
            }
        }
        mean[c0..c0 + BLOCK].copy_from_slice(&m);
        m2[c0..c0 + BLOCK].copy_from_slice(&s);
    }
    for c in whole..n {
        let (mut m, mut s) = (0.0f64, 0.0f64);
        for (row, &inverse) in rows.iter().zip(&inverses) {
            let x = to_f64(row[c]);
            let d = x - m;
            m += d * inverse;
            s += d * (x - m);
        }
        mean[c] = m;
        m2[c] = s;
    }
}

/// Var or std of every output of `selection` over `data`, where the outputs are
/// columns of f32 or f64 ([`columns_run`]), as one typed array of the statistic's
/// result type; `None` where they are not.
pub fn columns(
    stat: Statistic,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Packed, Error>> {
    let (Statistic::Var { ddof } | Statistic::Std { ddof }) = stat else {
        return None;
    };
    let (plan, run) = columns_run(selection)?;
    let value = move |m: Moments| spread(stat, m.count, m.m2, ddof);
    Some(match data.dtype() {
        DType::F32 => data.typed::<f32>().map(|src| {
            // f32 in, f32 out (`Statistic::result_dtype`).
            Packed::of_vec(finished_columns::<MomentLanes, _, _, _>(
                src,
                plan,
                run,
                f64::from,
                move |m| value(m) as f32,
            ))
        }),
        DType::F64 => data.typed::<f64>().map(|src| {
            Packed::of_vec(finished_columns::<MomentLanes, _, _, _>(
                src,
                plan,
                run,
                |x| x,
                value,
            ))
        }),
        _ => return None,
    })
}

/// The plan and run of neighbouring outputs where `selection` is columns: outputs with
/// scattered elements whose neighbours read neighbouring elements (shared with the
/// float sums of columns in lib.rs).
pub(crate) fn columns_run(selection: Selection<'_>) -> Option<(&AxisPlan, usize)> {
    let Selection::Axes(plan) = selection else {
        return None;
    };
    if plan.outputs() == 0 || plan.segment_len() == 0 || plan.contiguous(0).is_some() {
        return None;
    }
    let run = plan.output_runs().filter(|&r| r > 1)?;
    Some((plan, run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_core::shape::{AxisPlan, Layout};

    /// Seeded values of many magnitudes, so that a changed merge order shows in the bits.
    fn values(n: usize, seed: u64) -> Vec<f64> {
        crate::test_values::stream(seed)
            .take(n)
            .map(|state| {
                let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
                (unit - 0.3) * 10f64.powi((state % 7) as i32 - 2)
            })
            .collect()
    }

    #[test]
    fn columns_equal_each_column_reduced_alone_bit_for_bit() {
        // Up to 512 columns run narrow (row by row), more wide (lane by lane); rows cover
        // a partial first tile, exact lanes, whole tiles and a partial last tile.
        for (rows, cols) in [
            (2, 9),
            (7, 40),
            (1023, 9),
            (1024, 40),
            (1025, 9),
            (8192, 40),
            (9000, 9),
            (16_385, 40),
            (3000, 1030),
            (8193, 513),
            (1000, 600),
            (1024, 1030),
            (513, 300),
            // Two and three rows on the wide path: two and four used lanes.
            (2, 600),
            (3, 700),
            // Columns of at most 1024 rows go lane by lane at any width, eight single
            // lanes at a time where all eight hold a row: every octet whole (8, 1024),
            // some whole and some not (9, 1000), and wider than a block (2100).
            (8, 70),
            (9, 33),
            (1000, 100),
            (1024, 9),
            (700, 2100),
        ] {
            let x = values(rows * cols, (rows * 31 + cols) as u64);
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let layout = Layout::c_order(&[rows, cols]);
            let plan = AxisPlan::new(layout, Some(&[0]), false).expect("plan");
            for stat in [Statistic::Var { ddof: 1.0 }, Statistic::Std { ddof: 0.0 }] {
                for data in [ArrayRef::from_slice(&x), ArrayRef::from_slice(&x32)] {
                    let got = columns(stat, data, Selection::Axes(&plan))
                        .expect("columns")
                        .expect("computes");
                    assert_eq!(got.len(), cols);
                    assert_eq!(got.dtype, stat.result_dtype(data.dtype()));
                    for (c, got) in got.scalar_values().iter().enumerate() {
                        let want = crate::statistics::of_gathered(stat, data, &plan, c);
                        assert_eq!(
                            *got,
                            want,
                            "{stat:?} {} rows={rows} cols={cols} column {c}",
                            data.dtype()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn infinities_and_nan_in_short_columns_give_numpys_nan() {
        // An infinity or NaN in any of an octet's eight rows makes its column's var NaN,
        // as the general pushes and merges do (numpy's var is NaN there too); the other
        // columns keep their bits.
        let (rows, cols) = (1000, 40);
        let mut x = values(rows * cols, 5);
        let specials = [
            (3, 5, f64::NAN),
            (515, 6, f64::INFINITY),
            (999, 7, f64::NEG_INFINITY),
            (0, 8, f64::INFINITY),
        ];
        for (row, col, v) in specials {
            x[row * cols + col] = v;
        }
        let plan = AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[0]), false).expect("plan");
        let data = ArrayRef::from_slice(&x);
        let stat = Statistic::Var { ddof: 0.0 };
        let got = columns(stat, data, Selection::Axes(&plan))
            .expect("columns")
            .expect("computes");
        for (c, got) in got.scalar_values().iter().enumerate() {
            let want = crate::statistics::of_gathered(stat, data, &plan, c);
            let special = specials.iter().any(|&(_, col, _)| col == c);
            let nan = got.scalar().is_some_and(|v| v.is_nan());
            assert_eq!(nan, special, "column {c}: {got:?}");
            assert!(got.same_as(&want), "column {c}: {got:?} against {want:?}");
        }
    }

    #[test]
    fn short_columns_cut_into_blocks_for_a_pool_keep_each_columns_bits() {
        // On a pool of three threads, 600 columns of 1000 rows are three blocks of 200
        // columns, and 130 columns of 9 rows three (48, 48 and 34).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("pool");
        for (rows, cols) in [(1000, 600), (9, 130)] {
            let x = values(rows * cols, (rows + cols) as u64);
            let plan =
                AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[0]), false).expect("plan");
            let data = ArrayRef::from_slice(&x);
            let stat = Statistic::Var { ddof: 0.0 };
            let got = pool
                .install(|| columns(stat, data, Selection::Axes(&plan)))
                .expect("columns")
                .expect("computes");
            for (c, got) in got.scalar_values().iter().enumerate() {
                let want = crate::statistics::of_gathered(stat, data, &plan, c);
                assert_eq!(*got, want, "rows={rows} cols={cols} column {c}");
            }
        }
    }

    #[test]
    fn rows_and_other_statistics_are_left_to_the_general_path() {
        let x = values(64, 3);
        let layout = Layout::c_order(&[8, 8]);
        let rows = AxisPlan::new(layout.clone(), Some(&[1]), false).expect("plan");
        let data = ArrayRef::from_slice(&x);
        assert!(columns(Statistic::Var { ddof: 0.0 }, data, Selection::Axes(&rows)).is_none());
        let cols = AxisPlan::new(layout, Some(&[0]), false).expect("plan");
        assert!(columns(Statistic::LogSumExp, data, Selection::Axes(&cols)).is_none());
    }
}
