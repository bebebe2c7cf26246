//! The error type shared by the model and the backends.

use crate::{DType, Op};

/// What can go wrong when describing or running a reduction.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A type name that is not one of [`DType::ALL`].
    #[error(
        "unknown type '{0}' (known: i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64)"
    )]
    UnknownDType(String),
    /// An operator name that is not one of [`Op::ALL`].
    #[error("unknown operator '{0}' (known: sum, prod, min, max, and, or, xor, argmin, argmax)")]
    UnknownOp(String),
    /// A bitwise operator on a float type.
    #[error("{op} is defined for integer types only, not {dtype}")]
    OpNotForType {
        /// The operator.
        op: Op,
        /// The offending type.
        dtype: DType,
    },
    /// An accumulator type that the rules in [`crate::acc`] do not allow.
    #[error("{op} over {dtype} cannot accumulate in {acc} (allowed: {allowed})")]
    AccNotAllowed {
        /// The operator.
        op: Op,
        /// The input type.
        dtype: DType,
        /// The requested accumulator.
        acc: DType,
        /// The allowed accumulators, comma-separated.
        allowed: String,
    },
    /// Data of one type handed to a problem about another.
    #[error("the input holds {found} elements but the problem is about {expected}")]
    DTypeMismatch {
        /// The problem's input type.
        expected: DType,
        /// The data's type.
        found: DType,
    },
    /// A byte buffer that cannot be viewed as elements of its type.
    #[error("{0}")]
    BadBuffer(String),
    /// An allocation that the host cannot satisfy.
    #[error("{what} needs {needed} bytes but only {available} bytes of memory are available")]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// Bytes needed.
        needed: u128,
        /// Bytes available.
        available: u128,
    },
    /// A shape, axis list, strided view or segment list that does not fit the data.
    #[error("{0}")]
    Shape(String),
    /// A backend-specific failure, with the backend's own message.
    #[error("{backend}: {message}")]
    Backend {
        /// The backend that failed (`cpu`, `opencl`, `cuda`).
        backend: String,
        /// Its message.
        message: String,
    },
}
