//! Statistics whose accumulator holds more than one number, in one pass, per output:
//! variance and standard deviation (count, mean and M2, Welford updates in a lane and
//! Chan merges above it), log-sum-exp (a running maximum and a scaled sum), and the
//! NaN-skipping minimum, maximum and mean.
//!
//! The merges follow the canonical order's shape (docs/canonical-order.md,
//! "Statistics"): tiles of `ROWS × LANES` elements, each lane updated in increasing
//! index, lanes folded by halving, tiles joined in the aligned pairwise tree. The result
//! therefore depends only on each output's elements, never on the thread count or on
//! the other outputs. Everything is computed in f64.

use crate::fork::map_range_init;
use redlab_core::canonical::{LANES, ROWS, TILE};
use redlab_core::num::FloatElement;
use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, DType, Error, Packed, Scalar, Value};

pub use crate::log_sum_exp::ExpSum;
use crate::row_moments::{fold_equal_counts, row_any, row_pow2, row_quarters};
use crate::CpuBackend;

/// A statistic computed here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Statistic {
    /// Variance with `ddof` delta degrees of freedom (numpy's `var`).
    Var {
        /// Subtracted from the count in the divisor.
        ddof: f64,
    },
    /// Standard deviation, the square root of [`Statistic::Var`].
    Std {
        /// Subtracted from the count in the divisor.
        ddof: f64,
    },
    /// `log(Σ exp(x))`, without overflow (numpy-style `logsumexp`).
    LogSumExp,
    /// Smallest element that is not NaN (NaN when all are).
    NanMin,
    /// Largest element that is not NaN (NaN when all are).
    NanMax,
    /// Mean of the elements that are not NaN (NaN when all are).
    NanMean,
}

impl Statistic {
    /// `bytes` of input weighed as bytes of a sum, for the choice between the caller's
    /// thread and the pool ([`crate::fork`]): var, std and log-sum-exp do several f64
    /// steps per element. On the 2-core development machine, var of 1000×256 f32 columns
    /// (1.0 MB, under the sums' threshold) took 114–116 µs on the caller's thread and
    /// 73–75 on two, 100×1000 59–78 against 37–59, 300×300 88–121 against 49–80
    /// (results/cpu-dev-2core-var-short-columns).
    pub fn work_of(self, bytes: usize) -> usize {
        match self {
            Statistic::Var { .. } | Statistic::Std { .. } | Statistic::LogSumExp => bytes * 4,
            Statistic::NanMin | Statistic::NanMax | Statistic::NanMean => bytes,
        }
    }

    /// Every name [`Statistic::parse`] accepts.
    pub const NAMES: [&'static str; 6] = ["var", "std", "logsumexp", "nanmin", "nanmax", "nanmean"];

    /// The statistic called `name` (`var` and `std` with `ddof`).
    pub fn parse(name: &str, ddof: f64) -> Option<Statistic> {
        Some(match name {
            "var" => Statistic::Var { ddof },
            "std" => Statistic::Std { ddof },
            "logsumexp" => Statistic::LogSumExp,
            "nanmin" => Statistic::NanMin,
            "nanmax" => Statistic::NanMax,
            "nanmean" => Statistic::NanMean,
            _ => return None,
        })
    }

    /// The statistic's name.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Var { .. } => "var",
            Statistic::Std { .. } => "std",
            Statistic::LogSumExp => "logsumexp",
            Statistic::NanMin => "nanmin",
            Statistic::NanMax => "nanmax",
            Statistic::NanMean => "nanmean",
        }
    }

    /// The result type over `input`: the input's type for nanmin/nanmax, f64 for
    /// integers and f64 inputs, f32 for narrower floats.
    pub fn result_dtype(self, input: DType) -> DType {
        match self {
            Statistic::NanMin | Statistic::NanMax => input,
            _ if input == DType::F64 || input.is_integer() => DType::F64,
            _ => DType::F32,
        }
    }
}

/// Count, mean and sum of squared deviations of a run of elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    /// Elements seen (an integer held exactly in f64).
    pub count: f64,
    /// Their mean.
    pub mean: f64,
    /// Σ (x − mean)².
    pub m2: f64,
}

impl Moments {
    /// No elements.
    pub const EMPTY: Moments = Moments {
        count: 0.0,
        mean: 0.0,
        m2: 0.0,
    };

    /// Welford's update with one more element (the mean moves by `d × (1 / count)`:
    /// a reciprocal per row serves every lane of a tile).
    #[inline(always)]
    pub fn push(&mut self, x: f64) {
        self.count += 1.0;
        let d = x - self.mean;
        self.mean += d * (1.0 / self.count);
        self.m2 += d * (x - self.mean);
    }

    /// Chan's merge of `self` (the lower indices) with `other`.
    #[inline(always)]
    pub fn merge(self, other: Moments) -> Moments {
        if other.count == 0.0 {
            return self;
        }
        if self.count == 0.0 {
            return other;
        }
        let n = self.count + other.count;
        let d = other.mean - self.mean;
        Moments {
            count: n,
            mean: self.mean + d * (other.count / n),
            m2: self.m2 + other.m2 + d * d * (self.count * other.count / n),
        }
    }
}

/// A per-lane state with an ordered merge and a canonical tile.
pub(crate) trait Lane: Copy + Send + Sync + 'static {
    const EMPTY: Self;
    fn merge(self, other: Self) -> Self;

    /// One tile: lanes updated in increasing index, then folded by halving.
    fn tile(values: &[f64]) -> Self;

    /// [`Lane::tile`] over f32 elements, converted as they are read.
    fn tile_f32(values: &[f32]) -> Self;

    /// The tile of `view` over `range`: f32 and f64 read in place, other types converted
    /// into `buffer` first.
    fn tile_of(
        view: &ArrayRef<'_>,
        range: std::ops::Range<usize>,
        buffer: &mut Vec<f64>,
    ) -> Result<Self, Error> {
        Ok(match view.dtype() {
            DType::F32 => Self::tile_f32(&view.typed::<f32>()?[range]),
            DType::F64 => Self::tile(&view.typed::<f64>()?[range]),
            _ => {
                load(view, range, buffer)?;
                Self::tile(buffer)
            }
        })
    }
}

/// Folds the lanes of a tile of `len` elements by halving, the lower-index side first,
/// skipping the merges whose upper side is an empty lane (the lanes at and past `len`),
/// which would change nothing. `lanes.len()` is a power of two.
pub(crate) fn fold_filled<S: Lane>(lanes: &mut [S], len: usize) -> S {
    let filled = len.min(lanes.len());
    let mut width = lanes.len() / 2;
    while width >= 1 {
        for j in 0..width.min(filled.saturating_sub(width)) {
            lanes[j] = lanes[j].merge(lanes[j + width]);
        }
        width /= 2;
    }
    lanes[0]
}

impl Lane for Moments {
    const EMPTY: Self = Moments::EMPTY;
    fn merge(self, other: Self) -> Self {
        Moments::merge(self, other)
    }
    fn tile(values: &[f64]) -> Self {
        moments_tile(values)
    }
    fn tile_f32(values: &[f32]) -> Self {
        moments_tile_f32(values)
    }
}

/// One tile of moments with the lanes' means and M2 in separate arrays, so that the
/// compiler vectorizes across lanes: the same operations, in the same order, as
/// [`Moments::push`] on each lane and [`Moments::merge`] in the fold.
///
/// Every lane present in row `r` has seen rows `0..r` too, so its count is `r + 1` and
/// one reciprocal serves the row. When every lane holds the same count `c` (the tile's
/// length is a multiple of the lanes: every whole tile), every merge of the fold joins
/// equal counts, where Chan's weights are exact constants: `c / 2c` is 0.5 and
/// `c·c / 2c` is `c / 2` (`c·c` ≤ 2^26 is exact), so the fold needs no division and no
/// branch and gives the general merge's bits.
///
/// AVX-512 is compiled in beside AVX2 and picked at run time where the CPU has it: the
/// same operations on twice the lanes (same bits), 1.1–1.2× as fast on rows
/// (results/cpu-dev-2core-avx512).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn moments_tile(values: &[f64]) -> Moments {
    moments_tile_with(values, |x| x)
}

/// [`moments_tile`] over f32 elements, converted as they are read.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn moments_tile_f32(values: &[f32]) -> Moments {
    moments_tile_with(values, f64::from)
}

/// Tiles of at most [`TINY_TILE`] or [`SHORT_TILE`] elements keep only that many lanes'
/// state: the other lanes of the canonical tile are empty, and a merge with an empty side
/// gives the other side unchanged, so their merges can be skipped. (Clearing and folding
/// all 1024 lanes for a row of 32 read var of 2^20 rows of 32 f32 at 0.08 GB/s.)
pub(crate) const TINY_TILE: usize = 32;
/// See [`TINY_TILE`].
pub(crate) const SHORT_TILE: usize = 256;

/// The body of [`moments_tile`], over any element that converts to f64 exactly.
#[inline(always)]
fn moments_tile_with<T: Copy>(values: &[T], to_f64: impl Fn(T) -> f64) -> Moments {
    match values.len() {
        0 => Moments::EMPTY,
        1 => {
            let mut one = Moments::EMPTY;
            one.push(to_f64(values[0]));
            one
        }
        // One row: the pushes fused with the fold's first steps (`row_moments`), with
        // state for no more lanes than the row needs, since it is cleared per row.
        8..=64 if values.len().is_power_of_two() => row_pow2::<16, T>(values, to_f64),
        128 | 256 => row_pow2::<64, T>(values, to_f64),
        512 | 1024 => row_pow2::<256, T>(values, to_f64),
        2..=64 => row_any::<32, T>(values, to_f64),
        65..=256 => row_any::<128, T>(values, to_f64),
        513..=1023 => row_quarters::<T>(values, to_f64),
        257..=LANES => row_any::<512, T>(values, to_f64),
        _ => moments_multi_row(values, to_f64),
    }
}

/// [`moments_tile_with`] of a tile of more than one row.
#[inline(always)]
fn moments_multi_row<T: Copy>(values: &[T], to_f64: impl Fn(T) -> f64) -> Moments {
    let mut mean = [0.0f64; LANES];
    let mut m2 = [0.0f64; LANES];
    let rows = values.len().div_ceil(LANES);
    if values.len() == TILE {
        // A whole tile: sixteen lanes at a time through all their rows, the lanes' states
        // in registers (each lane still takes its rows in increasing index). A lane's
        // mean is a chain of three dependent operations per row, so more lanes in flight
        // hide its latency: sixteen read 1.3× as fast as eight on one AVX2 core, and 32
        // spilled registers and ran 1.7× slower (results/cpu-dev-2core-stat-wide-steps).
        const BLOCK: usize = 16;
        for ((block_mean, block_m2), j) in mean
            .chunks_exact_mut(BLOCK)
            .zip(m2.chunks_exact_mut(BLOCK))
            .zip((0..LANES).step_by(BLOCK))
        {
            let mut m = [0.0f64; BLOCK];
            let mut s = [0.0f64; BLOCK];
            for r in 0..ROWS {
                let inverse = 1.0 / (r + 1) as f64;
                let row = &values[r * LANES + j..r * LANES + j + BLOCK];
                for q in 0..BLOCK {
                    let x = to_f64(row[q]);
                    let d = x - m[q];
                    m[q] += d * inverse;
                    s[q] += d * (x - m[q]);
                }
            }
            block_mean.copy_from_slice(&m);
            block_m2.copy_from_slice(&s);
        }
    } else {
        for (r, row) in values.chunks(LANES).enumerate() {
            let k = row.len();
            let inverse = 1.0 / (r + 1) as f64;
            for ((m, s), &x) in mean[..k].iter_mut().zip(&mut m2[..k]).zip(row) {
                let x = to_f64(x);
                let d = x - *m;
                *m += d * inverse;
                *s += d * (x - *m);
            }
        }
    }
    // Every lane holds the same count in whole tiles (and any multiple of the lanes).
    if values.len() % LANES == 0 {
        return fold_equal_counts(&mut mean, &mut m2, rows as f64, LANES / 2);
    }
    // Lanes below `longer` hold `rows` elements, the others one fewer.
    let longer = values.len() - (rows - 1) * LANES;
    let mut lanes = [Moments::EMPTY; LANES];
    for (j, lane) in lanes.iter_mut().enumerate() {
        let count = if j < longer { rows } else { rows - 1 };
        *lane = Moments {
            count: count as f64,
            mean: mean[j],
            m2: m2[j],
        };
    }
    fold_filled(&mut lanes, values.len())
}

/// The aligned pairwise tree over tile results.
pub(crate) fn tree<S: Lane>(mut level: Vec<S>) -> S {
    tree_in_place(&mut level)
}

/// [`tree`] over a borrowed level, which it overwrites with partial results: the same
/// pairs as the canonical tree of sums (`redlab_core::canonical::pairwise_in_place`),
/// merged as states.
pub(crate) fn tree_in_place<S: Lane>(level: &mut [S]) -> S {
    redlab_core::canonical::pairwise_in_place(level, S::merge).unwrap_or(S::EMPTY)
}

/// The elements of `view` in f64, `range` of them.
pub(crate) fn load(
    view: &ArrayRef<'_>,
    range: std::ops::Range<usize>,
    out: &mut Vec<f64>,
) -> Result<(), Error> {
    out.clear();
    redlab_core::with_int_dtype!(view.dtype(), T => {
        out.extend(view.typed::<T>()?[range].iter().map(|&v| v as f64));
    }, else redlab_core::with_float_dtype!(view.dtype(), T => {
        out.extend(view.typed::<T>()?[range].iter().map(|&v| FloatElement::to_f64(v)));
    }, else unreachable!("every DType is an integer or a float type")));
    Ok(())
}

/// The canonical one-pass state of all of `view`'s elements.
pub(crate) fn canonical<S: Lane>(view: ArrayRef<'_>) -> Result<S, Error> {
    let tiles = view.len().div_ceil(TILE);
    if tiles <= 1 {
        // One tile (a row or column of many outputs, which already run in parallel):
        // no task for the thread pool.
        return S::tile_of(&view, 0..view.len(), &mut Vec::new());
    }
    let results = map_range_init(tiles, Vec::new, |buffer, t| {
        let range = t * TILE..((t + 1) * TILE).min(view.len());
        S::tile_of(&view, range, buffer)
    })
    .into_iter()
    .collect::<Result<Vec<S>, Error>>()?;
    Ok(tree(results))
}

/// Minimum or maximum skipping NaN, with the count of values that are not NaN.
fn nan_extreme(view: ArrayRef<'_>, largest: bool) -> Result<Option<f64>, Error> {
    let mut buffer = Vec::new();
    let mut best: Option<f64> = None;
    for t in 0..view.len().div_ceil(TILE) {
        load(
            &view,
            t * TILE..((t + 1) * TILE).min(view.len()),
            &mut buffer,
        )?;
        for &x in buffer.iter().filter(|x| !x.is_nan()) {
            best = Some(match best {
                Some(b) if !better(x, b, largest) => b,
                _ => x,
            });
        }
    }
    Ok(best)
}

/// Whether `x` beats `best` for the minimum (or the maximum when `largest`); of two
/// zeros, -0.0 is the smaller, so the result never depends on the order of the search.
pub fn better(x: f64, best: f64, largest: bool) -> bool {
    if x == best {
        return x.is_sign_negative() != best.is_sign_negative() && x.is_sign_negative() != largest;
    }
    if largest {
        x > best
    } else {
        x < best
    }
}

/// The finished statistic of one output from the states of its tiles in order, as
/// devices compute them (`statistics.cl`: 3 numbers per tile: moments `(count, mean,
/// M2)`, log-sum-exp `(max, sum, -)`, extremes `(kept, best, -)`), joined in the aligned
/// pairwise tree like the CPU's own tiles (nanmean: the moments of each tile's kept
/// values, joined in order). `input` is the element type.
pub fn finish_tiles(stat: Statistic, input: DType, tiles: &[[f64; 3]]) -> Result<Value, Error> {
    let out = stat.result_dtype(input);
    Ok(match stat {
        Statistic::Var { ddof } | Statistic::Std { ddof } => {
            let level = tiles
                .iter()
                .map(|&[count, mean, m2]| Moments { count, mean, m2 })
                .collect();
            let m = tree::<Moments>(level);
            float_value(out, spread(stat, m.count, m.m2, ddof))
        }
        Statistic::LogSumExp => {
            let level = tiles
                .iter()
                .map(|&[max, sum, _]| ExpSum { max, sum })
                .collect();
            float_value(out, tree::<ExpSum>(level).value())
        }
        Statistic::NanMin | Statistic::NanMax => {
            let largest = stat == Statistic::NanMax;
            if tiles.is_empty() {
                return Ok(Value::Empty);
            }
            let mut best: Option<f64> = None;
            for &[kept, b, _] in tiles {
                if kept > 0.0 {
                    best = Some(match best {
                        Some(x) if !better(b, x, largest) => x,
                        _ => b,
                    });
                }
            }
            extreme_value(input, best.unwrap_or(f64::NAN))
        }
        Statistic::NanMean => {
            // Each tile's moments of its kept values, joined one after another (as
            // `one` does), not in the tree.
            let sum = tiles
                .iter()
                .map(|&[count, mean, m2]| Moments { count, mean, m2 })
                .fold(Moments::EMPTY, Moments::merge);
            float_value(out, if sum.count == 0.0 { f64::NAN } else { sum.mean })
        }
    })
}

/// An extreme found among the elements, back in the input's type (exact: it is one of
/// them).
fn extreme_value(input: DType, v: f64) -> Value {
    Value::Scalar(match input {
        DType::F16 => Scalar::F16(half::f16::from_f64(v)),
        DType::BF16 => Scalar::BF16(half::bf16::from_f64(v)),
        DType::F32 => Scalar::F32(v as f32),
        DType::F64 => Scalar::F64(v),
        _ => redlab_core::reference::wrap_int(input, v as i128),
    })
}

/// The variance `M2 / (n − ddof)` (NaN when the divisor is not positive, as numpy), or
/// its square root for `std`.
pub(crate) fn spread(stat: Statistic, n: f64, m2: f64, ddof: f64) -> f64 {
    let var = if n - ddof > 0.0 {
        m2 / (n - ddof)
    } else {
        f64::NAN
    };
    match stat {
        Statistic::Std { .. } => var.sqrt(),
        _ => var,
    }
}

/// `stat` of output `k` of `plan`, its elements gathered and reduced alone.
#[cfg(test)]
pub(crate) fn of_gathered(
    stat: Statistic,
    data: ArrayRef<'_>,
    plan: &redlab_core::shape::AxisPlan,
    k: usize,
) -> Value {
    let view = match data.dtype() {
        DType::F32 => {
            let src = data.typed::<f32>().expect("f32");
            let column: Vec<f32> = plan.segment(k).map(|o| src[o]).collect();
            return one(stat, ArrayRef::from_slice(&column)).expect("computes");
        }
        _ => data.typed::<f64>().expect("f64"),
    };
    let column: Vec<f64> = plan.segment(k).map(|o| view[o]).collect();
    one(stat, ArrayRef::from_slice(&column)).expect("computes")
}

pub(crate) fn float_value(dtype: DType, v: f64) -> Value {
    Value::Scalar(match dtype {
        DType::F64 => Scalar::F64(v),
        _ => Scalar::F32(v as f32),
    })
}

/// The value of `stat` over one output's elements.
fn one(stat: Statistic, view: ArrayRef<'_>) -> Result<Value, Error> {
    let input = view.dtype();
    let out = stat.result_dtype(input);
    Ok(match stat {
        Statistic::Var { ddof } | Statistic::Std { ddof } => {
            let m: Moments = canonical(view)?;
            float_value(out, spread(stat, m.count, m.m2, ddof))
        }
        Statistic::LogSumExp => float_value(out, canonical::<ExpSum>(view)?.value()),
        Statistic::NanMean => {
            let mut buffer = Vec::new();
            let (mut sum, mut count) = (Moments::EMPTY, 0u64);
            // The mean of the values that are not NaN, as the Welford state of them.
            for t in 0..view.len().div_ceil(TILE) {
                load(
                    &view,
                    t * TILE..((t + 1) * TILE).min(view.len()),
                    &mut buffer,
                )?;
                let kept: Vec<f64> = buffer.iter().copied().filter(|x| !x.is_nan()).collect();
                count += kept.len() as u64;
                sum = sum.merge(Moments::tile(&kept));
            }
            float_value(out, if count == 0 { f64::NAN } else { sum.mean })
        }
        Statistic::NanMin | Statistic::NanMax => {
            if view.is_empty() {
                return Ok(Value::Empty);
            }
            let v = nan_extreme(view, stat == Statistic::NanMax)?.unwrap_or(f64::NAN);
            extreme_value(input, v)
        }
    })
}

/// `stat` of one output's elements by the plain methods, for checking within a
/// tolerance: two passes for the variance (the mean, then the squared deviations, as
/// numpy does), the maximum then the shifted sum for log-sum-exp, sequential sums for
/// the NaN-skipping mean.
pub fn reference(stat: Statistic, view: ArrayRef<'_>) -> Result<Value, Error> {
    let mut x = Vec::new();
    load(&view, 0..view.len(), &mut x)?;
    let out = stat.result_dtype(view.dtype());
    let n = x.len() as f64;
    Ok(match stat {
        Statistic::Var { ddof } | Statistic::Std { ddof } => {
            let mean = x.iter().sum::<f64>() / n;
            let m2: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
            float_value(out, spread(stat, n, m2, ddof))
        }
        Statistic::LogSumExp => {
            let v = if x.iter().any(|v| v.is_nan()) {
                f64::NAN
            } else {
                let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if m.is_infinite() {
                    m
                } else {
                    x.iter().map(|v| (v - m).exp()).sum::<f64>().ln() + m
                }
            };
            float_value(out, v)
        }
        Statistic::NanMean => {
            let kept: Vec<f64> = x.into_iter().filter(|v| !v.is_nan()).collect();
            let v = if kept.is_empty() {
                f64::NAN
            } else {
                kept.iter().sum::<f64>() / kept.len() as f64
            };
            float_value(out, v)
        }
        Statistic::NanMin | Statistic::NanMax => one(stat, view)?,
    })
}

impl CpuBackend {
    /// `stat` of each output of `selection` (one output: the whole array), in the
    /// canonical order of its own elements.
    pub fn statistic(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<Vec<Value>, Error> {
        self.run(stat.work_of(data.bytes().len()), || {
            // Var and std of float columns run across columns without gathering.
            if let Some(packed) = crate::columns_moments::columns(stat, data, selection) {
                return packed.map(|p| p.scalar_values());
            }
            // Short rows run eight at a time, across the vector lanes.
            if let Some(values) = crate::short_row_stats::rows(stat, data, selection) {
                return values;
            }
            // Log-sum-exp of float columns runs across columns without gathering too.
            if stat == Statistic::LogSumExp {
                if let Some(states) = crate::columns_exp::columns(data, selection) {
                    let out = stat.result_dtype(data.dtype());
                    return states
                        .map(|s| s.into_iter().map(|e| float_value(out, e.value())).collect());
                }
            }
            // Log-sum-exp is bound by its exponentials, not the memory: no prefetch.
            let ahead = stat != Statistic::LogSumExp;
            crate::outputs::compute_outputs(data, selection, ahead, |view| one(stat, view))
        })
    }

    /// [`CpuBackend::statistic`] as one typed array of the statistic's result type,
    /// where it is computed that way: var, std and log-sum-exp of f32 and f64 columns and
    /// of short f32 and f64 rows. `None` elsewhere (the caller takes
    /// [`CpuBackend::statistic`]).
    pub fn statistic_packed(
        &self,
        stat: Statistic,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Option<Result<Packed, Error>> {
        self.run(stat.work_of(data.bytes().len()), || {
            if let Some(packed) = crate::short_row_stats::rows_packed(stat, data, selection) {
                return Some(packed);
            }
            if stat == Statistic::LogSumExp {
                return crate::columns_exp::columns_packed(data, selection);
            }
            crate::columns_moments::columns(stat, data, selection)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact mean and M2 of small integers, for checking the merges.
    fn exact(values: &[f64]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        (mean, values.iter().map(|x| (x - mean) * (x - mean)).sum())
    }

    #[test]
    fn welford_and_chan_agree_with_the_exact_moments() {
        let values: Vec<f64> = (0..30_000).map(|i| ((i * 7919) % 1000) as f64).collect();
        let m: Moments = canonical(ArrayRef::from_slice(&values)).expect("moments");
        let (mean, m2) = exact(&values);
        assert_eq!(m.count, 30_000.0);
        assert!((m.mean - mean).abs() < 1e-9 * mean.abs());
        assert!((m.m2 - m2).abs() < 1e-9 * m2);
    }

    /// A tile's moments as docs/canonical-order.md writes the steps: every lane pushed,
    /// all 1024 lanes folded with the general merge.
    fn moments_as_written(values: &[f64]) -> Moments {
        let mut lanes = [Moments::EMPTY; LANES];
        for row in values.chunks(LANES) {
            for (lane, &x) in lanes.iter_mut().zip(row) {
                lane.push(x);
            }
        }
        let mut width = LANES / 2;
        while width >= 1 {
            for j in 0..width {
                lanes[j] = lanes[j].merge(lanes[j + width]);
            }
            width /= 2;
        }
        lanes[0]
    }

    /// The tile's shortcuts (few lanes for short tiles, the equal-count fold, eight lanes
    /// in registers) give the written steps' bits at every kind of length.
    #[test]
    fn moments_tiles_equal_the_written_steps() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let values: Vec<f64> = (0..TILE)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 7.0
            })
            .collect();
        for n in [
            1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 63, 64, 65, 100, 128, 255, 256, 257, 300, 512,
            513, 600, 767, 768, 769, 1000, 1023, 1024, 2048, 3072, 5000, 8191, 8192,
        ] {
            let want = moments_as_written(&values[..n]);
            assert_eq!(moments_tile(&values[..n]), want, "{n} f64 elements");
            let narrow: Vec<f32> = values[..n].iter().map(|&x| x as f32).collect();
            let widened: Vec<f64> = narrow.iter().map(|&x| f64::from(x)).collect();
            assert_eq!(
                moments_tile_f32(&narrow),
                moments_as_written(&widened),
                "{n} f32 elements"
            );
        }
    }

    #[test]
    fn merging_empty_states_changes_nothing() {
        let mut a = Moments::EMPTY;
        a.push(3.0);
        a.push(5.0);
        assert_eq!(a.merge(Moments::EMPTY), a);
        assert_eq!(Moments::EMPTY.merge(a), a);
        let mut e = ExpSum::EMPTY;
        e.push(1.0);
        assert_eq!(e.merge(ExpSum::EMPTY), e);
        assert_eq!(ExpSum::EMPTY.merge(e), e);
    }

    #[test]
    fn logsumexp_handles_infinities_and_nan() {
        let of = |v: &[f64]| {
            canonical::<ExpSum>(ArrayRef::from_slice(v))
                .expect("runs")
                .value()
        };
        assert_eq!(of(&[]), f64::NEG_INFINITY);
        assert_eq!(
            of(&[f64::NEG_INFINITY, f64::NEG_INFINITY]),
            f64::NEG_INFINITY
        );
        assert_eq!(of(&[1.0, f64::INFINITY, f64::INFINITY]), f64::INFINITY);
        let mut spread = vec![0.0; 3000];
        spread[2000] = f64::INFINITY;
        assert_eq!(of(&spread), f64::INFINITY);
        assert!(of(&[1.0, f64::NAN, 2.0]).is_nan());
        let big = of(&[1000.0, 1000.0]);
        assert!((big - (1000.0 + 2f64.ln())).abs() < 1e-12);
    }
}
