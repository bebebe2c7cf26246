//! The typed loops of the block evaluator ([`crate::block`]): one loop per operator or
//! function, with the operator chosen outside the loop so that each loop is a plain
//! vectorizable pass (a `match` per element had cost 10–20× the loop), and one-pass
//! forms that read inputs where they are instead of copying them into a block first.

use redlab_core::ArrayRef;

use crate::block::{in_place, zip, Column};
use crate::eval::{FloatRules, IntRules};
use crate::types::{Arith, Cmp, Func, Kind, Node, Ty, Val};

/// One pass from the inputs for the commonest float shapes, `x op c`, `x op y` and
/// `f(x)` with `x`, `y` inputs of the expression's own type: the values are read where
/// they are and written once, instead of copied into a block and then transformed
/// (a copy was a third of the time of `x * 2`).
pub(crate) fn from_inputs(
    node: &Node,
    inputs: &[ArrayRef<'_>],
    start: usize,
    len: usize,
) -> Option<Column> {
    fn go<T>(
        node: &Node,
        inputs: &[ArrayRef<'_>],
        start: usize,
        len: usize,
        ty: Ty,
    ) -> Option<Vec<T>>
    where
        T: redlab_core::Element + Float,
        Val: ScalarOf<T>,
    {
        let part = |n: &Node| in_place::<T>(n, inputs, ty).map(|s| &s[start..start + len]);
        match &node.kind {
            Kind::Arith(op, a, b) => {
                let x = part(a)?;
                if let Kind::Const(c) = b.kind {
                    let q = Val::scalar_of(c)?;
                    Some(float_scalar_from(*op, x, q))
                } else {
                    let y = part(b)?;
                    Some(float_columns_from(*op, x, y))
                }
            }
            Kind::Call(f, args) if args.len() == 1 && *f != Func::IsNan => {
                Some(float_unary_from(*f, part(&args[0])?))
            }
            _ => None,
        }
    }
    match node.ty {
        Ty::F32 => go::<f32>(node, inputs, start, len, Ty::F32).map(Column::F32),
        Ty::F64 => go::<f64>(node, inputs, start, len, Ty::F64).map(Column::F64),
        _ => None,
    }
}

/// The float types the loops run over (f32, f64): their rules and plain arithmetic.
pub(crate) trait Float:
    FloatRules
    + Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
}
impl<T> Float for T where
    T: FloatRules
        + Copy
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
{
}

/// The value of a constant as `T`, when it is one.
trait ScalarOf<T> {
    fn scalar_of(v: Val) -> Option<T>;
}
impl ScalarOf<f32> for Val {
    fn scalar_of(v: Val) -> Option<f32> {
        if let Val::F32(x) = v {
            Some(x)
        } else {
            None
        }
    }
}
impl ScalarOf<f64> for Val {
    fn scalar_of(v: Val) -> Option<f64> {
        if let Val::F64(x) = v {
            Some(x)
        } else {
            None
        }
    }
}

/// `x[k] op q` into a new column, the operator chosen outside the loop.
fn float_scalar_from<T: Float>(op: Arith, x: &[T], q: T) -> Vec<T> {
    match op {
        Arith::Add => x.iter().map(|&p| p + q).collect(),
        Arith::Sub => x.iter().map(|&p| p - q).collect(),
        Arith::Mul => x.iter().map(|&p| p * q).collect(),
        Arith::Div => x.iter().map(|&p| p / q).collect(),
        _ => x.iter().map(|&p| T::arith(op, p, q)).collect(),
    }
}

/// `x[k] op y[k]` into a new column, as [`float_scalar_from`].
fn float_columns_from<T: Float>(op: Arith, x: &[T], y: &[T]) -> Vec<T> {
    match op {
        Arith::Add => zip(x, y, |p, q| p + q),
        Arith::Sub => zip(x, y, |p, q| p - q),
        Arith::Mul => zip(x, y, |p, q| p * q),
        Arith::Div => zip(x, y, |p, q| p / q),
        _ => zip(x, y, |p, q| T::arith(op, p, q)),
    }
}

/// `x[k] = x[k] op q`, with the operator chosen once outside the loop so each loop
/// vectorizes.
pub(crate) fn float_scalar<T: Float>(op: Arith, x: &mut [T], q: T) {
    match op {
        Arith::Add => x.iter_mut().for_each(|p| *p = *p + q),
        Arith::Sub => x.iter_mut().for_each(|p| *p = *p - q),
        Arith::Mul => x.iter_mut().for_each(|p| *p = *p * q),
        Arith::Div => x.iter_mut().for_each(|p| *p = *p / q),
        _ => x.iter_mut().for_each(|p| *p = T::arith(op, *p, q)),
    }
}

/// `x[k] = x[k] op y[k]`, vectorizable as [`float_scalar`].
pub(crate) fn float_columns<T: Float>(op: Arith, x: &mut [T], y: &[T]) {
    let pairs = x.iter_mut().zip(y);
    match op {
        Arith::Add => pairs.for_each(|(p, &q)| *p = *p + q),
        Arith::Sub => pairs.for_each(|(p, &q)| *p = *p - q),
        Arith::Mul => pairs.for_each(|(p, &q)| *p = *p * q),
        Arith::Div => pairs.for_each(|(p, &q)| *p = *p / q),
        _ => pairs.for_each(|(p, &q)| *p = T::arith(op, *p, q)),
    }
}

/// The right operand of [`int_arith`]: one constant, or a column.
pub(crate) enum IntOperand<'a, T> {
    /// The same value for every element (`x * 2` is one pass over x).
    Scalar(T),
    /// One value per element.
    Column(&'a [T]),
}

/// `x[k] = x[k] op rhs[k]` for wrapping integers: each operator a loop of its own, with
/// [`IntRules::arith`] inlined for a constant operator, so the common ones vectorize
/// (a match per element had held `x * 2` on i32 to 0.17 of the built-in sum). Built
/// for AVX-512 too, chosen at run time: it has the 64-bit multiply that AVX2 lacks.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn int_arith<T: IntRules>(op: Arith, x: &mut [T], rhs: IntOperand<'_, T>) {
    macro_rules! each {
        ($o:expr) => {
            match rhs {
                IntOperand::Scalar(q) => x.iter_mut().for_each(|p| *p = T::arith($o, *p, q)),
                IntOperand::Column(y) => x
                    .iter_mut()
                    .zip(y)
                    .for_each(|(p, &q)| *p = T::arith($o, *p, q)),
            }
        };
    }
    match op {
        Arith::Add => each!(Arith::Add),
        Arith::Sub => each!(Arith::Sub),
        Arith::Mul => each!(Arith::Mul),
        Arith::BitAnd => each!(Arith::BitAnd),
        Arith::BitOr => each!(Arith::BitOr),
        Arith::BitXor => each!(Arith::BitXor),
        other => each!(other),
    }
}

/// `x[k] = f(x[k], y[k])` (`y` is `x` for one-operand functions) for integers, each
/// function a loop of its own as in [`int_arith`].
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn int_call_columns<T: IntRules>(f: Func, x: &mut [T], y: Option<&[T]>) {
    macro_rules! each {
        ($g:expr) => {
            match y {
                Some(y) => x
                    .iter_mut()
                    .zip(y)
                    .for_each(|(p, &q)| *p = crate::eval::int_call($g, *p, q)),
                None => x
                    .iter_mut()
                    .for_each(|p| *p = crate::eval::int_call($g, *p, *p)),
            }
        };
    }
    match f {
        Func::Abs => each!(Func::Abs),
        Func::Min => each!(Func::Min),
        Func::Max => each!(Func::Max),
        other => each!(other),
    }
}

/// `x[k] = f(x[k])`: each arm is a loop of its own, with [`FloatRules::call`] inlined for
/// a constant function.
pub(crate) fn float_unary<T: FloatRules + Copy>(f: Func, x: &mut [T]) {
    macro_rules! each {
        ($g:expr) => {
            x.iter_mut().for_each(|p| *p = T::call($g, *p, *p))
        };
    }
    match f {
        Func::Abs => each!(Func::Abs),
        Func::Sqrt => each!(Func::Sqrt),
        Func::Exp => each!(Func::Exp),
        Func::Log => each!(Func::Log),
        Func::Floor => each!(Func::Floor),
        Func::Ceil => each!(Func::Ceil),
        other => each!(other),
    }
}

/// `f(x[k])` into a new column, as [`float_unary`].
fn float_unary_from<T: FloatRules + Copy>(f: Func, x: &[T]) -> Vec<T> {
    macro_rules! each {
        ($g:expr) => {
            x.iter().map(|&p| T::call($g, p, p)).collect()
        };
    }
    match f {
        Func::Abs => each!(Func::Abs),
        Func::Sqrt => each!(Func::Sqrt),
        Func::Exp => each!(Func::Exp),
        Func::Log => each!(Func::Log),
        Func::Floor => each!(Func::Floor),
        Func::Ceil => each!(Func::Ceil),
        other => each!(other),
    }
}

/// `x[k] = f(x[k], y[k])`, as [`float_unary`].
pub(crate) fn float_binary<T: FloatRules + Copy>(f: Func, x: &mut [T], y: &[T]) {
    macro_rules! each {
        ($g:expr) => {
            x.iter_mut()
                .zip(y)
                .for_each(|(p, &q)| *p = T::call($g, *p, q))
        };
    }
    match f {
        Func::Min => each!(Func::Min),
        Func::Max => each!(Func::Max),
        Func::Pow => each!(Func::Pow),
        other => each!(other),
    }
}

/// `x[k] op q`, the comparison chosen outside the loop.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
pub(crate) fn compare_scalar<T: PartialOrd + Copy>(op: Cmp, x: &[T], q: T) -> Vec<bool> {
    match op {
        Cmp::Eq => x.iter().map(|&p| p == q).collect(),
        Cmp::Ne => x.iter().map(|&p| p != q).collect(),
        Cmp::Lt => x.iter().map(|&p| p < q).collect(),
        Cmp::Le => x.iter().map(|&p| p <= q).collect(),
        Cmp::Gt => x.iter().map(|&p| p > q).collect(),
        Cmp::Ge => x.iter().map(|&p| p >= q).collect(),
    }
}
