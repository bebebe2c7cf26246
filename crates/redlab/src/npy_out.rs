//! Writing results as `.npy` (format version 1.0, little-endian, C order), the file
//! numpy's `np.load` reads back with the shape the reduction produced.

use std::io::Write;

use crate::{DType, Error};

/// numpy's type string for `dtype` (as in `.npy` headers and the array interface);
/// `None` for bfloat16, which numpy does not have.
pub fn numpy_typestr(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::I16 => "<i2",
        DType::U16 => "<u2",
        DType::I32 => "<i4",
        DType::U32 => "<u4",
        DType::I64 => "<i8",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::BF16 => return None,
    })
}

/// [`numpy_typestr`], or the error for a type `.npy` cannot hold.
fn descr(dtype: DType) -> Result<&'static str, Error> {
    numpy_typestr(dtype).ok_or_else(|| {
        Error::Core(redlab_core::Error::Shape(
            "bf16 results cannot be stored as .npy (numpy has no bfloat16 type)".into(),
        ))
    })
}

/// The bytes of a `.npy` file holding `data` (little-endian elements of `dtype`) with
/// `shape` (`[]` for a scalar).
pub fn encode(dtype: DType, shape: &[usize], data: &[u8]) -> Result<Vec<u8>, Error> {
    let dims = match shape {
        [] => String::new(),
        [one] => format!("{one},"),
        many => many
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({dims}), }}",
        descr(dtype)?
    );
    // Magic (6) + version (2) + length (2) + header + newline: a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.write_all(&(header.len() as u16).to_le_bytes())
        .and_then(|_| out.write_all(header.as_bytes()))
        .and_then(|_| out.write_all(data))
        .map_err(|e| {
            Error::Core(redlab_core::Error::Shape(format!(
                "cannot encode the result: {e}"
            )))
        })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_padded_and_read_back_by_our_own_parser() {
        let data: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let file = encode(DType::F32, &[2, 1], &data).expect("encodes");
        let header_len = u16::from_le_bytes([file[8], file[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let loaded = crate::input::load_bytes("r.npy", file, None).expect("parses");
        assert_eq!(loaded.shape, vec![2, 1]);
        assert_eq!(
            loaded.array.view().typed::<f32>().ok(),
            Some(&[1.5f32, -2.0][..])
        );
        assert!(encode(DType::BF16, &[1], &[0, 0]).is_err());
        let scalar = encode(DType::I64, &[], &7i64.to_le_bytes()).expect("encodes");
        assert_eq!(
            crate::input::load_bytes("s.npy", scalar, None)
                .expect("parses")
                .shape,
            Vec::<u64>::new()
        );
    }
}
