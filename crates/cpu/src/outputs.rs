//! Many results at once (axis and segment reductions): each output is the 1-D reduction
//! of its own elements (`redlab_core::segmented`), so it runs the same code as a whole-
//! array reduction and gives the same bits. Outputs run in parallel.
//!
//! Outputs whose elements are scattered (a column of a C-order matrix) are gathered
//! first. Where neighbouring outputs read neighbouring elements, they are gathered
//! together, a block of them per pass over their rows (up to 1 KiB of each row), so that
//! every cache line and page read serves a whole block of outputs instead of one
//! element.

use crate::fork::map_range_init;
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, Error, Value};

/// Bytes of each input row a block of outputs reads at once: wide enough that walking
/// down the rows (one page apart in a wide matrix) is not a TLB miss per element.
const BLOCK_BYTES: usize = 1024;
/// At least this many outputs per block (one cache line of 4-byte elements).
const MIN_BLOCK: usize = 16;
/// The most scratch one block may take; longer outputs are gathered one at a time.
const BLOCK_SCRATCH: usize = 16 << 20;

/// One result per output of `selection`, computed with `reduce` (a 1-D reduction).
/// `ahead`: whether outputs whose elements follow each other through a large input ask
/// for the next one's lines as they start; not for reductions bound by arithmetic.
pub fn compute_outputs<F>(
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    ahead: bool,
    reduce: F,
) -> Result<Vec<Value>, Error>
where
    F: Fn(ArrayRef<'_>) -> Result<Value, Error> + Sync,
{
    if let Selection::Axes(plan) = selection {
        let size = data.dtype().size_bytes();
        // As wide as BLOCK_BYTES and the scratch allow, at least MIN_BLOCK.
        let per_output = (plan.segment_len() * size).max(1);
        let block = (BLOCK_BYTES / size).min(BLOCK_SCRATCH / per_output);
        if let Some(run) = plan.output_runs() {
            if plan.outputs() > 0 && plan.contiguous(0).is_none() && run > 1 && block >= MIN_BLOCK {
                return blocked(data, plan, run, block, &reduce);
            }
        }
    }
    let stream = ahead && crate::prefetch::worthwhile(data.bytes().len());
    let size = data.dtype().size_bytes();
    map_range_init(selection.outputs(), Vec::new, |scratch, k| {
        if stream {
            if let Some(range) = selection.consecutive(k) {
                ask_ahead(data.bytes(), range.start * size, range.len() * size);
            }
        }
        reduce(selection.view(data, k, scratch)?)
    })
    .into_iter()
    .collect()
}

/// Outputs that read consecutive elements follow each other through a large input: an
/// output of [`LINE_BYTES`](crate::prefetch::LINE_BYTES) to [`AHEAD_ROW_BYTES`] asks for
/// the lines [`AHEAD_BYTES`](crate::prefetch::AHEAD_BYTES) past its own as it starts (the
/// next row's). Var of rows of 1000–1024 f32 read 1.2–1.8× as fast so; longer rows lost
/// up to 10% to the burst of prefetches, as did log-sum-exp, which its exponentials bound
/// (results/cpu-dev-2core-stat-rows-prefetch).
fn ask_ahead(bytes: &[u8], start: usize, len: usize) {
    if (crate::prefetch::LINE_BYTES..=AHEAD_ROW_BYTES).contains(&len) {
        crate::prefetch::within(bytes, start, len);
    }
}

/// See [`ask_ahead`].
const AHEAD_ROW_BYTES: usize = 4096;

/// Copies the elements of outputs `first … first + width − 1` into `out`, one output's
/// sequence after another: output `first + w` has element `j` at `offset(j) + w`.
fn transpose<E: bytemuck::Pod>(
    src: &[u8],
    out: &mut [u8],
    plan: &AxisPlan,
    first: usize,
    width: usize,
    len: usize,
) {
    // Both are aligned for the element type: the input view by construction, the
    // scratch as 8-byte words.
    let src: &[E] = bytemuck::cast_slice(src);
    let out: &mut [E] = bytemuck::cast_slice_mut(out);
    // Rows in chunks of CHUNK: each output's elements of a chunk are written as one run,
    // so neither side touches a new page per element.
    const CHUNK: usize = 64;
    let mut offsets = [0usize; CHUNK];
    let mut walk = plan.segment(first);
    let mut j0 = 0;
    loop {
        let mut count = 0;
        for slot in offsets.iter_mut() {
            match walk.next() {
                Some(o) => {
                    *slot = o;
                    count += 1;
                }
                None => break,
            }
        }
        if count == 0 {
            break;
        }
        for w in 0..width {
            let run = &mut out[w * len + j0..w * len + j0 + count];
            for (x, &o) in run.iter_mut().zip(&offsets[..count]) {
                *x = src[o + w];
            }
        }
        j0 += count;
    }
}

/// Outputs in blocks of up to `block` neighbours within runs of `run`.
fn blocked<F>(
    data: ArrayRef<'_>,
    plan: &AxisPlan,
    run: usize,
    block: usize,
    reduce: &F,
) -> Result<Vec<Value>, Error>
where
    F: Fn(ArrayRef<'_>) -> Result<Value, Error> + Sync,
{
    let blocks_per_run = run.div_ceil(block);
    let blocks = (plan.outputs() / run) * blocks_per_run;
    let size = data.dtype().size_bytes();
    let len = plan.segment_len();
    let src = data.bytes();
    let per_block: Vec<Result<Vec<Value>, Error>> =
        map_range_init(blocks, Vec::<u64>::new, |scratch, b| {
            let first = (b / blocks_per_run) * run + (b % blocks_per_run) * block;
            let width = block.min(run - (b % blocks_per_run) * block);
            scratch.clear();
            scratch.resize((width * len * size).div_ceil(8), 0);
            let out: &mut [u8] = bytemuck::cast_slice_mut(scratch.as_mut_slice());
            let out = &mut out[..width * len * size];
            match size {
                1 => transpose::<u8>(src, out, plan, first, width, len),
                2 => transpose::<u16>(src, out, plan, first, width, len),
                4 => transpose::<u32>(src, out, plan, first, width, len),
                _ => transpose::<u64>(src, out, plan, first, width, len),
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
        });
    let mut values = Vec::with_capacity(plan.outputs());
    for block in per_block {
        values.extend(block?);
    }
    Ok(values)
}
