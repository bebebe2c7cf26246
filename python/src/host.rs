//! Host arrays by address: the data pointer, dtype, shape and byte strides that numpy's
//! array interface gives, checked and turned into a flat byte span plus a [`Layout`] in
//! elements, so any view numpy can make (C or Fortran order, slices, negative and zero
//! strides) is reduced where it lies, without a copy.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use redlab::shape::Layout;
use redlab::{ArrayRef, DType};

use crate::errors;

/// A host array described by address. The Python caller keeps the array alive (it
/// holds a reference for the whole call), so the address stays valid while we read.
#[derive(Debug, Clone)]
pub struct HostView {
    /// Address of the first byte of the span the view touches.
    start: usize,
    /// Bytes in that span.
    span: usize,
    /// Element type.
    pub dtype: DType,
    /// The view, in elements, relative to `start`.
    pub layout: Layout,
    /// Whether the elements are the whole span in C order (a flat reduction suffices).
    pub flat: bool,
}

impl HostView {
    /// [`HostView::new`] with strides in elements, as torch and CuPy report them.
    pub fn from_element_strides(
        address: usize,
        dtype: DType,
        dims: Vec<usize>,
        strides: &[isize],
    ) -> PyResult<HostView> {
        let size = dtype.size_bytes() as isize;
        let byte_strides = strides.iter().map(|s| s * size).collect();
        HostView::new(address, dtype, dims, Some(byte_strides))
    }

    /// Checks a description: `strides` in bytes (`None`: C-contiguous).
    pub fn new(
        address: usize,
        dtype: DType,
        dims: Vec<usize>,
        strides: Option<Vec<isize>>,
    ) -> PyResult<HostView> {
        let size = dtype.size_bytes();
        let c_layout = Layout::c_order(&dims);
        let count = c_layout.count().map_err(|e| errors::from_core(&e))?;
        let byte_strides: Vec<isize> = match strides {
            Some(s) if s.len() != dims.len() => {
                return Err(PyValueError::new_err(format!(
                    "{} strides for {} dimensions",
                    s.len(),
                    dims.len()
                )))
            }
            Some(s) => s,
            None => c_layout
                .strides
                .iter()
                .map(|&e| e * size as isize)
                .collect(),
        };
        if byte_strides.iter().any(|s| s % size as isize != 0) || address % size != 0 {
            return Err(PyValueError::new_err(
                "elements are not aligned to their size (copy the array first)",
            ));
        }
        let strides: Vec<isize> = byte_strides.iter().map(|s| s / size as isize).collect();
        // The span: from the lowest to the highest element the view touches.
        let (mut low, mut high) = (0isize, 0isize);
        if count > 0 {
            for (&d, &s) in dims.iter().zip(&strides) {
                let reach = (d as isize - 1) * s;
                if reach < 0 {
                    low += reach;
                } else {
                    high += reach;
                }
            }
        }
        let elements = if count == 0 {
            0
        } else {
            (high - low) as usize + 1
        };
        let offset = (-low) as usize;
        let flat = elements == count
            && dims
                .iter()
                .zip(strides.iter().zip(&c_layout.strides))
                .all(|(&d, (s, c))| d <= 1 || s == c);
        Ok(HostView {
            start: (address as isize + low * size as isize) as usize,
            span: elements * size,
            dtype,
            layout: Layout {
                dims,
                strides,
                offset,
            },
            flat,
        })
    }

    /// The span's elements, typed.
    ///
    /// # Safety
    /// The array described must be alive and not resized for `'a`.
    pub unsafe fn bytes<'a>(&self) -> PyResult<ArrayRef<'a>> {
        let bytes: &'a [u8] = if self.span == 0 {
            empty_bytes()
        } else {
            // SAFETY: the caller's promise; the span was computed from the view's own
            // dims and strides, so every byte in it belongs to the array's buffer.
            unsafe { std::slice::from_raw_parts(self.start as *const u8, self.span) }
        };
        ArrayRef::from_bytes(self.dtype, bytes).map_err(|e| errors::from_core(&e))
    }

    /// The same elements described from the `align`-byte boundary at or below the
    /// start (a power of two, a multiple of the element size): the span grows by the
    /// bytes in front, the layout's offset by their elements, and the view is no longer
    /// flat when it moved. Device inputs must start on such a boundary; a view that
    /// starts inside its allocation then reads in place all the same.
    pub fn aligned_down(&self, align: usize) -> HostView {
        let pad = self.start % align;
        if pad == 0 || self.span == 0 {
            return self.clone();
        }
        let mut layout = self.layout.clone();
        layout.offset += pad / self.dtype.size_bytes();
        HostView {
            start: self.start - pad,
            span: self.span + pad,
            dtype: self.dtype,
            layout,
            flat: false,
        }
    }

    /// Address of the first byte the view touches.
    pub fn start(&self) -> usize {
        self.start
    }

    /// Bytes from the first to the last byte the view touches.
    pub fn span(&self) -> usize {
        self.span
    }

    /// Elements in the view.
    pub fn count(&self) -> usize {
        self.layout.dims.iter().product()
    }
}

/// No bytes, at an address aligned for every element type (an empty `&[u8]` may sit at
/// an odd address, which typed views refuse).
pub fn empty_bytes() -> &'static [u8] {
    const NOTHING: &[u64] = &[];
    // SAFETY: zero bytes at a dangling but 8-byte-aligned address is a valid slice.
    unsafe { std::slice::from_raw_parts(NOTHING.as_ptr().cast::<u8>(), 0) }
}
