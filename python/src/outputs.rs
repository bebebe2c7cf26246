//! Results back to Python as the objects numpy would return: a numpy scalar for a
//! whole-array result, a numpy array for results along axes. Arrays computed as one
//! typed array ([`Packed`]) are handed over as they are: numpy views the very memory
//! they were computed in, which a [`ResultArray`] owns. bfloat16 results, which numpy
//! has no type for, become float32 (which holds each of them exactly).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use redlab::{DType, Packed, PackedBytes, Scalar, Value};

use crate::numpy_objects;

fn empty_error(what: &str) -> PyErr {
    PyValueError::new_err(format!(
        "zero-size array to reduction operation {what} which has no identity"
    ))
}

/// One scalar's type and little-endian bytes as numpy holds it (bf16 as f32).
fn numpy_element(s: Scalar) -> (DType, [u8; 8]) {
    match s {
        Scalar::BF16(v) => (DType::F32, u64::from(v.to_f32().to_bits()).to_le_bytes()),
        other => (other.dtype(), other.bits().to_le_bytes()),
    }
}

/// numpy's descriptor of `dtype`, or the error for bf16, which numpy does not have
/// (callers widen bf16 results to f32 first).
fn descriptor(py: Python<'_>, dtype: DType) -> PyResult<Bound<'_, numpy::PyArrayDescr>> {
    numpy_objects::descriptor(py, dtype)
        .ok_or_else(|| PyValueError::new_err(format!("numpy has no {} type", dtype.name())))
}

/// A numpy scalar of `dtype` (never bf16) from its little-endian bytes.
fn numpy_scalar(py: Python<'_>, dtype: DType, element: &[u8]) -> PyResult<PyObject> {
    numpy_objects::scalar(py, &descriptor(py, dtype)?, element)
}

/// One whole-array result: argmin/argmax give their index (numpy's int64).
pub fn scalar(py: Python<'_>, value: Value, what: &str) -> PyResult<PyObject> {
    match value {
        Value::Scalar(s) => {
            let (dtype, element) = numpy_element(s);
            numpy_scalar(py, dtype, &element)
        }
        Value::Indexed { index, .. } => numpy_scalar(py, DType::I64, &index.to_le_bytes()),
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
) -> PyResult<PyObject> {
    let mut dtype: Option<DType> = None;
    let mut bytes = Vec::new();
    for value in values {
        let (name, element) = match value {
            Value::Scalar(s) => numpy_element(*s),
            Value::Indexed { index, .. } => (DType::I64, index.to_le_bytes()),
            Value::Empty => return Err(empty_error(what)),
        };
        dtype.get_or_insert(name);
        bytes.extend_from_slice(&element[..name.size_bytes()]);
    }
    let dtype = dtype.unwrap_or_else(|| empty_dtype.parse().unwrap_or(DType::F64));
    owned_array(py, dtype, PackedBytes::from(bytes), &dims)
}

/// Results computed as one typed array, of shape `dims`, handed to numpy without a
/// copy (bf16 results are widened to f32 first).
pub fn packed(py: Python<'_>, packed: Packed, dims: Vec<usize>) -> PyResult<PyObject> {
    if packed.dtype == DType::BF16 {
        let widened: Vec<f32> = packed
            .bytes
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        return owned_array(py, DType::F32, PackedBytes::of_vec(widened), &dims);
    }
    owned_array(py, packed.dtype, packed.bytes, &dims)
}

/// A numpy array of `dtype` (never bf16) and shape `dims` over `bytes`, which it owns
/// through a [`ResultArray`].
fn owned_array(
    py: Python<'_>,
    dtype: DType,
    mut bytes: PackedBytes,
    dims: &[usize],
) -> PyResult<PyObject> {
    let descr = descriptor(py, dtype)?;
    let elements: usize = dims.iter().product();
    if bytes.len() != elements * dtype.size_bytes() {
        return Err(PyValueError::new_err(format!(
            "{} result bytes for {elements} {} elements",
            bytes.len(),
            dtype.name()
        )));
    }
    if elements == 0 {
        return numpy_objects::zeros(py, descr, dims);
    }
    // The heap memory stays where it is when `bytes` moves into its owner.
    let data = bytes.as_mut_ptr();
    let owner = Bound::new(py, ResultArray { _bytes: bytes })?.into_any();
    // SAFETY: `data` holds `elements` elements of `dtype`, owned by `owner`, which only
    // numpy reaches from here on.
    unsafe { numpy_objects::array_over(py, descr, dims, data, owner) }
}

/// The memory of a computed array that numpy views in place, owned for as long as
/// any array views it. Copying results into Python-made memory was most of a 3×4096
/// sum along axis 0 from Python on the 2-core development machine: glibc's copy of
/// 16 KiB took several microseconds there.
#[pyclass(frozen, module = "redlab._native")]
pub struct ResultArray {
    /// The elements (the array they were computed in), which numpy reads and writes
    /// (results are writable, as numpy's); Rust never touches them again.
    _bytes: PackedBytes,
}
