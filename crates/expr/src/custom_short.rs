//! Short outputs of a custom combine, many at once: outputs of one length of at most
//! 1024 (one lane per element, one row of a tile) folded side by side, each step of the
//! canonical fold one block evaluation over every output of a batch instead of one per
//! output. Folding rows of 64 one output at a time spent a call on the evaluator's
//! per-block costs (65536×64 f32 along rows: 0.46 GB/s on 2 cores, against 10.7 for the
//! built-in sum). The values and their order are those of
//! [`crate::custom_outputs::fold_tile`] over each output alone.

use redlab_core::canonical::LANES;

use crate::block::{eval_block, Column};
use crate::types::{Node, Val};

/// Values per batch: enough for the evaluator's loops to run long, few enough to stay
/// in cache.
const BATCH_VALUES: usize = 16 * 1024;

/// Outputs per batch for outputs of `len` elements.
pub fn batch_outputs(len: usize) -> usize {
    (BATCH_VALUES / len.max(1).next_power_of_two()).max(1)
}

/// The folds of `outputs` outputs of `len` elements each (1 ≤ `len` ≤ 1024), whose
/// values (of the accumulator type) `values` holds one output after another: each
/// output's lanes start at `identity` and take their element (`combine(identity, x)`),
/// are padded with `identity` to the next power of two, then halved, `a` always the
/// lower lane.
pub fn fold_short(
    combine: &Node,
    identity: Val,
    values: Column,
    outputs: usize,
    len: usize,
) -> Vec<Val> {
    debug_assert!((1..=LANES).contains(&len) && values.len() == outputs * len);
    let first = eval_block(
        combine,
        &[],
        0,
        values.len(),
        &[Column::splat(identity, values.len()), values],
    );
    let mut width = len.next_power_of_two();
    let mut lanes = pad(first, len, width, identity);
    while width > 1 {
        let (low, high) = halves(&lanes, width);
        width /= 2;
        lanes = eval_block(combine, &[], 0, outputs * width, &[low, high]);
    }
    (0..outputs).map(|k| lanes.get(k)).collect()
}

/// Each run of `len` values followed by `width - len` copies of `fill`.
fn pad(col: Column, len: usize, width: usize, fill: Val) -> Column {
    if len == width {
        return col;
    }
    fn padded<T: Copy>(v: &[T], len: usize, width: usize, fill: T) -> Vec<T> {
        let mut out = Vec::with_capacity(v.len() / len * width);
        for run in v.chunks_exact(len) {
            out.extend_from_slice(run);
            out.extend(std::iter::repeat_n(fill, width - len));
        }
        out
    }
    match (col, Column::splat(fill, 1)) {
        (Column::Bool(v), Column::Bool(f)) => Column::Bool(padded(&v, len, width, f[0])),
        (Column::I64(v), Column::I64(f)) => Column::I64(padded(&v, len, width, f[0])),
        (Column::U64(v), Column::U64(f)) => Column::U64(padded(&v, len, width, f[0])),
        (Column::F32(v), Column::F32(f)) => Column::F32(padded(&v, len, width, f[0])),
        (Column::F64(v), Column::F64(f)) => Column::F64(padded(&v, len, width, f[0])),
        (col, _) => col,
    }
}

/// The lower and upper halves of every run of `width` values, each run's after the one
/// before.
fn halves(col: &Column, width: usize) -> (Column, Column) {
    fn split<T: Copy>(v: &[T], width: usize) -> (Vec<T>, Vec<T>) {
        let half = width / 2;
        let (mut low, mut high) = (
            Vec::with_capacity(v.len() / 2),
            Vec::with_capacity(v.len() / 2),
        );
        for run in v.chunks_exact(width) {
            low.extend_from_slice(&run[..half]);
            high.extend_from_slice(&run[half..]);
        }
        (low, high)
    }
    match col {
        Column::Bool(v) => {
            let (a, b) = split(v, width);
            (Column::Bool(a), Column::Bool(b))
        }
        Column::I64(v) => {
            let (a, b) = split(v, width);
            (Column::I64(a), Column::I64(b))
        }
        Column::U64(v) => {
            let (a, b) = split(v, width);
            (Column::U64(a), Column::U64(b))
        }
        Column::F32(v) => {
            let (a, b) = split(v, width);
            (Column::F32(a), Column::F32(b))
        }
        Column::F64(v) => {
            let (a, b) = split(v, width);
            (Column::F64(a), Column::F64(b))
        }
    }
}
