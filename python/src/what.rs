//! What a call computes: a built-in operator (with an optional accumulator type) or a
//! named statistic from `redlab_expr::stats`, parsed from the names Python passes.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use redlab::{DType, Op, Problem, Reduction, Statistic};

use crate::errors;

/// A built-in operator or a statistic.
pub enum What {
    /// One of redlab's operators, accumulating in `acc` (default: the operator's).
    Op(Op, Option<DType>),
    /// A statistic: a map, a built-in combine and a `post`.
    Stat(String),
    /// A statistic with a several-number accumulator, computed on the CPU.
    Multi(Statistic),
}

/// The dtype named by the project's names (`f32`) or numpy's (`float32`, `<f4`).
pub fn dtype(name: &str) -> PyResult<DType> {
    name.parse::<DType>()
        .map_err(|_| PyTypeError::new_err(format!("redlab cannot reduce arrays of {name}")))
}

impl What {
    /// Parses `kind` ("op", "stat" or "multi"), `name`, the accumulator's type name and
    /// `ddof` (variance and standard deviation).
    pub fn parse(kind: &str, name: &str, acc: Option<&str>, ddof: f64) -> PyResult<What> {
        match kind {
            "op" => {
                let op = name
                    .parse::<Op>()
                    .map_err(|_| PyValueError::new_err(format!("unknown operator '{name}'")))?;
                Ok(What::Op(op, acc.map(dtype).transpose()?))
            }
            "stat" if acc.is_none() => Ok(What::Stat(name.to_string())),
            "multi" => Statistic::parse(name, ddof)
                .map(What::Multi)
                .ok_or_else(|| PyValueError::new_err(format!("unknown statistic '{name}'"))),
            "stat" => Err(PyTypeError::new_err(format!(
                "{name} takes no dtype: its accumulator is fixed"
            ))),
            other => Err(PyValueError::new_err(format!("unknown kind '{other}'"))),
        }
    }

    /// The problem of a built-in operator over `input`.
    pub fn problem(op: Op, input: DType, acc: Option<DType>) -> PyResult<Problem> {
        Problem::new(op, input, acc).map_err(|e| errors::from_core(&e))
    }

    /// The reduction of a statistic over `input`.
    pub fn statistic(name: &str, input: DType) -> PyResult<Reduction> {
        redlab::stats::reduction(name, input).map_err(|e| errors::from_expr(&e))
    }
}

/// The names of the statistics the library computes.
#[pyfunction]
pub fn statistics() -> Vec<&'static str> {
    let mut names = redlab::stats::NAMES.to_vec();
    names.extend(Statistic::NAMES);
    names
}
