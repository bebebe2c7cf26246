//! The type rules and the typed tree every backend runs.
//!
//! Values have one of five types ([`Ty`]): `bool`, 64-bit signed and unsigned integers,
//! `f32` and `f64`. Inputs widen on load (i8…i32 to i64, u8…u32 to u64, f16/bf16 to
//! f32), so integer arithmetic wraps at 64 bits on every backend. Casts to the narrower
//! integer types wrap (from integers) or saturate (from floats, NaN → 0) and widen
//! again; casts to f16/bf16 round to nearest even ([`crate::half_round`]) and widen to f32.
//!
//! Promotion, for arithmetic, comparisons, `min`/`max` and `?:`: any f64 → f64; f32 with
//! integers → f32; i64 with u64 → i64; bools count as i64. Literals are *weak*: `x * 2`
//! and `x * 0.5` keep an f32 `x` in f32, and a float literal next to an integer makes
//! f64 (numpy's rules for Python scalars).

use redlab_core::DType;

use crate::ast::{Ast, AstKind, BinaryOp, UnaryOp};
use crate::error::ExprError;

/// The type of a value inside an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    /// A comparison's result.
    Bool,
    /// Signed integers, wrapping at 64 bits.
    I64,
    /// Unsigned integers, wrapping at 64 bits.
    U64,
    /// IEEE single.
    F32,
    /// IEEE double.
    F64,
}

impl Ty {
    /// The type's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I64 => "i64",
            Ty::U64 => "u64",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
        }
    }

    /// Whether it is `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    /// The type an element of `dtype` has once loaded.
    pub fn of_dtype(dtype: DType) -> Ty {
        match dtype {
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Ty::I64,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Ty::U64,
            DType::F16 | DType::BF16 | DType::F32 => Ty::F32,
            DType::F64 => Ty::F64,
        }
    }

    /// The array type a result of this type is stored in (bools as u8 0/1).
    pub fn dtype(self) -> DType {
        match self {
            Ty::Bool => DType::U8,
            Ty::I64 => DType::I64,
            Ty::U64 => DType::U64,
            Ty::F32 => DType::F32,
            Ty::F64 => DType::F64,
        }
    }
}

/// A constant.
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)] // one variant per Ty
pub enum Val {
    Bool(bool),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
}

impl Val {
    /// The value's type.
    pub fn ty(self) -> Ty {
        match self {
            Val::Bool(_) => Ty::Bool,
            Val::I64(_) => Ty::I64,
            Val::U64(_) => Ty::U64,
            Val::F32(_) => Ty::F32,
            Val::F64(_) => Ty::F64,
        }
    }
}

/// Functions of the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // named as written
pub enum Func {
    Min,
    Max,
    Abs,
    Sqrt,
    Exp,
    Log,
    Pow,
    Floor,
    Ceil,
    IsNan,
}

impl Func {
    fn by_name(name: &str) -> Option<(Func, usize)> {
        Some(match name {
            "min" => (Func::Min, 2),
            "max" => (Func::Max, 2),
            "abs" => (Func::Abs, 1),
            "sqrt" => (Func::Sqrt, 1),
            "exp" => (Func::Exp, 1),
            "log" => (Func::Log, 1),
            "pow" => (Func::Pow, 2),
            "floor" => (Func::Floor, 1),
            "ceil" => (Func::Ceil, 1),
            "isnan" => (Func::IsNan, 1),
            _ => return None,
        })
    }
}

/// Arithmetic and bitwise operators on numbers of the node's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // named as written
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
}

/// Comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // named as written
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    /// The comparison with its operands swapped: `a op b` is `b op.mirrored() a`.
    pub fn mirrored(self) -> Cmp {
        match self {
            Cmp::Eq | Cmp::Ne => self,
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
        }
    }
}

/// A typed node. Operands already have the type the operation computes in: the checker
/// inserted every conversion, so backends never promote.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The result type.
    pub ty: Ty,
    /// The operation.
    pub kind: Kind,
}

/// Typed operations.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A constant of the node's type.
    Const(Val),
    /// Input `k`'s element at the current index, widened to the node's type class.
    Input(usize),
    /// The element index `i` (u64).
    Index,
    /// A variable of the part (`a`, `b`, `r`, `n`), by position in the scope.
    Var(usize),
    /// `-e` (wrapping for integers).
    Neg(Box<Node>),
    /// `!e` on a bool.
    Not(Box<Node>),
    /// Two operands of the node's type.
    Arith(Arith, Box<Node>, Box<Node>),
    /// Two operands of one type; the node is bool.
    Compare(Cmp, Box<Node>, Box<Node>),
    /// `&&` (true) or `||` (false) of bools; both sides are evaluated (no side effects).
    Logic(bool, Box<Node>, Box<Node>),
    /// `c ? a : b` with a bool `c`.
    Select(Box<Node>, Box<Node>, Box<Node>),
    /// A function; operands of the node's type (`isnan`: a float operand, bool node).
    Call(Func, Vec<Node>),
    /// The operand converted to the node's type.
    Convert(Box<Node>),
    /// The operand (an integer of the node's type, or a float) cast to a narrower
    /// integer type, then widened back to the node's type; or (f16/bf16, an f32 node)
    /// an f32 or f64 operand rounded to that format and widened to f32.
    Narrow(DType, Box<Node>),
}

/// The names a part of a reduction may use.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Input arrays' element types, named `x, y, z, w` (or `x0` … `x7`).
    pub inputs: Vec<DType>,
    /// Whether `i`, the element index, is available.
    pub index: bool,
    /// Further variables and their types (`a`, `b` in combine; `r`, `n` in post).
    pub vars: Vec<(String, Ty)>,
}

/// Most input arrays a reduction reads.
pub const MAX_INPUTS: usize = 8;

/// The input position a name refers to.
pub fn input_position(name: &str) -> Option<usize> {
    match name {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        "w" => Some(3),
        _ => name
            .strip_prefix('x')
            .and_then(|k| k.parse::<usize>().ok())
            .filter(|k| *k < MAX_INPUTS && name.len() == 2),
    }
}

/// A checked node and whether it is a weak literal (adapts to its neighbour's type).
struct Typed {
    node: Node,
    weak: bool,
}

/// Type-checks `ast` in `scope`.
pub fn check(ast: &Ast, scope: &Scope) -> Result<Node, ExprError> {
    Ok(check_weak(ast, scope)?.node)
}

fn strong(node: Node) -> Typed {
    Typed { node, weak: false }
}

fn check_weak(ast: &Ast, scope: &Scope) -> Result<Typed, ExprError> {
    let at = |m: String| ExprError::typing(format!("column {}: {m}", ast.column));
    Ok(match &ast.kind {
        AstKind::Int(v) => Typed {
            node: match i64::try_from(*v) {
                Ok(s) => constant(Val::I64(s)),
                Err(_) => constant(Val::U64(*v)),
            },
            weak: true,
        },
        AstKind::Float(v) => Typed {
            node: constant(Val::F64(*v)),
            weak: true,
        },
        AstKind::Name(name) => name_node(name, scope).map_err(at)?,
        AstKind::Unary(UnaryOp::Neg, e) => {
            let t = check_weak(e, scope)?;
            let ty = if t.node.ty == Ty::Bool {
                Ty::I64
            } else {
                t.node.ty
            };
            let inner = convert(t.node, ty);
            let node = match inner.kind {
                Kind::Const(v) => constant(negate(v)),
                _ => Node {
                    ty,
                    kind: Kind::Neg(Box::new(inner)),
                },
            };
            Typed { node, weak: t.weak }
        }
        AstKind::Unary(UnaryOp::Not, e) => {
            let t = check_weak(e, scope)?;
            strong(Node {
                ty: Ty::Bool,
                kind: Kind::Not(Box::new(convert(t.node, Ty::Bool))),
            })
        }
        AstKind::Binary(op, l, r) => {
            binary(*op, check_weak(l, scope)?, check_weak(r, scope)?).map_err(at)?
        }
        AstKind::Select(c, a, b) => {
            let cond = convert(check_weak(c, scope)?.node, Ty::Bool);
            let (a, b) = (check_weak(a, scope)?, check_weak(b, scope)?);
            let (ty, weak) = unify(&a, &b);
            strong_or_weak(
                Node {
                    ty,
                    kind: Kind::Select(
                        Box::new(cond),
                        Box::new(convert(a.node, ty)),
                        Box::new(convert(b.node, ty)),
                    ),
                },
                weak,
            )
        }
        AstKind::Call(name, args) => {
            let typed = args
                .iter()
                .map(|a| check_weak(a, scope))
                .collect::<Result<Vec<_>, _>>()?;
            call(name, typed).map_err(at)?
        }
    })
}

fn strong_or_weak(node: Node, weak: bool) -> Typed {
    Typed { node, weak }
}

fn constant(v: Val) -> Node {
    Node {
        ty: v.ty(),
        kind: Kind::Const(v),
    }
}

fn negate(v: Val) -> Val {
    match v {
        Val::Bool(b) => Val::I64(-(b as i64)),
        Val::I64(x) => Val::I64(x.wrapping_neg()),
        Val::U64(x) => Val::U64(x.wrapping_neg()),
        Val::F32(x) => Val::F32(-x),
        Val::F64(x) => Val::F64(-x),
    }
}

fn name_node(name: &str, scope: &Scope) -> Result<Typed, String> {
    if let Some((k, (_, ty))) = scope.vars.iter().enumerate().find(|(_, (n, _))| n == name) {
        return Ok(strong(Node {
            ty: *ty,
            kind: Kind::Var(k),
        }));
    }
    if name == "i" && scope.index {
        return Ok(strong(Node {
            ty: Ty::U64,
            kind: Kind::Index,
        }));
    }
    if let Some(k) = input_position(name) {
        if let Some(&dtype) = scope.inputs.get(k) {
            return Ok(strong(Node {
                ty: Ty::of_dtype(dtype),
                kind: Kind::Input(k),
            }));
        }
        return Err(format!(
            "'{name}' is input {} but the reduction has {} input{}",
            k + 1,
            scope.inputs.len(),
            if scope.inputs.len() == 1 { "" } else { "s" }
        ));
    }
    let weak_float = |v: f64| Typed {
        node: constant(Val::F64(v)),
        weak: true,
    };
    match name {
        "inf" => Ok(weak_float(f64::INFINITY)),
        "nan" => Ok(weak_float(f64::NAN)),
        "pi" => Ok(weak_float(std::f64::consts::PI)),
        "true" => Ok(strong(constant(Val::Bool(true)))),
        "false" => Ok(strong(constant(Val::Bool(false)))),
        _ => {
            let mut known: Vec<String> = scope.vars.iter().map(|(n, _)| n.clone()).collect();
            known.extend(
                ["x", "y", "z", "w"]
                    .iter()
                    .take(scope.inputs.len())
                    .map(|s| s.to_string()),
            );
            if scope.index {
                known.push("i".into());
            }
            Err(format!(
                "unknown name '{name}' (here: {}, inf, nan, pi, true, false)",
                known.join(", ")
            ))
        }
    }
}

/// The common type of two operands, and whether the result is still a weak literal.
fn unify(a: &Typed, b: &Typed) -> (Ty, bool) {
    let num = |t: Ty| if t == Ty::Bool { Ty::I64 } else { t };
    let (x, y) = (num(a.node.ty), num(b.node.ty));
    match (a.weak, b.weak) {
        (true, false) => (adopt(x, y), false),
        (false, true) => (adopt(y, x), false),
        (weak, _) => (promote(x, y), weak),
    }
}

/// A weak literal of type `lit` next to a strong `other`.
fn adopt(lit: Ty, other: Ty) -> Ty {
    if lit.is_float() && !other.is_float() {
        Ty::F64
    } else {
        other
    }
}

fn promote(x: Ty, y: Ty) -> Ty {
    use Ty::*;
    match (x, y) {
        (F64, _) | (_, F64) => F64,
        (F32, _) | (_, F32) => F32,
        (U64, U64) => U64,
        _ => I64,
    }
}

/// `node` as type `ty` (constants converted in place).
pub fn convert(node: Node, ty: Ty) -> Node {
    if node.ty == ty {
        return node;
    }
    if let Kind::Const(v) = node.kind {
        return constant(crate::eval::convert_val(v, ty));
    }
    Node {
        ty,
        kind: Kind::Convert(Box::new(node)),
    }
}

fn binary(op: BinaryOp, l: Typed, r: Typed) -> Result<Typed, String> {
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        return Ok(strong(Node {
            ty: Ty::Bool,
            kind: Kind::Logic(
                op == BinaryOp::And,
                Box::new(convert(l.node, Ty::Bool)),
                Box::new(convert(r.node, Ty::Bool)),
            ),
        }));
    }
    let (ty, weak) = unify(&l, &r);
    let (a, b) = (Box::new(convert(l.node, ty)), Box::new(convert(r.node, ty)));
    let cmp = match op {
        BinaryOp::Eq => Some(Cmp::Eq),
        BinaryOp::Ne => Some(Cmp::Ne),
        BinaryOp::Lt => Some(Cmp::Lt),
        BinaryOp::Le => Some(Cmp::Le),
        BinaryOp::Gt => Some(Cmp::Gt),
        BinaryOp::Ge => Some(Cmp::Ge),
        _ => None,
    };
    if let Some(cmp) = cmp {
        return Ok(strong(Node {
            ty: Ty::Bool,
            kind: Kind::Compare(cmp, a, b),
        }));
    }
    let arith = match op {
        BinaryOp::Add => Arith::Add,
        BinaryOp::Sub => Arith::Sub,
        BinaryOp::Mul => Arith::Mul,
        BinaryOp::Div => Arith::Div,
        BinaryOp::Rem => Arith::Rem,
        BinaryOp::BitAnd => Arith::BitAnd,
        BinaryOp::BitOr => Arith::BitOr,
        _ => Arith::BitXor,
    };
    if matches!(arith, Arith::BitAnd | Arith::BitOr | Arith::BitXor) && ty.is_float() {
        return Err(format!(
            "'{}' is defined for integers only, but its operands are {}",
            op.symbol(),
            ty.name()
        ));
    }
    Ok(strong_or_weak(
        Node {
            ty,
            kind: Kind::Arith(arith, a, b),
        },
        weak,
    ))
}

fn call(name: &str, mut args: Vec<Typed>) -> Result<Typed, String> {
    if let Some(dtype) = cast_target(name) {
        if args.len() != 1 {
            return Err(format!(
                "the cast {name}(…) takes 1 argument, not {}",
                args.len()
            ));
        }
        let arg = args.remove(0).node;
        return cast(dtype, arg).map(strong);
    }
    let Some((func, arity)) = Func::by_name(name) else {
        return Err(format!(
            "unknown function '{name}' (known: min max abs sqrt exp log pow floor ceil isnan, \
             and casts i8 … u64, f16, bf16, f32, f64, bool)"
        ));
    };
    if args.len() != arity {
        return Err(format!(
            "{name} takes {arity} argument{}, not {}",
            if arity == 1 { "" } else { "s" },
            args.len()
        ));
    }
    let weak = args.iter().all(|a| a.weak);
    let num = |t: Ty| if t == Ty::Bool { Ty::I64 } else { t };
    let floatish = |t: Ty| if t.is_float() { t } else { Ty::F64 };
    let ty = match func {
        Func::Min | Func::Max | Func::Pow => {
            let (t, _) = unify(&args[0], &args[1]);
            if func == Func::Pow {
                floatish(t)
            } else {
                t
            }
        }
        Func::Abs | Func::Floor | Func::Ceil => num(args[0].node.ty),
        Func::Sqrt | Func::Exp | Func::Log => floatish(num(args[0].node.ty)),
        Func::IsNan => {
            let t = args[0].node.ty;
            let operand = if t.is_float() { t } else { Ty::F64 };
            let arg = convert(args.remove(0).node, operand);
            return Ok(strong(Node {
                ty: Ty::Bool,
                kind: Kind::Call(Func::IsNan, vec![arg]),
            }));
        }
    };
    let operands = args.into_iter().map(|a| convert(a.node, ty)).collect();
    Ok(strong_or_weak(
        Node {
            ty,
            kind: Kind::Call(func, operands),
        },
        weak,
    ))
}

/// The type a cast's name names (`bool` as u8).
fn cast_target(name: &str) -> Option<Option<DType>> {
    if name == "bool" {
        return Some(None);
    }
    DType::ALL
        .iter()
        .copied()
        .find(|d| d.name() == name)
        .map(Some)
}

fn cast(target: Option<DType>, arg: Node) -> Result<Node, String> {
    let Some(dtype) = target else {
        return Ok(convert(arg, Ty::Bool));
    };
    match dtype {
        DType::F16 | DType::BF16 => {
            // An f64 rounds once, straight from its own bits; anything else through f32.
            let operand = if arg.ty == Ty::F64 {
                arg
            } else {
                convert(arg, Ty::F32)
            };
            Ok(Node {
                ty: Ty::F32,
                kind: Kind::Narrow(dtype, Box::new(operand)),
            })
        }
        DType::I64 | DType::U64 | DType::F32 | DType::F64 => Ok(convert(arg, Ty::of_dtype(dtype))),
        narrow => {
            let class = Ty::of_dtype(narrow);
            let operand = if arg.ty.is_float() {
                arg
            } else {
                convert(arg, class)
            };
            Ok(Node {
                ty: class,
                kind: Kind::Narrow(narrow, Box::new(operand)),
            })
        }
    }
}

/// The array type of an expression's results: a top-level narrowing cast's type, or its
/// type's ([`Ty::dtype`]).
pub fn result_dtype(node: &Node) -> DType {
    match node.kind {
        Kind::Narrow(d, _) => d,
        _ => node.ty.dtype(),
    }
}
