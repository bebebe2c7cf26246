//! Log-sum-exp's state, `(max, Σ exp(x − max))`, and its canonical tile on the CPU.
//!
//! Every exponential is [`redlab_core::canonical_exp::exp`], the same steps the devices
//! run, so the states (and the finished values) are bit for bit the devices' too. The
//! push and the merge are written branch-free around one exponential each: the lanes of
//! a tile then vectorize, where the branchy form with the platform's `exp` ran one
//! element at a time at 0.3–0.6 GB/s.
//!
//! The exponential's 13 dependent fused multiply-adds make it latency-bound when few
//! lanes are in flight, so a tile pushes a whole row of lanes before the next row (the
//! lane states stay in L1); eight lanes at a time through all eight rows in registers,
//! as the moments do, was 10% slower on rows of 8192 (results/cpu-dev-2core-avx512).
//! Without AVX-512, a row's pushes and the fold's merges run in `exp_merge_avx2`, which
//! issues each step of several lanes' exponentials together.
//! AVX-512 is compiled in beside AVX2 and chosen at run time: the same operations on
//! twice the lanes, so the same bits, 1.3–2.1× as fast on the development machine.

use redlab_core::canonical::LANES;
use redlab_core::canonical_exp::exp;
use redlab_core::canonical_ln::ln;

use crate::exp_merge_avx2::{self, Element};
use crate::statistics::{Lane, SHORT_TILE, TINY_TILE};

/// A running maximum and the sum of `exp(x − max)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExpSum {
    /// The largest element seen (−∞ before any).
    pub max: f64,
    /// Σ exp(x − max).
    pub sum: f64,
}

impl ExpSum {
    /// No elements.
    pub const EMPTY: ExpSum = ExpSum {
        max: f64::NEG_INFINITY,
        sum: 0.0,
    };

    /// One more element: `x = max` adds 1, `x < max` adds `exp(x − max)`, anything else
    /// (a larger element, or NaN, which then stays) rescales the sum by
    /// `exp(max − x)` and adds 1. Both exponents are `−|x − max|` (negating a difference
    /// is exact), so one exponential serves every case.
    #[inline(always)]
    pub fn push(&mut self, x: f64) {
        let (max, sum) = push_lane(self.max, self.sum, x);
        self.max = max;
        self.sum = sum;
    }

    /// Merge of `self` (the lower indices) with `other`: NaN on either side gives NaN;
    /// otherwise the larger maximum, and each side's sum scaled by `exp(its max − max)`,
    /// except that a side holding the maximum keeps its sum as it is (for an infinite
    /// maximum, `exp(∞ − ∞)` would be NaN). An empty side (`−∞`, 0) adds exactly 0.
    #[inline(always)]
    pub fn merge(self, other: ExpSum) -> ExpSum {
        let (max, sum) = merge_lanes(self.max, self.sum, other.max, other.sum);
        ExpSum { max, sum }
    }

    /// `log(Σ exp(x))`, with the canonical `ln` (the platform's may differ in its last
    /// bit from one C library to another), run with FMA where the CPU has it.
    pub fn value(self) -> f64 {
        finish_dispatched(self.max, self.sum)
    }

    /// [`ExpSum::value`] inlined, for loops over many states inside functions compiled
    /// for the vector units (elsewhere its fused multiply-adds are library calls).
    #[inline(always)]
    pub fn value_inline(self) -> f64 {
        ln(self.sum) + self.max
    }
}

/// [`ExpSum::value`] built for FMA and chosen at run time: called once per output from
/// code compiled for the baseline CPU, the canonical `ln`'s ten `mul_add`s would each be
/// a call into the C library (rows of 32 took 1.2–1.6× as long that way).
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn finish_dispatched(max: f64, sum: f64) -> f64 {
    ExpSum { max, sum }.value_inline()
}

/// [`ExpSum::push`] on a lane's two numbers, branch-free.
#[inline(always)]
pub(crate) fn push_lane(max: f64, sum: f64, x: f64) -> (f64, f64) {
    // Every value is computed, then selected (no branch around the exponential, so the
    // compiler keeps the lanes in vector registers).
    let e = exp(-(x - max).abs());
    // Equal infinities would give exp(NaN): equal elements add exactly 1.
    let e = if x == max { 1.0 } else { e };
    let (kept, rescaled) = (sum + e, sum * e + 1.0);
    let smaller_or_equal = x <= max;
    (
        if smaller_or_equal { max } else { x },
        if smaller_or_equal { kept } else { rescaled },
    )
}

/// [`ExpSum::merge`] on two lanes' numbers, branch-free.
#[inline(always)]
pub(crate) fn merge_lanes(lo_max: f64, lo_sum: f64, hi_max: f64, hi_sum: f64) -> (f64, f64) {
    // Equal maxima (-0.0 and 0.0 included) keep the lower side's.
    let max = if lo_max >= hi_max { lo_max } else { hi_max };
    // The side not holding the maximum scales by exp(its max − max), which is
    // −|lo_max − hi_max| exactly: one exponential serves both sides.
    let e = exp(-(lo_max - hi_max).abs());
    let scaled = |part_max: f64, part_sum: f64| {
        let rescaled = part_sum * e;
        if part_max == max {
            part_sum
        } else {
            rescaled
        }
    };
    let sum = scaled(lo_max, lo_sum) + scaled(hi_max, hi_sum);
    if lo_max.is_nan() || hi_max.is_nan() {
        (f64::NAN, f64::NAN)
    } else {
        (max, sum)
    }
}

impl Lane for ExpSum {
    const EMPTY: Self = ExpSum::EMPTY;
    fn merge(self, other: Self) -> Self {
        ExpSum::merge(self, other)
    }
    fn tile(values: &[f64]) -> Self {
        exp_sum_tile(values)
    }
    fn tile_f32(values: &[f32]) -> Self {
        exp_sum_tile_f32(values)
    }
}

/// One canonical tile of log-sum-exp: lanes updated in increasing index, then folded by
/// halving, the lower-index side first (the steps of [`ExpSum::push`] and
/// [`ExpSum::merge`], vectorized across lanes).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn exp_sum_tile(values: &[f64]) -> ExpSum {
    exp_sum_tile_with(values, |x| x)
}

/// [`exp_sum_tile`] over f32 elements, converted as they are read.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn exp_sum_tile_f32(values: &[f32]) -> ExpSum {
    exp_sum_tile_with(values, f64::from)
}

/// The body of [`exp_sum_tile`], over any element that converts to f64 exactly.
#[inline(always)]
fn exp_sum_tile_with<T: Element>(values: &[T], to_f64: impl Fn(T) -> f64) -> ExpSum {
    // (Short tiles keep few lanes' state: see TINY_TILE.)
    if values.len() <= TINY_TILE {
        lanes_tile::<TINY_TILE, T>(values, to_f64)
    } else if values.len() <= SHORT_TILE {
        lanes_tile::<SHORT_TILE, T>(values, to_f64)
    } else {
        lanes_tile::<LANES, T>(values, to_f64)
    }
}

/// The sum of a lane after [`push_lane`] of any `x` but NaN into an empty lane: the lane
/// becomes `(x, 1)` (for finite and infinite `x` alike: the exponential's argument is
/// −∞, or NaN with `x = max = −∞`, and both select exactly 0 or 1). A row with no NaN
/// is pushed into empty lanes without an exponential, which halves the exponentials of a
/// row of one tile (a row with a NaN takes the general steps, so its NaN's bits are
/// those steps').
pub(crate) const PUSHED_INTO_EMPTY: f64 = 1.0;

/// Whether any of `values` is NaN, by a scan without an early exit, which the compiler
/// vectorizes (`any` stops at the first NaN and ran one element at a time: a third of
/// the time of log-sum-exp along rows of 1024).
#[inline(always)]
pub(crate) fn any_nan<T: Copy>(values: &[T], to_f64: impl Fn(T) -> f64) -> bool {
    values
        .iter()
        .fold(false, |seen, &x| seen | to_f64(x).is_nan())
}

/// A tile of at most `L` elements (at most `L` non-empty lanes) with `L` lanes of state.
#[inline(always)]
fn lanes_tile<const L: usize, T: Element>(values: &[T], to_f64: impl Fn(T) -> f64) -> ExpSum {
    let mut max = [f64::NEG_INFINITY; L];
    let mut sum = [0.0f64; L];
    // A tile of one row without NaN skips the exponentials of its pushes (in whole
    // tiles, one push in eight, it measured no faster, with either scan for NaN).
    if values.len() <= LANES && !any_nan(values, &to_f64) {
        for ((m, s), &x) in max.iter_mut().zip(&mut sum).zip(values) {
            (*m, *s) = (to_f64(x), PUSHED_INTO_EMPTY);
        }
    } else {
        for row in values.chunks(LANES) {
            let done = exp_merge_avx2::push_columns(&mut max, &mut sum, row);
            let lanes = max[done..].iter_mut().zip(&mut sum[done..]);
            for ((m, s), &x) in lanes.zip(&row[done..]) {
                (*m, *s) = push_lane(*m, *s, to_f64(x));
            }
        }
    }
    // Lanes at and past `filled` are empty: their merges are skipped.
    let filled = values.len().min(L);
    let mut width = L / 2;
    while width >= 1 {
        // Slices of exactly the merged lanes, zipped (indexed, they kept bounds checks).
        let merges = width.min(filled.saturating_sub(width));
        let (low_max, high_max) = max[..2 * width].split_at_mut(width);
        let (low_sum, high_sum) = sum[..2 * width].split_at_mut(width);
        let done = exp_merge_avx2::merge_columns(
            &mut low_max[..merges],
            &mut low_sum[..merges],
            &high_max[..merges],
            &high_sum[..merges],
        );
        let lows = low_max[done..merges]
            .iter_mut()
            .zip(&mut low_sum[done..merges]);
        let highs = high_max[done..merges].iter().zip(&high_sum[done..merges]);
        for ((m, s), (&high_max, &high_sum)) in lows.zip(highs) {
            (*m, *s) = merge_lanes(*m, *s, high_max, high_sum);
        }
        width /= 2;
    }
    ExpSum {
        max: max[0],
        sum: sum[0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_values::{awkward, finite};
    use redlab_core::canonical::TILE;

    #[test]
    fn the_value_is_the_canonical_ln_plus_the_maximum_in_every_build() {
        let states = [
            ExpSum { max: 3.5, sum: 1.0 },
            ExpSum {
                max: -2.25,
                sum: 7.75,
            },
            ExpSum {
                max: 1e300,
                sum: 1024.5,
            },
            ExpSum::EMPTY,
            ExpSum {
                max: f64::INFINITY,
                sum: 2.0,
            },
            ExpSum {
                max: f64::NAN,
                sum: f64::NAN,
            },
        ];
        for e in states {
            let expected = ln(e.sum) + e.max;
            // The dispatched build (FMA where the CPU has it) and the inlined one agree.
            assert_eq!(e.value().to_bits(), expected.to_bits(), "{e:?}");
            assert_eq!(e.value_inline().to_bits(), expected.to_bits(), "{e:?}");
        }
        assert_eq!(ExpSum::EMPTY.value(), f64::NEG_INFINITY);
        let e = ExpSum { max: 0.5, sum: 3.0 };
        assert!((e.value() - (0.5 + 3f64.ln())).abs() <= 2.0 * f64::EPSILON);
    }

    /// The steps as docs/canonical-order.md writes them, with branches.
    fn push_as_written(s: &mut ExpSum, x: f64) {
        if x == s.max {
            s.sum += 1.0;
        } else if x < s.max {
            s.sum += exp(x - s.max);
        } else {
            s.sum = s.sum * exp(s.max - x) + 1.0;
            s.max = x;
        }
    }

    fn merge_as_written(a: ExpSum, b: ExpSum) -> ExpSum {
        let empty = |p: &ExpSum| p.sum == 0.0 && p.max == f64::NEG_INFINITY;
        if empty(&b) {
            return a;
        }
        if empty(&a) {
            return b;
        }
        if a.max.is_nan() || b.max.is_nan() {
            return ExpSum {
                max: f64::NAN,
                sum: f64::NAN,
            };
        }
        if a.max == b.max {
            return ExpSum {
                max: a.max,
                sum: a.sum + b.sum,
            };
        }
        let max = a.max.max(b.max);
        let scaled = |p: &ExpSum| {
            if p.max == max {
                p.sum
            } else {
                p.sum * exp(p.max - max)
            }
        };
        ExpSum {
            max,
            sum: scaled(&a) + scaled(&b),
        }
    }

    fn same(a: ExpSum, b: ExpSum) -> bool {
        let eq = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
        eq(a.max, b.max) && eq(a.sum, b.sum)
    }

    #[test]
    fn the_branch_free_steps_give_the_written_steps_bits() {
        for seed in 0..40 {
            let values = awkward(500, seed, seed % 3 == 0);
            let (mut ours, mut written) = (ExpSum::EMPTY, ExpSum::EMPTY);
            let mut parts = Vec::new();
            for &x in &values {
                ours.push(x);
                push_as_written(&mut written, x);
                assert!(same(ours, written), "push of {x} (seed {seed})");
                parts.push(ours);
            }
            parts.push(ExpSum::EMPTY);
            for a in &parts[..60] {
                for b in parts.iter().rev().take(60) {
                    assert!(same(a.merge(*b), merge_as_written(*a, *b)), "{a:?} ⊕ {b:?}");
                }
            }
        }
    }

    /// The vectorized tile against lanes pushed and folded one at a time.
    /// A tile's state by the written steps, lane by lane.
    fn written_tile(values: &[f64]) -> ExpSum {
        let mut lanes = [ExpSum::EMPTY; LANES];
        for row in values.chunks(LANES) {
            for (lane, &x) in lanes.iter_mut().zip(row) {
                push_as_written(lane, x);
            }
        }
        let mut width = LANES / 2;
        while width >= 1 {
            for j in 0..width {
                lanes[j] = merge_as_written(lanes[j], lanes[j + width]);
            }
            width /= 2;
        }
        lanes[0]
    }

    /// A row of one tile is pushed into empty lanes without exponentials unless it
    /// holds a NaN; with one, and with infinities, it still gives the written steps.
    #[test]
    fn first_rows_with_nan_or_infinities_give_the_written_steps() {
        let (nan, inf) = (f64::NAN, f64::INFINITY);
        for values in [
            vec![nan],
            vec![-inf],
            vec![inf],
            vec![1.5, nan, -2.0],
            vec![-inf, -inf, 3.0, inf, -0.0],
        ] {
            assert!(
                same(exp_sum_tile(&values), written_tile(&values)),
                "{values:?}"
            );
        }
    }

    #[test]
    fn tiles_equal_the_lane_by_lane_steps() {
        for (n, seed) in [
            (TILE, 1),
            (TILE, 2),
            (1, 3),
            (1023, 4),
            (1025, 5),
            (5000, 6),
        ] {
            // Long awkward tiles nearly always hold an infinity, whose result hides the
            // other elements; finite values make each of them count.
            for values in [awkward(n, seed, seed == 2), finite(n, seed)] {
                assert!(
                    same(exp_sum_tile(&values), written_tile(&values)),
                    "{n} elements"
                );
                let narrow: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                let widened: Vec<f64> = narrow.iter().map(|&x| f64::from(x)).collect();
                assert!(
                    same(exp_sum_tile_f32(&narrow), exp_sum_tile(&widened)),
                    "{n} f32 elements"
                );
            }
        }
    }
}
