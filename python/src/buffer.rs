//! The buffer protocol, read directly: numpy arrays, `array.array`, `memoryview` and
//! anything else that exports a buffer give their address, format, shape and strides
//! without a copy, and the exporter keeps the memory alive until the view is released.
//!
//! `PyObject_GetBuffer` and `Py_buffer` joined the limited API only in Python 3.11, but
//! both exist with this layout in every CPython 3 build, so the abi3 extension declares
//! them itself.

use std::ffi::{c_char, c_int, c_void, CStr};

use pyo3::ffi::{PyObject, Py_ssize_t};
use pyo3::prelude::*;
use redlab::DType;

use crate::host::HostView;

/// CPython's `Py_buffer`.
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut PyObject,
    len: Py_ssize_t,
    itemsize: Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *const c_char,
    shape: *const Py_ssize_t,
    strides: *const Py_ssize_t,
    suboffsets: *const Py_ssize_t,
    internal: *mut c_void,
}

extern "C" {
    fn PyObject_GetBuffer(obj: *mut PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// `PyBUF_RECORDS_RO`: strides and format, read-only is fine.
const RECORDS_READ_ONLY: c_int = 0x0010 | 0x0008 | 0x0004;

/// A buffer view held open; released on drop (with the interpreter lock held, which
/// every holder has: the view lives inside a `#[pyfunction]`'s frame).
pub struct Held {
    _open: OpenBuffer,
    /// The view described for the library.
    pub view: HostView,
}

impl Held {
    /// The open buffer, and its description apart from it (the description may travel
    /// to another thread; the buffer is released here, with the lock).
    pub fn split(self) -> (OpenBuffer, HostView) {
        (self._open, self.view)
    }
}

/// A `Py_buffer` filled by a successful `PyObject_GetBuffer`, released once on drop.
pub struct OpenBuffer(RawBuffer);

impl Drop for OpenBuffer {
    fn drop(&mut self) {
        // SAFETY: obtained by a successful PyObject_GetBuffer, released once.
        unsafe { PyBuffer_Release(&mut self.0) };
    }
}

/// The element type of a struct-module format with `itemsize` bytes per element, where
/// the library reads it natively (little-endian, one scalar per element).
fn dtype_of(format: &[u8], itemsize: usize) -> Option<DType> {
    let code = match format {
        [b'@' | b'=' | b'<', code] | [code] => *code,
        _ => return None,
    };
    let name = match (code, itemsize) {
        (b'b' | b'h' | b'i' | b'l' | b'q' | b'n', 1) => "i8",
        (b'b' | b'h' | b'i' | b'l' | b'q' | b'n', 2) => "i16",
        (b'b' | b'h' | b'i' | b'l' | b'q' | b'n', 4) => "i32",
        (b'b' | b'h' | b'i' | b'l' | b'q' | b'n', 8) => "i64",
        (b'B' | b'H' | b'I' | b'L' | b'Q' | b'N' | b'?', 1) => "u8",
        (b'B' | b'H' | b'I' | b'L' | b'Q' | b'N', 2) => "u16",
        (b'B' | b'H' | b'I' | b'L' | b'Q' | b'N', 4) => "u32",
        (b'B' | b'H' | b'I' | b'L' | b'Q' | b'N', 8) => "u64",
        (b'e', 2) => "f16",
        (b'f', 4) => "f32",
        (b'd', 8) => "f64",
        _ => return None,
    };
    name.parse().ok()
}

/// Opens `obj`'s buffer, or `None` when it has none the library can read in place
/// (no buffer protocol, big-endian or composite formats, indirect or unaligned
/// memory): the caller then takes the copying path, which also gives the right error.
pub fn open(obj: &Bound<'_, PyAny>) -> Option<Held> {
    let mut raw = std::mem::MaybeUninit::<RawBuffer>::zeroed();
    // SAFETY: `raw` is writable and sized as CPython's Py_buffer; on failure the
    // exception set is cleared below and nothing needs releasing.
    let status = unsafe { PyObject_GetBuffer(obj.as_ptr(), raw.as_mut_ptr(), RECORDS_READ_ONLY) };
    if status != 0 {
        let _ = PyErr::take(obj.py());
        return None;
    }
    // SAFETY: filled in by the successful call; released when `open` drops.
    let open = OpenBuffer(unsafe { raw.assume_init() });
    let r = &open.0;
    let itemsize = usize::try_from(r.itemsize).ok()?;
    let format: &[u8] = if r.format.is_null() {
        b"B"
    } else {
        // SAFETY: a NUL-terminated string owned by the exporter while the view is open.
        unsafe { CStr::from_ptr(r.format) }.to_bytes()
    };
    let dtype = dtype_of(format, itemsize)?;
    if !r.suboffsets.is_null() {
        return None;
    }
    let ndim = usize::try_from(r.ndim).ok()?;
    // SAFETY: with PyBUF_STRIDES the exporter fills `ndim` shape and stride entries.
    let (shape, strides): (&[Py_ssize_t], &[Py_ssize_t]) = unsafe {
        if ndim == 0 {
            (&[], &[])
        } else {
            (
                std::slice::from_raw_parts(r.shape, ndim),
                std::slice::from_raw_parts(r.strides, ndim),
            )
        }
    };
    let dims = shape
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<Vec<_>>>()?;
    let view = HostView::new(r.buf as usize, dtype, dims, Some(strides.to_vec())).ok()?;
    Some(Held { _open: open, view })
}
