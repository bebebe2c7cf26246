//! redlab's errors as Python exceptions, where numpy would raise them: `TypeError` for
//! types that cannot be reduced, `ValueError` for bad axes, shapes, empty selections
//! and expressions, `DeviceError` (a `RuntimeError`) for devices that fail or are not
//! there.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::PyErr;
use redlab_core::Error as CoreError;

pyo3::create_exception!(
    _native,
    DeviceError,
    PyRuntimeError,
    "A device that is missing, failed, or ran out of memory."
);

/// The Python exception for a library error.
pub fn from_core(e: &CoreError) -> PyErr {
    let message = e.to_string();
    match e {
        CoreError::UnknownDType(_)
        | CoreError::OpNotForType { .. }
        | CoreError::AccNotAllowed { .. }
        | CoreError::DTypeMismatch { .. } => PyTypeError::new_err(message),
        CoreError::UnknownOp(_) | CoreError::Shape(_) | CoreError::BadBuffer(_) => {
            PyValueError::new_err(message)
        }
        _ => DeviceError::new_err(message),
    }
}

/// The Python exception for an error of the redlab facade.
pub fn from_redlab(e: &redlab::Error) -> PyErr {
    match e {
        redlab::Error::Core(core) => from_core(core),
        redlab::Error::UnknownDevice(_) => PyValueError::new_err(e.to_string()),
        _ => DeviceError::new_err(e.to_string()),
    }
}

/// The Python exception for an expression that does not parse or type-check.
pub fn from_expr(e: &redlab::ExprError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A device failure reported by a backend directly.
pub fn device(message: impl std::fmt::Display) -> PyErr {
    DeviceError::new_err(message.to_string())
}
