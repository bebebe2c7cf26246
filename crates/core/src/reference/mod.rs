//! Host references: the oracle every backend is checked against.
//!
//! - Integers are exact: sums in `i128`, products by wrapping multiplication, both then
//!   wrapped into the accumulator type (wrapping commutes with truncation, so this is the
//!   exact result modulo 2^bits).
//! - Float sums and products follow the canonical order ([`crate::canonical`]), so a
//!   backend's float result must equal this one bit for bit.
//! - Selections (min, max, argmin, argmax, bitwise) follow the rules documented on
//!   [`Op`]: first NaN wins, -0.0 < +0.0, first occurrence on ties.
//!
//! [`accuracy`] adds exactly rounded float sums for reporting each result's error.
//!
//! The code is deliberately plain: one scalar loop per rule, written independently of
//! the backends' fast paths.

pub mod accuracy;

use crate::canonical::{self, Arith};
use crate::num::{FloatElement, IntElement};
use crate::value::IntoScalar;
use crate::{
    with_float_dtype, with_float_pair, with_int_dtype, ArrayRef, DType, Error, Op, Problem, Scalar,
    Value,
};

/// Reduces `data` as `problem` says, on the host, in the reference way.
pub fn reduce(problem: &Problem, data: ArrayRef<'_>) -> Result<Value, Error> {
    problem.check_input(&data)?;
    if problem.dtype.is_integer() {
        with_int_dtype!(problem.dtype, T => Ok(reduce_int::<T>(problem, data.typed::<T>()?)),
            else unreachable!("integer dtype"))
    } else if problem.op.is_arithmetic() {
        with_float_pair!(problem.dtype, problem.acc, T, A => {
            let arith = if problem.op == Op::Sum { Arith::Sum } else { Arith::Prod };
            let total: A = canonical::reduce(arith, data.typed::<T>()?);
            Ok(Value::Scalar(total.into_scalar()))
        }, else Err(Error::AccNotAllowed {
            op: problem.op, dtype: problem.dtype, acc: problem.acc, allowed: "f32, f64".into()
        }))
    } else {
        with_float_dtype!(problem.dtype, T => reduce_float_select::<T>(problem.op, data.typed::<T>()?),
            else unreachable!("float dtype"))
    }
}

/// Wraps an exact integer into an integer type (two's complement truncation).
pub fn wrap_int(dtype: DType, v: i128) -> Scalar {
    match dtype {
        DType::I8 => Scalar::I8(v as i8),
        DType::U8 => Scalar::U8(v as u8),
        DType::I16 => Scalar::I16(v as i16),
        DType::U16 => Scalar::U16(v as u16),
        DType::I32 => Scalar::I32(v as i32),
        DType::U32 => Scalar::U32(v as u32),
        DType::I64 => Scalar::I64(v as i64),
        DType::U64 => Scalar::U64(v as u64),
        // Only reached through a bug in accumulator resolution; report the value
        // rather than panic.
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => Scalar::F64(v as f64),
    }
}

fn reduce_int<T: IntElement>(problem: &Problem, data: &[T]) -> Value {
    let wide = || data.iter().map(|&x| x.to_i128());
    let scalar = |v: i128| Value::Scalar(wrap_int(problem.acc, v));
    match problem.op {
        Op::Sum => scalar(wide().fold(0i128, i128::wrapping_add)),
        Op::Prod => scalar(wide().fold(1i128, i128::wrapping_mul)),
        Op::And => scalar(wide().fold(-1i128, |a, b| a & b)),
        Op::Or => scalar(wide().fold(0i128, |a, b| a | b)),
        Op::Xor => scalar(wide().fold(0i128, |a, b| a ^ b)),
        Op::Min | Op::Max | Op::ArgMin | Op::ArgMax => {
            let want_min = problem.op.wants_minimum() == Some(true);
            let mut best: Option<(usize, T)> = None;
            for (i, &x) in data.iter().enumerate() {
                let better = match best {
                    None => true,
                    Some((_, b)) => (want_min && x < b) || (!want_min && x > b),
                };
                if better {
                    best = Some((i, x));
                }
            }
            Value::from_selection(problem.op.is_indexed(), best)
        }
    }
}

/// `a` comes strictly before `b` in the float order of [`Op`]: numeric order with
/// -0.0 < +0.0 (NaN is handled before this is asked).
fn float_less(a: f64, b: f64) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && !b.is_sign_negative())
}

fn reduce_float_select<T: FloatElement>(op: Op, data: &[T]) -> Result<Value, Error> {
    let want_min = op.wants_minimum().ok_or(Error::OpNotForType {
        op,
        dtype: T::DTYPE,
    })?;
    if let Some(i) = data.iter().position(|x| x.is_nan()) {
        return Ok(Value::from_selection(op.is_indexed(), Some((i, data[i]))));
    }
    let mut best: Option<(usize, T)> = None;
    for (i, &x) in data.iter().enumerate() {
        let better = match best {
            None => true,
            Some((_, b)) => {
                let (x64, b64) = (x.to_f64(), b.to_f64());
                if want_min {
                    float_less(x64, b64)
                } else {
                    float_less(b64, x64)
                }
            }
        };
        if better {
            best = Some((i, x));
        }
    }
    Ok(Value::from_selection(op.is_indexed(), best))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T: crate::Element>(op: Op, acc: Option<DType>, data: &[T]) -> Value {
        let problem = Problem::new(op, T::DTYPE, acc).expect("valid problem");
        reduce(&problem, ArrayRef::from_slice(data)).expect("reference runs")
    }

    #[test]
    fn integer_sums_widen_and_wrap() {
        let data = [i32::MAX, i32::MAX, 5];
        assert_eq!(
            run(Op::Sum, None, &data),
            Value::Scalar(Scalar::I64(2 * i32::MAX as i64 + 5))
        );
        assert_eq!(
            run(Op::Sum, Some(DType::I32), &data),
            Value::Scalar(Scalar::I32(i32::MAX.wrapping_add(i32::MAX).wrapping_add(5)))
        );
        let bytes = [200u8, 100, 250];
        assert_eq!(run(Op::Sum, None, &bytes), Value::Scalar(Scalar::U64(550)));
        assert_eq!(
            run(Op::Prod, Some(DType::U8), &bytes),
            Value::Scalar(Scalar::U8(200u8.wrapping_mul(100).wrapping_mul(250)))
        );
    }

    #[test]
    fn selections_follow_the_documented_rules() {
        let data = [3i16, -7, 9, -7, 9];
        assert_eq!(
            run(Op::ArgMin, None, &data),
            Value::Indexed {
                value: Scalar::I16(-7),
                index: 1
            }
        );
        assert_eq!(
            run(Op::ArgMax, None, &data),
            Value::Indexed {
                value: Scalar::I16(9),
                index: 2
            }
        );
        assert_eq!(run(Op::Min, None, &[] as &[i16]), Value::Empty);
        let floats = [0.0f32, -0.0, 1.0];
        assert_eq!(
            run(Op::Min, None, &floats).scalar().map(|s| s.bits()),
            Some((-0.0f32).to_bits() as u64)
        );
        assert_eq!(
            run(Op::ArgMax, None, &[-0.0f32, 0.0, -1.0]).index(),
            Some(1)
        );
        let with_nan = [1.0f64, f64::NAN, -5.0, f64::NAN];
        assert_eq!(run(Op::ArgMin, None, &with_nan).index(), Some(1));
        assert!(run(Op::Max, None, &with_nan)
            .scalar()
            .is_some_and(|s| s.is_nan()));
    }

    #[test]
    fn bitwise_ops_are_exact() {
        let data = [0b1100u8, 0b1010, 0b1111_0110];
        assert_eq!(
            run(Op::And, None, &data),
            Value::Scalar(Scalar::U8(0b1100 & 0b1010 & 0b1111_0110))
        );
        assert_eq!(
            run(Op::Or, None, &data),
            Value::Scalar(Scalar::U8(0b1100 | 0b1010 | 0b1111_0110))
        );
        assert_eq!(
            run(Op::Xor, None, &data),
            Value::Scalar(Scalar::U8(0b1100 ^ 0b1010 ^ 0b1111_0110))
        );
        assert_eq!(
            run(Op::And, None, &[] as &[i64]),
            Value::Scalar(Scalar::I64(-1))
        );
    }
}
