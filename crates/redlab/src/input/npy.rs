//! `.npy` files: the header is parsed by `npyz`; the data is taken in place from the
//! memory map when it is already native-endian, C-ordered and aligned, and converted once
//! otherwise.

use std::path::Path;
use std::sync::Arc;

use npyz::{DType as NpyDType, Endianness, NpyHeader, Order, TypeChar};
use redlab_core::{host_memory, ByteSource, DType, HostArray};

use super::layout::{fortran_to_c, swap_bytes};
use super::{InputError, Loaded};

const MAGIC: &[u8] = b"\x93NUMPY";

/// Whether `bytes` start with the `.npy` magic.
pub fn has_magic(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Maps a numpy type string onto a redlab type, or says in words why it cannot.
fn element_type(path: &str, dtype: &NpyDType) -> Result<(DType, Endianness), InputError> {
    let unsupported = |kind: &str| InputError::UnsupportedDType {
        path: path.to_string(),
        descr: dtype.descr(),
        kind: kind.to_string(),
    };
    let NpyDType::Plain(ts) = dtype else {
        return Err(unsupported("structured record or sub-array"));
    };
    let size = ts.size_field();
    let ours = match (ts.type_char(), size) {
        (TypeChar::Int, 1) => DType::I8,
        (TypeChar::Int, 2) => DType::I16,
        (TypeChar::Int, 4) => DType::I32,
        (TypeChar::Int, 8) => DType::I64,
        (TypeChar::Uint, 1) => DType::U8,
        (TypeChar::Uint, 2) => DType::U16,
        (TypeChar::Uint, 4) => DType::U32,
        (TypeChar::Uint, 8) => DType::U64,
        (TypeChar::Float, 2) => DType::F16,
        (TypeChar::Float, 4) => DType::F32,
        (TypeChar::Float, 8) => DType::F64,
        (TypeChar::Float, _) => return Err(unsupported("extended-precision float")),
        (TypeChar::Complex, _) => return Err(unsupported("complex")),
        (TypeChar::Bool, _) => return Err(unsupported("bool")),
        (TypeChar::ByteStr | TypeChar::UnicodeStr, _) => return Err(unsupported("strings")),
        (TypeChar::TimeDelta | TypeChar::DateTime, _) => {
            return Err(unsupported("dates and times"))
        }
        _ => return Err(unsupported("raw bytes")),
    };
    Ok((ours, ts.endianness()))
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
    let mut cursor: &[u8] = bytes;
    let header =
        NpyHeader::from_reader(&mut cursor).map_err(|e| npy_header_error(&name, bytes, e))?;
    let offset = bytes.len() - cursor.len();
    let (dtype, endianness) = element_type(&name, &header.dtype())?;
    if let Some(asked) = asked.filter(|&a| a != dtype) {
        return Err(InputError::DTypeMismatch {
            path: name,
            file: dtype,
            asked,
        });
    }
    let shape: Vec<u64> = header.shape().to_vec();
    let count_wide: u128 = shape.iter().map(|&d| d as u128).product();
    let expected = count_wide * dtype.size_bytes() as u128;
    let actual = (bytes.len() - offset) as u128;
    if actual < expected {
        return Err(InputError::Truncated {
            path: name,
            expected,
            actual,
        });
    }
    // `expected` fits in the file, so it fits in usize.
    let count = count_wide as usize;
    let foreign_order = match endianness {
        Endianness::Little => cfg!(target_endian = "big"),
        Endianness::Big => cfg!(target_endian = "little"),
        Endianness::Irrelevant => false,
    };
    // Fortran order only changes the element order when two or more axes exceed 1.
    let transposed =
        header.order() == Order::Fortran && shape.iter().filter(|&&d| d > 1).count() > 1;
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

fn npy_header_error(path: &str, bytes: &[u8], e: std::io::Error) -> InputError {
    // npyz rejects dtypes it does not model (Python objects, for one) as a bad header;
    // read the descriptor from the header text to say which dtype it was.
    match declared_descr(bytes) {
        Some(descr)
            if descr
                .trim_start_matches(['<', '>', '|', '='])
                .starts_with('O') =>
        {
            InputError::UnsupportedDType {
                path: path.to_string(),
                descr,
                kind: "Python objects".into(),
            }
        }
        _ => InputError::NotNpy {
            path: path.to_string(),
            reason: format!("its header cannot be read ({e})"),
        },
    }
}

/// The `'descr'` value of a header, found textually (for error messages only).
fn declared_descr(bytes: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).into_owned();
    let after = &head[head.find("'descr'")? + "'descr'".len()..];
    let value = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('\'')?;
    Some(value[..value.find('\'')?].to_string())
}
