//! Custom combines along axes and over segments on the host, and the canonical fold of a
//! tile that whole arrays share.
//!
//! Each output folds its own mapped values in the canonical order of a 1-D reduction of
//! that sequence alone: lanes of 1024 that start at the identity and take their rows in
//! turn, the halving fold, the aligned tree of tiles. So an output's bits are those of
//! [`crate::host::reduce`] over its elements, on every backend, even for a combine that
//! is not associative. Outputs of consecutive elements map their rows straight from the
//! inputs, and so do columns of a map that does not read `i`, folded side by side in
//! blocks whatever their length (`custom_columns.rs`); other gathered outputs (several
//! axes, columns of a map that reads `i`) read a copy of every element mapped into the
//! accumulator type. Either way a map that reads `i` sees the element's flat index in
//! the inputs, as whole arrays and the built-in combines along axes give it. Outputs of
//! one length of at most 1024 fold side by side (`custom_short.rs`).
//!
//! The halving fold here starts at the next power of two of the lanes a tile uses, as
//! the GPU's segment kernels do, where a whole array's tile folds all 1024: the steps
//! skipped only combine partials with the identity, which changes nothing when
//! `combine(a, identity) == a` (what an identity must be, docs/expressions.md).

use rayon::prelude::*;
use redlab_core::canonical::{LANES, TILE};
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, DType, Error, Value};

use crate::block::{convert_column, eval_block, load_block, AlignedBytes, Column};
use crate::codegen::uses_index;
use crate::combine_program::{Combiner, Row};
use crate::custom_columns::{self, fold_columns, Columns, RowSource};
use crate::custom_short::{batch_outputs, fold_short};
use crate::eval::to_scalar;
use crate::host::{check_inputs, on_pool, tree};
use crate::reduction::Reduction;
use crate::types::Val;

/// Which lanes of a tile the halving fold visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lanes {
    /// All 1024, as a whole array's tiles fold.
    All,
    /// The next power of two of the lanes the tile fills, as the segment kernels fold.
    Used,
}

/// One tile of `len` values of a custom combine in the canonical order: `row(at, n)`
/// gives values `at .. at + n` of the tile as partials of the accumulator type; each row
/// of 1024 is one `lanes = combine(lanes, row)` from lanes that start at `identity`,
/// then the halving fold, `a` always the lower lane.
pub(crate) fn fold_tile<'r>(
    combiner: &Combiner<'_>,
    identity: Val,
    len: usize,
    lanes_folded: Lanes,
    mut row: impl FnMut(usize, usize) -> Row<'r>,
) -> Val {
    let width = match lanes_folded {
        Lanes::All => LANES,
        Lanes::Used => len.min(LANES).next_power_of_two(),
    };
    fold_lanes(combiner, identity, (len, width, 1), |at, n| Ok(row(at, n)))
        .map_or(identity, |lanes| lanes.get(0))
}

/// [`fold_tile`] of `count` outputs side by side over `width` lanes each (`shape` is
/// `(len, width, count)`): `row(at, n)` gives values `at .. at + n` of every output,
/// lane-major (lane l of output c at `l·count + c`), and the result holds each output's
/// fold, in order.
pub(crate) fn fold_lanes<'r>(
    combiner: &Combiner<'_>,
    identity: Val,
    (len, width, count): (usize, usize, usize),
    mut row: impl FnMut(usize, usize) -> Result<Row<'r>, Error>,
) -> Result<Column, Error> {
    let mut lanes = Column::splat(identity, width * count);
    let mut at = 0;
    while at < len {
        let n = LANES.min(len - at);
        combiner.apply(&mut lanes, row(at, n)?);
        at += n;
    }
    let mut half = width / 2;
    while half >= 1 {
        combiner.halve(&mut lanes, half * count);
        half /= 2;
    }
    Ok(lanes)
}

/// One value per output of `selection` of a reduction with a custom combine over
/// `inputs`, before `post` (which the caller applies with each output's count): the
/// identity for an empty output. An error for a built-in combine or inputs that do not
/// fit the reduction.
pub fn custom_outputs(
    reduction: &Reduction,
    inputs: &[ArrayRef<'_>],
    selection: Selection<'_>,
) -> Result<Vec<Value>, Error> {
    let (node, identity, acc) = reduction.custom_or_err()?;
    // Compiled once for every output's fold.
    let combiner = Combiner::new(node, acc);
    let n = check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
    let dtype = acc.dtype();
    let outputs = selection.outputs();
    let value = |v: Val| Value::Scalar(to_scalar(v, dtype));
    // Outputs of consecutive elements (rows, segments) map their rows straight from the
    // inputs, as a whole array's tiles do: no mapped copy of the inputs, whose fresh
    // pages alone took most of a call (4096×4096 f32 along rows: 53 ms of which the
    // copy's page faults and moves were most, on 2 cores).
    let short = short_len(selection);
    // Short rows one after another (a C-order matrix's, fixed-size segments): folded
    // side by side in batches, each batch's elements read as one block.
    if let (Some(len), Some(first)) = (short, back_to_back(selection)) {
        return each_batch(outputs, batch_outputs(len), |k, out| {
            let start = first + k * len;
            let rows = Row::mapped(&reduction.map, inputs, (start, out.len() * len), acc);
            fold_short(&combiner, (identity, dtype), rows, len, out);
            Ok(())
        });
    }
    let ranges: Option<Vec<std::ops::Range<usize>>> =
        (0..outputs).map(|k| selection.consecutive(k)).collect();
    if let Some(ranges) = ranges {
        return each(outputs, |k| {
            let start = ranges[k].start;
            Ok(value(fold_sequence(
                &combiner,
                identity,
                ranges[k].len(),
                &|at, len| Row::mapped(&reduction.map, inputs, (start + at, len), acc),
            )))
        });
    }
    // Columns (outputs reading neighbouring elements): folded side by side in blocks.
    let columns = match selection {
        Selection::Axes(plan) => Columns::of(plan).map(|c| (plan, c)),
        Selection::Ranges(_) => None,
    };
    // A map that does not read `i` maps each row of a block as it is read.
    if let Some((plan, columns)) = columns.filter(|_| !uses_index(&reduction.map)) {
        return fold_columns_of(
            plan,
            columns,
            (&combiner, identity, dtype),
            &|first, rows, count| {
                custom_columns::mapped_rows(reduction, inputs, columns.stride, (first, rows, count))
            },
        );
    }
    // Gathered outputs (columns, several reduced axes): every element mapped once into
    // the accumulator type (`i` its flat index), then each output's values gathered.
    let size = dtype.size_bytes();
    let mut values = AlignedBytes::zeroed(n * size);
    values
        .bytes_mut()
        .par_chunks_mut(TILE * size)
        .enumerate()
        .for_each(|(t, dst)| {
            let mapped = eval_block(&reduction.map, inputs, t * TILE, dst.len() / size, &[]);
            convert_column(mapped, acc).write_as(dtype, dst);
        });
    let values = ArrayRef::from_bytes(dtype, values.bytes())?;
    // Columns of a map that reads `i`: from the mapped copy.
    if let Some((plan, columns)) = columns.filter(|_| custom_columns::folds(dtype)) {
        return fold_columns_of(
            plan,
            columns,
            (&combiner, identity, dtype),
            &|first, rows, count| {
                custom_columns::gathered_rows(&values, columns.stride, (first, rows, count))
            },
        );
    }
    // Short gathered outputs (columns of few rows): each batch's values gathered one
    // output after another, then folded side by side.
    if let Some(len) = short {
        return each_batch(outputs, batch_outputs(len), |first, out| {
            let mut gathered = AlignedBytes::zeroed(out.len() * len * size);
            let bytes = gathered.bytes_mut();
            let mut scratch = Vec::new();
            for slot in 0..out.len() {
                let own = selection.view(values, first + slot, &mut scratch)?;
                bytes[slot * len * size..(slot + 1) * len * size].copy_from_slice(own.bytes());
            }
            let rows = load_block(
                &ArrayRef::from_bytes(dtype, gathered.bytes())?,
                0,
                out.len() * len,
            );
            fold_short(&combiner, (identity, dtype), Row::Owned(rows), len, out);
            Ok(())
        });
    }
    each(outputs, |k| {
        let mut scratch = Vec::new();
        let own = selection.view(values, k, &mut scratch)?;
        Ok(value(fold_sequence(
            &combiner,
            identity,
            own.len(),
            &|at, len| Row::Owned(load_block(&own, at, len)),
        )))
    })
}

/// The outputs of `plan`, laid out as `columns`, folded side by side in blocks
/// ([`fold_columns`]) from the accumulator values (of `dtype`) that `rows` gives.
fn fold_columns_of(
    plan: &AxisPlan,
    columns: Columns,
    (combiner, identity, dtype): (&Combiner<'_>, Val, DType),
    rows: &RowSource<'_>,
) -> Result<Vec<Value>, Error> {
    let len = plan.segment_len();
    let blocks = columns.blocks(plan.outputs());
    let folded = each(blocks.len(), |b| {
        let (first, count) = blocks[b];
        fold_columns(
            combiner,
            identity,
            rows,
            (plan.start(first), columns.stride),
            len,
            count,
        )
    })?;
    Ok(folded
        .into_iter()
        .flatten()
        .map(|v| Value::Scalar(to_scalar(v, dtype)))
        .collect())
}

/// `f(0) … f(count - 1)` in order: in parallel on a rayon pool, serially on the caller's
/// thread elsewhere (a backend keeps small inputs there, as [`crate::host::reduce`]
/// does).
fn each<R: Send>(
    count: usize,
    f: impl Fn(usize) -> Result<R, Error> + Sync + Send,
) -> Result<Vec<R>, Error> {
    if on_pool() {
        (0..count).into_par_iter().map(f).collect()
    } else {
        (0..count).map(f).collect()
    }
}

/// `count` outputs, filled in batches of `per` by `f(first, slots)`, which writes
/// outputs `first .. first + slots.len()` into `slots`: in parallel on a rayon pool,
/// serially elsewhere (as [`each`]). The results go straight into the one list, where
/// collecting each batch's list and then joining them had grown and copied a list of a
/// million outputs.
fn each_batch(
    count: usize,
    per: usize,
    f: impl Fn(usize, &mut [Value]) -> Result<(), Error> + Sync + Send,
) -> Result<Vec<Value>, Error> {
    let mut out = vec![Value::Empty; count];
    let batch = |(b, slots): (usize, &mut [Value])| f(b * per, slots);
    if on_pool() {
        out.par_chunks_mut(per).enumerate().try_for_each(batch)?;
    } else {
        out.chunks_mut(per).enumerate().try_for_each(batch)?;
    }
    Ok(out)
}

/// Where the outputs' elements are consecutive and each output follows the one before
/// it (the rows of a C-order matrix, back-to-back segments), the first one's offset.
/// Told from the plan's runs, not output by output: listing the ranges of a million
/// short rows had been a tenth of their fold.
fn back_to_back(selection: Selection<'_>) -> Option<usize> {
    match selection {
        Selection::Ranges(ranges) => {
            let joined = ranges.windows(2).all(|w| w[0].end == w[1].start);
            joined.then(|| ranges.first().map_or(0, |r| r.start))
        }
        Selection::Axes(plan) => {
            let len = plan.segment_len();
            let rows_even = match plan.reduced_runs()[..] {
                [] => len <= 1,
                [(_, step)] => step == 1,
                _ => false,
            };
            let outputs_even = match plan.kept_runs()[..] {
                [] => true,
                [(_, step)] => step == len as isize,
                _ => false,
            };
            (rows_even && outputs_even && len > 0).then(|| plan.start(0))
        }
    }
}

/// The one length of every output where it is 1 to 1024 (one lane per element):
/// outputs that [`fold_short`] folds side by side.
fn short_len(selection: Selection<'_>) -> Option<usize> {
    let len = match selection {
        Selection::Axes(plan) => plan.segment_len(),
        Selection::Ranges(ranges) => {
            let len = ranges.first()?.len();
            ranges.iter().all(|r| r.len() == len).then_some(len)?
        }
    };
    (1..=LANES).contains(&len).then_some(len)
}

/// The `len` values of one output (of the accumulator type; `rows(at, n)` gives values
/// `at .. at + n` as a column) folded in the canonical order: each tile by [`fold_tile`]
/// over the lanes it uses, the tiles joined by the aligned pairwise tree.
fn fold_sequence<'r>(
    combiner: &Combiner<'_>,
    identity: Val,
    len: usize,
    rows: &(dyn Fn(usize, usize) -> Row<'r> + Sync),
) -> Val {
    let tile = |t: usize| {
        let start = t * TILE;
        let n = TILE.min(len - start);
        fold_tile(combiner, identity, n, Lanes::Used, |at, k| {
            rows(start + at, k)
        })
    };
    let tiles = len.div_ceil(TILE);
    let folded: Vec<Val> = if tiles > 1 && on_pool() {
        (0..tiles).into_par_iter().map(tile).collect()
    } else {
        (0..tiles).map(tile).collect()
    };
    tree(combiner.node(), folded).unwrap_or(identity)
}
