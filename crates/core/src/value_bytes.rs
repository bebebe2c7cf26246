//! A result as 18 bytes and back, bit for bit: what ranks of a multi-process reduction
//! send each other (floats as their bits, so NaN payloads and -0.0 survive, which a
//! text format would not promise).
//!
//! Layout: byte 0 the kind (0 nothing, 1 a value, 2 a value with an index), byte 1 the
//! type's position in [`DType::ALL`], bytes 2..10 the value's bits and 10..18 the index,
//! both little-endian.

use half::{bf16, f16};

use crate::{DType, Error, Scalar, Value};

/// Bytes of one encoded [`Value`].
pub const VALUE_BYTES: usize = 18;

/// Element `k` of little-endian elements of `dtype` in `bytes`, as a [`Scalar`], bit for
/// bit; `None` past the end.
pub fn scalar_at(dtype: DType, bytes: &[u8], k: usize) -> Option<Scalar> {
    let size = dtype.size_bytes();
    let start = k.checked_mul(size)?;
    let element = bytes.get(start..start.checked_add(size)?)?;
    let mut word = [0u8; 8];
    word[..size].copy_from_slice(element);
    Some(scalar_from_bits(dtype, u64::from_le_bytes(word)))
}

/// `scalar`'s type and bits back as a [`Scalar`]; the inverse of [`Scalar::bits`].
pub fn scalar_from_bits(dtype: DType, bits: u64) -> Scalar {
    match dtype {
        DType::I8 => Scalar::I8(bits as u8 as i8),
        DType::U8 => Scalar::U8(bits as u8),
        DType::I16 => Scalar::I16(bits as u16 as i16),
        DType::U16 => Scalar::U16(bits as u16),
        DType::I32 => Scalar::I32(bits as u32 as i32),
        DType::U32 => Scalar::U32(bits as u32),
        DType::I64 => Scalar::I64(bits as i64),
        DType::U64 => Scalar::U64(bits),
        DType::F16 => Scalar::F16(f16::from_bits(bits as u16)),
        DType::BF16 => Scalar::BF16(bf16::from_bits(bits as u16)),
        DType::F32 => Scalar::F32(f32::from_bits(bits as u32)),
        DType::F64 => Scalar::F64(f64::from_bits(bits)),
    }
}

/// `value` as [`VALUE_BYTES`] bytes.
pub fn encode(value: &Value) -> [u8; VALUE_BYTES] {
    let mut out = [0u8; VALUE_BYTES];
    let (kind, scalar, index) = match *value {
        Value::Empty => (0, None, 0),
        Value::Scalar(s) => (1, Some(s), 0),
        Value::Indexed { value, index } => (2, Some(value), index),
    };
    out[0] = kind;
    if let Some(s) = scalar {
        out[1] = DType::ALL
            .iter()
            .position(|&d| d == s.dtype())
            .expect("every type is in DType::ALL") as u8;
        out[2..10].copy_from_slice(&s.bits().to_le_bytes());
    }
    out[10..18].copy_from_slice(&index.to_le_bytes());
    out
}

/// The value `bytes` encode, or an error naming what is wrong with them.
pub fn decode(bytes: &[u8]) -> Result<Value, Error> {
    let bad = |why: &str| Error::Shape(format!("a result sent by another rank {why}"));
    if bytes.len() != VALUE_BYTES {
        return Err(bad(&format!(
            "has {} bytes, not {VALUE_BYTES}",
            bytes.len()
        )));
    }
    let word =
        |r: std::ops::Range<usize>| u64::from_le_bytes(bytes[r].try_into().expect("8 bytes"));
    let scalar = || -> Result<Scalar, Error> {
        let dtype = *DType::ALL
            .get(bytes[1] as usize)
            .ok_or_else(|| bad("names no type"))?;
        Ok(scalar_from_bits(dtype, word(2..10)))
    };
    match bytes[0] {
        0 => Ok(Value::Empty),
        1 => Ok(Value::Scalar(scalar()?)),
        2 => Ok(Value::Indexed {
            value: scalar()?,
            index: word(10..18),
        }),
        _ => Err(bad("is of no known kind")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_and_type_round_trips_bit_for_bit() {
        let scalars = [
            Scalar::I8(-5),
            Scalar::U8(200),
            Scalar::I16(-30000),
            Scalar::U16(60000),
            Scalar::I32(i32::MIN),
            Scalar::U32(u32::MAX),
            Scalar::I64(-1),
            Scalar::U64(u64::MAX),
            Scalar::F16(f16::from_f32(-0.0)),
            Scalar::BF16(bf16::from_f32(3.5)),
            Scalar::F32(f32::from_bits(0x7fc0_1234)),
            Scalar::F64(-0.0),
        ];
        for s in scalars {
            for v in [
                Value::Scalar(s),
                Value::Indexed {
                    value: s,
                    index: 0x0123_4567_89ab,
                },
            ] {
                let back = decode(&encode(&v)).expect("decodes");
                assert_eq!(
                    back.scalar().map(|s| s.bits()),
                    v.scalar().map(|s| s.bits())
                );
                assert_eq!(back.scalar().map(|s| s.dtype()), Some(s.dtype()));
                assert_eq!(back.index(), v.index());
            }
        }
        assert!(matches!(decode(&encode(&Value::Empty)), Ok(Value::Empty)));
    }

    #[test]
    fn malformed_bytes_are_errors() {
        assert!(decode(&[1u8; 3]).is_err());
        let mut bytes = encode(&Value::Scalar(Scalar::F32(1.0)));
        bytes[0] = 9;
        assert!(decode(&bytes).is_err());
        bytes[0] = 1;
        bytes[1] = 200;
        assert!(decode(&bytes).is_err());
    }
}
