//! Built-in functions without side effects, per work-item: math, integer and
//! relational functions (component-wise on vectors), `select`, and the `as_*`
//! reinterpretations and `convert_*` conversions.

use std::rc::Rc;

use crate::ast::BinOp;
use crate::types::{Scalar, Type};
use crate::value::{binary, convert, from_bytes, to_bytes, to_scalar, Value};

/// The type a value has.
pub(crate) fn type_of(v: &Value) -> Option<Type> {
    Some(match v {
        Value::Int(s, _) | Value::Float(s, _) => Type::Scalar(*s),
        Value::Vector(s, items) => Type::Vector(*s, items.len() as u8),
        Value::Ptr(_, t) => Type::Pointer(t.clone(), None),
        Value::Struct(d, _) => Type::Struct(d.clone()),
        Value::Array(t, items) => Type::Array(t.clone(), items.len()),
        Value::Void => return None,
    })
}

/// Applies `f` to scalars, or component by component when an argument is a vector.
fn zip(args: &[Value], f: &dyn Fn(&[Value]) -> Result<Value, String>) -> Result<Value, String> {
    let n = args.iter().find_map(|a| match a {
        Value::Vector(_, items) => Some(items.len()),
        _ => None,
    });
    let Some(n) = n else { return f(args) };
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let comps: Vec<Value> = args
            .iter()
            .map(|a| match a {
                Value::Vector(_, items) => items[k].clone(),
                s => s.clone(),
            })
            .collect();
        out.push(f(&comps)?);
    }
    let s = out.first().and_then(Value::scalar).unwrap_or(Scalar::Int);
    Ok(Value::Vector(s, Rc::new(out)))
}

fn float_kind(v: &Value) -> Scalar {
    match v.scalar() {
        Some(s) if s.is_float() => s,
        _ => Scalar::Float,
    }
}

fn less(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(binary(BinOp::Lt, a, b)?.truthy())
}

fn common(a: &Value, b: &Value) -> Result<(Value, Value), String> {
    let s = Scalar::common(
        a.scalar().unwrap_or(Scalar::Int),
        b.scalar().unwrap_or(Scalar::Int),
    );
    Ok((to_scalar(a, s)?, to_scalar(b, s)?))
}

fn float1(name: &str) -> Option<fn(f64) -> f64> {
    let name = name
        .trim_start_matches("native_")
        .trim_start_matches("half_");
    Some(match name {
        "fabs" => f64::abs,
        "sqrt" => f64::sqrt,
        "rsqrt" => |x: f64| 1.0 / x.sqrt(),
        "recip" => |x: f64| 1.0 / x,
        "exp" => f64::exp,
        "exp2" => f64::exp2,
        "exp10" => |x: f64| 10f64.powf(x),
        "log" => f64::ln,
        "log2" => f64::log2,
        "log10" => f64::log10,
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "floor" => f64::floor,
        "ceil" => f64::ceil,
        "round" => f64::round,
        "trunc" => f64::trunc,
        "rint" => |x: f64| {
            let r = x.round();
            if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                r - x.signum()
            } else {
                r
            }
        },
        _ => return None,
    })
}

fn float2(name: &str) -> Option<fn(f64, f64) -> f64> {
    Some(match name.trim_start_matches("native_") {
        "pow" | "powr" => f64::powf,
        "fmod" => |a: f64, b: f64| a % b,
        "atan2" => f64::atan2,
        "hypot" => f64::hypot,
        "copysign" => f64::copysign,
        "fdim" => |a: f64, b: f64| if a > b { a - b } else { 0.0 },
        "fmin" => |a: f64, b: f64| {
            if b.is_nan() || a < b {
                if a.is_nan() {
                    b
                } else {
                    a
                }
            } else {
                b
            }
        },
        "fmax" => |a: f64, b: f64| {
            if b.is_nan() || a > b {
                if a.is_nan() {
                    b
                } else {
                    a
                }
            } else {
                b
            }
        },
        "divide" => |a: f64, b: f64| a / b,
        _ => return None,
    })
}

/// Relational functions give 1/0 on scalars and -1/0 on vector components.
fn relational(name: &str) -> Option<fn(f64) -> bool> {
    Some(match name {
        "isnan" => f64::is_nan,
        "isinf" => f64::is_infinite,
        "isfinite" => f64::is_finite,
        "isnormal" => f64::is_normal,
        "signbit" => f64::is_sign_negative,
        _ => return None,
    })
}

/// Calls the pure built-in `name`; `None` when there is no such function.
pub(crate) fn call(name: &str, args: &[Value]) -> Option<Result<Value, String>> {
    let arity = |n: usize| -> Result<(), String> {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("{name} takes {n} arguments, {} given", args.len()))
        }
    };
    if let Some(f) = float1(name) {
        return Some(arity(1).and_then(|_| {
            zip(args, &|a| {
                let s = float_kind(&a[0]);
                Ok(Value::float(s, f(a[0].as_f64())))
            })
        }));
    }
    if let Some(f) = float2(name) {
        return Some(arity(2).and_then(|_| {
            zip(args, &|a| {
                let s = Scalar::common(float_kind(&a[0]), float_kind(&a[1]));
                Ok(Value::float(s, f(a[0].as_f64(), a[1].as_f64())))
            })
        }));
    }
    if let Some(f) = relational(name) {
        let vector = matches!(args.first(), Some(Value::Vector(..)));
        return Some(arity(1).and_then(|_| {
            zip(args, &|a| {
                let yes = f(a[0].as_f64());
                let s = match (vector, float_kind(&a[0])) {
                    (false, _) => Scalar::Int,
                    (true, Scalar::Double) => Scalar::Long,
                    (true, Scalar::Half) => Scalar::Short,
                    (true, _) => Scalar::Int,
                };
                Ok(Value::int(
                    s,
                    if yes {
                        if vector {
                            u64::MAX
                        } else {
                            1
                        }
                    } else {
                        0
                    },
                ))
            })
        }));
    }
    if let Some(target) = name.strip_prefix("as_") {
        return Some(arity(1).and_then(|_| reinterpret(&args[0], target)));
    }
    if let Some(rest) = name.strip_prefix("convert_") {
        let target = rest.split('_').next().unwrap_or(rest);
        let sat = rest.contains("_sat");
        return Some(arity(1).and_then(|_| {
            let ty = Type::from_name(target).ok_or_else(|| format!("unknown type in {name}"))?;
            if sat {
                let s = match &ty {
                    Type::Scalar(s) | Type::Vector(s, _) => *s,
                    _ => Scalar::Int,
                };
                let clamped = zip(args, &|a| Ok(saturate(&a[0], s)))?;
                convert(&clamped, &ty)
            } else {
                convert(&args[0], &ty)
            }
        }));
    }
    let r = match name {
        "min" | "max" => arity(2).and_then(|_| {
            zip(args, &|a| {
                let (x, y) = common(&a[0], &a[1])?;
                let pick_y = if name == "min" {
                    less(&y, &x)?
                } else {
                    less(&x, &y)?
                };
                Ok(if pick_y { y } else { x })
            })
        }),
        "clamp" => arity(3).and_then(|_| {
            zip(args, &|a| {
                let (x, lo) = common(&a[0], &a[1])?;
                let (x, hi) = common(&x, &a[2])?;
                let x = if less(&x, &lo)? { lo } else { x };
                Ok(if less(&hi, &x)? { hi } else { x })
            })
        }),
        "abs" => arity(1).and_then(|_| {
            zip(args, &|a| match &a[0] {
                Value::Int(s, b) if s.is_signed() => {
                    let u = match s {
                        Scalar::Char => Scalar::UChar,
                        Scalar::Short => Scalar::UShort,
                        Scalar::Int => Scalar::UInt,
                        _ => Scalar::ULong,
                    };
                    Ok(Value::int(u, (*b as i64).unsigned_abs()))
                }
                Value::Float(s, x) => Ok(Value::Float(*s, x.abs())),
                v => Ok(v.clone()),
            })
        }),
        "abs_diff" => arity(2).and_then(|_| {
            zip(args, &|a| {
                let (x, y) = common(&a[0], &a[1])?;
                let (hi, lo) = if less(&x, &y)? { (y, x) } else { (x, y) };
                binary(BinOp::Sub, &hi, &lo)
            })
        }),
        // (x + y) >> 1 and (x + y + 1) >> 1 without overflow, as OpenCL defines them.
        "hadd" | "rhadd" => arity(2).and_then(|_| {
            zip(args, &|a| {
                let (x, y) = common(&a[0], &a[1])?;
                let wide = |v: &Value| -> Result<(Scalar, i128), String> {
                    match v {
                        Value::Int(s, bits) if s.is_signed() => Ok((*s, *bits as i64 as i128)),
                        Value::Int(s, bits) => Ok((*s, *bits as i128)),
                        other => Err(format!("{name} takes integers, not {}", other.describe())),
                    }
                };
                let ((s, x), (_, y)) = (wide(&x)?, wide(&y)?);
                let round = i128::from(name == "rhadd");
                Ok(Value::int(s, ((x + y + round) >> 1) as u64))
            })
        }),
        "fma" | "mad" => arity(3).and_then(|_| {
            zip(args, &|a| {
                let s = float_kind(&a[0]);
                Ok(Value::float(
                    s,
                    a[0].as_f64().mul_add(a[1].as_f64(), a[2].as_f64()),
                ))
            })
        }),
        "mul24" => arity(2).and_then(|_| zip(args, &|a| binary(BinOp::Mul, &a[0], &a[1]))),
        "mad24" => arity(3).and_then(|_| {
            zip(args, &|a| {
                binary(BinOp::Add, &binary(BinOp::Mul, &a[0], &a[1])?, &a[2])
            })
        }),
        "popcount" | "clz" | "ctz" => arity(1).and_then(|_| {
            zip(args, &|a| match &a[0] {
                Value::Int(s, b) => {
                    let bits = 8 * s.size() as u32;
                    let masked = if bits == 64 {
                        *b
                    } else {
                        b & ((1u64 << bits) - 1)
                    };
                    let n = match name {
                        "popcount" => masked.count_ones(),
                        "clz" => masked.leading_zeros() - (64 - bits),
                        _ => masked.trailing_zeros().min(bits),
                    };
                    Ok(Value::int(*s, n as u64))
                }
                v => Err(format!("{name} needs an integer, not {}", v.describe())),
            })
        }),
        "rotate" => arity(2).and_then(|_| {
            zip(args, &|a| match &a[0] {
                Value::Int(s, b) => {
                    let bits = 8 * s.size() as u32;
                    let r = (a[1].as_u64() as u32) % bits;
                    let m = if bits == 64 {
                        u64::MAX
                    } else {
                        (1u64 << bits) - 1
                    };
                    let x = b & m;
                    let rotated = if r == 0 {
                        x
                    } else {
                        ((x << r) | (x >> (bits - r))) & m
                    };
                    Ok(Value::int(*s, rotated))
                }
                v => Err(format!("rotate needs an integer, not {}", v.describe())),
            })
        }),
        "select" => arity(3).and_then(|_| select(args)),
        _ => return None,
    };
    Some(r)
}

fn select(args: &[Value]) -> Result<Value, String> {
    match (&args[0], &args[1], &args[2]) {
        (Value::Vector(s, a), Value::Vector(_, b), Value::Vector(_, c)) => {
            let items = a
                .iter()
                .zip(b.iter())
                .zip(c.iter())
                .map(|((x, y), m)| {
                    // Vector select tests the most significant bit.
                    let bits = 8 * m.scalar().map_or(4, Scalar::size) as u32;
                    if (m.as_u64() >> (bits - 1)) & 1 == 1 {
                        y.clone()
                    } else {
                        x.clone()
                    }
                })
                .collect();
            Ok(Value::Vector(*s, Rc::new(items)))
        }
        (a, b, c) => Ok(if c.truthy() { b.clone() } else { a.clone() }),
    }
}

fn saturate(v: &Value, s: Scalar) -> Value {
    if s.is_float() {
        return v.clone();
    }
    let bits = 8 * s.size() as u32;
    let (lo, hi): (f64, f64) = if s.is_signed() {
        (
            -(2f64.powi(bits as i32 - 1)),
            2f64.powi(bits as i32 - 1) - 1.0,
        )
    } else {
        (0.0, 2f64.powi(bits as i32) - 1.0)
    };
    let x = v.as_f64();
    if x.is_nan() {
        return Value::int(s, 0);
    }
    if x <= lo {
        return Value::int(s, lo as i64 as u64);
    }
    if x >= hi {
        return Value::int(
            s,
            if s.is_signed() {
                hi as i64 as u64
            } else {
                hi as u64
            },
        );
    }
    v.clone()
}

/// `as_T(v)`: the same bits as another type of the same size.
fn reinterpret(v: &Value, target: &str) -> Result<Value, String> {
    let ty = Type::from_name(target).ok_or_else(|| format!("unknown type as_{target}"))?;
    let from = type_of(v).ok_or("as_ of no value")?;
    if from.size() != ty.size() {
        return Err(format!(
            "as_{target} needs {} bytes, {} has {}",
            ty.size(),
            from.name(),
            from.size()
        ));
    }
    let mut bytes = vec![0u8; from.size()];
    to_bytes(v, &from, &mut bytes)?;
    from_bytes(&ty, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f64) -> Value {
        Value::float(Scalar::Float, x)
    }

    #[test]
    fn halving_adds_do_not_overflow_and_round_as_opencl_says() {
        let u = |x: u64| Value::int(Scalar::UInt, x);
        let i = |x: i64| Value::int(Scalar::Int, x as u64);
        let r = call("rhadd", &[u(u32::MAX as u64), u(u32::MAX as u64)]);
        assert_eq!(r.expect("known").expect("ok"), u(u32::MAX as u64));
        let r = call("hadd", &[u(u32::MAX as u64), u(u32::MAX as u64 - 1)]);
        assert_eq!(r.expect("known").expect("ok"), u(u32::MAX as u64 - 1));
        assert_eq!(
            call("hadd", &[i(-3), i(2)]).expect("known").expect("ok"),
            i(-1)
        );
        assert_eq!(
            call("rhadd", &[i(-3), i(2)]).expect("known").expect("ok"),
            i(0)
        );
    }

    #[test]
    fn math_integer_and_bit_functions() {
        let r = call("as_int", &[f(-0.0)]).expect("known").expect("ok");
        assert_eq!(r, Value::int(Scalar::Int, 0x8000_0000));
        let r = call(
            "min",
            &[Value::int(Scalar::ULong, 5), Value::int(Scalar::Int, 3)],
        )
        .expect("known")
        .expect("ok");
        assert_eq!(r, Value::int(Scalar::ULong, 3));
        let r = call("isnan", &[f(f64::NAN)]).expect("known").expect("ok");
        assert_eq!(r, Value::int(Scalar::Int, 1));
        let r = call("clz", &[Value::int(Scalar::UInt, 1)])
            .expect("known")
            .expect("ok");
        assert_eq!(r, Value::int(Scalar::UInt, 31));
        let r = call("convert_uchar_sat", &[Value::int(Scalar::Int, 300)])
            .expect("known")
            .expect("ok");
        assert_eq!(r, Value::int(Scalar::UChar, 255));
        assert!(
            call("as_long", &[f(1.0)]).expect("known").is_err(),
            "sizes differ"
        );
        assert!(call("no_such_function", &[]).is_none());
    }
}
