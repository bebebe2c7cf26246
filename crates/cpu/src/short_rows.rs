//! Short contiguous outputs (rows along the last axis of a C-order array, at most one
//! tile each): one typed loop over a run of outputs per task, instead of a view, a type
//! dispatch and a task per output, which cost several times the reduction of a row of
//! 32 elements. Each output is still the 1-D reduction of its own elements by the same
//! functions, so the bits are those of reducing it alone.

use std::sync::Mutex;

use crate::fork::{map_chunks_mut, map_range};
use redlab_core::canonical::{LANES, TILE};
use redlab_core::host_memory::zeroed_results;
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{with_float_dtype, with_float_pair, with_int_dtype};
use redlab_core::{
    ArrayRef, DType, Element, Error, IntoScalar, Op, Packed, PackedBytes, Problem, Value,
};

use redlab_core::num::{AccFloat, FloatInput, IntElement};

use crate::canonical::{reduce_row_halves, reduce_row_within, Add, Combine, Mul};

/// The longest output this path takes: longer ones split their own tiles over threads.
pub const MAX_LEN: usize = TILE;
/// Outputs per task at least: a task per short output cost more than its reduction.
const OUTPUTS_PER_TASK: usize = 256;

/// The axis plan and output length where `selection` is contiguous outputs of 1 to
/// [`MAX_LEN`] elements, the outputs this path takes; `None` otherwise. Both
/// [`compute`] and the `--explain` text ask this, so they cannot disagree.
pub fn applies<'a>(selection: Selection<'a>) -> Option<(&'a AxisPlan, usize)> {
    let Selection::Axes(plan) = selection else {
        return None;
    };
    let len = plan.segment_len();
    let eligible = plan.outputs() > 0 && (1..=MAX_LEN).contains(&len);
    (eligible && plan.contiguous(0).is_some()).then_some((plan, len))
}

/// One value per output where [`applies`] takes `selection`; `None` otherwise. The
/// backend asks [`packed`] first: the even rows it takes (float sums and products of at
/// most [`LANES`] elements, integer operators with an identity) are faster there.
pub fn compute(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Vec<Value>, Error>> {
    let (plan, len) = applies(selection)?;
    Some(typed(problem, data, plan, len))
}

/// The outputs as one typed array where they are even rows whose results are typed from
/// the start: float sums and products of at most [`LANES`] elements (`float_rows`), and integer
/// sums, products and bitwise operators (`int_rows`); `None` for every other selection.
pub fn packed(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Packed, Error>> {
    let (plan, len) = applies(selection)?;
    let floats = len <= LANES && problem.dtype.is_float() && problem.op.is_arithmetic();
    let integers = problem.dtype.is_integer() && !problem.op.needs_elements();
    if !(floats || integers) {
        return None;
    }
    let rows = match EvenRows::of(plan, len, data.len()) {
        Ok(rows) => rows?,
        Err(e) => return Some(Err(e)),
    };
    if integers {
        let acc = problem.acc;
        // Closures, not function pointers: each operator gets its own inlined loop.
        return Some(with_int_dtype!(problem.dtype, T => {
            data.typed::<T>().map(|src| match problem.op {
                Op::Sum => int_rows(0, u64::wrapping_add, acc, src, &rows),
                Op::Prod => int_rows(1, u64::wrapping_mul, acc, src, &rows),
                Op::And => int_rows(u64::MAX, |a, b| a & b, acc, src, &rows),
                Op::Or => int_rows(0, |a, b| a | b, acc, src, &rows),
                // Xor: `integers` kept the selecting operators out.
                _ => int_rows(0, |a, b| a ^ b, acc, src, &rows),
            })
        }, else unreachable!("integer dtype")));
    }
    Some(with_float_pair!(problem.dtype, problem.acc, T, A => {
        data.typed::<T>().map(|src| {
            // Rows of at most LANES: their one partial tile, folded directly (the tile
            // tree's walk around it cost more than the fold).
            let sums = if problem.op == Op::Sum {
                float_rows::<A, T, _>(Add, src, &rows)
            } else {
                float_rows::<A, T, _>(Mul, src, &rows)
            };
            Packed::of_vec(sums)
        })
    }, else Err(Error::AccNotAllowed {
        op: problem.op, dtype: problem.dtype, acc: problem.acc, allowed: "f32, f64".into(),
    })))
}

fn typed(
    problem: &Problem,
    data: ArrayRef<'_>,
    plan: &AxisPlan,
    len: usize,
) -> Result<Vec<Value>, Error> {
    let even = EvenRows::of(plan, len, data.len())?;
    if problem.dtype.is_integer() {
        return with_int_dtype!(problem.dtype, T => {
            each(data.typed::<T>()?, plan, even, len, |row| crate::integer_value::<T>(problem, row))
        }, else unreachable!("integer dtype"));
    }
    if problem.op.is_arithmetic() {
        return with_float_pair!(problem.dtype, problem.acc, T, A => {
            let src = data.typed::<T>()?;
            // Rows of at most LANES fold their one partial tile directly, as `packed` does.
            match (len <= LANES, problem.op) {
                (true, Op::Sum) => each(src, plan, even, len, |row| Ok(Value::Scalar(reduce_row::<A, T, _>(Add, row).into_scalar()))),
                (true, _) => each(src, plan, even, len, |row| Ok(Value::Scalar(reduce_row::<A, T, _>(Mul, row).into_scalar()))),
                (false, _) => each(src, plan, even, len, |row| Ok(crate::float_value::<T, A>(problem.op, row))),
            }
        }, else Err(Error::AccNotAllowed {
            op: problem.op, dtype: problem.dtype, acc: problem.acc, allowed: "f32, f64".into(),
        }));
    }
    with_float_dtype!(problem.dtype, T => {
        each(data.typed::<T>()?, plan, even, len, |row| crate::selection_value::<T>(problem.op, row))
    }, else unreachable!("float dtype"))
}

/// Outputs whose first elements step evenly through the buffer: output `k` is the `len`
/// elements from `first + k·step`. Rows of a C-order matrix, and of any view whose kept
/// axes merge into one run, are such outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EvenRows {
    first: usize,
    step: usize,
    count: usize,
    len: usize,
}

impl EvenRows {
    /// The outputs of `plan` (contiguous, of `len` elements each) as even rows of a
    /// buffer of `available` elements; `None` where the kept axes do not form one
    /// forward run. An output past the buffer's end is the same error [`each`] gives.
    pub(crate) fn of(
        plan: &AxisPlan,
        len: usize,
        available: usize,
    ) -> Result<Option<EvenRows>, Error> {
        let (count, step) = match plan.kept_runs().as_slice() {
            [] => (plan.outputs(), 0),
            &[(count, step)] if step >= 0 => (count, step as usize),
            _ => return Ok(None),
        };
        // `applies` took only contiguous outputs, so output 0 starts a run of `len`.
        let first = plan.start(0);
        let last = count.saturating_sub(1);
        let end = step
            .checked_mul(last)
            .and_then(|o| o.checked_add(first + len));
        if end.is_none_or(|end| end > available) {
            return Err(Error::Shape(format!(
                "output {last} lies outside the input"
            )));
        }
        Ok(Some(EvenRows {
            first,
            step,
            count,
            len,
        }))
    }

    /// The buffer offset of output `k`'s first element.
    pub(crate) fn start(&self, k: usize) -> usize {
        self.first + k * self.step
    }

    /// Elements between neighbouring outputs' first elements.
    pub(crate) fn step(&self) -> usize {
        self.step
    }
}

/// Every even row of 1 to [`LANES`] elements reduced in the canonical order,
/// [`OUTPUTS_PER_TASK`] rows per task, typed: the walk per output and a value built
/// inside the fold's loop had cost more than the fold.
fn float_rows<A, T, C>(op: C, src: &[T], rows: &EvenRows) -> Vec<A>
where
    A: AccFloat,
    T: FloatInput<A> + Sync,
    C: Combine<A>,
{
    // Every slot is written below.
    let mut results = zeroed_results::<A>(rows.count);
    map_chunks_mut(&mut results, OUTPUTS_PER_TASK, 1, |task, out| {
        let first = rows.start(task * OUTPUTS_PER_TASK);
        fold_float_rows(op, src, first, rows.step, rows.len, out);
    });
    results
}

/// Every even row's integer sum, product, and, or or xor, wrapped to the accumulator
/// type. Each is exact, so a plain fold per row gives the bits of
/// [`crate::integer::fold`], the whole-array path, without its 32 lanes per row.
fn int_rows<T: IntElement + Sync>(
    init: u64,
    f: impl Fn(u64, u64) -> u64 + Copy + Sync,
    acc: DType,
    src: &[T],
    rows: &EvenRows,
) -> Packed {
    // Wrapping arithmetic commutes with truncation: each result's low bytes are its
    // value in the (narrower or equal) accumulator type, stored as the unsigned word of
    // that width, so each store is one move of a typed loop.
    let bytes = match acc.size_bytes() {
        8 => int_rows_into::<T, u64>(init, f, src, rows),
        4 => int_rows_into::<T, u32>(init, f, src, rows),
        2 => int_rows_into::<T, u16>(init, f, src, rows),
        _ => int_rows_into::<T, u8>(init, f, src, rows),
    };
    Packed { dtype: acc, bytes }
}

/// [`int_rows`] into words of the accumulator's width.
fn int_rows_into<T: IntElement + Sync, W: ResultWord>(
    init: u64,
    f: impl Fn(u64, u64) -> u64 + Copy + Sync,
    src: &[T],
    rows: &EvenRows,
) -> PackedBytes {
    let mut words = zeroed_results::<W>(rows.count);
    map_chunks_mut(&mut words, OUTPUTS_PER_TASK, 1, |task, out| {
        let first = rows.start(task * OUTPUTS_PER_TASK);
        if rows.len == 1 && rows.step == 1 {
            // Neighbouring rows of one element: each result is `init ⊕ x`, as one
            // widening map the compiler vectorizes (a fold and a store per row had
            // read 2^26 rows of one i32 at 0.6× numpy's speed).
            let row_starts = &src[first..first + out.len()];
            for (slot, &x) in out.iter_mut().zip(row_starts) {
                *slot = W::low_bits(f(init, x.to_u64_bits()));
            }
            return;
        }
        // Rows follow each other through memory: the lines a few KiB ahead.
        let starts = |k: usize| first + k * rows.step;
        crate::prefetch::each_row(src, rows.len, out, starts, |start| {
            let row = &src[start..start + rows.len];
            W::low_bits(row.iter().fold(init, |a, &x| f(a, x.to_u64_bits())))
        });
    });
    PackedBytes::of_vec(words)
}

/// An unsigned word that holds an integer result of its width.
trait ResultWord: Element + bytemuck::Zeroable {
    /// The low bytes of `bits`.
    fn low_bits(bits: u64) -> Self;
}

macro_rules! impl_result_word {
    ($($word:ty),*) => {$(
        impl ResultWord for $word {
            #[inline(always)]
            fn low_bits(bits: u64) -> Self {
                bits as $word
            }
        }
    )*};
}
impl_result_word!(u8, u16, u32, u64);

/// `out[k]` ← the canonical reduction of the `len` (≤ [`LANES`]) elements from
/// `first + k·step`; compiled for AVX2 too, where the fold's wide steps are vector adds.
/// Rows fold only the lanes up to `len`'s power of two, the first halving step taken
/// while reading ([`reduce_row_halves`]); the length is matched once here, so each
/// loop's fold has a constant width.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn fold_float_rows<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    first: usize,
    step: usize,
    len: usize,
    out: &mut [A],
) {
    if len == 1 && step == 1 {
        // Neighbouring rows of one element: each result is `identity ⊕ x`, the one-lane
        // fold (`reduce_row_within::<1>`) of its row, here as one vectorized map.
        let row_starts = &src[first..first + out.len()];
        for (slot, &x) in out.iter_mut().zip(row_starts) {
            *slot = op.combine(op.identity(), x.to_acc());
        }
        return;
    }
    // Rows follow each other through memory: ask for the lines a few KiB ahead.
    let each = |reduce: fn(C, &[T]) -> A, out: &mut [A]| {
        crate::prefetch::each_row(
            src,
            len,
            out,
            |k| first + k * step,
            |start| reduce(op, &src[start..start + len]),
        );
    };
    // Matched once per run, not per row: rows of 3 read 1.7× faster so.
    match len.next_power_of_two() {
        1 => each(reduce_row_within::<A, T, C, 1>, out),
        2 => each(reduce_row_halves::<A, T, C, 1>, out),
        4 => each(reduce_row_halves::<A, T, C, 2>, out),
        8 => each(reduce_row_halves::<A, T, C, 4>, out),
        16 => each(reduce_row_halves::<A, T, C, 8>, out),
        32 => each(reduce_row_halves::<A, T, C, 16>, out),
        64 => each(reduce_row_halves::<A, T, C, 32>, out),
        128 => each(reduce_row_halves::<A, T, C, 64>, out),
        256 => each(reduce_row_halves::<A, T, C, 128>, out),
        512 => each(reduce_row_halves::<A, T, C, 256>, out),
        _ => each(reduce_row_halves::<A, T, C, 512>, out),
    }
}

/// The canonical reduction of one row of 1 to [`LANES`] elements, as [`fold_float_rows`]
/// computes it for a run of rows (the value-per-output path calls this per output).
fn reduce_row<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(op: C, row: &[T]) -> A {
    let mut out = [op.identity()];
    fold_float_rows(op, row, 0, 0, row.len(), &mut out);
    out[0]
}

/// `reduce` of every output's row, outputs in runs of [`OUTPUTS_PER_TASK`] per task;
/// `even` (from [`EvenRows::of`]) gives the starts by arithmetic where the rows are even,
/// which cost 8% of rows of 32 when asked of the plan per output.
///
/// The values are written straight into their places (an indexed collect); collecting
/// `Result`s would have gathered them in pieces and copied them once more. The first
/// error, if any, is kept aside and returned instead.
fn each<T: Element + Sync>(
    src: &[T],
    plan: &AxisPlan,
    even: Option<EvenRows>,
    len: usize,
    reduce: impl Fn(&[T]) -> Result<Value, Error> + Sync,
) -> Result<Vec<Value>, Error> {
    let start = |k: usize| match even {
        Some(rows) => Some(rows.start(k)),
        None => plan.contiguous(k),
    };
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let values = map_range(plan.outputs(), OUTPUTS_PER_TASK, |k| {
        let value = start(k)
            .and_then(|start| src.get(start..start + len))
            .ok_or_else(|| Error::Shape(format!("output {k} lies outside the input")))
            .and_then(&reduce);
        value.unwrap_or_else(|e| {
            failure
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .get_or_insert(e);
            Value::Empty
        })
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_core::shape::Layout;
    use redlab_core::Scalar;

    /// 1000 rows of 3: more than one task's run of outputs, so the outputs are written
    /// from several tasks.
    fn rows() -> (Vec<i64>, AxisPlan) {
        let data: Vec<i64> = (0..3000).map(|k| (k * 7919) % 1009).collect();
        let plan = AxisPlan::new(Layout::c_order(&[1000, 3]), Some(&[1]), false).expect("plan");
        (data, plan)
    }

    #[test]
    fn every_output_lands_in_its_own_place() {
        let (data, plan) = rows();
        let even = EvenRows::of(&plan, 3, data.len()).expect("in bounds");
        let values = each(&data, &plan, even, 3, |row| {
            Ok(Value::Scalar(Scalar::I64(row[0] - row[2])))
        })
        .expect("no error");
        let want: Vec<Value> = data
            .chunks(3)
            .map(|row| Value::Scalar(Scalar::I64(row[0] - row[2])))
            .collect();
        assert_eq!(values, want);
    }

    /// Every output of the even-rows path against the oracle's reduction of its own
    /// elements, bit for bit: rows of 1–1024 elements of a C-order matrix, of rows with
    /// gaps between them and an offset, of a 3-D array whose kept axes merge into one
    /// run, and of a view whose kept axes do not (the per-output path), f32 and f64
    /// inputs, sums and products, f32 and f64 accumulators.
    #[test]
    fn even_rows_match_the_oracle_bit_for_bit() {
        use crate::test_values::{awkward, finite};

        // Infinities and signed zeros, then finite values: long rows of the first hold
        // infinities, whose sums hide the other elements.
        for values in [awkward(130_000, 17, false), finite(130_000, 18)] {
            even_rows_of_match_the_oracle(&values);
        }
    }

    fn even_rows_of_match_the_oracle(values: &[f64]) {
        use redlab_core::canonical::{self, Arith};
        use redlab_core::DType;

        let values32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let lens = [
            1usize, 2, 3, 5, 7, 16, 17, 31, 32, 33, 50, 64, 65, 127, 300, 513, 1023, 1024,
        ];
        for len in lens {
            // Fewer rows of the longer lengths: every layout below still fits the values.
            let row_counts: &[usize] = if len <= 32 {
                &[1, 3, 300, 777]
            } else {
                &[1, 3, 40]
            };
            for &rows in row_counts {
                let layouts = [
                    Layout::c_order(&[rows, len]),
                    Layout {
                        dims: vec![rows, len],
                        strides: vec![len as isize + 3, 1],
                        offset: 2,
                    },
                    Layout::c_order(&[3, rows, len]),
                    Layout {
                        dims: vec![3, rows, len],
                        strides: vec![(rows * len + 5) as isize, len as isize, 1],
                        offset: 1,
                    },
                ];
                for layout in layouts {
                    let axis = layout.dims.len() as isize - 1;
                    let plan = AxisPlan::new(layout, Some(&[axis]), false).expect("plan");
                    for (op, arith) in [(Op::Sum, Arith::Sum), (Op::Prod, Arith::Prod)] {
                        for (dtype, acc) in [
                            (DType::F32, DType::F32),
                            (DType::F32, DType::F64),
                            (DType::F64, DType::F64),
                        ] {
                            let problem = Problem::new(op, dtype, Some(acc)).expect("problem");
                            let data = match dtype {
                                DType::F32 => ArrayRef::from_slice(&values32),
                                _ => ArrayRef::from_slice(values),
                            };
                            let selection = Selection::Axes(&plan);
                            let mut results = vec![compute(&problem, data, selection)
                                .expect("short rows apply")
                                .expect("no error")];
                            // Even rows also have the typed path; both must agree.
                            if let Some(typed) = packed(&problem, data, selection) {
                                results.push(typed.expect("no error").scalar_values());
                            }
                            let checked = results.iter().flat_map(|got| {
                                assert_eq!(got.len(), plan.outputs());
                                got.iter().enumerate()
                            });
                            for (k, value) in checked {
                                let idx: Vec<usize> = plan.segment(k).collect();
                                let want = match (dtype, acc) {
                                    (DType::F32, DType::F32) => {
                                        let row: Vec<f32> =
                                            idx.iter().map(|&i| values32[i]).collect();
                                        Scalar::F32(canonical::reduce::<f32, f32>(arith, &row))
                                    }
                                    (DType::F32, _) => {
                                        let row: Vec<f32> =
                                            idx.iter().map(|&i| values32[i]).collect();
                                        Scalar::F64(canonical::reduce::<f64, f32>(arith, &row))
                                    }
                                    _ => {
                                        let row: Vec<f64> =
                                            idx.iter().map(|&i| values[i]).collect();
                                        Scalar::F64(canonical::reduce::<f64, f64>(arith, &row))
                                    }
                                };
                                assert!(
                                    value.same_as(&Value::Scalar(want)),
                                    "{op:?} {dtype:?}→{acc:?}, {rows}×{len}, output {k}: {value:?} against {want:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// The typed integer rows against the value path, output by output: every integer
    /// type, operator and allowed accumulator (narrower ones too), wrapping inputs, and
    /// row counts whose last task holds fewer than [`OUTPUTS_PER_TASK`] outputs.
    #[test]
    fn integer_rows_pack_the_value_paths_results() {
        use redlab_core::acc::allowed_accs;
        use redlab_core::generate::{generate, Distribution};
        use redlab_core::DType;

        for dtype in DType::ALL.into_iter().filter(|d| d.is_integer()) {
            for (rows, len) in [(1usize, 1usize), (1025, 1), (777, 3), (513, 32), (300, 100)] {
                let data = generate(dtype, rows * len, Distribution::Uniform, 13).expect("data");
                let plan =
                    AxisPlan::new(Layout::c_order(&[rows, len]), Some(&[1]), false).expect("plan");
                let selection = Selection::Axes(&plan);
                for op in [Op::Sum, Op::Prod, Op::And, Op::Or, Op::Xor] {
                    for acc in allowed_accs(op, dtype) {
                        let problem = Problem::new(op, dtype, Some(acc)).expect("problem");
                        let values = compute(&problem, data.view(), selection)
                            .expect("short rows apply")
                            .expect("no error");
                        let want = Packed::of_values(&problem, &values).expect("pack");
                        let got = packed(&problem, data.view(), selection)
                            .expect("integer rows are typed")
                            .expect("no error");
                        assert_eq!(got, want, "{problem}, {rows}×{len}");
                    }
                }
            }
        }
    }

    /// Rows whose last one runs past the buffer are an error, not a read out of bounds.
    #[test]
    fn even_rows_past_the_end_are_an_error() {
        let data = vec![1.5f32; 100 * 32 - 1];
        let plan = AxisPlan::new(Layout::c_order(&[100, 32]), Some(&[1]), false).expect("plan");
        let problem = Problem::new(Op::Sum, redlab_core::DType::F32, None).expect("problem");
        let (data, selection) = (ArrayRef::from_slice(&data), Selection::Axes(&plan));
        // Both paths check the rows' bounds: the value per output and the typed array.
        let results = [
            (
                "values",
                compute(&problem, data, selection).map(|r| r.map(drop)),
            ),
            (
                "typed",
                packed(&problem, data, selection).map(|r| r.map(drop)),
            ),
        ];
        for (path, result) in results {
            match result {
                Some(Err(Error::Shape(why))) => assert!(why.contains("output 99"), "{path}: {why}"),
                other => panic!("expected a shape error from the {path} path, got {other:?}"),
            }
        }
    }

    #[test]
    fn an_error_of_any_output_is_returned() {
        let (data, plan) = rows();
        let failing = data[3 * 777];
        let even = EvenRows::of(&plan, 3, data.len()).expect("in bounds");
        let got = each(&data, &plan, even, 3, |row| {
            if row[0] == failing {
                Err(Error::Shape(format!("row starting {failing}")))
            } else {
                Ok(Value::Empty)
            }
        });
        match got {
            Err(Error::Shape(why)) => assert_eq!(why, format!("row starting {failing}")),
            other => panic!("expected the row's error, got {other:?}"),
        }
    }
}
