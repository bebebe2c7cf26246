//! The scalar evaluator: one element at a time, straight from the typed tree. It is the
//! oracle the tests hold every backend to, and it evaluates `post` on the host.
//!
//! The per-element rules live here once, as small functions on primitive types that the
//! block evaluator ([`crate::block`]) calls in its loops and that the OpenCL C generator
//! ([`crate::codegen`]) mirrors:
//! - integer `+ - * -x abs` wrap; `x / 0` and `x % 0` are 0; `i64::MIN / -1` wraps;
//! - float `%` is C's `fmod`; `min`/`max` return a NaN operand if there is one;
//! - float → integer saturates, NaN → 0; integer → narrower integer wraps;
//! - a number is true when it is not zero (NaN is true).

use redlab_core::{ArrayRef, DType, Scalar};

use crate::half_round::Half;
use crate::types::{Arith, Cmp, Func, Kind, Node, Ty, Val};

/// Integer rules shared by the evaluators.
pub trait IntRules: Copy + PartialOrd {
    /// `a ⊕ b` for the arithmetic operators.
    fn arith(op: Arith, a: Self, b: Self) -> Self;
    /// Wrapping negation.
    fn neg(self) -> Self;
    /// Wrapping absolute value.
    fn abs(self) -> Self;
}

macro_rules! int_rules {
    ($t:ty, $abs:expr) => {
        impl IntRules for $t {
            #[inline(always)]
            fn arith(op: Arith, a: $t, b: $t) -> $t {
                match op {
                    Arith::Add => a.wrapping_add(b),
                    Arith::Sub => a.wrapping_sub(b),
                    Arith::Mul => a.wrapping_mul(b),
                    Arith::Div => {
                        if b == 0 {
                            0
                        } else {
                            a.wrapping_div(b)
                        }
                    }
                    Arith::Rem => {
                        if b == 0 {
                            0
                        } else {
                            a.wrapping_rem(b)
                        }
                    }
                    Arith::BitAnd => a & b,
                    Arith::BitOr => a | b,
                    Arith::BitXor => a ^ b,
                }
            }
            #[inline(always)]
            fn neg(self) -> $t {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn abs(self) -> $t {
                let f: fn($t) -> $t = $abs;
                f(self)
            }
        }
    };
}
int_rules!(i64, |v: i64| v.wrapping_abs());
int_rules!(u64, |v: u64| v);

/// Float rules shared by the evaluators.
pub trait FloatRules: Copy + PartialOrd + std::ops::Neg<Output = Self> {
    /// `a ⊕ b`; bitwise operators never reach floats (the checker refuses them).
    fn arith(op: Arith, a: Self, b: Self) -> Self;
    /// Whether the value is NaN.
    fn nan(self) -> bool;
    /// `min`/`max` with NaN first.
    #[inline(always)]
    fn pick(self, b: Self, want_min: bool) -> Self {
        let b_wins = (want_min && b < self) || (!want_min && b > self);
        if self.nan() {
            self
        } else if b.nan() || b_wins {
            b
        } else {
            self
        }
    }
    /// The one-argument functions and `pow`.
    fn call(f: Func, a: Self, b: Self) -> Self;
}

macro_rules! float_rules {
    ($t:ty) => {
        impl FloatRules for $t {
            #[inline(always)]
            fn arith(op: Arith, a: $t, b: $t) -> $t {
                match op {
                    Arith::Add => a + b,
                    Arith::Sub => a - b,
                    Arith::Mul => a * b,
                    Arith::Div => a / b,
                    Arith::Rem => a % b,
                    Arith::BitAnd | Arith::BitOr | Arith::BitXor => <$t>::NAN,
                }
            }
            #[inline(always)]
            fn nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn call(f: Func, a: $t, b: $t) -> $t {
                match f {
                    Func::Min => a.pick(b, true),
                    Func::Max => a.pick(b, false),
                    Func::Abs => a.abs(),
                    Func::Sqrt => a.sqrt(),
                    Func::Exp => a.exp(),
                    Func::Log => a.ln(),
                    Func::Pow => a.powf(b),
                    Func::Floor => a.floor(),
                    Func::Ceil => a.ceil(),
                    Func::IsNan => <$t>::NAN,
                }
            }
        }
    };
}
float_rules!(f32);
float_rules!(f64);

/// `v` converted to `ty` (floats to integers saturate, NaN → 0; bools are 0/1; a number
/// is true unless it is zero).
pub fn convert_val(v: Val, ty: Ty) -> Val {
    match ty {
        Ty::Bool => Val::Bool(match v {
            Val::Bool(b) => b,
            Val::I64(x) => x != 0,
            Val::U64(x) => x != 0,
            Val::F32(x) => x != 0.0,
            Val::F64(x) => x != 0.0,
        }),
        Ty::I64 => Val::I64(match v {
            Val::Bool(b) => b as i64,
            Val::I64(x) => x,
            Val::U64(x) => x as i64,
            Val::F32(x) => x as i64,
            Val::F64(x) => x as i64,
        }),
        Ty::U64 => Val::U64(match v {
            Val::Bool(b) => b as u64,
            Val::I64(x) => x as u64,
            Val::U64(x) => x,
            Val::F32(x) => x as u64,
            Val::F64(x) => x as u64,
        }),
        Ty::F32 => Val::F32(match v {
            Val::Bool(b) => b as u8 as f32,
            Val::I64(x) => x as f32,
            Val::U64(x) => x as f32,
            Val::F32(x) => x,
            Val::F64(x) => x as f32,
        }),
        Ty::F64 => Val::F64(match v {
            Val::Bool(b) => b as u8 as f64,
            Val::I64(x) => x as f64,
            Val::U64(x) => x as f64,
            Val::F32(x) => x as f64,
            Val::F64(x) => x,
        }),
    }
}

/// `v` cast to the narrow integer `dtype` and widened back (see the module rules).
pub fn narrow_val(dtype: DType, v: Val) -> Val {
    macro_rules! through {
        ($t:ty) => {
            match v {
                Val::Bool(b) => b as $t,
                Val::I64(x) => x as $t,
                Val::U64(x) => x as $t,
                Val::F32(x) => x as $t,
                Val::F64(x) => x as $t,
            }
        };
    }
    match dtype {
        DType::I8 => Val::I64(through!(i8) as i64),
        DType::I16 => Val::I64(through!(i16) as i64),
        DType::I32 => Val::I64(through!(i32) as i64),
        DType::U8 => Val::U64(through!(u8) as u64),
        DType::U16 => Val::U64(through!(u16) as u64),
        DType::U32 => Val::U64(through!(u32) as u64),
        DType::F16 | DType::BF16 => {
            let format = if dtype == DType::F16 {
                Half::F16
            } else {
                Half::BF16
            };
            // Integers and bools go through f32 first, as `f32(…)` converts them.
            Val::F32(match v {
                Val::Bool(b) => format.round_f32(f32::from(u8::from(b))),
                Val::I64(x) => format.round_f32(x as f32),
                Val::U64(x) => format.round_f32(x as f32),
                Val::F32(x) => format.round_f32(x),
                Val::F64(x) => format.round_f64(x),
            })
        }
        other => convert_val(v, Ty::of_dtype(other)),
    }
}

/// Element `i` of `input` as a value of its loaded type.
pub fn load(input: &ArrayRef<'_>, i: usize) -> Val {
    let bytes = input.bytes();
    let size = input.dtype().size_bytes();
    let b = &bytes[i * size..(i + 1) * size];
    let mut word = [0u8; 8];
    word[..size].copy_from_slice(b);
    let raw = u64::from_le_bytes(word);
    match input.dtype() {
        DType::I8 => Val::I64(raw as u8 as i8 as i64),
        DType::I16 => Val::I64(raw as u16 as i16 as i64),
        DType::I32 => Val::I64(raw as u32 as i32 as i64),
        DType::I64 => Val::I64(raw as i64),
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => Val::U64(raw),
        DType::F16 => Val::F32(half::f16::from_bits(raw as u16).to_f32()),
        DType::BF16 => Val::F32(half::bf16::from_bits(raw as u16).to_f32()),
        DType::F32 => Val::F32(f32::from_bits(raw as u32)),
        DType::F64 => Val::F64(f64::from_bits(raw)),
    }
}

/// What the names of a part stand for at one element.
pub struct Env<'a> {
    /// The input arrays.
    pub inputs: &'a [ArrayRef<'a>],
    /// The element index.
    pub index: u64,
    /// The part's variables, by position.
    pub vars: &'a [Val],
}

/// Evaluates `node` at one element.
pub fn eval(node: &Node, env: &Env<'_>) -> Val {
    match &node.kind {
        Kind::Const(v) => *v,
        Kind::Input(k) => convert_val(load(&env.inputs[*k], env.index as usize), node.ty),
        Kind::Index => Val::U64(env.index),
        Kind::Var(k) => env.vars[*k],
        Kind::Neg(e) => match eval(e, env) {
            Val::I64(x) => Val::I64(x.neg()),
            Val::U64(x) => Val::U64(x.neg()),
            Val::F32(x) => Val::F32(-x),
            Val::F64(x) => Val::F64(-x),
            Val::Bool(b) => Val::I64(-(b as i64)),
        },
        Kind::Not(e) => Val::Bool(!truth(eval(e, env))),
        Kind::Arith(op, a, b) => arith_val(*op, eval(a, env), eval(b, env)),
        Kind::Compare(op, a, b) => Val::Bool(compare_val(*op, eval(a, env), eval(b, env))),
        Kind::Logic(and, a, b) => {
            let (x, y) = (truth(eval(a, env)), truth(eval(b, env)));
            Val::Bool(if *and { x && y } else { x || y })
        }
        Kind::Select(c, a, b) => {
            if truth(eval(c, env)) {
                eval(a, env)
            } else {
                eval(b, env)
            }
        }
        Kind::Call(f, args) => {
            let a = eval(&args[0], env);
            let b = args.get(1).map_or(a, |e| eval(e, env));
            call_val(*f, a, b)
        }
        Kind::Convert(e) => convert_val(eval(e, env), node.ty),
        Kind::Narrow(d, e) => narrow_val(*d, eval(e, env)),
    }
}

fn truth(v: Val) -> bool {
    matches!(convert_val(v, Ty::Bool), Val::Bool(true))
}

/// `a op b` for two values of one type.
pub fn arith_val(op: Arith, a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::I64(x), Val::I64(y)) => Val::I64(IntRules::arith(op, x, y)),
        (Val::U64(x), Val::U64(y)) => Val::U64(IntRules::arith(op, x, y)),
        (Val::F32(x), Val::F32(y)) => Val::F32(FloatRules::arith(op, x, y)),
        (Val::F64(x), Val::F64(y)) => Val::F64(FloatRules::arith(op, x, y)),
        (x, y) => {
            let t = if x.ty() == Ty::Bool { y.ty() } else { x.ty() };
            let t = if t == Ty::Bool { Ty::I64 } else { t };
            arith_val(op, convert_val(x, t), convert_val(y, t))
        }
    }
}

/// `a op b` for two values of one type.
pub fn compare_val(op: Cmp, a: Val, b: Val) -> bool {
    fn go<T: PartialOrd>(op: Cmp, a: T, b: T) -> bool {
        match op {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
    match (a, b) {
        (Val::Bool(x), Val::Bool(y)) => go(op, x, y),
        (Val::I64(x), Val::I64(y)) => go(op, x, y),
        (Val::U64(x), Val::U64(y)) => go(op, x, y),
        (Val::F32(x), Val::F32(y)) => go(op, x, y),
        (Val::F64(x), Val::F64(y)) => go(op, x, y),
        (x, y) => go(op, to_f64(x), to_f64(y)),
    }
}

fn to_f64(v: Val) -> f64 {
    match convert_val(v, Ty::F64) {
        Val::F64(x) => x,
        _ => f64::NAN,
    }
}

/// A function of one or two values of one type (`b` is ignored by one-argument ones).
pub fn call_val(f: Func, a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::F64(x), _) if f == Func::IsNan => Val::Bool(x.is_nan()),
        (Val::F32(x), _) if f == Func::IsNan => Val::Bool(x.is_nan()),
        (_, _) if f == Func::IsNan => Val::Bool(false),
        (Val::F32(x), Val::F32(y)) => Val::F32(FloatRules::call(f, x, y)),
        (Val::F64(x), Val::F64(y)) => Val::F64(FloatRules::call(f, x, y)),
        (Val::I64(x), Val::I64(y)) => Val::I64(int_call(f, x, y)),
        (Val::U64(x), Val::U64(y)) => Val::U64(int_call(f, x, y)),
        (x, y) => call_val(f, convert_val(x, Ty::I64), convert_val(y, Ty::I64)),
    }
}

/// `min`, `max`, `abs`, `floor`, `ceil` of integers (the others take floats).
pub fn int_call<T: IntRules>(f: Func, a: T, b: T) -> T {
    match f {
        Func::Min => {
            if b < a {
                b
            } else {
                a
            }
        }
        Func::Max => {
            if b > a {
                b
            } else {
                a
            }
        }
        Func::Abs => a.abs(),
        _ => a,
    }
}

/// A value as the [`Scalar`] of `dtype` (the type [`crate::types::result_dtype`] names).
pub fn to_scalar(v: Val, dtype: DType) -> Scalar {
    match (dtype, v) {
        (DType::I8, Val::I64(x)) => Scalar::I8(x as i8),
        (DType::I16, Val::I64(x)) => Scalar::I16(x as i16),
        (DType::I32, Val::I64(x)) => Scalar::I32(x as i32),
        (DType::I64, Val::I64(x)) => Scalar::I64(x),
        (DType::U8, Val::U64(x)) => Scalar::U8(x as u8),
        (DType::U8, Val::Bool(b)) => Scalar::U8(b as u8),
        (DType::U16, Val::U64(x)) => Scalar::U16(x as u16),
        (DType::U32, Val::U64(x)) => Scalar::U32(x as u32),
        (DType::U64, Val::U64(x)) => Scalar::U64(x),
        (DType::F32, Val::F32(x)) => Scalar::F32(x),
        (DType::F64, Val::F64(x)) => Scalar::F64(x),
        (DType::F16, Val::F32(x)) => Scalar::F16(half::f16::from_f32(x)),
        (DType::BF16, Val::F32(x)) => Scalar::BF16(half::bf16::from_f32(x)),
        (d, v) => to_scalar(convert_val(v, Ty::of_dtype(d)), d),
    }
}

/// A scalar result as a value (what `post` sees as `r`).
pub fn from_scalar(s: Scalar) -> Val {
    match s {
        Scalar::I8(x) => Val::I64(x.into()),
        Scalar::I16(x) => Val::I64(x.into()),
        Scalar::I32(x) => Val::I64(x.into()),
        Scalar::I64(x) => Val::I64(x),
        Scalar::U8(x) => Val::U64(x.into()),
        Scalar::U16(x) => Val::U64(x.into()),
        Scalar::U32(x) => Val::U64(x.into()),
        Scalar::U64(x) => Val::U64(x),
        Scalar::F16(x) => Val::F32(x.to_f32()),
        Scalar::BF16(x) => Val::F32(x.to_f32()),
        Scalar::F32(x) => Val::F32(x),
        Scalar::F64(x) => Val::F64(x),
    }
}
