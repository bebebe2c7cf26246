//! Results back to Python: `(dtype, dims, payload)` where a whole-array result has
//! `dims = None` and a Python int or float payload (exact: every redlab scalar fits
//! one), and an array of results has its shape and either a [`ResultArray`] (the
//! computed bytes themselves, which numpy views through its array interface) or a
//! bytearray of little-endian elements that numpy views without another copy.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};
use pyo3::IntoPyObjectExt;
use redlab::{Packed, PackedBytes, Scalar, Value};

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

/// Results computed as one typed array, of shape `dims`: handed over as they are where
/// numpy has their type, else copied into a bytearray.
pub fn packed(py: Python<'_>, packed: Packed, dims: Vec<usize>) -> PyResult<PyResultTuple> {
    let name = packed.dtype.name();
    let payload = match redlab::npy_out::numpy_typestr(packed.dtype) {
        Some(typestr) if !packed.bytes.is_empty() => {
            let array = ResultArray {
                bytes: packed.bytes,
                typestr,
                shape: dims.clone(),
            };
            Bound::new(py, array)?.into_any().unbind()
        }
        _ => PyByteArray::new(py, &packed.bytes).into_any().unbind(),
    };
    Ok((name, Some(dims), payload))
}

/// Computed results that numpy views in place (`np.asarray(result)`), owning their
/// bytes for as long as an array views them. Copying them into a bytearray was most
/// of a 3×4096 sum along axis 0 from Python on the 2-core development machine: glibc's
/// copy of 16 KiB took several microseconds there.
#[pyclass(frozen, module = "redlab._native")]
pub struct ResultArray {
    /// The elements (the array they were computed in), whose heap memory numpy views
    /// and writes (results are writable, as numpy's); Rust never reads it after this.
    bytes: PackedBytes,
    typestr: &'static str,
    shape: Vec<usize>,
}

#[pymethods]
impl ResultArray {
    /// numpy's array interface (version 3) over the bytes.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let interface = PyDict::new(py);
        interface.set_item("version", 3)?;
        interface.set_item("typestr", self.typestr)?;
        interface.set_item("shape", pyo3::types::PyTuple::new(py, &self.shape)?)?;
        interface.set_item("data", (self.bytes.as_ptr() as usize, false))?;
        Ok(interface)
    }
}
