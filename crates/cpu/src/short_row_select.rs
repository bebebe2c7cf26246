//! Min, max, argmin and argmax of short even rows (contiguous outputs of at most one
//! tile whose starts step evenly, as along the last axis of a C-order matrix), chosen
//! straight into the typed result array: the values for min and max, int64 indices for
//! argmin and argmax.
//!
//! The general path builds a [`redlab_core::Value`] per output and runs the whole-array
//! selection per row (a dispatch, a pool check and a second pass each), which cost far
//! more than choosing from a row of a few elements: on the 2-core development machine
//! argmax along 2^24 rows of 4 f32 read 0.7 GB/s, less than numpy, and max along
//! 2^26 rows of one element 0.13–0.21 GB/s, 0.02–0.04× numpy.
//!
//! Each row follows [`crate::select::select`]'s rule exactly: the first NaN if the row
//! holds one, else the extreme by order key (so -0.0 below +0.0), at its first index.
//! A key is the value's bits, so the value chosen is bit for bit the element.

use crate::first_extreme_avx2::{self, Avx2, RowKey};
use crate::fork::map_chunks_mut;
use crate::integer::CHUNK;
use crate::select::{is_nan_key, key_bounds, select_in, Selectable};
use crate::short_rows::EvenRows;
use redlab_core::host_memory::zeroed_results;
use redlab_core::segmented::Selection;
use redlab_core::{with_dtype, ArrayRef, Error, Op, Packed, Problem};

/// Outputs per task at least: choosing from a short row is far less work than a task.
const OUTPUTS_PER_TASK: usize = 1024;
/// Rows at least this long run the whole-array selection ([`select`]: its key pass and
/// its block-by-block search for the first index, each vectorized for the CPU at hand),
/// whose calls a long row repays; shorter ones choose inline. (Inline, argmax along
/// rows of 1024 read 0.84–0.94× as fast.) Argmin and argmax of 4- and 8-byte elements
/// take [`first_extreme_avx2`] from [`ONE_PASS_ROW`] instead, where the CPU has AVX2.
const LONG_ROW: usize = 64;
/// Argmin and argmax of 4- and 8-byte elements along rows of at least this many elements
/// (and at most a [`CHUNK`], past which the whole-array selection splits a row over the
/// pool, or [`first_extreme_avx2::longest_row`]) take one AVX2 pass per row
/// ([`first_extreme_avx2`]).
const ONE_PASS_ROW: usize = first_extreme_avx2::SHORTEST_ROW;

/// The results of min, max, argmin or argmax where `selection` is short even rows (see
/// the module documentation); `None` for every other problem or selection, which the
/// per-output path takes.
pub fn packed(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Packed, Error>> {
    let want_min = problem.op.wants_minimum()?;
    // Selecting operators keep the input's type; anything else is not this path's.
    if problem.acc != problem.dtype {
        return None;
    }
    let (plan, len) = crate::short_rows::applies(selection)?;
    let rows = match EvenRows::of(plan, len, data.len()) {
        Ok(rows) => rows?,
        Err(e) => return Some(Err(e)),
    };
    let indexed = matches!(problem.op, Op::ArgMin | Op::ArgMax);
    Some(with_dtype!(problem.dtype, T => {
        data.typed::<T>().map(|src| {
            if indexed {
                Packed::of_vec(indices(src, &rows, plan.outputs(), len, want_min))
            } else {
                Packed::of_vec(extremes(src, &rows, plan.outputs(), len, want_min))
            }
        })
    }))
}

/// Each row's min (`want_min`) or max.
fn extremes<T: Selectable>(
    src: &[T],
    rows: &EvenRows,
    count: usize,
    len: usize,
    want_min: bool,
) -> Vec<T> {
    in_runs(count, |first, out| {
        extremes_run(src, rows, first, len, want_min, out)
    })
}

/// Each row's argmin (`want_min`) or argmax, as numpy's int64.
fn indices<T: Selectable>(
    src: &[T],
    rows: &EvenRows,
    count: usize,
    len: usize,
    want_min: bool,
) -> Vec<i64> {
    if len == 1 {
        // A row of one element is its own argmin and argmax: index 0, NaN or not.
        return zeroed_results(count);
    }
    in_runs(count, |first, out| {
        indices_run(src, rows, first, len, want_min, out)
    })
}

/// `count` results, filled by `run(first, out)` for runs of [`OUTPUTS_PER_TASK`]
/// outputs from `first` on, in parallel.
fn in_runs<O: bytemuck::Zeroable + Send>(
    count: usize,
    run: impl Fn(usize, &mut [O]) + Sync + Send,
) -> Vec<O> {
    let mut out = zeroed_results::<O>(count);
    map_chunks_mut(&mut out, OUTPUTS_PER_TASK, 1, |task, out| {
        run(task * OUTPUTS_PER_TASK, out)
    });
    out
}

/// `out[k]` ← the extreme of row `first + k`; compiled for AVX2 too, where a row's key
/// fold is vector min and max.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn extremes_run<T: Selectable>(
    src: &[T],
    rows: &EvenRows,
    first: usize,
    len: usize,
    want_min: bool,
    out: &mut [T],
) {
    if len == 1 {
        // The element itself (a NaN included): a copy where the rows are neighbours,
        // else a gather.
        if rows.step() == 1 {
            let start = rows.start(first);
            let count = out.len();
            out.copy_from_slice(&src[start..start + count]);
            return;
        }
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = src[rows.start(first + k)];
        }
        return;
    }
    if len >= LONG_ROW {
        for (k, slot) in out.iter_mut().enumerate() {
            let start = rows.start(first + k);
            // The whole-array selection, prefetching on past the row (`select_in`).
            *slot = select_in(src, start, len, want_min, false).map_or(src[start], |(_, v)| v);
        }
        return;
    }
    crate::prefetch::each_row(
        src,
        len,
        out,
        |k| rows.start(first + k),
        |start| {
            let row = &src[start..start + len];
            match extreme_key(row, want_min) {
                Ok(key) => T::from_key(key),
                Err(nan) => row[nan],
            }
        },
    );
}

/// `out[k]` ← the first index of row `first + k`'s extreme (or first NaN).
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn indices_run<T: Selectable>(
    src: &[T],
    rows: &EvenRows,
    first: usize,
    len: usize,
    want_min: bool,
    out: &mut [i64],
) {
    let longest = |key| CHUNK.min(first_extreme_avx2::longest_row(key));
    let key = RowKey::of(T::DTYPE).filter(|&key| (ONE_PASS_ROW..=longest(key)).contains(&len));
    if let Some((key, cpu)) = key.zip(Avx2::detect()) {
        // 4- and 8-byte elements: one pass per row (`first_extreme_avx2`).
        for (k, slot) in out.iter_mut().enumerate() {
            let row = (rows.start(first + k), len);
            let pick = first_extreme_avx2::first_extreme(cpu, src, row, key, want_min);
            *slot = pick.unwrap_or(0) as i64;
        }
        return;
    }
    if len >= LONG_ROW {
        for (k, slot) in out.iter_mut().enumerate() {
            let start = rows.start(first + k);
            let pick = select_in(src, start, len, want_min, true);
            *slot = pick.map_or(0, |(index, _)| index) as i64;
        }
        return;
    }
    crate::prefetch::each_row(
        src,
        len,
        out,
        |k| rows.start(first + k),
        |start| {
            let row = &src[start..start + len];
            (match extreme_key(row, want_min) {
                Err(nan) => nan,
                // The key came from this row, so the scan finds it.
                Ok(key) => row.iter().position(|&x| x.key() == key).unwrap_or(0),
            }) as i64
        },
    );
}

/// The key of the smallest (`want_min`) or largest element of a non-empty `row`, or
/// `Err` with the index of its first NaN: one branch-free pass of key minima and maxima,
/// in which a NaN's key falls outside the range of every number's.
#[inline(always)]
fn extreme_key<T: Selectable>(row: &[T], want_min: bool) -> Result<T::Key, usize> {
    let (lo, hi) = key_bounds(row);
    if lo < T::LOWEST || hi > T::HIGHEST {
        return Err(row.iter().position(|&x| is_nan_key(x)).unwrap_or(0));
    }
    Ok(if want_min { lo } else { hi })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;
    use half::{bf16, f16};
    use redlab_core::shape::{AxisPlan, Layout};
    use redlab_core::{DType, Element, IntoScalar};

    /// Seeded values with every awkward case a selection meets: NaNs, infinities, signed
    /// zeros and ties (a small range of values, so rows repeat their extremes).
    fn awkward(n: usize, seed: u64) -> Vec<f64> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                match state % 41 {
                    0 => f64::NAN,
                    1 => -f64::NAN,
                    2 => f64::INFINITY,
                    3 => f64::NEG_INFINITY,
                    4 => 0.0,
                    5 => -0.0,
                    r => (r as f64 - 20.0) * 0.25 + ((state >> 40) % 3) as f64,
                }
            })
            .collect()
    }

    /// Every row of `dims` along its last axis, through [`packed`], against
    /// [`select`] of the row alone, bit for bit: each operator, over rows of an offset
    /// view with gaps between them too.
    fn check<T: Selectable + Element + IntoScalar>(values: &[T], dims: &[usize], gap: usize) {
        let (count, len) = (dims[0], dims[1]);
        let layout = Layout {
            dims: dims.to_vec(),
            strides: vec![(len + gap) as isize, 1],
            offset: gap,
        };
        let plan = AxisPlan::new(layout, Some(&[1]), false).expect("plan");
        let data = ArrayRef::from_slice(values);
        for op in [Op::Min, Op::Max, Op::ArgMin, Op::ArgMax] {
            let problem = Problem::new(op, T::DTYPE, None).expect("problem");
            let got = packed(&problem, data, Selection::Axes(&plan))
                .expect("short even rows take this path")
                .expect("in bounds");
            let want_min = op.wants_minimum().expect("selecting");
            for k in 0..count {
                let start = gap + k * (len + gap);
                let (_, value) =
                    select(&values[start..start + len], want_min, false).expect("non-empty");
                let (first, _) =
                    select(&values[start..start + len], want_min, true).expect("non-empty");
                let bits = got.scalar(k).expect("a result").bits();
                if matches!(op, Op::ArgMin | Op::ArgMax) {
                    assert_eq!(got.dtype, DType::I64);
                    assert_eq!(bits, first as u64, "{op} of row {k} of {dims:?}");
                } else {
                    assert_eq!(got.dtype, T::DTYPE);
                    let want = value.into_scalar().bits();
                    assert_eq!(bits, want, "{op} of row {k} of {dims:?} (gap {gap})");
                }
            }
        }
    }

    #[test]
    fn every_row_is_the_whole_array_selection_of_it() {
        let values = awkward(70_000, 3);
        let f32s: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let halves: Vec<f16> = values.iter().map(|&v| f16::from_f64(v)).collect();
        let brains: Vec<bf16> = values.iter().map(|&v| bf16::from_f64(v)).collect();
        let ints: Vec<i32> = values
            .iter()
            .map(|&v| if v.is_finite() { (v * 4.0) as i32 } else { 7 })
            .collect();
        let bytes: Vec<u8> = ints.iter().map(|&v| v as u8).collect();
        for len in [
            1usize, 2, 3, 4, 5, 7, 10, 31, 32, 33, 63, 64, 65, 127, 1000, 1025, 8192,
        ] {
            for gap in [0, 3] {
                let count = (values.len() / (len + gap + 1)).clamp(1, 1500);
                let dims = [count, len];
                check(&values, &dims, gap);
                check(&f32s, &dims, gap);
                check(&halves, &dims, gap);
                check(&brains, &dims, gap);
                check(&ints, &dims, gap);
                check(&bytes, &dims, gap);
            }
        }
    }

    #[test]
    fn other_problems_and_selections_are_left_to_the_general_path() {
        let values: Vec<f32> = awkward(64, 5).iter().map(|&v| v as f32).collect();
        let data = ArrayRef::from_slice(&values);
        let rows = AxisPlan::new(Layout::c_order(&[8, 8]), Some(&[1]), false).expect("plan");
        let columns = AxisPlan::new(Layout::c_order(&[8, 8]), Some(&[0]), false).expect("plan");
        let sum = Problem::new(Op::Sum, DType::F32, None).expect("problem");
        let max = Problem::new(Op::Max, DType::F32, None).expect("problem");
        assert!(packed(&sum, data, Selection::Axes(&rows)).is_none());
        assert!(packed(&max, data, Selection::Axes(&columns)).is_none());
        assert!(packed(&max, data, Selection::Axes(&rows)).is_some());
    }
}
