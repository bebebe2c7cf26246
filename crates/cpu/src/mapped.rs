//! User-defined reductions on the CPU.
//!
//! - Float sums and products of a float map that compiles to a row program
//!   ([`redlab_expr::rows`]) run fused: the canonical order asks for one row of mapped
//!   values at a time, the program computes it into registers that stay in L1, and the
//!   row is added into the tile's lanes at once ([`MappedRows`]). No mapped value is
//!   written to memory.
//! - Everything else maps in blocks over chunks that are aligned subtrees of the
//!   canonical order ([`redlab_expr::host`]), each chunk reduced by this backend's own
//!   kernel for the built-in problem, chunks in parallel on the pool.
//!
//! - Integer sums of a choice between two integer constants on a float condition (a
//!   count) run fused too ([`crate::mapped_select`]).
//!
//! All give the same bits: the fused path computes the same values in the same order.

use std::time::Instant;

use redlab_core::num::{AccFloat, FloatInput};
use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, DType, Element, Error, IntoScalar, Op, Outcome, Problem, Value};
use redlab_expr::rows::{RowFloat, RowProgram, RowScratch};
use redlab_expr::{host, Combine, Reduction};

use crate::canonical::{self, Add, Mul, Rows};
use crate::CpuBackend;

impl CpuBackend {
    /// Reduces `inputs` as `reduction` says (`post` applied); `seconds` is wall time.
    pub fn reduce_mapped(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<Outcome, Error> {
        let start = Instant::now();
        let bytes = inputs.iter().map(|a| a.bytes().len()).sum();
        let run = || {
            let fused =
                fused(reduction, inputs).or_else(|| crate::mapped_select::fused(reduction, inputs));
            match fused {
                Some(value) => value,
                None => host::reduce(reduction, inputs, crate::compute),
            }
        };
        let value = self.run(bytes, run)?;
        let seconds = start.elapsed().as_secs_f64();
        Ok(Outcome {
            value,
            seconds,
            passes: vec![seconds],
        })
    }

    /// One value per output of `selection` of a reduction with a custom combine, before
    /// `post`: each output folded in the canonical order of its own mapped values
    /// ([`redlab_expr::custom_outputs::custom_outputs`]), on the pool.
    pub fn custom_outputs(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
    ) -> Result<Vec<Value>, Error> {
        let bytes = inputs.iter().map(|a| a.bytes().len()).sum();
        self.run(bytes, || {
            redlab_expr::custom_outputs::custom_outputs(reduction, inputs, selection)
        })
    }
}

/// The fused path's result (`post` applied), or `None` where the reduction does not
/// take it: a combine other than a float sum or product, or a map that does not compile.
pub fn fused(reduction: &Reduction, inputs: &[ArrayRef<'_>]) -> Option<Result<Value, Error>> {
    let Combine::Builtin(problem) = &reduction.combine else {
        return None;
    };
    if !(problem.op.is_arithmetic() && problem.dtype.is_float()) {
        return None;
    }
    match (reduction.mapped, problem.acc) {
        (DType::F32, DType::F32) => fused_as::<f32, f32>(reduction, problem, inputs),
        (DType::F32, DType::F64) => fused_as::<f32, f64>(reduction, problem, inputs),
        (DType::F64, DType::F64) => fused_as::<f64, f64>(reduction, problem, inputs),
        _ => None,
    }
}

fn fused_as<T, A>(
    reduction: &Reduction,
    problem: &Problem,
    inputs: &[ArrayRef<'_>],
) -> Option<Result<Value, Error>>
where
    T: RowFloat + FloatInput<A>,
    A: AccFloat + IntoScalar,
{
    let program = RowProgram::<T>::compile(&reduction.map, &reduction.inputs)?;
    let (n, arrays) = match program_inputs::<T>(reduction, inputs) {
        Ok(checked) => checked,
        Err(e) => return Some(Err(e)),
    };
    let rows = MappedRows {
        program: &program,
        inputs: arrays,
        len: n,
    };
    let total: Option<A> = if problem.op == Op::Sum {
        canonical::reduce_rows(Add, &rows)
    } else {
        canonical::reduce_rows(Mul, &rows)
    };
    let empty = if problem.op == Op::Sum {
        A::POS_ZERO
    } else {
        A::ONE
    };
    let value = Value::Scalar(total.unwrap_or(empty).into_scalar());
    Some(Ok(reduction.finish(value, n)))
}

/// The common length of `inputs` and each as an array of `T`, for a row program over
/// `T` that compiled (so the inputs it reads are of `T`; the others stay empty).
pub(crate) fn program_inputs<'a, T: Element>(
    reduction: &Reduction,
    inputs: &[ArrayRef<'a>],
) -> Result<(usize, Vec<&'a [T]>), Error> {
    let n = host::check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
    let arrays = inputs
        .iter()
        .map(|a| a.typed::<T>().unwrap_or(&[]))
        .collect();
    Ok((n, arrays))
}

/// Values of a row mapped between two prefetches. Measured on the 2-core development
/// machine (`x*2`, 2^26 f32): 256 read 27.8–29.0 GB/s, whole rows of 1024 26.2, 64 25–26
/// (a step's dispatch per block), with the built-in sum at 30.4–30.8 in the same sitting.
const MAPPED_BLOCK: usize = 256;

/// The mapped values of a row program, as the canonical order reads them.
struct MappedRows<'a, T> {
    program: &'a RowProgram<T>,
    inputs: Vec<&'a [T]>,
    len: usize,
}

impl<A: AccFloat, T: RowFloat + FloatInput<A>> Rows<A> for MappedRows<'_, T> {
    type Scratch = RowScratch<T>;

    fn len(&self) -> usize {
        self.len
    }

    fn scratch(&self) -> RowScratch<T> {
        self.program.scratch()
    }

    #[inline(always)]
    fn fold_row<C: canonical::Combine<A>>(
        &self,
        op: C,
        lanes: &mut [A],
        start: usize,
        scratch: &mut RowScratch<T>,
    ) {
        // Each input is read front to back: the row runs in blocks, and before each
        // block the lines a few KiB ahead of it are asked for (crate::prefetch), so the
        // fills overlap the map's steps instead of arriving in one burst per row. Any
        // block of lanes is a valid call of the program (lanes j of the block take
        // values start + j). Inputs the map does not read are empty, and ask for nothing.
        for (k, lanes) in lanes.chunks_mut(MAPPED_BLOCK).enumerate() {
            let at = start + k * MAPPED_BLOCK;
            for input in &self.inputs {
                crate::prefetch::ahead(input, at, lanes.len());
            }
            self.program
                .fold(&self.inputs, at, lanes, scratch, |lane, x: T| {
                    op.combine(lane, x.to_acc())
                });
        }
    }
}
