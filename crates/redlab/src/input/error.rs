//! What can be wrong with an input file, each case with a message that names the file and
//! says what to do.

use redlab_core::DType;

/// A problem with an input file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file cannot be opened or mapped.
    #[error("cannot read {path}: {reason}")]
    Open {
        /// The file.
        path: String,
        /// The OS error, in words (kept as text so that the message says it once).
        reason: String,
    },
    /// Not an `.npy` file, or a damaged header.
    #[error("{path} is not a valid .npy file: {reason}")]
    NotNpy {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// An `.npy` dtype redlab does not reduce.
    #[error("{path} holds elements of dtype '{descr}' ({kind}); redlab reduces integer and float arrays only")]
    UnsupportedDType {
        /// The file.
        path: String,
        /// The numpy dtype descriptor.
        descr: String,
        /// A plain-words name of the kind (complex, bool, strings, …).
        kind: String,
    },
    /// A shape whose element count or byte size does not fit in 64 bits.
    #[error("{path} declares shape {shape:?}, whose size overflows 64 bits")]
    ShapeTooLarge {
        /// The file.
        path: String,
        /// The declared shape.
        shape: Vec<u64>,
    },
    /// Not a regular file: a directory, FIFO, device or socket.
    #[error("{path} is {kind}, not a regular file; redlab reads inputs from regular files")]
    NotRegular {
        /// The file.
        path: String,
        /// What it is, in words ("a directory").
        kind: &'static str,
    },
    /// A file whose size the system reports as 0 although it has content (`/proc`, `/sys`).
    #[error("{path} reports a size of 0 but has content (a /proc or /sys file?); copy it to a regular file first")]
    PseudoFile {
        /// The file.
        path: String,
    },
    /// Fewer data bytes than the header promises.
    #[error("{path} is truncated: its header promises {expected} bytes of data but only {actual} follow")]
    Truncated {
        /// The file.
        path: String,
        /// Bytes promised.
        expected: u128,
        /// Bytes present.
        actual: u128,
    },
    /// A raw file without `--dtype`.
    #[error("{path} is not an .npy file, so it is read as raw little-endian binary, which needs --dtype")]
    RawNeedsDType {
        /// The file.
        path: String,
    },
    /// A raw file whose size is not a whole number of elements.
    #[error("{path} has {len} bytes, not a whole number of {dtype} elements ({size} bytes each)")]
    RawSize {
        /// The file.
        path: String,
        /// Its size.
        len: u64,
        /// The element type asked for.
        dtype: DType,
        /// Bytes per element.
        size: usize,
    },
    /// `--dtype` disagrees with the file.
    #[error("{path} holds {file} elements but --dtype says {asked}")]
    DTypeMismatch {
        /// The file.
        path: String,
        /// The file's type.
        file: DType,
        /// The type asked for.
        asked: DType,
    },
    /// A conversion copy that does not fit in memory.
    #[error(transparent)]
    Core(#[from] redlab_core::Error),
}
