//! Loading inputs from files: `.npy` (any integer or float dtype, either byte order,
//! C or Fortran order, any number of dimensions) and raw little-endian binary.
//!
//! Files are memory-mapped read-only: a file that is already in the reduction's layout
//! (native byte order, C order, aligned) is reduced in place without a copy; otherwise it
//! is converted once into an owned array. The user's file is never modified.

mod error;
mod layout;
mod npy;
pub mod npy_header;
mod raw;

use std::fs::File;
use std::io::Read;
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
    let name = || path.display().to_string();
    let open_error = |e: std::io::Error| InputError::Open {
        path: name(),
        reason: e.to_string(),
    };
    let file = open_regular(path)?;
    let len = file.metadata().map_err(open_error)?.len();
    let mapped: Arc<dyn ByteSource> = if len == 0 {
        // A size of 0 is what /proc and /sys files report whatever they hold: read one
        // byte to tell a truly empty file from one of those.
        let mut probe = [0u8; 1];
        if (&file).read(&mut probe).map_err(open_error)? > 0 {
            return Err(InputError::PseudoFile { path: name() });
        }
        Arc::new(Vec::<u8>::new())
    } else {
        // SAFETY: the map is read-only and private to this process. Another process
        // truncating the file while it is mapped could fault the reads; that is the
        // accepted risk of memory-mapping inputs, and the bytes are never written.
        let map = unsafe { Mmap::map(&file) }.map_err(open_error)?;
        Arc::new(MappedFile(map))
    };
    dispatch(path, mapped, dtype)
}

/// Loads an input from bytes already in memory, as [`load`] does from a file named
/// `name` (the name decides nothing but the `.npy` error for a missing magic).
pub fn load_bytes(name: &str, bytes: Vec<u8>, dtype: Option<DType>) -> Result<Loaded, InputError> {
    let path = Path::new(name);
    let source: Arc<dyn ByteSource> = Arc::new(bytes);
    dispatch(path, source, dtype)
}

/// Reads `.npy` or raw bytes by their magic (or the `.npy` extension).
fn dispatch(
    path: &Path,
    mapped: Arc<dyn ByteSource>,
    dtype: Option<DType>,
) -> Result<Loaded, InputError> {
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

/// Opens `path` for reading if it is a regular file, and says what it is otherwise.
///
/// On Unix the file is opened without blocking (a FIFO with no writer would otherwise
/// block `open` forever) and its type is taken from the open descriptor, so the check and
/// the read concern the same file.
fn open_regular(path: &Path) -> Result<File, InputError> {
    let name = || path.display().to_string();
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| InputError::Open {
        path: name(),
        reason: e.to_string(),
    })?;
    let kind = file
        .metadata()
        .map_err(|e| InputError::Open {
            path: name(),
            reason: e.to_string(),
        })?
        .file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let kind = if kind.is_dir() {
        "a directory"
    } else {
        special_kind(&kind)
    };
    Err(InputError::NotRegular { path: name(), kind })
}

/// Words for a file that is neither regular nor a directory.
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    let _ = kind;
    "a special file"
}

/// A read-only memory map as a byte source for [`HostArray`].
struct MappedFile(Mmap);

impl ByteSource for MappedFile {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}
