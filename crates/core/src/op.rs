//! Reduction operators: what each computes, its identity, and how it treats NaN.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{DType, Error};

/// A reduction operator.
///
/// | op | identity | NaN rule (floats) |
/// |---|---|---|
/// | `sum` | 0 (the canonical float order pads with -0.0; an empty float sum is +0.0) | NaN if any term is NaN or the sum meets +inf + -inf |
/// | `prod` | 1 | NaN if any factor is NaN or the product meets 0 × inf |
/// | `min`, `max` | none: empty input is [`Value::Empty`](crate::Value::Empty) | NaN propagates: the result is the first NaN in index order |
/// | `and`, `or`, `xor` | all ones, 0, 0 | integer types only |
/// | `argmin`, `argmax` | none: empty input is [`Value::Empty`](crate::Value::Empty) | the first NaN's index if any NaN is present |
///
/// Floats are ordered as IEEE 754-2019 `minimum`/`maximum` order them: -0.0 < +0.0. Ties
/// go to the first occurrence, so `argmin` returns the smallest index holding the minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Sum of all elements.
    Sum,
    /// Product of all elements.
    Prod,
    /// Smallest element.
    Min,
    /// Largest element.
    Max,
    /// Bitwise and (integers only).
    And,
    /// Bitwise or (integers only).
    Or,
    /// Bitwise exclusive or (integers only).
    Xor,
    /// Smallest element and the index of its first occurrence.
    ArgMin,
    /// Largest element and the index of its first occurrence.
    ArgMax,
}

impl Op {
    /// Every operator, in the order tables and tests list them.
    pub const ALL: [Op; 9] = [
        Op::Sum,
        Op::Prod,
        Op::Min,
        Op::Max,
        Op::And,
        Op::Or,
        Op::Xor,
        Op::ArgMin,
        Op::ArgMax,
    ];

    /// The lowercase name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Prod => "prod",
            Op::Min => "min",
            Op::Max => "max",
            Op::And => "and",
            Op::Or => "or",
            Op::Xor => "xor",
            Op::ArgMin => "argmin",
            Op::ArgMax => "argmax",
        }
    }

    /// Whether the operator is bitwise (defined on integers only).
    pub fn is_bitwise(self) -> bool {
        matches!(self, Op::And | Op::Or | Op::Xor)
    }

    /// Whether the result carries an index (argmin, argmax).
    pub fn is_indexed(self) -> bool {
        matches!(self, Op::ArgMin | Op::ArgMax)
    }

    /// Whether the operator is arithmetic (sum, prod): the only ones with an accumulator
    /// type that can differ from the input type.
    pub fn is_arithmetic(self) -> bool {
        matches!(self, Op::Sum | Op::Prod)
    }

    /// For selecting operators, whether they look for the minimum (`Some(true)`: min,
    /// argmin) or the maximum (`Some(false)`: max, argmax); `None` for the others.
    pub fn wants_minimum(self) -> Option<bool> {
        match self {
            Op::Min | Op::ArgMin => Some(true),
            Op::Max | Op::ArgMax => Some(false),
            _ => None,
        }
    }

    /// Whether the operator has no identity, so empty input has no value.
    pub fn needs_elements(self) -> bool {
        matches!(self, Op::Min | Op::Max | Op::ArgMin | Op::ArgMax)
    }

    /// Checks that the operator is defined for `dtype`.
    pub fn check_dtype(self, dtype: DType) -> Result<(), Error> {
        if self.is_bitwise() && dtype.is_float() {
            return Err(Error::OpNotForType { op: self, dtype });
        }
        Ok(())
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let canonical = match lower.as_str() {
            "add" | "plus" => "sum",
            "product" | "mul" => "prod",
            "bitand" => "and",
            "bitor" => "or",
            "bitxor" => "xor",
            other => other,
        };
        Op::ALL
            .into_iter()
            .find(|op| op.name() == canonical)
            .ok_or_else(|| Error::UnknownOp(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitwise_ops_reject_floats_and_accept_integers() {
        for op in [Op::And, Op::Or, Op::Xor] {
            assert!(op.check_dtype(DType::F32).is_err());
            assert!(op.check_dtype(DType::BF16).is_err());
            assert!(op.check_dtype(DType::U16).is_ok());
        }
        assert!(Op::Sum.check_dtype(DType::F16).is_ok());
    }

    #[test]
    fn names_round_trip() {
        for op in Op::ALL {
            assert_eq!(op.name().parse::<Op>().ok(), Some(op));
        }
        assert!("median".parse::<Op>().is_err());
    }
}
