//! OpenCL C types as the simulator needs them: scalars, vectors, pointers with address
//! spaces, arrays and structs, with C's sizes, alignments and field offsets, so memory
//! is laid out (and bank conflicts come out) as on a device.

use std::rc::Rc;

/// A scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `bool` (1 byte).
    Bool,
    /// `char`.
    Char,
    /// `uchar`.
    UChar,
    /// `short`.
    Short,
    /// `ushort`.
    UShort,
    /// `int`.
    Int,
    /// `uint`.
    UInt,
    /// `long` (64 bits).
    Long,
    /// `ulong` (also `size_t`).
    ULong,
    /// `half`.
    Half,
    /// `float`.
    Float,
    /// `double`.
    Double,
}

impl Scalar {
    /// Bytes.
    pub fn size(self) -> usize {
        match self {
            Scalar::Bool | Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort | Scalar::Half => 2,
            Scalar::Int | Scalar::UInt | Scalar::Float => 4,
            Scalar::Long | Scalar::ULong | Scalar::Double => 8,
        }
    }

    /// A floating type.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Half | Scalar::Float | Scalar::Double)
    }

    /// A signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::Char | Scalar::Short | Scalar::Int | Scalar::Long
        )
    }

    /// Conversion rank among integers (C's integer conversion rank).
    fn rank(self) -> u8 {
        match self {
            Scalar::Bool => 0,
            Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort => 2,
            Scalar::Int | Scalar::UInt => 3,
            _ => 4,
        }
    }

    /// The unsigned type of the same rank.
    fn unsigned(self) -> Scalar {
        match self {
            Scalar::Char => Scalar::UChar,
            Scalar::Short => Scalar::UShort,
            Scalar::Int => Scalar::UInt,
            Scalar::Long => Scalar::ULong,
            s => s,
        }
    }

    /// The OpenCL C name.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Char => "char",
            Scalar::UChar => "uchar",
            Scalar::Short => "short",
            Scalar::UShort => "ushort",
            Scalar::Int => "int",
            Scalar::UInt => "uint",
            Scalar::Long => "long",
            Scalar::ULong => "ulong",
            Scalar::Half => "half",
            Scalar::Float => "float",
            Scalar::Double => "double",
        }
    }

    /// The scalar called `name` (OpenCL spellings and common aliases).
    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Scalar::Bool,
            "char" => Scalar::Char,
            "uchar" => Scalar::UChar,
            "short" => Scalar::Short,
            "ushort" => Scalar::UShort,
            "int" => Scalar::Int,
            "uint" => Scalar::UInt,
            "long" => Scalar::Long,
            "ulong" | "size_t" | "uintptr_t" | "event_t" => Scalar::ULong,
            "ptrdiff_t" | "intptr_t" => Scalar::Long,
            "half" => Scalar::Half,
            "float" => Scalar::Float,
            "double" => Scalar::Double,
            _ => return None,
        })
    }

    /// The integer promotion (types below `int` become `int`).
    pub fn promoted(self) -> Scalar {
        if !self.is_float() && self.rank() < 3 {
            Scalar::Int
        } else {
            self
        }
    }

    /// C's usual arithmetic conversions: the type two operands are brought to.
    pub fn common(a: Scalar, b: Scalar) -> Scalar {
        for f in [Scalar::Double, Scalar::Float, Scalar::Half] {
            if a == f || b == f {
                return f;
            }
        }
        let (a, b) = (a.promoted(), b.promoted());
        if a == b {
            return a;
        }
        if a.is_signed() == b.is_signed() {
            return if a.rank() >= b.rank() { a } else { b };
        }
        let (s, u) = if a.is_signed() { (a, b) } else { (b, a) };
        if u.rank() >= s.rank() {
            u
        } else if s.size() > u.size() {
            s
        } else {
            s.unsigned()
        }
    }
}

/// An address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// Per work-item.
    Private,
    /// Device memory.
    Global,
    /// Per work-group.
    Local,
    /// Read-only device memory.
    Constant,
}

impl Space {
    /// The OpenCL C qualifier.
    pub fn name(self) -> &'static str {
        match self {
            Space::Private => "__private",
            Space::Global => "__global",
            Space::Local => "__local",
            Space::Constant => "__constant",
        }
    }
}

/// A struct's layout.
#[derive(Debug, PartialEq, Eq)]
pub struct StructDef {
    /// Its tag or typedef name (for messages).
    pub name: String,
    /// Fields in order: name, type, byte offset.
    pub fields: Vec<(String, Type, usize)>,
    /// Bytes, padded to the alignment.
    pub size: usize,
    /// Alignment.
    pub align: usize,
    /// A union: every field at offset 0, the size of the largest.
    pub is_union: bool,
}

impl StructDef {
    /// Lays out a union: every field at offset 0, padded to the strictest alignment.
    pub fn union(name: &str, fields: Vec<(String, Type)>) -> StructDef {
        let align = fields
            .iter()
            .map(|(_, t)| t.align())
            .max()
            .unwrap_or(1)
            .max(1);
        let size = fields.iter().map(|(_, t)| t.size()).max().unwrap_or(0);
        StructDef {
            name: name.to_string(),
            fields: fields.into_iter().map(|(n, t)| (n, t, 0)).collect(),
            size: size.div_ceil(align) * align,
            align,
            is_union: true,
        }
    }

    /// Lays out `fields` with C's rules.
    pub fn new(name: &str, fields: Vec<(String, Type)>) -> StructDef {
        let mut offset: usize = 0;
        let mut align = 1;
        let mut placed = Vec::new();
        for (n, t) in fields {
            let a = t.align();
            offset = offset.div_ceil(a) * a;
            align = align.max(a);
            let size = t.size();
            placed.push((n, t, offset));
            offset += size;
        }
        StructDef {
            name: name.to_string(),
            fields: placed,
            size: offset.div_ceil(align) * align,
            align,
            is_union: false,
        }
    }

    /// Lays out `fields` with `__attribute__((packed))`: each field right after the
    /// previous one, alignment 1.
    pub fn packed(name: &str, fields: Vec<(String, Type)>) -> StructDef {
        let mut offset = 0;
        let mut placed = Vec::new();
        for (n, t) in fields {
            let size = t.size();
            placed.push((n, t, offset));
            offset += size;
        }
        StructDef {
            name: name.to_string(),
            fields: placed,
            size: offset,
            align: 1,
            is_union: false,
        }
    }

    /// The field called `name`: its type and offset.
    pub fn field(&self, name: &str) -> Option<(&Type, usize)> {
        self.fields
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, t, o)| (t, *o))
    }
}

/// A type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// `void`.
    Void,
    /// A scalar.
    Scalar(Scalar),
    /// A vector of 2, 3, 4, 8 or 16 scalars.
    Vector(Scalar, u8),
    /// A pointer to a type in an address space (`None`: unqualified, generic).
    Pointer(Rc<Type>, Option<Space>),
    /// An array with its length.
    Array(Rc<Type>, usize),
    /// A struct.
    Struct(Rc<StructDef>),
}

impl Type {
    /// Bytes (vectors of 3 take the room of 4).
    pub fn size(&self) -> usize {
        match self {
            Type::Void => 1,
            Type::Scalar(s) => s.size(),
            Type::Vector(s, n) => s.size() * if *n == 3 { 4 } else { *n as usize },
            Type::Pointer(..) => 8,
            Type::Array(t, n) => t.size() * n,
            Type::Struct(d) => d.size,
        }
    }

    /// Alignment in bytes.
    pub fn align(&self) -> usize {
        match self {
            Type::Array(t, _) => t.align(),
            Type::Struct(d) => d.align,
            t => t.size(),
        }
    }

    /// The scalar, if this is one.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// The byte ranges that hold data (struct padding excluded), relative to the start.
    pub fn data_ranges(&self, base: usize, out: &mut Vec<(usize, usize)>) {
        match self {
            Type::Struct(d) => {
                for (_, t, o) in &d.fields {
                    t.data_ranges(base + o, out);
                }
            }
            Type::Array(t, n) => {
                for k in 0..*n {
                    t.data_ranges(base + k * t.size(), out);
                }
            }
            Type::Vector(s, 3) => out.push((base, 3 * s.size())),
            t => out.push((base, t.size())),
        }
    }

    /// The type's name as OpenCL C writes it.
    pub fn name(&self) -> String {
        match self {
            Type::Void => "void".into(),
            Type::Scalar(s) => s.name().into(),
            Type::Vector(s, n) => format!("{}{n}", s.name()),
            Type::Pointer(t, space) => match space {
                Some(sp) => format!("{} {}*", sp.name(), t.name()),
                None => format!("{}*", t.name()),
            },
            Type::Array(t, n) => format!("{}[{n}]", t.name()),
            Type::Struct(d) => d.name.clone(),
        }
    }

    /// Parses a scalar or vector type name (`float`, `uint4`).
    pub fn from_name(name: &str) -> Option<Type> {
        if let Some(s) = Scalar::from_name(name) {
            return Some(Type::Scalar(s));
        }
        let digits = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let base = &name[..name.len() - digits.len()];
        let n: u8 = digits.parse().ok()?;
        let s = Scalar::from_name(base)?;
        (matches!(n, 2 | 3 | 4 | 8 | 16) && s != Scalar::Bool).then_some(Type::Vector(s, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_arithmetic_conversions_follow_c() {
        assert_eq!(Scalar::common(Scalar::UChar, Scalar::Short), Scalar::Int);
        assert_eq!(Scalar::common(Scalar::Int, Scalar::UInt), Scalar::UInt);
        assert_eq!(Scalar::common(Scalar::UInt, Scalar::Long), Scalar::Long);
        assert_eq!(Scalar::common(Scalar::Long, Scalar::ULong), Scalar::ULong);
        assert_eq!(Scalar::common(Scalar::ULong, Scalar::Float), Scalar::Float);
    }

    #[test]
    fn structs_are_laid_out_with_padding() {
        let s = StructDef::new(
            "acc_t",
            vec![
                ("v".into(), Type::Scalar(Scalar::Float)),
                ("i".into(), Type::Scalar(Scalar::ULong)),
            ],
        );
        assert_eq!((s.size, s.align), (16, 8));
        assert_eq!(s.field("i").map(|(_, o)| o), Some(8));
        let mut ranges = Vec::new();
        Type::Struct(Rc::new(s)).data_ranges(0, &mut ranges);
        assert_eq!(ranges, [(0, 4), (8, 8)]);
        assert_eq!(
            Type::from_name("uint4"),
            Some(Type::Vector(Scalar::UInt, 4))
        );
        assert_eq!(Type::Vector(Scalar::Float, 3).size(), 16);
    }
}
