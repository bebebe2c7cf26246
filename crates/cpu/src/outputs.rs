//! Many results at once (axis and segment reductions): each output is the 1-D reduction
//! of its own elements (`redlab_core::segmented`), so it runs the same code as a whole-
//! array reduction and gives the same bits. Outputs run in parallel.
//!
//! Outputs whose elements are scattered (a column of a C-order matrix) are gathered
//! first. Where neighbouring outputs read neighbouring elements, they are gathered
//! together, a block of them per pass over their rows, so that every cache line read
//! serves a whole block of outputs instead of one element.

use rayon::prelude::*;
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, Error, Value};

/// Outputs gathered together: 64 bytes of 4-byte elements.
const BLOCK: usize = 16;
/// The most scratch one block may take; longer outputs are gathered one at a time.
const BLOCK_SCRATCH: usize = 16 << 20;

/// One result per output of `selection`, computed with `reduce` (a 1-D reduction).
pub fn compute_outputs<F>(
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    reduce: F,
) -> Result<Vec<Value>, Error>
where
    F: Fn(ArrayRef<'_>) -> Result<Value, Error> + Sync,
{
    if let Selection::Axes(plan) = selection {
        let size = data.dtype().size_bytes();
        let scratch_bytes = plan.segment_len() * BLOCK * size;
        if let Some(run) = plan.output_runs() {
            if plan.outputs() > 0
                && plan.contiguous(0).is_none()
                && run > 1
                && scratch_bytes <= BLOCK_SCRATCH
            {
                return blocked(data, plan, run, &reduce);
            }
        }
    }
    (0..selection.outputs())
        .into_par_iter()
        .map_init(Vec::new, |scratch, k| {
            reduce(selection.view(data, k, scratch)?)
        })
        .collect()
}

/// Outputs in blocks of up to [`BLOCK`] neighbours within runs of `run`.
fn blocked<F>(
    data: ArrayRef<'_>,
    plan: &AxisPlan,
    run: usize,
    reduce: &F,
) -> Result<Vec<Value>, Error>
where
    F: Fn(ArrayRef<'_>) -> Result<Value, Error> + Sync,
{
    let blocks_per_run = run.div_ceil(BLOCK);
    let blocks = (plan.outputs() / run) * blocks_per_run;
    let size = data.dtype().size_bytes();
    let len = plan.segment_len();
    let src = data.bytes();
    let per_block: Vec<Result<Vec<Value>, Error>> = (0..blocks)
        .into_par_iter()
        .map_init(Vec::<u64>::new, |scratch, b| {
            let first = (b / blocks_per_run) * run + (b % blocks_per_run) * BLOCK;
            let width = BLOCK.min(run - (b % blocks_per_run) * BLOCK);
            scratch.clear();
            scratch.resize((width * len * size).div_ceil(8), 0);
            let out: &mut [u8] = bytemuck::cast_slice_mut(scratch.as_mut_slice());
            // Output first + w is element j of its sequence at offset(j) + w.
            for (j, offset) in plan.segment(first).enumerate() {
                let row = &src[offset * size..(offset + width) * size];
                for w in 0..width {
                    out[(w * len + j) * size..(w * len + j + 1) * size]
                        .copy_from_slice(&row[w * size..(w + 1) * size]);
                }
            }
            let out: &[u8] = out;
            (0..width)
                .map(|w| {
                    let view = ArrayRef::from_bytes(
                        data.dtype(),
                        &out[w * len * size..(w + 1) * len * size],
                    )?;
                    reduce(view)
                })
                .collect()
        })
        .collect();
    let mut values = Vec::with_capacity(plan.outputs());
    for block in per_block {
        values.extend(block?);
    }
    Ok(values)
}
