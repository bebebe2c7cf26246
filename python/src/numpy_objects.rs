//! numpy scalars and arrays made directly through numpy's C API, so a result reaches
//! Python as the object numpy itself would return.
//!
//! Why not from Python: on the 2-core development machine `np.float32(value)` from a
//! Python float took 450 ns and `np.asarray` over an array interface 800 ns, a large
//! part of a 1000-element reduction's whole call; `PyArray_Scalar` and
//! `PyArray_NewFromDescr` over bytes already computed skip numpy's generic conversion.
//!
//! Elements are little-endian, as everywhere in redlab, and numpy's native types are
//! taken for them: redlab runs on little-endian hosts only.

use numpy::npyffi::{self, NpyTypes, PY_ARRAY_API};
use numpy::{Element, PyArrayDescr, PyArrayDescrMethods};
use pyo3::prelude::*;
use redlab::DType;

/// numpy's descriptor of `dtype`; `None` for bfloat16, which numpy does not have.
pub fn descriptor(py: Python<'_>, dtype: DType) -> Option<Bound<'_, PyArrayDescr>> {
    Some(match dtype {
        DType::I8 => i8::get_dtype(py),
        DType::U8 => u8::get_dtype(py),
        DType::I16 => i16::get_dtype(py),
        DType::U16 => u16::get_dtype(py),
        DType::I32 => i32::get_dtype(py),
        DType::U32 => u32::get_dtype(py),
        DType::I64 => i64::get_dtype(py),
        DType::U64 => u64::get_dtype(py),
        DType::F16 => half::f16::get_dtype(py),
        DType::F32 => f32::get_dtype(py),
        DType::F64 => f64::get_dtype(py),
        DType::BF16 => return None,
    })
}

/// A numpy scalar of `descr`'s type from the element at the start of `element`, which
/// must hold at least one element of that type.
pub fn scalar(
    py: Python<'_>,
    descr: &Bound<'_, PyArrayDescr>,
    element: &[u8],
) -> PyResult<PyObject> {
    debug_assert!(element.len() >= descr.itemsize());
    // SAFETY: numpy copies one element of `descr`'s size from `element` (long enough,
    // above) and does not keep the pointer; the descriptor is borrowed, not stolen.
    unsafe {
        let object = PY_ARRAY_API.PyArray_Scalar(
            py,
            element.as_ptr() as *mut _,
            descr.as_ptr() as *mut npyffi::PyArray_Descr,
            std::ptr::null_mut(),
        );
        PyObject::from_owned_ptr_or_err(py, object)
    }
}

/// A C-ordered, writable numpy array of `descr`'s type and shape `dims` over `data`,
/// which `owner` keeps alive: numpy holds `owner` as the array's base until the array
/// (and every view of it) is gone.
///
/// # Safety
/// `data` must point to `dims`' product of elements of `descr`'s type that stay valid
/// and unaliased for as long as `owner` lives, and nothing else may write them.
pub unsafe fn array_over(
    py: Python<'_>,
    descr: Bound<'_, PyArrayDescr>,
    dims: &[usize],
    data: *mut u8,
    owner: Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let mut shape: Vec<npyffi::npy_intp> = dims.iter().map(|&d| d as npyffi::npy_intp).collect();
    // numpy takes over the descriptor's reference, and works out alignment itself.
    let array = PY_ARRAY_API.PyArray_NewFromDescr(
        py,
        PY_ARRAY_API.get_type_object(py, NpyTypes::PyArray_Type),
        descr.into_ptr() as *mut npyffi::PyArray_Descr,
        shape.len() as std::os::raw::c_int,
        shape.as_mut_ptr(),
        std::ptr::null_mut(),
        data.cast(),
        npyffi::NPY_ARRAY_C_CONTIGUOUS | npyffi::NPY_ARRAY_WRITEABLE,
        std::ptr::null_mut(),
    );
    let array = PyObject::from_owned_ptr_or_err(py, array)?;
    // The base reference is stolen, also when setting it fails.
    if PY_ARRAY_API.PyArray_SetBaseObject(
        py,
        array.as_ptr() as *mut npyffi::PyArrayObject,
        owner.into_ptr(),
    ) < 0
    {
        return Err(PyErr::fetch(py));
    }
    Ok(array)
}

/// A new, zero-filled numpy array of `descr`'s type and shape `dims`, which numpy owns.
pub fn zeros(py: Python<'_>, descr: Bound<'_, PyArrayDescr>, dims: &[usize]) -> PyResult<PyObject> {
    let mut shape: Vec<npyffi::npy_intp> = dims.iter().map(|&d| d as npyffi::npy_intp).collect();
    // SAFETY: numpy allocates and fills the array; the descriptor's reference is stolen.
    unsafe {
        let array = PY_ARRAY_API.PyArray_Zeros(
            py,
            shape.len() as std::os::raw::c_int,
            shape.as_mut_ptr(),
            descr.into_ptr() as *mut npyffi::PyArray_Descr,
            0,
        );
        PyObject::from_owned_ptr_or_err(py, array)
    }
}
