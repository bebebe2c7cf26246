//! Columns of a custom combine, side by side: outputs that read neighbouring elements
//! (the columns of a C-order matrix, and any plan whose last kept axis has stride 1)
//! and step through the buffer by one stride fold in blocks of [`BLOCK`] outputs. Every
//! step of the canonical fold is one block evaluation over the block's outputs, each
//! lane holding its outputs' values next to each other (lane-major), so a row of a tile
//! is `rows × outputs` values read as runs of neighbouring elements, and the halving
//! fold's halves are plain slices. A map that does not read `i` is applied to each
//! block's rows as they are read ([`mapped_rows`]); one that does reads a mapped copy
//! of the inputs ([`gathered_rows`]). Folded one output at a time from a gathered copy
//! of each, 4096×4096 f32 columns read 0.51–0.57 GB/s on 2 cores; side by side
//! 1.9–2.3 (results/cpu-dev-2core-custom-columns). The values and their order are those
//! of [`crate::custom_outputs::fold_tile`] over each output alone, the tiles joined by
//! the same aligned tree.

use rayon::prelude::*;
use redlab_core::canonical::{LANES, TILE};
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, DType, Error};

use crate::block::{convert_column, eval_block, load_block, AlignedBytes, Column};
use crate::combine_program::{Combiner, Row};
use crate::custom_outputs::fold_lanes;
use crate::host::{on_pool, tree};
use crate::reduction::Reduction;
use crate::types::Val;

/// Outputs per block. A block's rows are runs of this many neighbouring elements, one
/// row apart; its lanes hold 1024 × this many values. On 2 cores along 4096×4096 f32
/// columns, blocks of 4 read 1.7–2.8 GB/s, of 8 to 256 0.8–1.6. Why is not settled:
/// wider blocks spent most of a call copying the rows' runs and faulting in fresh pages
/// for their larger columns (perf); blocks of 4 share each cache line with the next
/// block, which runs next on the same core.
pub const BLOCK: usize = 4;

/// Where a plan's outputs lie as columns: output `r·run + c` (c < run) reads elements
/// `start(r·run) + c + j·stride` for j below the outputs' length.
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    /// Neighbouring outputs per run (the last kept axis's length).
    pub run: usize,
    /// Elements between one element of an output and its next.
    pub stride: usize,
}

impl Columns {
    /// The columns of `plan`, where its outputs read neighbouring elements in runs of
    /// more than one and each output's elements step by one positive stride.
    pub fn of(plan: &AxisPlan) -> Option<Columns> {
        let run = plan.output_runs().filter(|&r| r > 1)?;
        let stride = match plan.reduced_runs().as_slice() {
            [] => 0,
            &[(_, s)] if s > 0 => s as usize,
            _ => return None,
        };
        Some(Columns { run, stride })
    }

    /// The blocks of at most [`BLOCK`] outputs, within one run each, as (first output,
    /// outputs).
    pub fn blocks(&self, outputs: usize) -> Vec<(usize, usize)> {
        let mut blocks = Vec::new();
        for run_start in (0..outputs).step_by(self.run) {
            let end = outputs.min(run_start + self.run);
            for first in (run_start..end).step_by(BLOCK) {
                blocks.push((first, BLOCK.min(end - first)));
            }
        }
        blocks
    }
}

/// Gives the values of `rows` rows of `count` neighbouring outputs, row `r`'s run
/// starting `r` strides after the element at `first`, as one column (lane-major).
pub type RowSource<'a> = dyn Fn(usize, usize, usize) -> Result<Column, Error> + Sync + 'a;

/// The folds of `count` neighbouring outputs of `len` values each (of the accumulator
/// type, from `rows`): output `c` reads the element at `first + c + j·stride`. Each
/// tile's lanes start at `identity` and take their rows in turn, over the next power of
/// two of the lanes the tile uses, then halve, `a` always the lower lane; the tiles of
/// each output join by the aligned tree.
pub fn fold_columns(
    combiner: &Combiner<'_>,
    identity: Val,
    rows: &RowSource<'_>,
    (first, stride): (usize, usize),
    len: usize,
    count: usize,
) -> Result<Vec<Val>, Error> {
    let tile = |t: usize| -> Result<Column, Error> {
        let in_tile = TILE.min(len - t * TILE);
        let width = in_tile.min(LANES).next_power_of_two();
        fold_lanes(combiner, identity, (in_tile, width, count), |at, n| {
            rows(first + (t * TILE + at) * stride, n, count).map(Row::Owned)
        })
    };
    let tiles = len.div_ceil(TILE);
    // Long columns with few outputs leave blocks to few threads: their tiles go in
    // parallel too.
    let folded: Vec<Column> = if tiles > 1 && on_pool() {
        (0..tiles)
            .into_par_iter()
            .map(tile)
            .collect::<Result<_, _>>()?
    } else {
        (0..tiles).map(tile).collect::<Result<_, _>>()?
    };
    Ok((0..count)
        .map(|c| {
            let tiles = folded.iter().map(|t| t.get(c)).collect();
            tree(combiner.node(), tiles).unwrap_or(identity)
        })
        .collect())
}

/// Rows mapped as they are read, for a map that does not read `i`: each input's runs
/// copied next to each other, then the map applied to the copies as one block and its
/// values converted to the accumulator type. No mapped copy of the whole inputs is made
/// (mapping 4096×4096 f32 into one took half of a call on 2 cores).
pub fn mapped_rows(
    reduction: &Reduction,
    inputs: &[ArrayRef<'_>],
    stride: usize,
    at: (usize, usize, usize),
) -> Result<Column, Error> {
    let copies = inputs
        .iter()
        .map(|input| copy_runs(input, stride, at))
        .collect::<Vec<_>>();
    let views = copies
        .iter()
        .zip(inputs)
        .map(|(copy, input)| ArrayRef::from_bytes(input.dtype(), copy.bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    let (_, _, acc) = reduction.custom_or_err()?;
    let (_, rows, count) = at;
    Ok(convert_column(
        eval_block(&reduction.map, &views, 0, rows * count, &[]),
        acc,
    ))
}

/// `rows` runs of `count` neighbouring elements of `input`, the run of row r starting
/// at element `first + r·stride`, copied one after another.
fn copy_runs(
    input: &ArrayRef<'_>,
    stride: usize,
    (first, rows, count): (usize, usize, usize),
) -> AlignedBytes {
    let size = input.dtype().size_bytes();
    let bytes = input.bytes();
    let mut copy = AlignedBytes::zeroed(rows * count * size);
    for (r, run) in copy.bytes_mut().chunks_exact_mut(count * size).enumerate() {
        let at = (first + r * stride) * size;
        run.copy_from_slice(&bytes[at..at + count * size]);
    }
    copy
}

/// Whether [`fold_columns`] reads values of `dtype`: the accumulators held in 4 or 8
/// bytes (a bool accumulator's bytes take the general path).
pub fn folds(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::I64 | DType::U64)
}

/// `rows` runs of `count` neighbouring values of `values` (the accumulator type's, as
/// [`folds`] admits), the run of row r starting at `first + r·stride`, one after another.
pub fn gathered_rows(
    values: &ArrayRef<'_>,
    stride: usize,
    at: (usize, usize, usize),
) -> Result<Column, Error> {
    let copy = copy_runs(values, stride, at);
    let (_, rows, count) = at;
    Ok(load_block(
        &ArrayRef::from_bytes(values.dtype(), copy.bytes())?,
        0,
        rows * count,
    ))
}
