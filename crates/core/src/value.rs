//! Reduction results: a typed [`Scalar`], and [`Value`], which adds the index of
//! argmin/argmax and the typed "empty input" result.

use std::fmt;

use half::{bf16, f16};

use crate::{DType, Element};

/// One value of a given [`DType`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)] // one variant per DType, named alike
pub enum Scalar {
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F16(f16),
    BF16(bf16),
    F32(f32),
    F64(f64),
}

/// Conversion from a typed element to a [`Scalar`].
pub trait IntoScalar: Element {
    /// Wraps `self` in the matching [`Scalar`] variant.
    fn into_scalar(self) -> Scalar;
}

macro_rules! impl_into_scalar {
    ($($t:ty => $v:ident),* $(,)?) => {
        $(impl IntoScalar for $t { fn into_scalar(self) -> Scalar { Scalar::$v(self) } })*
    };
}

impl_into_scalar!(
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f16 => F16, bf16 => BF16, f32 => F32, f64 => F64,
);

impl Scalar {
    /// The type of the value.
    pub fn dtype(&self) -> DType {
        match self {
            Scalar::I8(_) => DType::I8,
            Scalar::U8(_) => DType::U8,
            Scalar::I16(_) => DType::I16,
            Scalar::U16(_) => DType::U16,
            Scalar::I32(_) => DType::I32,
            Scalar::U32(_) => DType::U32,
            Scalar::I64(_) => DType::I64,
            Scalar::U64(_) => DType::U64,
            Scalar::F16(_) => DType::F16,
            Scalar::BF16(_) => DType::BF16,
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
        }
    }

    /// The value as an f64 (exact for every type but 64-bit integers beyond 2^53).
    pub fn to_f64(&self) -> f64 {
        match *self {
            Scalar::I8(v) => v.into(),
            Scalar::U8(v) => v.into(),
            Scalar::I16(v) => v.into(),
            Scalar::U16(v) => v.into(),
            Scalar::I32(v) => v.into(),
            Scalar::U32(v) => v.into(),
            Scalar::I64(v) => v as f64,
            Scalar::U64(v) => v as f64,
            Scalar::F16(v) => v.to_f64(),
            Scalar::BF16(v) => v.to_f64(),
            Scalar::F32(v) => v.into(),
            Scalar::F64(v) => v,
        }
    }

    /// The raw bits, zero-extended: what "bitwise identical" compares.
    pub fn bits(&self) -> u64 {
        match *self {
            Scalar::I8(v) => v as u8 as u64,
            Scalar::U8(v) => v as u64,
            Scalar::I16(v) => v as u16 as u64,
            Scalar::U16(v) => v as u64,
            Scalar::I32(v) => v as u32 as u64,
            Scalar::U32(v) => v as u64,
            Scalar::I64(v) => v as u64,
            Scalar::U64(v) => v,
            Scalar::F16(v) => v.to_bits() as u64,
            Scalar::BF16(v) => v.to_bits() as u64,
            Scalar::F32(v) => v.to_bits() as u64,
            Scalar::F64(v) => v.to_bits(),
        }
    }

    /// Whether the value is a float NaN.
    pub fn is_nan(&self) -> bool {
        self.dtype().is_float() && self.to_f64().is_nan()
    }

    /// Bitwise identity, except that any two NaNs match: NaN payloads are not portable
    /// across devices, so the project promises "NaN" rather than particular NaN bits.
    pub fn same_as(&self, other: &Scalar) -> bool {
        self.dtype() == other.dtype()
            && (self.bits() == other.bits() || (self.is_nan() && other.is_nan()))
    }
}

impl fmt::Display for Scalar {
    /// Integers in decimal; floats in the shortest form that parses back to the same
    /// value of the same type (Rust's `Display` for floats guarantees that).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::I8(v) => write!(f, "{v}"),
            Scalar::U8(v) => write!(f, "{v}"),
            Scalar::I16(v) => write!(f, "{v}"),
            Scalar::U16(v) => write!(f, "{v}"),
            Scalar::I32(v) => write!(f, "{v}"),
            Scalar::U32(v) => write!(f, "{v}"),
            Scalar::I64(v) => write!(f, "{v}"),
            Scalar::U64(v) => write!(f, "{v}"),
            Scalar::F16(v) => write!(f, "{v}"),
            Scalar::BF16(v) => write!(f, "{v}"),
            Scalar::F32(v) => write!(f, "{v}"),
            Scalar::F64(v) => write!(f, "{v}"),
        }
    }
}

/// The result of a reduction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// sum, prod, min, max, and, or, xor.
    Scalar(Scalar),
    /// argmin, argmax: the extreme value and the index of its first occurrence.
    Indexed {
        /// The extreme value.
        value: Scalar,
        /// Index of its first occurrence in flat (C) order.
        index: u64,
    },
    /// min/max/argmin/argmax of no elements: these operators have no identity, so the
    /// result is this typed "nothing", never a sentinel such as `+inf` or `i32::MAX`.
    Empty,
}

impl Value {
    /// The result of a selecting operator (min, max, argmin, argmax) from the winning
    /// `(index, value)`, or [`Value::Empty`] when there was none.
    pub fn from_selection<T: IntoScalar>(indexed: bool, best: Option<(usize, T)>) -> Value {
        match best {
            None => Value::Empty,
            Some((index, value)) if indexed => Value::Indexed {
                value: value.into_scalar(),
                index: index as u64,
            },
            Some((_, value)) => Value::Scalar(value.into_scalar()),
        }
    }

    /// The scalar part, if there is one.
    pub fn scalar(&self) -> Option<Scalar> {
        match *self {
            Value::Scalar(s) | Value::Indexed { value: s, .. } => Some(s),
            Value::Empty => None,
        }
    }

    /// The index, for argmin/argmax.
    pub fn index(&self) -> Option<u64> {
        match *self {
            Value::Indexed { index, .. } => Some(index),
            _ => None,
        }
    }

    /// Whether two results agree bit for bit (NaNs match any NaN; see [`Scalar::same_as`]).
    pub fn same_as(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Empty, Value::Empty) => true,
            (Value::Scalar(a), Value::Scalar(b)) => a.same_as(b),
            (Value::Indexed { value: a, index: i }, Value::Indexed { value: b, index: j }) => {
                i == j && a.same_as(b)
            }
            _ => false,
        }
    }

    /// Whether two lists of results have the same length and agree output by output
    /// ([`Value::same_as`]).
    pub fn all_same(a: &[Value], b: &[Value]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_as(y))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Scalar(s) => write!(f, "{s}"),
            Value::Indexed { value, index } => write!(f, "{value} at index {index}"),
            Value::Empty => f.write_str("empty input (no value)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_as_is_bitwise_for_zeros_and_lenient_for_nan() {
        let pz = Value::Scalar(Scalar::F32(0.0));
        let nz = Value::Scalar(Scalar::F32(-0.0));
        assert!(!pz.same_as(&nz));
        let nan_a = Value::Scalar(Scalar::F32(f32::NAN));
        let nan_b = Value::Scalar(Scalar::F32(f32::from_bits(0x7fc0_0001)));
        assert!(nan_a.same_as(&nan_b));
        assert!(!Value::Scalar(Scalar::I32(1)).same_as(&Value::Scalar(Scalar::I64(1))));
    }

    #[test]
    fn float_display_round_trips() {
        for x in [0.1f32, 1.0e-38, 3.4028235e38, -7.25] {
            let text = Scalar::F32(x).to_string();
            assert_eq!(
                text.parse::<f32>().ok().map(f32::to_bits),
                Some(x.to_bits())
            );
        }
    }
}
