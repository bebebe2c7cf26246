//! Short outputs of a custom combine, many at once: outputs of one length of at most
//! 1024 (one lane per element, one row of a tile) folded side by side, each step of the
//! canonical fold one combine over every output of a batch instead of one per output.
//! Folding rows of 64 one output at a time spent a call on the evaluator's per-block
//! costs (65536×64 f32 along rows: 0.46 GB/s on 2 cores, against 10.7 for the built-in
//! sum). The batch's lanes are laid out lane by lane (lane `l` of output `c` at
//! `l·outputs + c`), as columns fold, so every halving step is one combine of the
//! lanes' lower half with their upper half in place, where splitting each output's run
//! in two had copied the batch at every step. The values and their order are those of
//! [`crate::custom_outputs::fold_tile`] over each output alone.
//!
//! A batch reads its rows where they are when the map is one input of the
//! accumulator's type (no mapped copy), and writes its results straight into the
//! caller's slots: collecting each batch's results and then the batches' into one list
//! of a million outputs had cost more than the combines (rows of 16).

use redlab_core::canonical::LANES;
use redlab_core::{DType, Value};

use crate::block::Column;
use crate::combine_program::{Combiner, Row};
use crate::eval::to_scalar;
use crate::types::Val;

/// Values per batch: enough for the evaluator's loops to run long, few enough to stay
/// in cache.
const BATCH_VALUES: usize = 16 * 1024;

/// Outputs per batch for outputs of `len` elements.
pub fn batch_outputs(len: usize) -> usize {
    (BATCH_VALUES / len.max(1).next_power_of_two()).max(1)
}

/// The folds of `out.len()` outputs of `len` elements each (1 ≤ `len` ≤ 1024), whose
/// values (of the accumulator type) `values` holds one output after another, written
/// into `out` as scalars of `dtype`: each output's lanes start at `identity` and take
/// their element (`combine(identity, x)`), are padded with `identity` to the next power
/// of two, then halved, `a` always the lower lane.
pub fn fold_short(
    combiner: &Combiner<'_>,
    (identity, dtype): (Val, DType),
    values: Row<'_>,
    len: usize,
    out: &mut [Value],
) {
    let outputs = out.len();
    debug_assert!((1..=LANES).contains(&len) && values.len() == outputs * len);
    let width = len.next_power_of_two();
    // Lanes past `len` keep the identity itself, as padding.
    let mut lanes = Column::splat(identity, width * outputs);
    combiner.apply(&mut lanes, lane_major(values, outputs, len));
    let mut half = width / 2;
    while half >= 1 {
        combiner.halve(&mut lanes, half * outputs);
        half /= 2;
    }
    // One match on the column's type, not one per value (`Column::get`): along rows of
    // 16, where each output's own costs weigh most, the match per value read 4.0–4.1
    // GB/s against 4.8–5.0 (2 rounds each, results/cpu-dev-2core-custom-short-rows).
    fn write<T: Copy>(v: &[T], out: &mut [Value], scalar: impl Fn(T) -> Value) {
        out.iter_mut().zip(v).for_each(|(o, &x)| *o = scalar(x));
    }
    let scalar = |v: Val| Value::Scalar(to_scalar(v, dtype));
    match &lanes {
        Column::Bool(v) => write(v, out, |x| scalar(Val::Bool(x))),
        Column::I64(v) => write(v, out, |x| scalar(Val::I64(x))),
        Column::U64(v) => write(v, out, |x| scalar(Val::U64(x))),
        Column::F32(v) => write(v, out, |x| scalar(Val::F32(x))),
        Column::F64(v) => write(v, out, |x| scalar(Val::F64(x))),
    }
}

/// `values` (`outputs` runs of `len`) reordered lane by lane: value `l` of run `c` to
/// `l·outputs + c`. Runs are taken 16 at a time, so the lines they read stay in L1 while
/// each lane's 16 values are written side by side; reading one lane across a whole
/// batch (64 KiB) at a time had cost more than the combine.
fn lane_major(values: Row<'_>, outputs: usize, len: usize) -> Row<'_> {
    fn go<T: Copy + Default>(v: &[T], outputs: usize, len: usize) -> Vec<T> {
        const RUNS: usize = 16;
        let mut out = vec![T::default(); v.len()];
        for first in (0..outputs).step_by(RUNS) {
            let runs = &v[first * len..outputs.min(first + RUNS) * len];
            for l in 0..len {
                let at = l * outputs + first;
                let lane = runs.iter().skip(l).step_by(len);
                out[at..at + runs.len() / len]
                    .iter_mut()
                    .zip(lane)
                    .for_each(|(o, &x)| *o = x);
            }
        }
        out
    }
    if outputs == 1 {
        return values;
    }
    Row::Owned(match values {
        Row::F32(v) => Column::F32(go(v, outputs, len)),
        Row::F64(v) => Column::F64(go(v, outputs, len)),
        other => match other.into_column() {
            Column::Bool(v) => Column::Bool(go(&v, outputs, len)),
            Column::I64(v) => Column::I64(go(&v, outputs, len)),
            Column::U64(v) => Column::U64(go(&v, outputs, len)),
            Column::F32(v) => Column::F32(go(&v, outputs, len)),
            Column::F64(v) => Column::F64(go(&v, outputs, len)),
        },
    })
}
