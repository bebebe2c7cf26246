//! [`Problem`] (what to compute) and [`Outcome`] (what a backend computed, and how long
//! it took).

use serde::Serialize;

use crate::{acc, ArrayRef, DType, Error, Op, Value};

/// A validated reduction request: operator, input type and accumulator type.
///
/// The elements themselves travel separately as an [`ArrayRef`], so one problem can be
/// run over many inputs (the benchmark rotates buffers under one problem).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Problem {
    /// The operator.
    pub op: Op,
    /// The input element type.
    pub dtype: DType,
    /// The accumulator type (equal to `dtype` for selecting operators).
    pub acc: DType,
}

impl Problem {
    /// Checks `op` against `dtype` and resolves the accumulator (the default when `acc`
    /// is `None`).
    pub fn new(op: Op, dtype: DType, acc: Option<DType>) -> Result<Problem, Error> {
        op.check_dtype(dtype)?;
        let acc = acc::resolve_acc(op, dtype, acc)?;
        Ok(Problem { op, dtype, acc })
    }

    /// Checks that `data` holds this problem's input type.
    pub fn check_input(&self, data: &ArrayRef<'_>) -> Result<(), Error> {
        if data.dtype() != self.dtype {
            return Err(Error::DTypeMismatch {
                expected: self.dtype,
                found: data.dtype(),
            });
        }
        Ok(())
    }

    /// Bytes a reduction of `n` elements must read: the numerator of every GB/s figure.
    pub fn bytes_read(&self, n: usize) -> u64 {
        n as u64 * self.dtype.size_bytes() as u64
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.acc == self.dtype {
            write!(f, "{} {}", self.op, self.dtype)
        } else {
            write!(f, "{} {}→{}", self.op, self.dtype, self.acc)
        }
    }
}

/// What several timed calls of one reduction along axes or over segments saw over one
/// copy of the input on a device: the first call's outputs, each call's seconds, and
/// whether every later call gave the first one's bits.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeated {
    /// The first call's outputs.
    pub values: Vec<Value>,
    /// Each call's seconds (device events: the sum of its launches).
    pub seconds: Vec<f64>,
    /// Whether every later call gave the first one's bits.
    pub agree: bool,
}

/// What a backend returns for one reduction.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The result.
    pub value: Value,
    /// Seconds the backend spent reducing, measured by the backend itself (device events
    /// on GPUs, a monotonic clock on the CPU); transfers excluded.
    pub seconds: f64,
    /// Seconds per pass, for multi-pass strategies (one entry for single-pass ones).
    pub passes: Vec<f64>,
}
