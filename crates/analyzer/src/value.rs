//! Values of one work-item and OpenCL C's arithmetic on them: integers wrap at their
//! width, floats round to their type after every operation (computing in f64 and
//! rounding once is exact for +, −, ×, ÷ and √ of f32 and f16), shifts take the count
//! modulo the width as OpenCL specifies, vectors work component-wise, and pointers
//! carry an address space, a buffer and a byte offset.

use std::rc::Rc;

use half::f16;

use crate::ast::{BinOp, UnOp};
use crate::types::{Scalar, Space, StructDef, Type};

/// An address: which memory, which buffer in it, and a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ptr {
    /// Address space.
    pub space: Space,
    /// Buffer index in that space (private memory has one per work-item).
    pub buffer: u32,
    /// Byte offset (may be out of bounds; accesses check).
    pub offset: i64,
}

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value (inactive lanes, `void`).
    Void,
    /// An integer of a scalar type: bits sign-extended (signed) or zero-extended.
    Int(Scalar, u64),
    /// A floating value, exactly representable in its type.
    Float(Scalar, f64),
    /// A vector: its element type and elements.
    Vector(Scalar, Rc<Vec<Value>>),
    /// A pointer and the type it points to.
    Ptr(Ptr, Rc<Type>),
    /// A struct's field values.
    Struct(Rc<StructDef>, Rc<Vec<Value>>),
    /// An array's elements: only as a field of a struct being copied (arrays themselves
    /// are not assignable in C).
    Array(Rc<Type>, Rc<Vec<Value>>),
}

/// Wraps `bits` to the width of `s`.
fn normalize(s: Scalar, bits: u64) -> u64 {
    match (s, s.size()) {
        (Scalar::Bool, _) => (bits != 0) as u64,
        (_, 8) => bits,
        (s, n) => {
            let shift = 64 - 8 * n as u32;
            if s.is_signed() {
                (((bits << shift) as i64) >> shift) as u64
            } else {
                (bits << shift) >> shift
            }
        }
    }
}

/// Rounds `x` to a floating type.
fn round(s: Scalar, x: f64) -> f64 {
    match s {
        Scalar::Float => x as f32 as f64,
        Scalar::Half => f16::from_f64(x).to_f64(),
        _ => x,
    }
}

impl Value {
    /// An integer of type `s` from any bits.
    pub fn int(s: Scalar, bits: u64) -> Value {
        Value::Int(s, normalize(s, bits))
    }

    /// A float of type `s`, rounded.
    pub fn float(s: Scalar, x: f64) -> Value {
        Value::Float(s, round(s, x))
    }

    /// The scalar type, if scalar.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Value::Int(s, _) | Value::Float(s, _) => Some(*s),
            _ => None,
        }
    }

    /// As a signed integer (floats truncate).
    pub fn as_i64(&self) -> i64 {
        match self {
            Value::Int(_, b) => *b as i64,
            Value::Float(_, x) => *x as i64,
            Value::Ptr(p, _) => p.offset,
            _ => 0,
        }
    }

    /// As an unsigned integer (floats truncate).
    pub fn as_u64(&self) -> u64 {
        match self {
            Value::Int(_, b) => *b,
            Value::Float(_, x) => *x as u64,
            Value::Ptr(p, _) => p.offset as u64,
            _ => 0,
        }
    }

    /// As a double.
    pub fn as_f64(&self) -> f64 {
        match self {
            Value::Int(s, b) if s.is_signed() => *b as i64 as f64,
            Value::Int(_, b) => *b as f64,
            Value::Float(_, x) => *x,
            _ => 0.0,
        }
    }

    /// C truth.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Int(_, b) => *b != 0,
            Value::Float(_, x) => *x != 0.0,
            Value::Ptr(..) => true,
            _ => false,
        }
    }

    /// A short description for messages.
    pub fn describe(&self) -> String {
        match self {
            Value::Void => "void".into(),
            Value::Int(s, b) if s.is_signed() => format!("{} ({})", *b as i64, s.name()),
            Value::Int(s, b) => format!("{b} ({})", s.name()),
            Value::Float(s, x) => format!("{x} ({})", s.name()),
            Value::Vector(s, v) => format!("{}{} vector", s.name(), v.len()),
            Value::Ptr(p, t) => format!("{} {}* +{}", p.space.name(), t.name(), p.offset),
            Value::Struct(d, _) => format!("struct {}", d.name),
            Value::Array(t, items) => format!("{}[{}]", t.name(), items.len()),
        }
    }
}

/// Converts a scalar value to scalar type `s` (C's conversion rules; float to integer
/// truncates and saturates).
pub fn to_scalar(v: &Value, s: Scalar) -> Result<Value, String> {
    Ok(match v {
        Value::Int(from, b) => {
            if s.is_float() {
                let x = if from.is_signed() {
                    *b as i64 as f64
                } else {
                    *b as f64
                };
                Value::float(s, x)
            } else {
                Value::int(s, *b)
            }
        }
        Value::Float(_, x) => {
            if s.is_float() {
                Value::float(s, *x)
            } else if s == Scalar::Bool {
                Value::Int(s, (*x != 0.0) as u64)
            } else if s.is_signed() {
                Value::int(s, *x as i64 as u64)
            } else {
                Value::int(s, *x as u64)
            }
        }
        Value::Ptr(p, _) if !s.is_float() => Value::int(s, p.offset as u64),
        other => {
            return Err(format!(
                "cannot convert {} to {}",
                other.describe(),
                s.name()
            ))
        }
    })
}

/// Converts `v` to `ty` as an assignment or cast does.
pub fn convert(v: &Value, ty: &Type) -> Result<Value, String> {
    match ty {
        Type::Void => Ok(Value::Void),
        Type::Scalar(s) => to_scalar(v, *s),
        Type::Vector(s, n) => match v {
            Value::Vector(_, items) if items.len() == *n as usize => Ok(Value::Vector(
                *s,
                Rc::new(
                    items
                        .iter()
                        .map(|x| to_scalar(x, *s))
                        .collect::<Result<_, _>>()?,
                ),
            )),
            Value::Vector(..) => Err(format!("cannot convert {} to {}", v.describe(), ty.name())),
            scalar => {
                let x = to_scalar(scalar, *s)?;
                Ok(Value::Vector(*s, Rc::new(vec![x; *n as usize])))
            }
        },
        Type::Pointer(t, _) => match v {
            Value::Ptr(p, _) => Ok(Value::Ptr(*p, t.clone())),
            Value::Int(_, 0) => Ok(Value::Int(Scalar::ULong, 0)),
            _ => Err(format!("cannot convert {} to {}", v.describe(), ty.name())),
        },
        Type::Struct(d) => match v {
            Value::Struct(d2, _) if Rc::ptr_eq(d, d2) || d == d2 => Ok(v.clone()),
            _ => Err(format!("cannot convert {} to {}", v.describe(), ty.name())),
        },
        Type::Array(..) => Err(format!("cannot assign to an array ({})", ty.name())),
    }
}

/// Applies a unary operator.
pub fn unary(op: UnOp, v: &Value) -> Result<Value, String> {
    if let Value::Vector(s, items) = v {
        let out: Result<Vec<Value>, String> = items.iter().map(|x| unary(op, x)).collect();
        return Ok(Value::Vector(*s, Rc::new(out?)));
    }
    Ok(match (op, v) {
        (UnOp::Plus, Value::Int(s, b)) => Value::int(s.promoted(), *b),
        (UnOp::Plus, f @ Value::Float(..)) => f.clone(),
        (UnOp::Neg, Value::Int(s, b)) => Value::int(s.promoted(), b.wrapping_neg()),
        (UnOp::Neg, Value::Float(s, x)) => Value::Float(*s, -x),
        (UnOp::BitNot, Value::Int(s, b)) => Value::int(s.promoted(), !b),
        (UnOp::Not, v) => Value::Int(Scalar::Int, (!v.truthy()) as u64),
        _ => {
            return Err(format!(
                "operator {op:?} does not apply to {}",
                v.describe()
            ))
        }
    })
}

/// Applies a binary operator (not `&&`/`||`, which short-circuit elsewhere).
pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    match (a, b) {
        (Value::Vector(s, x), Value::Vector(_, y)) => {
            if x.len() != y.len() {
                return Err("vector lengths differ".into());
            }
            vector_result(
                op,
                *s,
                x.iter().zip(y.iter()).map(|(p, q)| binary(op, p, q)),
            )
        }
        (Value::Vector(s, x), scalar) => {
            let y = to_scalar(scalar, *s)?;
            vector_result(op, *s, x.iter().map(|p| binary(op, p, &y)))
        }
        (scalar, Value::Vector(s, y)) => {
            let x = to_scalar(scalar, *s)?;
            vector_result(op, *s, y.iter().map(|q| binary(op, &x, q)))
        }
        (Value::Ptr(..), _) | (_, Value::Ptr(..)) => pointer_op(op, a, b),
        (Value::Int(sa, x), Value::Int(_, y)) if matches!(op, BinOp::Shl | BinOp::Shr) => {
            let s = sa.promoted();
            let x = normalize(s, *x);
            let count = (*y as u32) & (8 * s.size() as u32 - 1);
            Ok(Value::int(
                s,
                match op {
                    BinOp::Shl => x << count,
                    _ if s.is_signed() => ((x as i64) >> count) as u64,
                    _ => x >> count,
                },
            ))
        }
        (Value::Int(sa, _) | Value::Float(sa, _), Value::Int(sb, _) | Value::Float(sb, _)) => {
            let s = Scalar::common(*sa, *sb);
            let (x, y) = (to_scalar(a, s)?, to_scalar(b, s)?);
            if s.is_float() {
                float_op(op, s, x.as_f64(), y.as_f64())
            } else {
                int_op(op, s, x.as_u64(), y.as_u64())
            }
        }
        _ => Err(format!(
            "operator {op:?} does not apply to {} and {}",
            a.describe(),
            b.describe()
        )),
    }
}

/// Component results; comparisons of vectors give -1/0 in signed integers of the
/// element's width, as OpenCL specifies.
fn vector_result(
    op: BinOp,
    s: Scalar,
    items: impl Iterator<Item = Result<Value, String>>,
) -> Result<Value, String> {
    let compare = matches!(
        op,
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne
    );
    let mut out = Vec::new();
    let mut elem = s;
    for item in items {
        let v = item?;
        if compare {
            elem = match s.size() {
                1 => Scalar::Char,
                2 => Scalar::Short,
                4 => Scalar::Int,
                _ => Scalar::Long,
            };
            out.push(Value::int(elem, if v.truthy() { u64::MAX } else { 0 }));
        } else {
            elem = v.scalar().unwrap_or(s);
            out.push(v);
        }
    }
    Ok(Value::Vector(elem, Rc::new(out)))
}

fn int_op(op: BinOp, s: Scalar, x: u64, y: u64) -> Result<Value, String> {
    let signed = s.is_signed();
    let cmp = |c: bool| Ok(Value::Int(Scalar::Int, c as u64));
    let bits = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Rem if y == 0 => return Err("integer division by zero".into()),
        BinOp::Div if signed => (x as i64).wrapping_div(y as i64) as u64,
        BinOp::Div => x / y,
        BinOp::Rem if signed => (x as i64).wrapping_rem(y as i64) as u64,
        BinOp::Rem => x % y,
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Shl | BinOp::Shr => unreachable!("shifts are handled before"),
        BinOp::Lt if signed => return cmp((x as i64) < (y as i64)),
        BinOp::Gt if signed => return cmp((x as i64) > (y as i64)),
        BinOp::Le if signed => return cmp((x as i64) <= (y as i64)),
        BinOp::Ge if signed => return cmp((x as i64) >= (y as i64)),
        BinOp::Lt => return cmp(x < y),
        BinOp::Gt => return cmp(x > y),
        BinOp::Le => return cmp(x <= y),
        BinOp::Ge => return cmp(x >= y),
        BinOp::Eq => return cmp(x == y),
        BinOp::Ne => return cmp(x != y),
    };
    Ok(Value::int(s, bits))
}

fn float_op(op: BinOp, s: Scalar, x: f64, y: f64) -> Result<Value, String> {
    let cmp = |c: bool| Ok(Value::Int(Scalar::Int, c as u64));
    Ok(Value::float(
        s,
        match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Lt => return cmp(x < y),
            BinOp::Gt => return cmp(x > y),
            BinOp::Le => return cmp(x <= y),
            BinOp::Ge => return cmp(x >= y),
            BinOp::Eq => return cmp(x == y),
            BinOp::Ne => return cmp(x != y),
            _ => return Err(format!("operator {op:?} does not apply to {}", s.name())),
        },
    ))
}

fn pointer_op(op: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    let step = |t: &Type| t.size().max(1) as i64;
    let moved = |p: &Ptr, t: &Rc<Type>, by: i64| {
        Value::Ptr(
            Ptr {
                offset: p.offset.wrapping_add(by.wrapping_mul(step(t))),
                ..*p
            },
            t.clone(),
        )
    };
    let key = |v: &Value| match v {
        Value::Ptr(p, _) => (Some((p.space as u8, p.buffer)), p.offset),
        other => (None, other.as_i64()),
    };
    let cmp = |c: bool| Ok(Value::Int(Scalar::Int, c as u64));
    match (op, a, b) {
        (BinOp::Add, Value::Ptr(p, t), i @ Value::Int(..))
        | (BinOp::Add, i @ Value::Int(..), Value::Ptr(p, t)) => Ok(moved(p, t, i.as_i64())),
        (BinOp::Sub, Value::Ptr(p, t), i @ Value::Int(..)) => Ok(moved(p, t, -i.as_i64())),
        (BinOp::Sub, Value::Ptr(p, t), Value::Ptr(q, _)) => Ok(Value::int(
            Scalar::Long,
            ((p.offset - q.offset) / step(t)) as u64,
        )),
        (BinOp::Eq, _, _) => cmp(key(a) == key(b)),
        (BinOp::Ne, _, _) => cmp(key(a) != key(b)),
        (BinOp::Lt, _, _) => cmp(key(a).1 < key(b).1),
        (BinOp::Gt, _, _) => cmp(key(a).1 > key(b).1),
        (BinOp::Le, _, _) => cmp(key(a).1 <= key(b).1),
        (BinOp::Ge, _, _) => cmp(key(a).1 >= key(b).1),
        _ => Err(format!(
            "operator {op:?} does not apply to {} and {}",
            a.describe(),
            b.describe()
        )),
    }
}

const SPACE_CODES: [Space; 4] = [Space::Private, Space::Global, Space::Local, Space::Constant];

/// Reads a value of type `ty` from little-endian bytes.
pub fn from_bytes(ty: &Type, bytes: &[u8]) -> Result<Value, String> {
    let word = |n: usize| {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&bytes[..n]);
        u64::from_le_bytes(w)
    };
    Ok(match ty {
        Type::Scalar(s) => match s {
            Scalar::Half => Value::Float(*s, f16::from_bits(word(2) as u16).to_f64()),
            Scalar::Float => Value::Float(*s, f32::from_bits(word(4) as u32) as f64),
            Scalar::Double => Value::Float(*s, f64::from_bits(word(8))),
            s => Value::int(*s, word(s.size())),
        },
        Type::Vector(s, n) => {
            let e = Type::Scalar(*s);
            let items: Result<Vec<Value>, String> = (0..*n as usize)
                .map(|k| from_bytes(&e, &bytes[k * s.size()..]))
                .collect();
            Value::Vector(*s, Rc::new(items?))
        }
        Type::Pointer(t, _) => {
            let bits = word(8);
            let code = (bits >> 61) as usize;
            if code == 0 {
                Value::Int(Scalar::ULong, 0)
            } else {
                let buffer = ((bits >> 40) & 0x1f_ffff) as u32;
                let offset = ((bits << 24) as i64) >> 24;
                Value::Ptr(
                    Ptr {
                        space: SPACE_CODES[(code - 1) % 4],
                        buffer,
                        offset,
                    },
                    t.clone(),
                )
            }
        }
        Type::Struct(d) => {
            let fields: Result<Vec<Value>, String> = d
                .fields
                .iter()
                .map(|(_, t, o)| from_bytes(t, &bytes[*o..]))
                .collect();
            Value::Struct(d.clone(), Rc::new(fields?))
        }
        Type::Array(t, n) => {
            let items: Result<Vec<Value>, String> = (0..*n)
                .map(|k| from_bytes(t, &bytes[k * t.size()..]))
                .collect();
            Value::Array(t.clone(), Rc::new(items?))
        }
        Type::Void => return Err(format!("cannot load a value of type {}", ty.name())),
    })
}

/// Writes `v` (already of type `ty`) as little-endian bytes.
pub fn to_bytes(v: &Value, ty: &Type, out: &mut [u8]) -> Result<(), String> {
    let put =
        |out: &mut [u8], bits: u64, n: usize| out[..n].copy_from_slice(&bits.to_le_bytes()[..n]);
    match (ty, v) {
        (Type::Scalar(s), v) => {
            let v = to_scalar(v, *s)?;
            let bits = match (s, &v) {
                (Scalar::Half, Value::Float(_, x)) => f16::from_f64(*x).to_bits() as u64,
                (Scalar::Float, Value::Float(_, x)) => (*x as f32).to_bits() as u64,
                (Scalar::Double, Value::Float(_, x)) => x.to_bits(),
                (_, v) => v.as_u64(),
            };
            put(out, bits, s.size());
        }
        (Type::Vector(s, _), Value::Vector(_, items)) => {
            let e = Type::Scalar(*s);
            for (k, item) in items.iter().enumerate() {
                to_bytes(item, &e, &mut out[k * s.size()..])?;
            }
        }
        (Type::Pointer(..), Value::Ptr(p, _)) => {
            let code = SPACE_CODES.iter().position(|s| *s == p.space).unwrap_or(0) as u64 + 1;
            let bits = (code << 61)
                | ((p.buffer as u64 & 0x1f_ffff) << 40)
                | (p.offset as u64 & 0xff_ffff_ffff);
            put(out, bits, 8);
        }
        (Type::Pointer(..), _) => put(out, 0, 8),
        (Type::Struct(d), Value::Struct(_, fields)) => {
            for ((_, t, o), f) in d.fields.iter().zip(fields.iter()) {
                to_bytes(f, t, &mut out[*o..])?;
            }
        }
        (Type::Array(t, _), Value::Array(_, items)) => {
            for (k, item) in items.iter().enumerate() {
                to_bytes(item, t, &mut out[k * t.size()..])?;
            }
        }
        _ => return Err(format!("cannot store {} as {}", v.describe(), ty.name())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(s: Scalar, v: i64) -> Value {
        Value::int(s, v as u64)
    }

    #[test]
    fn integers_wrap_and_convert_like_c() {
        let r = binary(BinOp::Add, &i(Scalar::UChar, 200), &i(Scalar::UChar, 100)).expect("ok");
        assert_eq!(r, i(Scalar::Int, 300));
        let r = binary(BinOp::Lt, &i(Scalar::Int, -1), &i(Scalar::UInt, 1)).expect("ok");
        assert_eq!(r, i(Scalar::Int, 0), "-1 converts to UINT_MAX");
        let r = binary(BinOp::Shl, &i(Scalar::Int, 1), &i(Scalar::Int, 33)).expect("ok");
        assert_eq!(
            r,
            i(Scalar::Int, 2),
            "OpenCL takes the shift count modulo 32"
        );
        assert!(binary(BinOp::Div, &i(Scalar::Int, 1), &i(Scalar::Int, 0)).is_err());
    }

    #[test]
    fn floats_round_to_their_type() {
        let a = Value::float(Scalar::Float, 1.0);
        let b = Value::float(Scalar::Float, 1e-8);
        assert_eq!(
            binary(BinOp::Add, &a, &b).expect("ok"),
            Value::Float(Scalar::Float, 1.0)
        );
        let d = to_scalar(&b, Scalar::Double).expect("ok");
        assert_ne!(binary(BinOp::Add, &d, &a).expect("ok").as_f64(), 1.0);
    }

    #[test]
    fn bytes_round_trip_through_every_kind() {
        let ptr_t = Type::Pointer(Rc::new(Type::Scalar(Scalar::Float)), Some(Space::Global));
        let p = Value::Ptr(
            Ptr {
                space: Space::Local,
                buffer: 3,
                offset: -8,
            },
            Rc::new(Type::Scalar(Scalar::Float)),
        );
        let v4 = Type::Vector(Scalar::Short, 4);
        let v = convert(&i(Scalar::Int, -3), &v4).expect("broadcast");
        for (ty, value) in [
            (ptr_t, p),
            (v4, v),
            (Type::Scalar(Scalar::Half), Value::float(Scalar::Half, 0.1)),
        ] {
            let mut bytes = vec![0u8; ty.size()];
            to_bytes(&value, &ty, &mut bytes).expect("store");
            assert_eq!(from_bytes(&ty, &bytes).expect("load"), value);
        }
    }
}
