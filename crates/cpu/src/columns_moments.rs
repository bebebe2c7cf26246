//! Variance and standard deviation of columns (neighbouring outputs whose elements lie
//! one row apart, as along axis 0 of a C-order matrix) in the canonical order of each
//! column, without gathering: columns.rs's layout of the work, with Welford lanes.
//!
//! Every column runs exactly the steps of [`crate::statistics`]: each lane of a tile
//! takes its rows in increasing index (Welford, a reciprocal per row), the lanes fold
//! by halving with Chan's merge (the lower lanes on the left), and the tiles join in
//! the aligned pairwise tree. Its bits are therefore those of the same column reduced
//! alone. Only the order of the memory traffic changes, and the work is vectorized
//! across columns, with a lane's mean and M2 in two arrays over the block's columns
//! and the lane's count shared by all of them:
//!
//! - **Narrow runs** (at most 16 columns: the lanes of all of them fit 256 KiB): rows
//!   are read in order, each updating one lane of every column.
//! - **Wide runs**: one lane at a time (its eight rows, each a contiguous stretch of
//!   the block's columns) in the order the halving fold pairs lanes, bit-reversed,
//!   joined on a stack like a binary counter.
//!
//! Before this, each column was gathered element by element and reduced alone, which
//! read 8192×8192 f32 columns at 1.0–1.8 GB/s on the 2-core development machine
//! (results/cpu-dev-2core-stats).
//!
//! Wide blocks of columns run an AVX-512 build where the CPU has one (same operations,
//! same bits; see [`full_lane`]).

use rayon::prelude::*;
use redlab_core::canonical::{tile_count, LANES, ROWS, TILE};
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, DType, Error, Value};

use crate::statistics::{spread_value, tree, Moments, Statistic};

/// Bytes of lane state (mean and M2, 16 bytes per lane and column) a narrow block
/// keeps: within L2.
const LANE_BYTES: usize = 256 << 10;

/// Columns a wide-run block updates per row: 16 KiB of f64 state per array.
const WIDE_COLUMNS: usize = 1024;

/// Levels of the lanes' fold tree, plus one for the lane being built.
const FOLD_LEVELS: usize = LANES.trailing_zeros() as usize + 1;

/// The lanes of a block's columns: lane-major means and M2 (lane `l` of column `c` at
/// `l·width + c`) and each lane's count.
struct Lanes {
    width: usize,
    count: Vec<f64>,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

impl Lanes {
    fn new(lanes: usize, width: usize) -> Lanes {
        Lanes {
            width,
            count: vec![0.0; lanes],
            mean: vec![0.0; lanes * width],
            m2: vec![0.0; lanes * width],
        }
    }

    /// Lane `low` ← Chan's merge of lane `low` (the lower indices) with lane `high`, for
    /// every column: the arithmetic of [`Moments::merge`].
    fn merge(&mut self, low: usize, high: usize) {
        let (a, b) = (self.count[low], self.count[high]);
        if b == 0.0 {
            return;
        }
        let w = self.width;
        let (lo, hi) = (low * w, high * w);
        if a == 0.0 {
            self.mean.copy_within(hi..hi + w, lo);
            self.m2.copy_within(hi..hi + w, lo);
        } else {
            let n = a + b;
            let (to_mean, to_m2) = (b / n, a * b / n);
            let (low_mean, high_mean) = split_pair(&mut self.mean, lo, hi, w);
            let (low_m2, high_m2) = split_pair(&mut self.m2, lo, hi, w);
            merge_columns(low_mean, low_m2, high_mean, high_m2, to_mean, to_m2);
        }
        self.count[low] = a + b;
    }
}

/// The two disjoint `w`-element stretches of `v` at `lo` < `hi`.
fn split_pair(v: &mut [f64], lo: usize, hi: usize, w: usize) -> (&mut [f64], &[f64]) {
    let (left, right) = v.split_at_mut(hi);
    (&mut left[lo..lo + w], &right[..w])
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
    for (((m, s), &hm), &hs) in low_mean.iter_mut().zip(low_m2).zip(high_mean).zip(high_m2) {
        let d = hm - *m;
        *m += d * to_mean;
        *s = *s + hs + d * d * to_m2;
    }
}

/// One row's Welford update of a lane over the block's columns: the lane has seen
/// `count − 1` rows before, `inverse` is `1 / count`.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn push_row<T: Copy>(
    mean: &mut [f64],
    m2: &mut [f64],
    row: &[T],
    inverse: f64,
    to_f64: impl Fn(T) -> f64,
) {
    for ((m, s), &x) in mean.iter_mut().zip(m2.iter_mut()).zip(row) {
        let x = to_f64(x);
        let d = x - *m;
        *m += d * inverse;
        *s += d * (x - *m);
    }
}

/// A lane's eight rows over the block's columns, from no elements: Welford's update
/// row after row (the reciprocals 1, 1/2, … 1/8), as [`push_row`] eight times.
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
/// columns of f32 or f64 ([`columns_run`]); `None` where they are not.
pub fn columns(
    stat: Statistic,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Vec<Value>, Error>> {
    let (Statistic::Var { ddof } | Statistic::Std { ddof }) = stat else {
        return None;
    };
    let (plan, run) = columns_run(selection)?;
    let out = stat.result_dtype(data.dtype());
    let finish = |states: Vec<Moments>| -> Vec<Value> {
        states
            .into_iter()
            .map(|m| spread_value(stat, out, m.count, m.m2, ddof))
            .collect()
    };
    Some(match data.dtype() {
        DType::F32 => data
            .typed::<f32>()
            .map(|src| finish(moments_of_columns(src, plan, run, f64::from))),
        DType::F64 => data
            .typed::<f64>()
            .map(|src| finish(moments_of_columns(src, plan, run, |x| x))),
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

/// The canonical moments of outputs `0 … plan.outputs() − 1`.
fn moments_of_columns<T: Copy + Send + Sync, F: Fn(T) -> f64 + Copy + Sync>(
    src: &[T],
    plan: &AxisPlan,
    run: usize,
    to_f64: F,
) -> Vec<Moments> {
    let narrow = LANE_BYTES / (LANES * 16);
    let wide = run > narrow;
    let width = if wide { WIDE_COLUMNS } else { run };
    let blocks_per_run = run.div_ceil(width);
    let blocks = (plan.outputs() / run) * blocks_per_run;
    let tiles = tile_count(plan.segment_len());
    // One task per block and tile, as in columns.rs.
    let roots: Vec<Vec<Moments>> = (0..blocks * tiles)
        .into_par_iter()
        .map(|task| {
            let (b, t) = (task / tiles, task % tiles);
            let first = (b / blocks_per_run) * run + (b % blocks_per_run) * width;
            let w = width.min(run - (b % blocks_per_run) * width);
            if wide {
                tile_by_lanes(src, plan, first, w, t, to_f64)
            } else {
                tile_by_rows(src, plan, first, w, t, to_f64)
            }
        })
        .collect();
    roots
        .chunks(tiles)
        .flat_map(|block| {
            (0..block[0].len()).map(move |c| tree(block.iter().map(|tile| tile[c]).collect()))
        })
        .collect()
}

/// The states of the block's columns in lane 0 after the fold.
fn roots_of(lanes: &Lanes) -> Vec<Moments> {
    (0..lanes.width)
        .map(|c| Moments {
            count: lanes.count[0],
            mean: lanes.mean[c],
            m2: lanes.m2[c],
        })
        .collect()
}

/// Tile `t`'s states of outputs `first … first + width − 1`, reading rows in order.
fn tile_by_rows<T: Copy, F: Fn(T) -> f64 + Copy + Sync>(
    src: &[T],
    plan: &AxisPlan,
    first: usize,
    width: usize,
    t: usize,
    to_f64: F,
) -> Vec<Moments> {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    let mut lanes = Lanes::new(LANES, width);
    for (r, offset) in plan.segment_from(first, t * TILE).take(rows).enumerate() {
        let lane = r % LANES;
        let count = (r / LANES + 1) as f64;
        lanes.count[lane] = count;
        let at = lane * width..(lane + 1) * width;
        push_row(
            &mut lanes.mean[at.clone()],
            &mut lanes.m2[at],
            &src[offset..offset + width],
            1.0 / count,
            to_f64,
        );
    }
    let mut half = LANES / 2;
    while half >= 1 {
        for j in 0..half {
            lanes.merge(j, j + half);
        }
        half /= 2;
    }
    roots_of(&lanes)
}

/// Tile `t`'s states of outputs `first … first + width − 1`, one lane at a time in the
/// fold's order.
fn tile_by_lanes<T: Copy, F: Fn(T) -> f64 + Copy + Sync>(
    src: &[T],
    plan: &AxisPlan,
    first: usize,
    width: usize,
    t: usize,
    to_f64: F,
) -> Vec<Moments> {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    let offsets: Vec<usize> = plan.segment_from(first, t * TILE).take(rows).collect();
    // Slots 0 … depth − 1 hold the roots of finished subtrees of lanes, oldest first;
    // slot `depth` is the lane being built.
    let mut stack = Lanes::new(FOLD_LEVELS, width);
    let mut depth = 0;
    for p in 0..LANES {
        let lane = p.reverse_bits() >> (usize::BITS - LANES.trailing_zeros());
        let at = depth * width..(depth + 1) * width;
        if lane + (ROWS - 1) * LANES < rows {
            // A full lane: its eight rows in one pass, eight streams at once, each
            // column's state in registers until it is stored.
            let rows: [&[T]; ROWS] = std::array::from_fn(|j| {
                let offset = offsets[lane + j * LANES];
                &src[offset..offset + width]
            });
            full_lane(&mut stack.mean[at.clone()], &mut stack.m2[at], rows, to_f64);
            stack.count[depth] = ROWS as f64;
        } else {
            stack.mean[at.clone()].fill(0.0);
            stack.m2[at.clone()].fill(0.0);
            let mut count = 0usize;
            for j in 0..ROWS {
                let Some(&offset) = offsets.get(lane + j * LANES) else {
                    break;
                };
                count += 1;
                push_row(
                    &mut stack.mean[at.clone()],
                    &mut stack.m2[at.clone()],
                    &src[offset..offset + width],
                    1.0 / count as f64,
                    to_f64,
                );
            }
            stack.count[depth] = count as f64;
        }
        depth += 1;
        // Like a binary counter: each trailing one of p closes a pair of subtrees.
        for _ in 0..p.trailing_ones() {
            stack.merge(depth - 2, depth - 1);
            depth -= 1;
        }
    }
    debug_assert_eq!(depth, 1);
    roots_of(&stack)
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
        // 9 columns run narrow, 40 wide; rows cover a partial first tile, exact lanes,
        // whole tiles and a partial last tile.
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
                    for (c, got) in got.iter().enumerate() {
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
