//! Joining the results of two parts of one input: `merge(left, right)` where `left`
//! covers the lower indices. Chunked evaluation (user-defined maps on the CPU) and
//! sharded devices need it; [`merge_tree`] joins many parts in the aligned pairwise tree
//! of the canonical order, so float sums of parts that are aligned subtrees of equal size
//! give the canonical bits.
//!
//! The rules are the reference's: integers wrap in the accumulator; float sums and
//! products combine in the accumulator type; selections take the first NaN, order -0.0
//! below +0.0 and keep the left (lower-index) one on ties; argmin/argmax indices must
//! already be global (the caller offsets each part's index).

use std::cmp::Ordering;

use crate::reference::wrap_int;
use crate::{Op, Problem, Scalar, Value};

/// `left ⊕ right` for `problem`.
pub fn merge(problem: &Problem, left: Value, right: Value) -> Value {
    match (left, right) {
        (Value::Empty, other) | (other, Value::Empty) => other,
        (Value::Scalar(a), Value::Scalar(b)) => match problem.op {
            Op::Min | Op::Max => {
                if pick_right(problem.op, &a, &b) {
                    Value::Scalar(b)
                } else {
                    Value::Scalar(a)
                }
            }
            op => Value::Scalar(arith(op, problem, a, b)),
        },
        (l @ Value::Indexed { value: a, .. }, r @ Value::Indexed { value: b, .. }) => {
            if pick_right(problem.op, &a, &b) {
                r
            } else {
                l
            }
        }
        // Mixed kinds only come from a caller's bug; keep the left part.
        (l, _) => l,
    }
}

/// The parts joined level by level as in the canonical tree: entries `(2k, 2k+1)` pair
/// up, an unpaired last entry moves up unchanged. `None` when there are no parts.
pub fn merge_tree(problem: &Problem, mut level: Vec<Value>) -> Option<Value> {
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for pair in level.chunks(2) {
            next.push(match pair {
                [a, b] => merge(problem, *a, *b),
                [a] => *a,
                _ => unreachable!("chunks of two"),
            });
        }
        level = next;
    }
    level.pop()
}

fn arith(op: Op, problem: &Problem, a: Scalar, b: Scalar) -> Scalar {
    match (a, b) {
        (Scalar::F32(x), Scalar::F32(y)) => Scalar::F32(if op == Op::Prod { x * y } else { x + y }),
        (Scalar::F64(x), Scalar::F64(y)) => Scalar::F64(if op == Op::Prod { x * y } else { x + y }),
        _ => {
            let (x, y) = (int_of(&a), int_of(&b));
            let v = match op {
                Op::Sum => x.wrapping_add(y),
                Op::Prod => x.wrapping_mul(y),
                Op::And => x & y,
                Op::Or => x | y,
                _ => x ^ y,
            };
            wrap_int(problem.acc, v)
        }
    }
}

fn int_of(s: &Scalar) -> i128 {
    match *s {
        Scalar::I8(v) => v.into(),
        Scalar::U8(v) => v.into(),
        Scalar::I16(v) => v.into(),
        Scalar::U16(v) => v.into(),
        Scalar::I32(v) => v.into(),
        Scalar::U32(v) => v.into(),
        Scalar::I64(v) => v.into(),
        Scalar::U64(v) => v.into(),
        other => other.to_f64() as i128,
    }
}

/// Whether a selection keeps `b` (the right part) over `a`.
fn pick_right(op: Op, a: &Scalar, b: &Scalar) -> bool {
    if a.is_nan() {
        return false;
    }
    if b.is_nan() {
        return true;
    }
    let order = if a.dtype().is_float() {
        let (x, y) = (a.to_f64(), b.to_f64());
        x.partial_cmp(&y)
            .unwrap_or(Ordering::Equal)
            .then((y.is_sign_negative()).cmp(&x.is_sign_negative()))
    } else {
        int_of(a).cmp(&int_of(b))
    };
    match op.wants_minimum() {
        Some(true) => order == Ordering::Greater,
        _ => order == Ordering::Less,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{reference, ArrayRef, DType};

    #[test]
    fn parts_merged_equal_the_whole_for_every_operator() {
        let data: Vec<f32> = (0..5000)
            .map(|k| ((k * 7919) % 1013) as f32 * 0.37 - 150.0)
            .collect();
        let ints: Vec<i32> = (0..5000).map(|k| (k * 7919) % 1013 - 500).collect();
        for op in Op::ALL {
            let (problem, whole, parts) = if op.is_bitwise() {
                let p = Problem::new(op, DType::I32, None).expect("valid");
                let parts: Vec<Value> = ints
                    .chunks(1024)
                    .map(|c| reference::reduce(&p, ArrayRef::from_slice(c)).expect("reduces"))
                    .collect();
                (
                    p,
                    reference::reduce(&p, ArrayRef::from_slice(&ints)).expect("reduces"),
                    parts,
                )
            } else {
                let p = Problem::new(op, DType::F32, None).expect("valid");
                let parts: Vec<Value> = data
                    .chunks(8192)
                    .enumerate()
                    .map(|(k, c)| {
                        match reference::reduce(&p, ArrayRef::from_slice(c)).expect("reduces") {
                            Value::Indexed { value, index } => Value::Indexed {
                                value,
                                index: index + 8192 * k as u64,
                            },
                            v => v,
                        }
                    })
                    .collect();
                (
                    p,
                    reference::reduce(&p, ArrayRef::from_slice(&data)).expect("reduces"),
                    parts,
                )
            };
            if op == Op::Prod {
                continue; // the product of 5000 such values overflows to inf/0 either way
            }
            let merged = merge_tree(&problem, parts).expect("parts");
            assert!(merged.same_as(&whole), "{op}: {merged} vs {whole}");
        }
    }

    #[test]
    fn selections_order_signed_zeros_and_keep_the_left_on_ties() {
        let p = Problem::new(Op::Min, DType::F32, None).expect("valid");
        let v = |x: f32| Value::Scalar(Scalar::F32(x));
        assert_eq!(
            merge(&p, v(0.0), v(-0.0)).scalar().map(|s| s.bits()),
            Some((-0.0f32).to_bits() as u64)
        );
        assert!(merge(&p, v(1.0), v(f32::NAN))
            .scalar()
            .is_some_and(|s| s.is_nan()));
        let a = Problem::new(Op::ArgMax, DType::F32, None).expect("valid");
        let l = Value::Indexed {
            value: Scalar::F32(2.0),
            index: 3,
        };
        let r = Value::Indexed {
            value: Scalar::F32(2.0),
            index: 9,
        };
        assert_eq!(merge(&a, l, r), l);
    }
}
