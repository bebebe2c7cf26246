//! `.npy` files: the header is parsed by [`super::npy_header`] (bounded, linear time); the data is taken in place from the
//! memory map when it is already native-endian, C-ordered and aligned, and converted once
//! otherwise.

use std::path::Path;
use std::sync::Arc;

use redlab_core::{host_memory, ByteSource, DType, HostArray};

use super::layout::{fortran_to_c, swap_bytes};
use super::npy_header;
use super::{InputError, Loaded};

/// The first bytes of every `.npy` file.
pub const MAGIC: &[u8] = b"\x93NUMPY";

/// Whether `bytes` start with the `.npy` magic.
pub fn has_magic(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The byte order a dtype string declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ByteOrder {
    Little,
    Big,
    /// `=` or none: the writer's native order, which numpy reads as this machine's.
    Native,
    /// `|`: single bytes, no order.
    NotApplicable,
}

/// Maps a numpy dtype string (`'<f4'`, `'=i4'`, `'i4'`, `'<i'`, `'float32'`, …, every
/// form `numpy.dtype` accepts for the integer and float types) onto a redlab type, or
/// says in plain words what kind of dtype it is that redlab does not reduce.
fn element_type(descr: &str) -> Result<(DType, ByteOrder), &'static str> {
    let (order, code) = match descr.as_bytes().first() {
        Some(b'<') => (ByteOrder::Little, &descr[1..]),
        Some(b'>') => (ByteOrder::Big, &descr[1..]),
        Some(b'=') => (ByteOrder::Native, &descr[1..]),
        Some(b'|') => (ByteOrder::NotApplicable, &descr[1..]),
        _ => (ByteOrder::Native, descr),
    };
    let named = match code {
        "int8" | "byte" => Some(DType::I8),
        "int16" | "short" => Some(DType::I16),
        "int32" | "intc" => Some(DType::I32),
        "int64" | "long" | "longlong" | "intp" | "int" => Some(DType::I64),
        "uint8" | "ubyte" => Some(DType::U8),
        "uint16" | "ushort" => Some(DType::U16),
        "uint32" | "uintc" => Some(DType::U32),
        "uint64" | "ulong" | "ulonglong" | "uintp" | "uint" => Some(DType::U64),
        "float16" | "half" => Some(DType::F16),
        "float32" | "single" => Some(DType::F32),
        "float64" | "double" | "float" => Some(DType::F64),
        _ => None,
    };
    if let Some(dtype) = named {
        return Ok((dtype, order));
    }
    let (kind, size) = match code.find(|c: char| c.is_ascii_digit()) {
        Some(k) => (&code[..k], code[k..].parse::<usize>().ok()),
        None => (code, None),
    };
    // One-letter codes without a size are C types (on this platform, as numpy reads them).
    let ours = match (kind, size) {
        ("i", Some(1)) | ("b", None) => DType::I8,
        ("i", Some(2)) | ("h", None) => DType::I16,
        ("i", Some(4)) | ("i", None) => DType::I32,
        ("i", Some(8)) | ("l" | "q" | "p", None) => DType::I64,
        ("u", Some(1)) | ("B", None) => DType::U8,
        ("u", Some(2)) | ("H", None) => DType::U16,
        ("u", Some(4)) | ("I", None) => DType::U32,
        ("u", Some(8)) | ("L" | "Q" | "P", None) => DType::U64,
        ("f", Some(2)) | ("e", None) => DType::F16,
        ("f", Some(4)) | ("f", None) => DType::F32,
        ("f", Some(8)) | ("d", None) => DType::F64,
        ("f", _) | ("g", None) | ("float", _) | ("longdouble", _) => {
            return Err("extended-precision float")
        }
        ("c" | "F" | "D" | "G" | "complex", _) => return Err("complex"),
        ("b" | "?" | "bool", _) => return Err("bool"),
        ("S" | "U" | "a" | "str" | "bytes", _) => return Err("strings"),
        ("M" | "m" | "datetime" | "timedelta", _) => return Err("dates and times"),
        ("O" | "object", _) => return Err("Python objects"),
        ("V" | "void", _) => return Err("raw bytes"),
        _ => return Err("a dtype numpy does not define"),
    };
    Ok((ours, order))
}

/// Loads an `.npy` file from its mapped bytes.
pub fn load(
    path: &Path,
    mapped: Arc<dyn ByteSource>,
    asked: Option<DType>,
) -> Result<Loaded, InputError> {
    let name = path.display().to_string();
    let bytes = mapped.bytes();
    if !has_magic(bytes) {
        return Err(InputError::NotNpy {
            path: name,
            reason: "it does not start with the .npy magic bytes".into(),
        });
    }
    let header = npy_header::parse(bytes).map_err(|reason| InputError::NotNpy {
        path: name.clone(),
        reason,
    })?;
    let offset = header.data_offset;
    let descr = header
        .descr
        .as_deref()
        .ok_or_else(|| InputError::UnsupportedDType {
            path: name.clone(),
            descr: "[…]".into(),
            kind: "structured record".into(),
        })?;
    let (dtype, order) = element_type(descr).map_err(|kind| InputError::UnsupportedDType {
        path: name.clone(),
        descr: descr.to_string(),
        kind: kind.to_string(),
    })?;
    if let Some(asked) = asked.filter(|&a| a != dtype) {
        return Err(InputError::DTypeMismatch {
            path: name,
            file: dtype,
            asked,
        });
    }
    let shape = header.shape;
    // Checked arithmetic throughout: a shape whose product overflows is refused, not
    // wrapped into a small count.
    let overflow = || InputError::ShapeTooLarge {
        path: name.clone(),
        shape: shape.clone(),
    };
    let count_wide = shape
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(d as u128))
        .ok_or_else(overflow)?;
    let expected = count_wide
        .checked_mul(dtype.size_bytes() as u128)
        .filter(|&b| b <= u64::MAX as u128)
        .ok_or_else(overflow)?;
    let actual = (bytes.len() - offset) as u128;
    if actual < expected {
        return Err(InputError::Truncated {
            path: name,
            expected,
            actual,
        });
    }
    // `expected` fits in the file, so the count and every dimension fit in usize.
    let count = count_wide as usize;
    let foreign_order = match order {
        ByteOrder::Little => cfg!(target_endian = "big"),
        ByteOrder::Big => cfg!(target_endian = "little"),
        ByteOrder::Native | ByteOrder::NotApplicable => false,
    };
    // Fortran order only changes the element order when two or more axes exceed 1.
    let transposed = header.fortran_order && shape.iter().filter(|&&d| d > 1).count() > 1;
    if !foreign_order && !transposed {
        if let Ok(array) = HostArray::from_source(dtype, mapped.clone(), offset, count) {
            return Ok(Loaded {
                array,
                shape,
                format: "npy",
                mapped: true,
            });
        }
    }
    host_memory::check_fits(&format!("a converted copy of {name}"), expected)?;
    let data = &bytes[offset..offset + expected as usize];
    let mut converted = if transposed {
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        fortran_to_c(data, &dims, dtype.size_bytes())
    } else {
        data.to_vec()
    };
    if foreign_order {
        swap_bytes(&mut converted, dtype.size_bytes());
    }
    // A Vec<u8> is not aligned for wider types: move into 8-byte-aligned storage.
    let mut words = vec![0u64; converted.len().div_ceil(8)];
    bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..converted.len()].copy_from_slice(&converted);
    let array = HostArray::from_source(dtype, Arc::new(words), 0, count)?;
    Ok(Loaded {
        array,
        shape,
        format: "npy",
        mapped: false,
    })
}
