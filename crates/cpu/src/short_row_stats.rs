//! Var, std and log-sum-exp of short rows (contiguous outputs of at most
//! [`SHORT_ROWS`] = 128 elements, as along the last axis of a 2^20×32 matrix), eight
//! rows at a time (see [`moments_rows`] and [`exp_sum_rows`] for how each lays them
//! out), results written straight into the typed array.
//!
//! A row this short is one partial canonical tile: element `j` is lane `j`'s only
//! element, and the lanes fold by halving, skipping merges with an empty upper lane
//! ([`crate::statistics`]). Reduced one row at a time, the fold's narrow steps (16, 8,
//! 4, 2, 1 merges) leave most of a vector idle, and each row pays a dispatch; var of
//! 2^20 rows of 32 f32 read about 2 GB/s, below numpy. Here the same steps run on
//! eight rows at once: lane `j` of every row holds the same count, so the counts (and
//! Chan's weights) are scalars and only the values differ between rows. Each row gets
//! exactly the operations, in the same order, as when reduced alone, so the same bits
//! (the tests compare the two bit for bit).

use crate::fork::map_chunks_mut;
use crate::short_rows::EvenRows;
use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, DType, Error, Packed, Value};

use crate::log_sum_exp::{any_nan, merge_lanes, push_lane, ExpSum, PUSHED_INTO_EMPTY};
use crate::statistics::{spread, Moments, Statistic, TINY_TILE};

/// Rows per step, across the vector lanes (eight f64: one AVX-512 register).
const ROWS: usize = 8;
/// The longest rows that run here. Rows of 33–128 had run one at a time (`row_moments`,
/// `log_sum_exp`): var's last fold steps were scalar chains of divisions (rows of 100
/// read 5.0 GB/s that way, results/cpu-dev-2core-moments-zip), and log-sum-exp of rows
/// of 50 lost to numpy (results/cpu-dev-2core-short-row-stats-typed).
const SHORT_ROWS: usize = 128;
/// Steps of eight rows per task at least: a row is far less work than a task.
const STEPS_PER_TASK: usize = 64;

/// One value per output where `selection` is contiguous rows of at most [`SHORT_ROWS`]
/// f32 or f64 elements and `stat` is var, std or log-sum-exp; `None` otherwise.
pub fn rows(
    stat: Statistic,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Vec<Value>, Error>> {
    rows_packed(stat, data, selection).map(|packed| packed.map(|p| p.scalar_values()))
}

/// [`rows`] as one typed array of the statistic's result type (f32 for f32 rows, f64 for
/// f64 rows), written straight from each step: a value per output, allocated for every
/// call, had cost more than the statistic of rows of 3.
pub fn rows_packed(
    stat: Statistic,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Packed, Error>> {
    let (plan, len) = crate::short_rows::applies(selection)?;
    let moments = matches!(stat, Statistic::Var { .. } | Statistic::Std { .. });
    if len > SHORT_ROWS || !(moments || stat == Statistic::LogSumExp) {
        return None;
    }
    let result = match data.dtype() {
        DType::F32 => {
            let src = data.typed::<f32>().ok()?;
            let mut values = vec![0.0f32; plan.outputs()];
            let step = |r: [&[f32]; ROWS]| step_f32(stat, r, len);
            each_step(&mut values, plan, len, src, step, |v| v as f32)
                .map(|()| Packed::of_vec(values))
        }
        DType::F64 => {
            let src = data.typed::<f64>().ok()?;
            let mut values = vec![0.0f64; plan.outputs()];
            let step = |r: [&[f64]; ROWS]| step_f64(stat, r, len);
            each_step(&mut values, plan, len, src, step, |v| v).map(|()| Packed::of_vec(values))
        }
        _ => return None,
    };
    debug_assert!(result
        .as_ref()
        .is_ok_and(|p| p.dtype == stat.result_dtype(data.dtype())));
    Some(result)
}

/// Fills `values` eight outputs at a time: `step` turns eight rows into their values
/// (a step short of eight rows fills the rest with its first row, and their values are
/// dropped), `finish` a value into the output's type.
fn each_step<T: Sync, O: Send>(
    values: &mut [O],
    plan: &redlab_core::shape::AxisPlan,
    len: usize,
    src: &[T],
    step: impl Fn([&[T]; ROWS]) -> [f64; ROWS] + Sync,
    finish: impl Fn(f64) -> O + Sync,
) -> Result<(), Error> {
    // Even rows' starts by arithmetic: asked of the plan per output, they took 8% of
    // var along rows of 3.
    let even = EvenRows::of(plan, len, src.len())?;
    map_chunks_mut(values, ROWS, STEPS_PER_TASK, |s, out| {
        let first = s * ROWS;
        let row = |k: usize| {
            let start = match even {
                Some(rows) => Some(rows.start(k)),
                None => plan.contiguous(k),
            };
            start
                .and_then(|start| src.get(start..start + len))
                .ok_or_else(|| Error::Shape(format!("output {k} lies outside the input")))
        };
        let mut rows = [row(first)?; ROWS];
        for (q, r) in rows.iter_mut().enumerate().take(out.len()).skip(1) {
            *r = row(first + q)?;
        }
        for (value, state) in out.iter_mut().zip(step(rows)) {
            *value = finish(state);
        }
        Ok(())
    })
    .into_iter()
    .collect()
}

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn step_f32(stat: Statistic, rows: [&[f32]; ROWS], len: usize) -> [f64; ROWS] {
    step_with(stat, rows, len, f64::from)
}

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn step_f64(stat: Statistic, rows: [&[f64]; ROWS], len: usize) -> [f64; ROWS] {
    step_with(stat, rows, len, |x| x)
}

/// Eight rows' values of `stat`: their states, finished in the same (vector) function,
/// so that log-sum-exp's canonical `ln` runs on the eight together.
#[inline(always)]
fn step_with<T: Copy>(
    stat: Statistic,
    rows: [&[T]; ROWS],
    len: usize,
    to_f64: impl Fn(T) -> f64,
) -> [f64; ROWS] {
    if let Statistic::Var { ddof } | Statistic::Std { ddof } = stat {
        // State for as few lanes as the rows need (it is cleared every step).
        // W ≥ ROWS: the last steps transpose the first ROWS lanes. Fewer lanes clear
        // less state every step.
        let moments = match len {
            0..=ROWS => moments_rows::<ROWS, T>(rows, len, to_f64),
            9..=16 => moments_rows::<16, T>(rows, len, to_f64),
            17..=TINY_TILE => moments_rows::<TINY_TILE, T>(rows, len, to_f64),
            33..=64 => moments_rows::<64, T>(rows, len, to_f64),
            _ => moments_rows::<SHORT_ROWS, T>(rows, len, to_f64),
        };
        return moments.map(|m| spread(stat, m.count, m.m2, ddof));
    }
    let sums = match len {
        0..=ROWS => exp_sum_rows::<ROWS, T>(rows, len, to_f64),
        9..=16 => exp_sum_rows::<16, T>(rows, len, to_f64),
        17..=TINY_TILE => exp_sum_rows::<TINY_TILE, T>(rows, len, to_f64),
        33..=64 => exp_sum_rows::<64, T>(rows, len, to_f64),
        _ => exp_sum_rows::<SHORT_ROWS, T>(rows, len, to_f64),
    };
    let mut values = [0.0; ROWS];
    for (value, sum) in values.iter_mut().zip(sums) {
        *value = sum.value_inline();
    }
    values
}

/// The moments of eight rows of `len` ≤ `W` elements: each element pushed into an empty
/// lane ([`Moments::push`]: count 1, reciprocal 1), then the lanes folded by halving
/// with [`Moments::merge`]'s arithmetic, merges with an empty upper lane skipped.
///
/// The loops run along each row (over the lanes `j`), where the data is contiguous. With
/// the eight rows across a vector instead (`[j][q]`), the compiler vectorized the loop
/// over `j` anyway, with gathers and scatters of stride eight, which took most of the
/// time. Each lane's merge weights depend only on the counts, so they are computed once
/// per step for all eight rows (once per call for every step measured slower).
#[inline(always)]
fn moments_rows<const W: usize, T: Copy>(
    rows: [&[T]; ROWS],
    len: usize,
    to_f64: impl Fn(T) -> f64,
) -> [Moments; ROWS] {
    let mut mean = [[0.0f64; W]; ROWS];
    let mut m2 = [[0.0f64; W]; ROWS];
    for q in 0..ROWS {
        for ((m, s), &x) in mean[q].iter_mut().zip(&mut m2[q]).zip(&rows[q][..len]) {
            // Pushed straight from the row (a copy into an f64 row first measured 5–10%
            // slower on rows of 50–128).
            let x = to_f64(x);
            let d = x - 0.0;
            // The reciprocal of count 1 is 1, and d × 1 is d exactly.
            *m = 0.0 + d;
            *s = 0.0 + d * (x - *m);
        }
    }
    let mut count = [1.0f64; W];
    let mut to_mean = [0.0f64; W];
    let mut to_m2 = [0.0f64; W];
    let mut width = W / 2;
    // The loops zip slices of exactly `merges` lanes: indexed, the upper lanes kept
    // bounds checks that the compiler could not drop.
    while width >= ROWS {
        let merges = width.min(len.saturating_sub(width));
        let (low, high) = count[..2 * width].split_at_mut(width);
        for (((a, &b), to_mean), to_m2) in low[..merges]
            .iter_mut()
            .zip(&high[..merges])
            .zip(&mut to_mean[..merges])
            .zip(&mut to_m2[..merges])
        {
            let n = *a + b;
            (*to_mean, *to_m2) = (b / n, *a * b / n);
            *a = n;
        }
        for q in 0..ROWS {
            let (low_mean, high_mean) = mean[q][..2 * width].split_at_mut(width);
            let (low_m2, high_m2) = m2[q][..2 * width].split_at_mut(width);
            let lows = low_mean[..merges].iter_mut().zip(&mut low_m2[..merges]);
            let highs = high_mean[..merges].iter().zip(&high_m2[..merges]);
            let weights = to_mean[..merges].iter().zip(&to_m2[..merges]);
            for (((m, s), (&hm, &hs)), (&wm, &ws)) in lows.zip(highs).zip(weights) {
                let d = hm - *m;
                *m += d * wm;
                *s = *s + hs + d * d * ws;
            }
        }
        width /= 2;
    }
    // The last steps merge fewer than eight lanes per row: they run with the rows
    // across a vector instead, on the first eight lanes transposed.
    let mut t_mean = [[0.0f64; ROWS]; ROWS];
    let mut t_m2 = [[0.0f64; ROWS]; ROWS];
    for j in 0..ROWS {
        for q in 0..ROWS {
            t_mean[j][q] = mean[q][j];
            t_m2[j][q] = m2[q][j];
        }
    }
    while width >= 1 {
        let merges = width.min(len.saturating_sub(width));
        for j in 0..merges {
            let (a, b) = (count[j], count[j + width]);
            let n = a + b;
            let (to_mean, to_m2) = (b / n, a * b / n);
            count[j] = n;
            for q in 0..ROWS {
                let d = t_mean[j + width][q] - t_mean[j][q];
                t_mean[j][q] += d * to_mean;
                t_m2[j][q] = t_m2[j][q] + t_m2[j + width][q] + d * d * to_m2;
            }
        }
        width /= 2;
    }
    std::array::from_fn(|q| Moments {
        count: len as f64,
        mean: t_mean[0][q],
        m2: t_m2[0][q],
    })
}

/// The log-sum-exp states of eight rows of `len` ≤ `W` elements: each element pushed
/// into an empty lane, then the lanes folded by halving, merges with an empty upper lane
/// skipped; the eight rows across a vector (`[j][q]`), each merge's exponentials side
/// by side.
#[inline(always)]
fn exp_sum_rows<const W: usize, T: Copy>(
    rows: [&[T]; ROWS],
    len: usize,
    to_f64: impl Fn(T) -> f64,
) -> [ExpSum; ROWS] {
    // values[j][q]: element j of row q, so the eight rows share a vector.
    let mut values = [[0.0f64; ROWS]; W];
    for (q, row) in rows.iter().enumerate() {
        for (j, &x) in row[..len].iter().enumerate() {
            values[j][q] = to_f64(x);
        }
    }
    let mut max = [[f64::NEG_INFINITY; ROWS]; W];
    let mut sum = [[0.0f64; ROWS]; W];
    if any_nan(values[..len].as_flattened(), |x| x) {
        for j in 0..len {
            for q in 0..ROWS {
                (max[j][q], sum[j][q]) = push_lane(f64::NEG_INFINITY, 0.0, values[j][q]);
            }
        }
    } else {
        // Without NaN, a push into an empty lane needs no exponential.
        for j in 0..len {
            max[j] = values[j];
            sum[j] = [PUSHED_INTO_EMPTY; ROWS];
        }
    }
    let mut width = W / 2;
    while width >= 1 {
        for j in 0..width.min(len.saturating_sub(width)) {
            for q in 0..ROWS {
                (max[j][q], sum[j][q]) =
                    merge_lanes(max[j][q], sum[j][q], max[j + width][q], sum[j + width][q]);
            }
        }
        width /= 2;
    }
    std::array::from_fn(|q| ExpSum {
        max: max[0][q],
        sum: sum[0][q],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::{awkward, finite};
    use redlab_core::shape::{AxisPlan, Layout};

    /// Every row length up to 128, a row count that leaves a partial step, f32 and f64:
    /// each output has the bits of its row reduced alone by the tile code.
    #[test]
    fn rows_equal_each_row_reduced_alone_bit_for_bit() {
        let stats = [
            Statistic::Var { ddof: 0.0 },
            Statistic::Std { ddof: 1.0 },
            Statistic::LogSumExp,
        ];
        for len in 1..=SHORT_ROWS {
            let outputs = 8 * STEPS_PER_TASK + 13;
            let plan =
                AxisPlan::new(Layout::c_order(&[outputs, len]), Some(&[1]), false).expect("plan");
            // Long rows of awkward values mostly hold an infinity or NaN; finite ones
            // make every element count.
            let seed = len as u64;
            for wide in [
                awkward(outputs * len, seed, true),
                finite(outputs * len, seed),
            ] {
                check_rows(stats, &plan, len, &wide);
            }
        }
    }

    /// [`rows_equal_each_row_reduced_alone_bit_for_bit`] for one set of values.
    fn check_rows(stats: [Statistic; 3], plan: &AxisPlan, len: usize, wide: &[f64]) {
        let narrow: Vec<f32> = wide.iter().map(|&x| x as f32).collect();
        for stat in stats {
            for data in [ArrayRef::from_slice(wide), ArrayRef::from_slice(&narrow)] {
                let selection = Selection::Axes(plan);
                let got = rows(stat, data, selection)
                    .expect("applies")
                    .expect("computes");
                for (k, value) in got.iter().enumerate() {
                    let alone = crate::statistics::of_gathered(stat, data, plan, k);
                    assert!(
                        value.same_as(&alone),
                        "{} of row {k} of {len} ({:?}): {value:?} against {alone:?}",
                        stat.name(),
                        data.dtype()
                    );
                }
            }
        }
    }

    #[test]
    fn longer_rows_and_other_statistics_are_left_alone() {
        let data = awkward(130 * 3, 7, true);
        let long = AxisPlan::new(Layout::c_order(&[3, 130]), Some(&[1]), false).expect("plan");
        let middle = AxisPlan::new(Layout::c_order(&[10, 39]), Some(&[1]), false).expect("plan");
        let short = AxisPlan::new(Layout::c_order(&[130, 3]), Some(&[1]), false).expect("plan");
        let data = ArrayRef::from_slice(&data);
        let var = Statistic::Var { ddof: 0.0 };
        assert!(rows(var, data, Selection::Axes(&long)).is_none());
        assert!(rows(Statistic::LogSumExp, data, Selection::Axes(&long)).is_none());
        assert!(rows(var, data, Selection::Axes(&middle)).is_some());
        assert!(rows(Statistic::LogSumExp, data, Selection::Axes(&middle)).is_some());
        assert!(rows(Statistic::NanMean, data, Selection::Axes(&short)).is_none());
        assert!(rows(var, data, Selection::Axes(&short)).is_some());
    }
}
