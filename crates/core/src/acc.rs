//! Accumulator rules: which type a reduction accumulates in, by default and on request.
//!
//! The accumulator is separate from the input type (as in `f16 → f32`, `i8 → i64`):
//!
//! - integer `sum`/`prod` accumulate in 64 bits of the input's signedness by default
//!   (`i32 → i64`, `u8 → u64`) and wrap in the accumulator type; any integer type of the
//!   same signedness at least as wide as the input may be asked for (`i32 → i32` wraps at
//!   32 bits, as C would);
//! - float `sum`/`prod` accumulate in the input type by default, except `f16`/`bf16`,
//!   which accumulate in `f32`; `f64` may be asked for from any float type;
//! - every other operator "accumulates" in the input type: it selects, it does not add.

use crate::{DType, Error, Op};

/// The accumulator type used when the user names none.
pub fn default_acc(op: Op, dtype: DType) -> DType {
    if !op.is_arithmetic() {
        return dtype;
    }
    match dtype {
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => DType::I64,
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => DType::U64,
        DType::F16 | DType::BF16 | DType::F32 => DType::F32,
        DType::F64 => DType::F64,
    }
}

/// The accumulator types allowed for `op` over `dtype`, default first.
pub fn allowed_accs(op: Op, dtype: DType) -> Vec<DType> {
    let default = default_acc(op, dtype);
    if !op.is_arithmetic() {
        return vec![default];
    }
    let mut allowed = vec![default];
    let candidates: &[DType] = if dtype.is_float() {
        &[DType::F32, DType::F64]
    } else if dtype.is_signed_integer() {
        &[DType::I8, DType::I16, DType::I32, DType::I64]
    } else {
        &[DType::U8, DType::U16, DType::U32, DType::U64]
    };
    allowed.extend(
        candidates
            .iter()
            .copied()
            .filter(|&c| c != default && c.size_bytes() >= dtype.size_bytes()),
    );
    allowed
}

/// Resolves the accumulator: the user's choice if it is allowed, else the default.
pub fn resolve_acc(op: Op, dtype: DType, requested: Option<DType>) -> Result<DType, Error> {
    let Some(acc) = requested else {
        return Ok(default_acc(op, dtype));
    };
    let allowed = allowed_accs(op, dtype);
    if allowed.contains(&acc) {
        Ok(acc)
    } else {
        Err(Error::AccNotAllowed {
            op,
            dtype,
            acc,
            allowed: allowed
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_documented_rules() {
        assert_eq!(default_acc(Op::Sum, DType::I32), DType::I64);
        assert_eq!(default_acc(Op::Prod, DType::U8), DType::U64);
        assert_eq!(default_acc(Op::Sum, DType::F16), DType::F32);
        assert_eq!(default_acc(Op::Sum, DType::BF16), DType::F32);
        assert_eq!(default_acc(Op::Sum, DType::F32), DType::F32);
        assert_eq!(default_acc(Op::Max, DType::I8), DType::I8);
    }

    #[test]
    fn requests_are_checked() {
        assert_eq!(
            resolve_acc(Op::Sum, DType::F32, Some(DType::F64)).ok(),
            Some(DType::F64)
        );
        assert_eq!(
            resolve_acc(Op::Sum, DType::I32, Some(DType::I32)).ok(),
            Some(DType::I32)
        );
        assert!(resolve_acc(Op::Sum, DType::I32, Some(DType::I16)).is_err());
        assert!(resolve_acc(Op::Sum, DType::I32, Some(DType::U64)).is_err());
        assert!(resolve_acc(Op::Sum, DType::F64, Some(DType::F32)).is_err());
        assert!(resolve_acc(Op::Min, DType::F32, Some(DType::F64)).is_err());
    }
}
