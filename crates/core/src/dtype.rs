//! Element types: the [`DType`] tag, its properties, and the [`Element`] trait that ties
//! each tag to a Rust type so generic code can be dispatched from a run-time tag.

use std::fmt;
use std::str::FromStr;

use half::{bf16, f16};
use serde::{Deserialize, Serialize};

use crate::Error;

/// The element type of an input array or of an accumulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE 754 binary16.
    F16,
    /// bfloat16 (the upper half of an f32).
    BF16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
}

impl DType {
    /// Every type, in the order tables and tests list them.
    pub const ALL: [DType; 12] = [
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    /// The short lowercase name used on the command line and in records (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// Whether this is one of the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// Whether this is one of the integer types.
    pub fn is_integer(self) -> bool {
        !self.is_float()
    }

    /// Whether this is a signed integer type.
    pub fn is_signed_integer(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        // numpy spellings are accepted too, so names copied from Python work.
        let canonical = match lower.as_str() {
            "int8" => "i8",
            "uint8" => "u8",
            "int16" => "i16",
            "uint16" => "u16",
            "int32" => "i32",
            "uint32" => "u32",
            "int64" => "i64",
            "uint64" => "u64",
            "float16" | "half" => "f16",
            "bfloat16" => "bf16",
            "float32" | "float" => "f32",
            "float64" | "double" => "f64",
            other => other,
        };
        DType::ALL
            .into_iter()
            .find(|d| d.name() == canonical)
            .ok_or_else(|| Error::UnknownDType(s.to_string()))
    }
}

/// A Rust type that stores elements of one [`DType`].
///
/// `Pod` lets byte buffers (memory-mapped files, device readbacks) be viewed as typed
/// slices without copying.
pub trait Element: bytemuck::Pod + Send + Sync + fmt::Debug + PartialOrd + 'static {
    /// The tag of this type.
    const DTYPE: DType;
}

macro_rules! impl_element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t { const DTYPE: DType = DType::$d; })*
    };
}

impl_element!(
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f16 => F16, bf16 => BF16, f32 => F32, f64 => F64,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_numpy_aliases_parse() {
        for d in DType::ALL {
            assert_eq!(d.name().parse::<DType>().ok(), Some(d));
        }
        assert_eq!("float32".parse::<DType>().ok(), Some(DType::F32));
        assert_eq!("UINT8".parse::<DType>().ok(), Some(DType::U8));
        assert!("complex64".parse::<DType>().is_err());
    }

    #[test]
    fn element_sizes_match_rust_types() {
        for d in DType::ALL {
            let size = crate::with_dtype!(d, T => std::mem::size_of::<T>());
            assert_eq!(size, d.size_bytes(), "{d}");
        }
    }
}
