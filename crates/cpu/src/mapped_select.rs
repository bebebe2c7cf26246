//! Integer sums of a choice between two integer constants on a float condition, fused:
//! `x > 0 ? 1 : 0` (the count of elements above a threshold), `abs(x - y) < 1e-3 ? 0 : 1`.
//!
//! Such a map is of integer type, so it is not a float row program, and the block
//! evaluator ran it at 0.1–0.2 of the built-in sum's speed: it copied each input tile,
//! wrote a column of booleans, then a column of 64-bit integers, which the integer
//! kernel read back. Here the condition runs as a float row program choosing between
//! 1.0 and 0.0 ([`redlab_expr::rows`]), the marks are counted in float lanes as the
//! fused float sums add, and the sum is `k·a + (n − k)·b` for `k` marks. Integer sums
//! wrap, so that is exactly the block path's result, at any thread count.

use rayon::prelude::*;
use redlab_core::canonical::{LANES, TILE};
use redlab_core::num::FloatInput;
use redlab_core::reference::wrap_int;
use redlab_core::{ArrayRef, DType, Element, Error, Op, Problem, Value};
use redlab_expr::rows::{RowFloat, RowProgram};
use redlab_expr::types::{Kind, Node, Ty, Val};
use redlab_expr::{host, Combine, Reduction};

/// Elements per task: the block path's chunk, so one chunk never forks.
const CHUNK: usize = host::CHUNK_TILES * TILE;

/// The reduction's value (`post` applied) where it is a sum of `c ? a : b` with `a`, `b`
/// integer constants and `c` a condition over float inputs of one type; `None`
/// otherwise.
pub fn fused(reduction: &Reduction, inputs: &[ArrayRef<'_>]) -> Option<Result<Value, Error>> {
    let Combine::Builtin(problem) = &reduction.combine else {
        return None;
    };
    if problem.op != Op::Sum || !matches!(reduction.mapped, DType::I64 | DType::U64) {
        return None;
    }
    let Kind::Select(condition, chosen, otherwise) = &reduction.map.kind else {
        return None;
    };
    // The constants' bits as the mapped array would hold them (i64 sign-extended).
    let bits = |node: &Node| match node.kind {
        Kind::Const(Val::I64(v)) => Some(v as u64),
        Kind::Const(Val::U64(v)) => Some(v),
        _ => None,
    };
    let (chosen, otherwise) = (bits(chosen)?, bits(otherwise)?);
    let parts = Parts {
        reduction,
        problem,
        condition,
        chosen,
        otherwise,
    };
    sum_as::<f32>(&parts, inputs).or_else(|| sum_as::<f64>(&parts, inputs))
}

/// A recognized map, taken apart.
struct Parts<'a> {
    reduction: &'a Reduction,
    problem: &'a Problem,
    condition: &'a Node,
    chosen: u64,
    otherwise: u64,
}

fn sum_as<T: RowFloat + FloatInput<f64> + Element>(
    parts: &Parts<'_>,
    inputs: &[ArrayRef<'_>],
) -> Option<Result<Value, Error>> {
    let constant = |v: f64| Node {
        ty: T::TY,
        kind: Kind::Const(if T::TY == Ty::F32 {
            Val::F32(v as f32)
        } else {
            Val::F64(v)
        }),
    };
    // `c ? 1.0 : 0.0` in T: 1.0 marks the elements that take `chosen`.
    let marks = Node {
        ty: T::TY,
        kind: Kind::Select(
            Box::new(parts.condition.clone()),
            Box::new(constant(1.0)),
            Box::new(constant(0.0)),
        ),
    };
    let reduction = parts.reduction;
    let program = RowProgram::<T>::compile(&marks, &reduction.inputs)?;
    let (n, arrays) = match crate::mapped::program_inputs::<T>(reduction, inputs) {
        Ok(checked) => checked,
        Err(e) => return Some(Err(e)),
    };
    let count = |c: usize| chunk_count(&program, &arrays, c * CHUNK, ((c + 1) * CHUNK).min(n));
    let chunks = 0..n.div_ceil(CHUNK);
    let marked = if crate::fork::on_pool() {
        chunks.into_par_iter().map(count).sum::<u64>()
    } else {
        chunks.map(count).sum::<u64>()
    };
    // Sums of integers wrap, so k·a + (n − k)·b is exactly the sum of the choices.
    let total = marked
        .wrapping_mul(parts.chosen)
        .wrapping_add((n as u64 - marked).wrapping_mul(parts.otherwise));
    let value = Value::Scalar(wrap_int(parts.problem.acc, total as i128));
    Some(Ok(reduction.finish(value, n)))
}

/// How many of elements `start..end` take the constant chosen by the condition: the
/// marks (1.0 or 0.0) are added in float lanes, a row at a time, as the fused float sums
/// do. A lane takes at most `CHUNK / LANES` = 128 marks, so its count is exact.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn chunk_count<T: RowFloat + FloatInput<f64>>(
    program: &RowProgram<T>,
    arrays: &[&[T]],
    start: usize,
    end: usize,
) -> u64 {
    let mut scratch = program.scratch();
    let mut lanes = [T::default(); LANES];
    let mut at = start;
    while at < end {
        let len = LANES.min(end - at);
        program.fold(
            arrays,
            at,
            &mut lanes[..len],
            &mut scratch,
            |lane, mark: T| lane + mark,
        );
        at += len;
    }
    lanes.iter().map(|&l| l.to_acc() as u64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_core::generate::{generate, Distribution};
    use redlab_expr::oracle;

    /// Counts and choices over f32 and f64 inputs on sizes around rows and chunks, and a
    /// constant large enough that the sum wraps: the fused path applies and gives the
    /// oracle's bits.
    #[test]
    fn choices_between_constants_equal_the_oracle() {
        let maps = [
            "x > 0 ? 1 : 0",
            "abs(x - y) < 0.5 ? 3 : -2",
            "x <= y * 2 ? -7 : 9000000000000000000",
            "(x > 1 && y < 0) || !(x < y) ? 0 : 1",
        ];
        let sizes = [
            0,
            1,
            13,
            LANES - 1,
            LANES + 1,
            CHUNK - 1,
            CHUNK,
            2 * CHUNK + 77,
        ];
        for dtype in [DType::F32, DType::F64] {
            for &n in &sizes {
                let make = |s| generate(dtype, n, Distribution::Normal, s).expect("generates");
                let (x, y) = (make(n as u64), make(n as u64 + 1));
                let arrays = [x.view(), y.view()];
                for map in maps {
                    let r = Reduction::builder(map, "sum")
                        .build(&[dtype, dtype])
                        .expect("builds");
                    let want = oracle::reduce(&r, &arrays).expect("reference");
                    let got = fused(&r, &arrays).expect(map).expect("reduces");
                    assert!(got.same_as(&want), "{map} {dtype:?} n={n}: {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn other_maps_and_combines_are_left_to_the_block_path() {
        let x = generate(DType::F32, 100, Distribution::Normal, 1).expect("generates");
        let i = generate(DType::I32, 100, Distribution::Normal, 2).expect("generates");
        let cases: [(&str, &str, [DType; 2]); 4] = [
            ("x > 0 ? 1 : 0", "max", [DType::F32, DType::F32]),
            ("x > 0 ? y : 0", "sum", [DType::F32, DType::I32]),
            ("x > 0 ? 1.5 : 0", "sum", [DType::F32, DType::F32]),
            ("y > 0 ? 1 : 0", "sum", [DType::F32, DType::I32]),
        ];
        for (map, combine, dtypes) in cases {
            let r = Reduction::builder(map, combine)
                .build(&dtypes)
                .expect("builds");
            let second = if dtypes[1] == DType::F32 {
                x.view()
            } else {
                i.view()
            };
            assert!(fused(&r, &[x.view(), second]).is_none(), "{map}, {combine}");
        }
    }
}
