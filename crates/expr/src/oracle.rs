//! The plain reference for user-defined reductions: every element mapped by the scalar
//! evaluator, then the core reference for built-in combines, or the canonical order
//! written out element by element for custom ones. Independent of the block evaluator
//! and of every backend, so the tests can hold them all to it.

use redlab_core::canonical::{LANES, TILE};
use redlab_core::{reference, ArrayRef, Error, Value};

use crate::block::AlignedBytes;
use crate::eval::{convert_val, eval, to_scalar, Env};
use crate::host::{check_inputs, tree};
use crate::reduction::{Combine, Reduction};
use crate::types::Val;

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
            let at = |a: Val, b: Val| {
                eval(
                    node,
                    &Env {
                        inputs: &[],
                        index: 0,
                        vars: &[a, b],
                    },
                )
            };
            let tiles: Vec<Val> = mapped
                .chunks(TILE)
                .map(|tile| {
                    let mut lanes = vec![*identity; LANES];
                    for (k, v) in tile.iter().enumerate() {
                        lanes[k % LANES] = at(lanes[k % LANES], convert_val(*v, *acc));
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
            Value::Scalar(to_scalar(
                tree(node, tiles).unwrap_or(*identity),
                acc.dtype(),
            ))
        }
    };
    Ok(reduction.finish(value, n))
}
