//! Columns of a custom combine, side by side: outputs that read neighbouring elements
//! (the columns of a C-order matrix, and any plan whose last kept axis has stride 1)
//! and step through the buffer by one stride fold in blocks of up to [`BLOCK`]
//! outputs. Every step of the canonical fold is one block evaluation over the block's
//! outputs, each lane holding its outputs' values next to each other (lane-major), so a
//! row of a tile is `rows × outputs` values read as runs of neighbouring elements, and
//! the halving fold's halves are plain slices. A map that does not read `i` is applied
//! to each block's rows as they are read ([`mapped_rows`]), and a map that is one f32
//! or f64 input is combined straight from the input's runs; a map that reads `i` reads
//! a mapped copy of the inputs ([`gathered_rows`]). Folded one output at a time from a
//! gathered copy of each, 4096×4096 f32 columns read 0.51–0.57 GB/s on 2 cores; side
//! by side 1.9–2.3 (results/cpu-dev-2core-custom-columns). The values and their order
//! are those of [`crate::custom_outputs::fold_tile`] over each output alone, the tiles
//! joined by the same aligned tree.

use rayon::prelude::*;
use redlab_core::canonical::{LANES, TILE};
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, DType, Error};

use crate::block::{convert_column, eval_block, load_block, AlignedBytes, Column};
use crate::combine_program::{Combiner, Row, Runs};
use crate::custom_outputs::fold_lanes;
use crate::host::{on_pool, tree};
use crate::reduction::Reduction;
use crate::types::Val;

/// The most outputs per block. A block's rows are runs of up to this many neighbouring
/// elements, one row apart, which the combine reads where they are
/// ([`crate::combine_program::Runs`]); its lanes hold 1024 values per output. On 2 cores
/// along 4096×4096 f32 columns, blocks of 1024–2048 read 10–13 GB/s for `max(a, b)` and
/// 5.9–6.2 for a select, blocks of 128–256 7.5–9 and 3–4.6, blocks of 4 2.4 and 0.5
/// (results/cpu-dev-2core-custom-columns-runs): each run is a call of the combine's
/// loops, so wide runs pay for it.
pub const BLOCK: usize = 1024;

/// The fewest outputs per block where a run has more.
const MIN_BLOCK: usize = 16;

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
    /// outputs): runs split so that every thread has two blocks, where a run is long
    /// enough (a single block of 4096 f64 columns had left one core idle).
    pub fn blocks(&self, outputs: usize) -> Vec<(usize, usize)> {
        let threads = rayon::current_num_threads().max(1);
        let width = (self.run / (2 * threads)).clamp(MIN_BLOCK, BLOCK);
        let mut blocks = Vec::new();
        for run_start in (0..outputs).step_by(self.run) {
            let end = outputs.min(run_start + self.run);
            for first in (run_start..end).step_by(width) {
                blocks.push((first, width.min(end - first)));
            }
        }
        blocks
    }
}

/// Gives the values of `rows` rows of `count` neighbouring outputs, row `r`'s run
/// starting `r` strides after the element at `first`, as one row of partials
/// (lane-major): read where they are, or a column of their own.
pub(crate) type RowSource<'a> = dyn Fn(usize, usize, usize) -> Result<Row<'a>, Error> + Sync + 'a;

/// The folds of `count` neighbouring outputs of `len` values each (of the accumulator
/// type, from `rows`): output `c` reads the element at `first + c + j·stride`. Each
/// tile's lanes start at `identity` and take their rows in turn, over the next power of
/// two of the lanes the tile uses, then halve, `a` always the lower lane; the tiles of
/// each output join by the aligned tree.
pub(crate) fn fold_columns(
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
            rows(first + (t * TILE + at) * stride, n, count)
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

/// Rows mapped as they are read, for a map that does not read `i`: a map that is one
/// f32 or f64 input of the accumulator's type is read where it is; otherwise each
/// input's runs are copied next to each other, then the map applied to the copies as
/// one block and its values converted to the accumulator type. No mapped copy of the
/// whole inputs is made (mapping 4096×4096 f32 into one took half of a call on 2
/// cores).
pub(crate) fn mapped_rows<'a>(
    reduction: &Reduction,
    inputs: &[ArrayRef<'a>],
    stride: usize,
    (first, rows, count): (usize, usize, usize),
) -> Result<Row<'a>, Error> {
    let (_, _, acc) = reduction.custom_or_err()?;
    let runs = Runs {
        first,
        stride,
        rows,
        count,
    };
    match Row::input_itself(&reduction.map, inputs, acc) {
        Some(Row::F32(x)) => return Ok(Row::F32Runs(x, runs)),
        Some(Row::F64(x)) => return Ok(Row::F64Runs(x, runs)),
        _ => {}
    }
    let at = (first, rows, count);
    let copies = inputs
        .iter()
        .map(|input| copy_runs(input, stride, at))
        .collect::<Vec<_>>();
    let views = copies
        .iter()
        .zip(inputs)
        .map(|(copy, input)| ArrayRef::from_bytes(input.dtype(), copy.bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Row::Owned(convert_column(
        eval_block(&reduction.map, &views, 0, rows * count, &[]),
        acc,
    )))
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
pub(crate) fn gathered_rows<'a>(
    values: &ArrayRef<'a>,
    stride: usize,
    (first, rows, count): (usize, usize, usize),
) -> Result<Row<'a>, Error> {
    let runs = Runs {
        first,
        stride,
        rows,
        count,
    };
    if let Ok(x) = values.typed::<f32>() {
        return Ok(Row::F32Runs(x, runs));
    }
    if let Ok(x) = values.typed::<f64>() {
        return Ok(Row::F64Runs(x, runs));
    }
    let copy = copy_runs(values, stride, (first, rows, count));
    Ok(Row::Owned(load_block(
        &ArrayRef::from_bytes(values.dtype(), copy.bytes())?,
        0,
        rows * count,
    )))
}
