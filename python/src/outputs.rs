//! Results back to Python: `(dtype, dims, payload)` where a whole-array result has
//! `dims = None` and a Python int or float payload (exact: every redlab scalar fits
//! one), and an array of results has its shape and a bytearray of little-endian
//! elements that numpy views without another copy.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use pyo3::IntoPyObjectExt;
use redlab::{Packed, Scalar, Value};

/// What the Python half turns into a numpy scalar or array.
pub type PyResultTuple = (&'static str, Option<Vec<usize>>, PyObject);

fn empty_error(what: &str) -> PyErr {
    PyValueError::new_err(format!(
        "zero-size array to reduction operation {what} which has no identity"
    ))
}

/// The payload of one scalar.
fn scalar_object(py: Python<'_>, s: Scalar) -> PyResult<PyObject> {
    match s {
        Scalar::I8(v) => v.into_py_any(py),
        Scalar::U8(v) => v.into_py_any(py),
        Scalar::I16(v) => v.into_py_any(py),
        Scalar::U16(v) => v.into_py_any(py),
        Scalar::I32(v) => v.into_py_any(py),
        Scalar::U32(v) => v.into_py_any(py),
        Scalar::I64(v) => v.into_py_any(py),
        Scalar::U64(v) => v.into_py_any(py),
        Scalar::F16(v) => f64::from(v.to_f32()).into_py_any(py),
        Scalar::BF16(v) => f64::from(v.to_f32()).into_py_any(py),
        Scalar::F32(v) => f64::from(v).into_py_any(py),
        Scalar::F64(v) => v.into_py_any(py),
    }
}

/// One whole-array result: argmin/argmax give their index (numpy's int64).
pub fn scalar(py: Python<'_>, value: Value, what: &str) -> PyResult<PyResultTuple> {
    match value {
        Value::Scalar(s) => Ok((s.dtype().name(), None, scalar_object(py, s)?)),
        Value::Indexed { index, .. } => Ok(("i64", None, index.into_py_any(py)?)),
        Value::Empty => Err(empty_error(what)),
    }
}

/// Results of several outputs, of shape `dims`. `empty_dtype` is the result type when
/// there are no outputs to take it from.
pub fn array(
    py: Python<'_>,
    values: &[Value],
    dims: Vec<usize>,
    empty_dtype: &'static str,
    what: &str,
) -> PyResult<PyResultTuple> {
    let mut dtype: Option<&'static str> = None;
    let mut bytes = Vec::new();
    for value in values {
        let (name, bits, size) = match value {
            Value::Scalar(s) => (s.dtype().name(), s.bits(), s.dtype().size_bytes()),
            Value::Indexed { index, .. } => ("i64", *index, 8),
            Value::Empty => return Err(empty_error(what)),
        };
        dtype.get_or_insert(name);
        bytes.extend_from_slice(&bits.to_le_bytes()[..size]);
    }
    let payload = PyByteArray::new(py, &bytes).into_any().unbind();
    Ok((dtype.unwrap_or(empty_dtype), Some(dims), payload))
}

/// Results computed as one typed array, of shape `dims`.
pub fn packed(py: Python<'_>, packed: &Packed, dims: Vec<usize>) -> PyResultTuple {
    let payload = PyByteArray::new(py, &packed.bytes).into_any().unbind();
    (packed.dtype.name(), Some(dims), payload)
}
