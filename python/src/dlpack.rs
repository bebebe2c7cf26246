//! DLPack capsules (the `__dlpack__` protocol of torch, CuPy, JAX and numpy): the
//! tensor's address, device, dtype, shape and strides, read without taking ownership.
//! The capsule is left unconsumed, so its own destructor releases the tensor when
//! Python drops it, after the call.

use std::ffi::{c_void, CStr};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use redlab::DType;

/// `DLDevice`.
#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// `DLManagedTensor` (the unversioned capsule, named "dltensor").
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// Where a tensor lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Host memory (also CUDA pinned host memory).
    Host,
    /// Memory of CUDA device `ordinal`.
    Cuda(usize),
}

/// A tensor read from a capsule.
#[derive(Debug, Clone)]
pub struct Tensor {
    /// Address of element (0, …, 0).
    pub address: u64,
    /// Where the address points.
    pub place: Place,
    /// Element type.
    pub dtype: DType,
    /// Dimensions.
    pub dims: Vec<usize>,
    /// Strides in bytes (`None`: C-contiguous).
    pub byte_strides: Option<Vec<isize>>,
}

const CAPSULE_NAME: &CStr = c"dltensor";

fn dtype_of(t: &DlDataType) -> PyResult<DType> {
    let name = match (t.code, t.bits, t.lanes) {
        (0, 8, 1) => "i8",
        (0, 16, 1) => "i16",
        (0, 32, 1) => "i32",
        (0, 64, 1) => "i64",
        (1, 8, 1) | (6, 8, 1) => "u8",
        (1, 16, 1) => "u16",
        (1, 32, 1) => "u32",
        (1, 64, 1) => "u64",
        (2, 16, 1) => "f16",
        (2, 32, 1) => "f32",
        (2, 64, 1) => "f64",
        (4, 16, 1) => "bf16",
        (code, bits, lanes) => {
            return Err(PyTypeError::new_err(format!(
                "redlab cannot reduce DLPack type code {code} of {bits} bits × {lanes} lanes"
            )))
        }
    };
    crate::what::dtype(name)
}

/// Reads the tensor of a "dltensor" capsule.
pub fn read(capsule: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    // SAFETY: PyCapsule_GetPointer checks the object's type and name itself and sets
    // an exception (which we fetch) when either is wrong.
    let pointer =
        unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), CAPSULE_NAME.as_ptr()) };
    if pointer.is_null() {
        let cause = PyErr::take(capsule.py());
        return Err(PyTypeError::new_err(format!(
            "expected an unused DLPack capsule ('dltensor'){}",
            cause.map(|c| format!(": {c}")).unwrap_or_default()
        )));
    }
    // SAFETY: a "dltensor" capsule holds a DLManagedTensor, valid while the capsule
    // lives; the caller holds the capsule for the whole call.
    let managed = unsafe { &*(pointer as *const DlManagedTensor) };
    let t = &managed.dl_tensor;
    let place = match t.device.device_type {
        1 | 3 => Place::Host,
        2 | 13 => Place::Cuda(usize::try_from(t.device.device_id).unwrap_or(0)),
        other => {
            return Err(PyValueError::new_err(format!(
                "tensors on DLPack device type {other} are not supported (CPU and CUDA are)"
            )))
        }
    };
    let dtype = dtype_of(&t.dtype)?;
    let ndim = usize::try_from(t.ndim)
        .map_err(|_| PyValueError::new_err("negative number of dimensions"))?;
    // SAFETY: shape (and strides, when not null) hold `ndim` entries.
    let (dims, strides) = unsafe {
        let shape: &[i64] = if ndim == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(t.shape, ndim)
        };
        let strides = (!t.strides.is_null() && ndim > 0)
            .then(|| std::slice::from_raw_parts(t.strides, ndim).to_vec());
        (shape.to_vec(), strides)
    };
    let dims = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| PyValueError::new_err("negative dimension")))
        .collect::<PyResult<Vec<_>>>()?;
    let size = dtype.size_bytes() as isize;
    Ok(Tensor {
        address: t.data as u64 + t.byte_offset,
        place,
        dtype,
        dims,
        byte_strides: strides.map(|s| s.iter().map(|&e| e as isize * size).collect()),
    })
}
