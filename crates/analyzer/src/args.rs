//! Kernel arguments from the command line:
//! `buffer:TYPE:COUNT:random|zeros|ones|iota|uninit[:ro|wo|rw]` for global buffers (the
//! access flag is what the host declares, `CL_MEM_READ_ONLY` and the like, and the
//! simulator reports kernels that break it; `uninit` leaves the buffer unwritten and
//! reports reads before the kernel writes), `local:TYPE:COUNT` for `__local` pointers,
//! and plain values for scalars, each checked against the kernel's signature.

use redlab_core::generate::{generate, Distribution};
use redlab_core::size::parse_size;
use redlab_core::DType;

use crate::ast::Function;
use crate::memory::{Access, Buffer, Memory};
use crate::sim::Arg;
use crate::types::{Scalar, Space, Type};
use crate::value::{from_bytes, to_bytes, Value};
use crate::AnalyzeError;

/// How a global buffer starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Seeded random values (small integers, floats in [-1, 1)).
    Random,
    /// Zeros.
    Zeros,
    /// Ones.
    Ones,
    /// 0, 1, 2, … per scalar.
    Iota,
    /// Nothing written: the kernel's reads before its writes are reported.
    Uninit,
}

/// One argument as written.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSpec {
    /// A global buffer.
    Buffer {
        /// Element type.
        ty: Type,
        /// Elements.
        count: usize,
        /// Contents.
        fill: Fill,
        /// What the kernel may do with it.
        access: Access,
    },
    /// A `__local` buffer.
    Local {
        /// Element type.
        ty: Type,
        /// Elements.
        count: usize,
    },
    /// A scalar, typed by the parameter.
    Scalar(String),
}

/// The OpenCL C spelling of redlab's own type names (`f32` is `float`, `u8` is `uchar` …);
/// other names are returned as they are.
pub(crate) fn opencl_name(name: &str) -> &str {
    match name {
        "i8" => "char",
        "u8" => "uchar",
        "i16" => "short",
        "u16" => "ushort",
        "i32" => "int",
        "u32" => "uint",
        "i64" => "long",
        "u64" => "ulong",
        "f16" => "half",
        "f32" => "float",
        "f64" => "double",
        other => other,
    }
}

/// Parses one argument spec.
pub fn parse_spec(s: &str) -> Result<ArgSpec, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let ty = |name: &str| {
        Type::from_name(opencl_name(name)).ok_or_else(|| format!("unknown type '{name}' in '{s}'"))
    };
    let count = |c: &str| parse_size(c).map_err(|e| format!("{e} in '{s}'"));
    let fill = |f: &str| match f {
        "random" => Ok(Fill::Random),
        "zeros" => Ok(Fill::Zeros),
        "ones" => Ok(Fill::Ones),
        "iota" => Ok(Fill::Iota),
        "uninit" => Ok(Fill::Uninit),
        other => Err(format!(
            "unknown fill '{other}' in '{s}' (random, zeros, ones, iota, uninit)"
        )),
    };
    let access = |a: &str| match a {
        "rw" => Ok(Access::ReadWrite),
        "ro" => Ok(Access::ReadOnly),
        "wo" => Ok(Access::WriteOnly),
        other => Err(format!("unknown access '{other}' in '{s}' (ro, wo, rw)")),
    };
    match parts.as_slice() {
        ["buffer", t, c, f, a] => Ok(ArgSpec::Buffer {
            ty: ty(t)?,
            count: count(c)?,
            fill: fill(f)?,
            access: access(a)?,
        }),
        ["buffer", t, c, f] => Ok(ArgSpec::Buffer {
            ty: ty(t)?,
            count: count(c)?,
            fill: fill(f)?,
            access: Access::ReadWrite,
        }),
        ["buffer", t, c] => Ok(ArgSpec::Buffer {
            ty: ty(t)?,
            count: count(c)?,
            fill: Fill::Random,
            access: Access::ReadWrite,
        }),
        ["local", t, c] => Ok(ArgSpec::Local { ty: ty(t)?, count: count(c)? }),
        [value] => Ok(ArgSpec::Scalar(value.to_string())),
        _ => Err(format!(
            "cannot read argument '{s}' (buffer:TYPE:COUNT:random|zeros|ones|iota|uninit[:ro|wo|rw], local:TYPE:COUNT, or a value)"
        )),
    }
}

/// The array type of an OpenCL scalar type (`None` for bool).
pub fn dtype_of(s: Scalar) -> Option<DType> {
    Some(match s {
        Scalar::Char => DType::I8,
        Scalar::UChar => DType::U8,
        Scalar::Short => DType::I16,
        Scalar::UShort => DType::U16,
        Scalar::Int => DType::I32,
        Scalar::UInt => DType::U32,
        Scalar::Long => DType::I64,
        Scalar::ULong => DType::U64,
        Scalar::Half => DType::F16,
        Scalar::Float => DType::F32,
        Scalar::Double => DType::F64,
        Scalar::Bool => return None,
    })
}

/// The bytes of a buffer of `count` elements of `ty`.
fn contents(ty: &Type, count: usize, fill: Fill, seed: u64) -> Result<Vec<u8>, String> {
    let (s, per) = match ty {
        Type::Scalar(s) => (*s, 1),
        Type::Vector(s, n) => (*s, if *n == 3 { 4 } else { *n as usize }),
        t => return Err(format!("buffers of {} are not supported", t.name())),
    };
    let scalars = count * per;
    if fill == Fill::Random {
        let dtype = dtype_of(s).ok_or("random bools are not supported")?;
        let dist = if s.is_float() {
            Distribution::Uniform
        } else {
            Distribution::Ints
        };
        let data = generate(dtype, scalars, dist, seed).map_err(|e| e.to_string())?;
        return Ok(data.view().bytes().to_vec());
    }
    let elem = Type::Scalar(s);
    let mut bytes = vec![0u8; scalars * s.size()];
    for k in 0..scalars {
        let v = match fill {
            Fill::Zeros => 0,
            Fill::Ones => 1,
            _ => k as i64,
        };
        let value = if s.is_float() {
            Value::float(s, v as f64)
        } else {
            Value::int(s, v as u64)
        };
        to_bytes(&value, &elem, &mut bytes[k * s.size()..])?;
    }
    Ok(bytes)
}

/// Builds the arguments of `kernel` from `NAME=SPEC` pairs, allocating global buffers in
/// `mem`. Every parameter needs one; types must match the signature.
pub fn bind(
    kernel: &Function,
    given: &[(String, String)],
    mem: &mut Memory,
    seed: u64,
) -> Result<Vec<Arg>, AnalyzeError> {
    let usage = AnalyzeError::Usage;
    for (name, _) in given {
        if !kernel.params.iter().any(|p| &*p.name == name) {
            let names: Vec<&str> = kernel.params.iter().map(|p| &*p.name).collect();
            return Err(usage(format!(
                "kernel {} has no parameter {name} (it has {})",
                kernel.name,
                names.join(", ")
            )));
        }
    }
    let mut args = Vec::new();
    for (k, p) in kernel.params.iter().enumerate() {
        let Some((_, spec)) = given.iter().find(|(n, _)| *n == *p.name) else {
            let hint = match &p.ty {
                Type::Pointer(t, Some(Space::Local)) => format!("local:{}:COUNT", t.name()),
                Type::Pointer(t, _) => format!("buffer:{}:COUNT:random", t.name()),
                _ => "a value".into(),
            };
            return Err(usage(format!(
                "no --arg for parameter {} ({}); give --arg {}={hint}",
                p.name,
                p.ty.name(),
                p.name
            )));
        };
        let spec = parse_spec(spec).map_err(usage)?;
        let arg = match (&p.ty, spec) {
            (
                Type::Pointer(t, space),
                ArgSpec::Buffer {
                    ty,
                    count,
                    fill,
                    access,
                },
            ) if *space != Some(Space::Local) => {
                // A buffer of structs is given as its bytes (`buffer:uchar:BYTES:…`).
                let raw_structs =
                    matches!(**t, Type::Struct(_)) && ty == Type::Scalar(Scalar::UChar);
                if **t != ty && **t != Type::Void && !raw_structs {
                    return Err(usage(format!(
                        "parameter {} points to {}, the buffer holds {}",
                        p.name,
                        t.name(),
                        ty.name()
                    )));
                }
                let size = (ty.size() as u64).saturating_mul(count as u64);
                mem.check_budget(size, || format!("buffer {} of {size} bytes", p.name))
                    .map_err(usage)?;
                let mut buffer = if fill == Fill::Uninit {
                    Buffer::uninitialized(&p.name, size as usize)
                } else {
                    let bytes =
                        contents(&ty, count, fill, seed.wrapping_add(k as u64)).map_err(usage)?;
                    Buffer::new(&p.name, bytes)
                };
                buffer.access = access;
                mem.global.push(buffer);
                Arg::Global((mem.global.len() - 1) as u32)
            }
            (Type::Pointer(t, Some(Space::Local)), ArgSpec::Local { ty, count }) => {
                if **t != ty {
                    return Err(usage(format!(
                        "parameter {} points to {}, the local buffer holds {}",
                        p.name,
                        t.name(),
                        ty.name()
                    )));
                }
                let bytes = ty.size().checked_mul(count).ok_or_else(|| {
                    usage(format!("local buffer {} is too large to address", p.name))
                })?;
                Arg::Local(bytes)
            }
            (Type::Scalar(s), ArgSpec::Scalar(text)) => {
                Arg::Scalar(scalar_value(*s, &text).ok_or_else(|| {
                    usage(format!("'{text}' is not a {} for {}", s.name(), p.name))
                })?)
            }
            (ty @ (Type::Vector(..) | Type::Struct(_)), ArgSpec::Scalar(text)) => Arg::Scalar(
                composite_value(ty, &text)
                    .map_err(|why| usage(format!("parameter {} ({}): {why}", p.name, ty.name())))?,
            ),
            (ty, spec) => {
                return Err(usage(format!(
                    "parameter {} is {}; {spec:?} does not fit it",
                    p.name,
                    ty.name()
                )))
            }
        };
        args.push(arg);
    }
    Ok(args)
}

/// One scalar from its text: floats as written, signed integers in decimal, unsigned
/// ones also with size suffixes.
fn scalar_value(s: Scalar, text: &str) -> Option<Value> {
    let text = text.trim();
    if s.is_float() {
        text.parse::<f64>().map(|x| Value::float(s, x)).ok()
    } else if s.is_signed() {
        text.parse::<i64>().map(|x| Value::int(s, x as u64)).ok()
    } else {
        parse_size(text).ok().map(|x| Value::int(s, x as u64))
    }
}

/// The scalars a vector or struct holds, in memory order: (offset, type).
fn leaves(ty: &Type, base: usize, out: &mut Vec<(usize, Scalar)>) -> Result<(), String> {
    match ty {
        Type::Scalar(s) => out.push((base, *s)),
        Type::Vector(s, n) => {
            for k in 0..usize::from(*n) {
                out.push((base + k * s.size(), *s));
            }
        }
        Type::Struct(d) => {
            for (_, t, o) in &d.fields {
                leaves(t, base + o, out)?;
            }
        }
        other => return Err(format!("a {} cannot be passed by value", other.name())),
    }
    Ok(())
}

/// A vector or struct argument from comma-separated values: one per component or
/// field, in order (nested vectors and structs flattened); one value fills a whole
/// vector, as OpenCL's `(int4)(v)` does.
fn composite_value(ty: &Type, text: &str) -> Result<Value, String> {
    let mut slots = Vec::new();
    leaves(ty, 0, &mut slots)?;
    let mut items: Vec<&str> = text.split(',').collect();
    if items.len() == 1 && matches!(ty, Type::Vector(..)) {
        items = vec![items[0]; slots.len()];
    }
    if items.len() != slots.len() {
        return Err(format!(
            "{} values given, {} needed (comma-separated, in order)",
            items.len(),
            slots.len()
        ));
    }
    let mut bytes = vec![0u8; ty.size()];
    for ((offset, s), item) in slots.iter().zip(&items) {
        let v = scalar_value(*s, item)
            .ok_or_else(|| format!("'{}' is not a {}", item.trim(), s.name()))?;
        let scalar = Type::Scalar(*s);
        to_bytes(&v, &scalar, &mut bytes[*offset..*offset + s.size()])?;
    }
    from_bytes(ty, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_errors_explain() {
        assert_eq!(
            parse_spec("buffer:float4:2^10:iota"),
            Ok(ArgSpec::Buffer {
                ty: Type::Vector(Scalar::Float, 4),
                count: 1024,
                fill: Fill::Iota,
                access: Access::ReadWrite,
            })
        );
        assert_eq!(
            parse_spec("local:int:256"),
            Ok(ArgSpec::Local {
                ty: Type::Scalar(Scalar::Int),
                count: 256
            })
        );
        assert_eq!(parse_spec("42"), Ok(ArgSpec::Scalar("42".into())));
        assert_eq!(
            parse_spec("buffer:int:16:uninit:wo"),
            Ok(ArgSpec::Buffer {
                ty: Type::Scalar(Scalar::Int),
                count: 16,
                fill: Fill::Uninit,
                access: Access::WriteOnly,
            })
        );
        assert!(parse_spec("buffer:int:16:zeros:rx")
            .expect_err("bad access")
            .contains("unknown access 'rx'"));
        assert_eq!(
            parse_spec("buffer:f32:8:ones"),
            parse_spec("buffer:float:8:ones")
        );
        assert_eq!(parse_spec("local:u8:16"), parse_spec("local:uchar:16"));
        assert!(parse_spec("buffer:quux:4:zeros")
            .expect_err("bad type")
            .contains("unknown type"));
        assert!(parse_spec("buffer:int:4:fives")
            .expect_err("bad fill")
            .contains("unknown fill"));
    }

    #[test]
    fn iota_and_random_contents() {
        let b = contents(&Type::Scalar(Scalar::UShort), 3, Fill::Iota, 0).expect("ok");
        assert_eq!(b, [0, 0, 1, 0, 2, 0]);
        let r1 = contents(&Type::Scalar(Scalar::Float), 64, Fill::Random, 7).expect("ok");
        let r2 = contents(&Type::Scalar(Scalar::Float), 64, Fill::Random, 7).expect("ok");
        assert_eq!(r1, r2, "seeded");
        assert!(r1.chunks(4).any(|c| c != [0, 0, 0, 0]));
    }
}
