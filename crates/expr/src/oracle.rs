//! The plain reference for user-defined reductions: every element mapped by the scalar
//! evaluator, then the core reference for built-in combines, or the canonical order
//! written out element by element for custom ones. Independent of the block evaluator
//! and of every backend, so the tests can hold them all to it.

use redlab_core::canonical::{LANES, TILE};
use redlab_core::segmented::Selection;
use redlab_core::{reference, ArrayRef, Error, Value};

use crate::block::AlignedBytes;
use crate::eval::{convert_val, eval, to_scalar, Env};
use crate::host::{check_inputs, tree};
use crate::reduction::{Combine, Reduction};
use crate::types::{Node, Val};

/// The reference result of `reduction` over `inputs` (post applied).
pub fn reduce(reduction: &Reduction, inputs: &[ArrayRef<'_>]) -> Result<Value, Error> {
    let n = check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
    let mapped: Vec<Val> = (0..n)
        .map(|i| {
            eval(
                &reduction.map,
                &Env {
                    inputs,
                    index: i as u64,
                    vars: &[],
                },
            )
        })
        .collect();
    let value = match &reduction.combine {
        Combine::Builtin(problem) => {
            let size = reduction.mapped.size_bytes();
            let mut bytes = AlignedBytes::zeroed(n * size);
            for (dst, v) in bytes.bytes_mut().chunks_exact_mut(size).zip(&mapped) {
                let bits = to_scalar(*v, reduction.mapped).bits().to_le_bytes();
                dst.copy_from_slice(&bits[..size]);
            }
            reference::reduce(
                problem,
                ArrayRef::from_bytes(reduction.mapped, bytes.bytes())?,
            )?
        }
        Combine::Custom {
            node,
            identity,
            acc,
            ..
        } => {
            let converted: Vec<Val> = mapped.iter().map(|v| convert_val(*v, *acc)).collect();
            Value::Scalar(to_scalar(fold(node, *identity, &converted), acc.dtype()))
        }
    };
    Ok(reduction.finish(value, n))
}

/// Values of the accumulator type folded by a custom combine in the canonical order,
/// written out element by element: each tile's 1024 lanes start at the identity and take
/// their elements in turn, the halving fold over all 1024, the aligned tree of tiles.
fn fold(combine: &Node, identity: Val, values: &[Val]) -> Val {
    let at = |a: Val, b: Val| {
        eval(
            combine,
            &Env {
                inputs: &[],
                index: 0,
                vars: &[a, b],
            },
        )
    };
    let tiles: Vec<Val> = values
        .chunks(TILE)
        .map(|tile| {
            let mut lanes = vec![identity; LANES];
            for (k, v) in tile.iter().enumerate() {
                lanes[k % LANES] = at(lanes[k % LANES], *v);
            }
            let mut width = LANES / 2;
            while width >= 1 {
                for j in 0..width {
                    lanes[j] = at(lanes[j], lanes[j + width]);
                }
                width /= 2;
            }
            lanes[0]
        })
        .collect();
    tree(combine, tiles).unwrap_or(identity)
}

/// The reference of a custom combine along axes or over segments: one value per output
/// of `selection`, before `post`. Every element is mapped by the scalar evaluator (`i`
/// its flat index in the inputs), then each output's values folded as a whole array of
/// its own (lanes, halving, tile tree); an empty output gives the identity.
pub fn custom_outputs(
    reduction: &Reduction,
    inputs: &[ArrayRef<'_>],
    selection: Selection<'_>,
) -> Result<Vec<Value>, Error> {
    let (node, identity, acc) = reduction.custom_or_err()?;
    let n = check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
    let mapped: Vec<Val> = (0..n)
        .map(|i| {
            let env = Env {
                inputs,
                index: i as u64,
                vars: &[],
            };
            convert_val(eval(&reduction.map, &env), acc)
        })
        .collect();
    // Which elements each output reads: the selection applied to their indices.
    let indices: Vec<u64> = (0..n as u64).collect();
    let indices = ArrayRef::from_slice(&indices);
    let mut scratch = Vec::new();
    (0..selection.outputs())
        .map(|k| {
            let own = selection.view(indices, k, &mut scratch)?;
            let values: Vec<Val> = own
                .typed::<u64>()?
                .iter()
                .map(|&i| mapped[i as usize])
                .collect();
            Ok(Value::Scalar(to_scalar(
                fold(node, identity, &values),
                acc.dtype(),
            )))
        })
        .collect()
}
