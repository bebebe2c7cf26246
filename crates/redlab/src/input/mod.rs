//! Loading inputs from files: `.npy` (any integer or float dtype, either byte order,
//! C or Fortran order, any number of dimensions) and raw little-endian binary.
//!
//! Files are memory-mapped read-only: a file that is already in the reduction's layout
//! (native byte order, C order, aligned) is reduced in place without a copy; otherwise it
//! is converted once into an owned array. The user's file is never modified.

mod error;
mod layout;
mod npy;
mod raw;

use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;
use redlab_core::{ByteSource, DType, HostArray};

pub use error::InputError;

/// A loaded input and what was learned about it.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The elements, flattened in C (row-major) order.
    pub array: HostArray,
    /// The array's shape as stored (`[n]` for raw files).
    pub shape: Vec<u64>,
    /// `npy` or `raw`.
    pub format: &'static str,
    /// Whether the elements are read in place from the mapped file (no copy).
    pub mapped: bool,
}

/// Loads `path`. `.npy` files are recognized by their magic bytes (or their extension,
/// for a clear error when the magic is missing); anything else is raw binary and needs
/// `dtype`. For `.npy`, a `dtype` that differs from the file's is an error.
pub fn load(path: &Path, dtype: Option<DType>) -> Result<Loaded, InputError> {
    let file = std::fs::File::open(path).map_err(|source| InputError::Open {
        path: path.display().to_string(),
        source,
    })?;
    let len = file
        .metadata()
        .map_err(|source| InputError::Open {
            path: path.display().to_string(),
            source,
        })?
        .len();
    let mapped: Arc<dyn ByteSource> = if len == 0 {
        Arc::new(Vec::<u8>::new())
    } else {
        // SAFETY: the map is read-only and private to this process. Another process
        // truncating the file while it is mapped could fault the reads; that is the
        // accepted risk of memory-mapping inputs, and the bytes are never written.
        let map = unsafe { Mmap::map(&file) }.map_err(|source| InputError::Open {
            path: path.display().to_string(),
            source,
        })?;
        Arc::new(MappedFile(map))
    };
    let is_npy_name = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if npy::has_magic(mapped.bytes()) || is_npy_name {
        npy::load(path, mapped, dtype)
    } else {
        let dtype = dtype.ok_or_else(|| InputError::RawNeedsDType {
            path: path.display().to_string(),
        })?;
        raw::load(path, mapped, dtype)
    }
}

/// A read-only memory map as a byte source for [`HostArray`].
struct MappedFile(Mmap);

impl ByteSource for MappedFile {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}
