//! Custom combines along axes and over segments on the host, and the canonical fold of a
//! tile that whole arrays share.
//!
//! Every element is mapped once into the accumulator type (a map that reads `i` sees
//! the element's flat index in the inputs, as whole arrays and the built-in combines
//! along axes give it), then each output folds its own values in the canonical order of
//! a 1-D reduction of that sequence alone: lanes of 1024 that start at the identity and
//! take their rows in turn, the halving fold, the aligned tree of tiles. So an output's
//! bits are those of [`crate::host::reduce`] over its elements, on every backend, even
//! for a combine that is not associative.
//!
//! The halving fold here starts at the next power of two of the lanes a tile uses, as
//! the GPU's segment kernels do, where a whole array's tile folds all 1024: the steps
//! skipped only combine partials with the identity, which changes nothing when
//! `combine(a, identity) == a` (what an identity must be, docs/expressions.md).

use rayon::prelude::*;
use redlab_core::canonical::{LANES, TILE};
use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, Error, Value};

use crate::block::{convert_column, eval_block, load_block, AlignedBytes, Column};
use crate::eval::to_scalar;
use crate::host::{check_inputs, tree};
use crate::reduction::Reduction;
use crate::types::{Node, Val};

/// Which lanes of a tile the halving fold visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lanes {
    /// All 1024, as a whole array's tiles fold.
    All,
    /// The next power of two of the lanes the tile fills, as the segment kernels fold.
    Used,
}

/// One tile of `len` values of a custom combine in the canonical order: `row(at, n)`
/// gives values `at .. at + n` of the tile as a column of the accumulator type; each row
/// of 1024 is one `lanes = combine(lanes, row)` from lanes that start at `identity`,
/// then the halving fold, `a` always the lower lane.
pub fn fold_tile(
    combine: &Node,
    identity: Val,
    len: usize,
    lanes_folded: Lanes,
    mut row: impl FnMut(usize, usize) -> Column,
) -> Val {
    let used = len.min(LANES);
    let width = match lanes_folded {
        Lanes::All => LANES,
        Lanes::Used => used.next_power_of_two(),
    };
    let mut lanes = Column::splat(identity, width);
    let mut at = 0;
    while at < len {
        let n = LANES.min(len - at);
        let head = lanes.slice(0, n);
        let joined = eval_block(combine, &[], 0, n, &[head, row(at, n)]);
        lanes = if n == width {
            joined
        } else {
            splice(joined, &lanes, n)
        };
        at += n;
    }
    let mut half = width / 2;
    while half >= 1 {
        let (low, high) = (lanes.slice(0, half), lanes.slice(half, 2 * half));
        lanes = eval_block(combine, &[], 0, half, &[low, high]);
        half /= 2;
    }
    lanes.get(0)
}

/// `head` followed by `rest`'s values from `from` on.
fn splice(head: Column, rest: &Column, from: usize) -> Column {
    let tail = rest.slice(from, rest.len());
    match (head, tail) {
        (Column::Bool(mut a), Column::Bool(b)) => {
            a.extend(b);
            Column::Bool(a)
        }
        (Column::I64(mut a), Column::I64(b)) => {
            a.extend(b);
            Column::I64(a)
        }
        (Column::U64(mut a), Column::U64(b)) => {
            a.extend(b);
            Column::U64(a)
        }
        (Column::F32(mut a), Column::F32(b)) => {
            a.extend(b);
            Column::F32(a)
        }
        (Column::F64(mut a), Column::F64(b)) => {
            a.extend(b);
            Column::F64(a)
        }
        (a, _) => a,
    }
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
    let n = check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
    let dtype = acc.dtype();
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
    let output = |scratch: &mut Vec<u64>, k: usize| {
        let own = selection.view(values, k, scratch)?;
        Ok(Value::Scalar(to_scalar(
            fold_sequence(node, identity, own),
            dtype,
        )))
    };
    if on_pool() {
        (0..selection.outputs())
            .into_par_iter()
            .map_init(Vec::new, output)
            .collect()
    } else {
        let mut scratch = Vec::new();
        (0..selection.outputs())
            .map(|k| output(&mut scratch, k))
            .collect()
    }
}

/// Whether the current thread is a rayon pool's worker: a backend that keeps small
/// inputs on the caller's thread folds them there, as [`crate::host::reduce`] does.
fn on_pool() -> bool {
    rayon::current_thread_index().is_some()
}

/// `values` (of the accumulator type) folded in the canonical order: each tile by
/// [`fold_tile`] over the lanes it uses, the tiles joined by the aligned pairwise tree.
fn fold_sequence(combine: &Node, identity: Val, values: ArrayRef<'_>) -> Val {
    let tile = |t: usize| {
        let start = t * TILE;
        let len = TILE.min(values.len() - start);
        fold_tile(combine, identity, len, Lanes::Used, |at, n| {
            load_block(&values, start + at, n)
        })
    };
    let tiles = values.len().div_ceil(TILE);
    let folded: Vec<Val> = if tiles > 1 && on_pool() {
        (0..tiles).into_par_iter().map(tile).collect()
    } else {
        (0..tiles).map(tile).collect()
    };
    tree(combine, folded).unwrap_or(identity)
}
