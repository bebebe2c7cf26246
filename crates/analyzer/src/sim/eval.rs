//! Expressions for all active lanes at once. Lvalues evaluate to one address per lane
//! ([`Sim::place`]); reading one is a warp-wide load, which is where the memory metrics
//! come from. `&&`, `||` and `?:` evaluate their operands only for the lanes that need
//! them (as C requires), and each counts as a branch.

use std::rc::Rc;

use crate::ast::{BinOp, Expr, ExprKind, UnOp};
use crate::mask::Mask;
use crate::metrics::FindingKind;
use crate::source::{Diag, Pos};
use crate::types::{Scalar, Space, Type};
use crate::value::{self, convert, Ptr, Value};

use super::{Lanes, Sim, Slot};

/// The deepest chain of function calls simulated: OpenCL C forbids recursion, so a
/// deeper chain is a recursive kernel, which would otherwise exhaust the native stack.
const MAX_CALL_DEPTH: usize = 64;

/// An address for lanes that are not active.
pub(crate) const NOWHERE: Ptr = Ptr {
    space: Space::Private,
    buffer: 0,
    offset: 0,
};

/// The components a swizzle selects from a vector of `n` (`x`, `s0f`, `lo`, `even` …).
pub(crate) fn swizzle(name: &str, n: usize) -> Option<Vec<usize>> {
    let half = n.div_ceil(2).max(1);
    let comps: Vec<usize> = match name {
        "lo" => (0..half).collect(),
        "hi" => (half..2 * half).collect(),
        "even" => (0..half).map(|k| 2 * k).collect(),
        "odd" => (0..half).map(|k| 2 * k + 1).collect(),
        _ if name.starts_with('s') || name.starts_with('S') => name[1..]
            .chars()
            .map(|c| c.to_digit(16).map(|d| d as usize))
            .collect::<Option<Vec<_>>>()?,
        _ => name
            .chars()
            .map(|c| "xyzw".find(c))
            .collect::<Option<Vec<_>>>()?,
    };
    (!comps.is_empty() && comps.iter().all(|c| *c < n.max(if n == 3 { 4 } else { n })))
        .then_some(comps)
}

fn is_lvalue(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Ident(_) | ExprKind::Index(..) | ExprKind::Arrow(..) => true,
        ExprKind::Unary(UnOp::Deref, _) => true,
        ExprKind::Member(inner, _) => is_lvalue(inner),
        _ => false,
    }
}

impl Sim<'_> {
    pub(crate) fn broadcast(&self, v: Value, mask: &Mask) -> Lanes {
        let mut out = vec![Value::Void; self.lanes];
        for l in mask.iter() {
            out[l] = v.clone();
        }
        out
    }

    /// Evaluates `e` for the lanes of `mask`.
    pub(crate) fn eval(&mut self, e: &Expr, mask: &Mask) -> Result<Lanes, Diag> {
        let pos = e.pos;
        let err = |m: String| Diag::new(pos, m);
        match &e.kind {
            ExprKind::Int(v, s) => Ok(self.broadcast(Value::int(*s, *v), mask)),
            ExprKind::Float(x, s) => Ok(self.broadcast(Value::float(*s, *x), mask)),
            ExprKind::Str(_) => Ok(self.broadcast(Value::Void, mask)),
            ExprKind::SizeOf(n) => Ok(self.broadcast(Value::Int(Scalar::ULong, *n as u64), mask)),
            ExprKind::SizeOfPlace(operand) => {
                // The operand's address and type, not its value: nothing is read.
                let (_, ty) = self.place(operand, mask)?;
                Ok(self.broadcast(Value::Int(Scalar::ULong, ty.size() as u64), mask))
            }
            ExprKind::Ident(_)
            | ExprKind::Index(..)
            | ExprKind::Arrow(..)
            | ExprKind::Unary(UnOp::Deref, _) => {
                let (ptrs, ty) = self.place(e, mask)?;
                self.rvalue(pos, mask, &ptrs, &ty)
            }
            ExprKind::Member(inner, field) => self.member(inner, field, mask, pos),
            ExprKind::Unary(UnOp::AddrOf, x) => {
                let (ptrs, ty) = self.place(x, mask)?;
                let ty = Rc::new(ty);
                let mut out = vec![Value::Void; self.lanes];
                for l in mask.iter() {
                    out[l] = Value::Ptr(ptrs[l], ty.clone());
                }
                Ok(out)
            }
            ExprKind::Unary(op, x) => {
                let v = self.eval(x, mask)?;
                self.per_lane(mask, |_, l| value::unary(*op, &v[l]).map_err(err))
            }
            ExprKind::Binary(op, a, b) => {
                let va = self.eval(a, mask)?;
                let vb = self.eval(b, mask)?;
                self.binary(*op, &va, &vb, mask, pos)
            }
            ExprKind::Logical(and, a, b) => {
                let va = self.eval(a, mask)?;
                let first = mask.filter(|l| va[l].truthy());
                self.branch(pos, mask, &first)?;
                let need = if *and {
                    first.clone()
                } else {
                    mask.minus(&first)
                };
                let vb = if need.is_empty() {
                    vec![Value::Void; self.lanes]
                } else {
                    self.eval(b, &need)?
                };
                self.per_lane(mask, |_, l| {
                    let r = if need.get(l) {
                        vb[l].truthy()
                    } else {
                        first.get(l)
                    };
                    Ok(Value::Int(Scalar::Int, r as u64))
                })
            }
            ExprKind::Cond(c, a, b) => {
                let vc = self.eval(c, mask)?;
                let taken = mask.filter(|l| vc[l].truthy());
                self.branch(pos, mask, &taken)?;
                let rest = mask.minus(&taken);
                let va = if taken.is_empty() {
                    None
                } else {
                    Some(self.eval(a, &taken)?)
                };
                let vb = if rest.is_empty() {
                    None
                } else {
                    Some(self.eval(b, &rest)?)
                };
                let kind = |v: &Option<Lanes>, m: &Mask| {
                    v.as_ref()
                        .and_then(|v| m.iter().next().and_then(|l| v[l].scalar()))
                };
                let common = match (kind(&va, &taken), kind(&vb, &rest)) {
                    (Some(x), Some(y)) => Some(Scalar::common(x, y)),
                    _ => None,
                };
                self.per_lane(mask, |_, l| {
                    let v = if taken.get(l) { &va } else { &vb };
                    let v = v.as_ref().map_or(Value::Void, |v| v[l].clone());
                    match common {
                        Some(s) => value::to_scalar(&v, s).map_err(err),
                        None => Ok(v),
                    }
                })
            }
            ExprKind::Assign(op, lhs, rhs) => {
                let v = self.eval(rhs, mask)?;
                let (ptrs, ty) = self.place(lhs, mask)?;
                let v = match op {
                    Some(op) => {
                        let cur = self.load(pos, mask, &ptrs, &ty)?;
                        self.binary(*op, &cur, &v, mask, pos)?
                    }
                    None => v,
                };
                self.store(pos, mask, &ptrs, &ty, &v)
            }
            ExprKind::PreIncDec(inc, x) | ExprKind::PostIncDec(inc, x) => {
                let (ptrs, ty) = self.place(x, mask)?;
                let cur = self.load(pos, mask, &ptrs, &ty)?;
                let one = self.broadcast(Value::Int(Scalar::Int, 1), mask);
                let op = if *inc { BinOp::Add } else { BinOp::Sub };
                let new = self.binary(op, &cur, &one, mask, pos)?;
                let stored = self.store(pos, mask, &ptrs, &ty, &new)?;
                Ok(if matches!(e.kind, ExprKind::PreIncDec(..)) {
                    stored
                } else {
                    cur
                })
            }
            ExprKind::Call(name, args) => {
                if let Some(f) = self.program.function(name).cloned() {
                    return self.call_user(&f, args, mask, pos);
                }
                match super::builtins::call(self, name, args, mask, pos)? {
                    Some(v) => Ok(v),
                    None => Err(err(format!("unknown function {name}"))),
                }
            }
            ExprKind::Cast(ty, x) => {
                let v = self.eval(x, mask)?;
                self.per_lane(mask, |_, l| convert(&v[l], ty).map_err(err))
            }
            ExprKind::VectorLit(ty, items) => self.vector_literal(ty, items, mask, pos),
            ExprKind::Compound(ty, init) => {
                let offset = self.alloc_private(ty, pos)?;
                for (rel, t, values) in self.init_values(ty, init, mask, pos)? {
                    self.store_private(offset + rel, &t, &values, mask, pos)?;
                }
                let ptrs = vec![
                    Ptr {
                        offset: offset as i64,
                        ..NOWHERE
                    };
                    self.lanes
                ];
                self.load(pos, mask, &ptrs, ty)
            }
            ExprKind::Comma(a, b) => {
                self.eval(a, mask)?;
                self.eval(b, mask)
            }
        }
    }

    fn per_lane(
        &self,
        mask: &Mask,
        mut f: impl FnMut(&Self, usize) -> Result<Value, Diag>,
    ) -> Result<Lanes, Diag> {
        let mut out = vec![Value::Void; self.lanes];
        for l in mask.iter() {
            out[l] = f(self, l)?;
        }
        Ok(out)
    }

    /// A binary operator per lane; integer division by zero is a finding (result 0).
    pub(crate) fn binary(
        &mut self,
        op: BinOp,
        a: &Lanes,
        b: &Lanes,
        mask: &Mask,
        pos: Pos,
    ) -> Result<Lanes, Diag> {
        let mut out = vec![Value::Void; self.lanes];
        for l in mask.iter() {
            out[l] = match value::binary(op, &a[l], &b[l]) {
                Ok(v) => v,
                Err(m) if m.contains("division by zero") => {
                    let (local, _) = self.ids(l);
                    self.find(FindingKind::DivisionByZero, pos, l, || {
                        format!("work-item {local:?} divides by zero")
                    });
                    Value::Int(Scalar::Int, 0)
                }
                Err(m) => return Err(Diag::new(pos, m)),
            };
        }
        Ok(out)
    }

    /// The value at an address: arrays decay to a pointer to their first element.
    fn rvalue(&mut self, pos: Pos, mask: &Mask, ptrs: &[Ptr], ty: &Type) -> Result<Lanes, Diag> {
        if let Type::Array(elem, _) = ty {
            let mut out = vec![Value::Void; self.lanes];
            for l in mask.iter() {
                out[l] = Value::Ptr(ptrs[l], elem.clone());
            }
            return Ok(out);
        }
        self.load(pos, mask, ptrs, ty)
    }

    /// The address of an lvalue for each lane, and its type.
    pub(crate) fn place(&mut self, e: &Expr, mask: &Mask) -> Result<(Vec<Ptr>, Type), Diag> {
        let pos = e.pos;
        match &e.kind {
            ExprKind::Ident(name) => match self.lookup(name) {
                Some(Slot::Private { offset, ty, var }) => Ok((
                    vec![
                        Ptr {
                            offset: offset as i64,
                            buffer: var,
                            ..NOWHERE
                        };
                        self.lanes
                    ],
                    ty,
                )),
                Some(Slot::Shared { ptr, ty }) => Ok((vec![ptr; self.lanes], ty)),
                None => Err(Diag::new(pos, format!("unknown name {name}"))),
            },
            ExprKind::Index(a, i) => {
                let (base, elem) = self.pointers(a, mask)?;
                let idx = self.eval(i, mask)?;
                let step = elem.size() as i64;
                let mut ptrs = vec![NOWHERE; self.lanes];
                for l in mask.iter() {
                    ptrs[l] = Ptr {
                        offset: base[l]
                            .offset
                            .wrapping_add(idx[l].as_i64().wrapping_mul(step)),
                        ..base[l]
                    };
                }
                Ok((ptrs, (*elem).clone()))
            }
            ExprKind::Unary(UnOp::Deref, p) => {
                let (ptrs, elem) = self.pointers(p, mask)?;
                Ok((ptrs, (*elem).clone()))
            }
            ExprKind::Arrow(p, field) => {
                let (ptrs, elem) = self.pointers(p, mask)?;
                self.field_place(ptrs, &elem, field, pos)
            }
            ExprKind::Member(s, field) => {
                let (ptrs, ty) = self.place(s, mask)?;
                self.field_place(ptrs, &ty, field, pos)
            }
            _ => Err(Diag::new(
                pos,
                "this expression has no address (it is not assignable)",
            )),
        }
    }

    fn field_place(
        &self,
        mut ptrs: Vec<Ptr>,
        ty: &Type,
        field: &str,
        pos: Pos,
    ) -> Result<(Vec<Ptr>, Type), Diag> {
        let (fty, offset) = match ty {
            Type::Struct(d) => {
                let (t, o) = d
                    .field(field)
                    .ok_or_else(|| Diag::new(pos, format!("{} has no field {field}", d.name)))?;
                (t.clone(), o)
            }
            Type::Vector(s, n) => match swizzle(field, *n as usize).as_deref() {
                Some([c]) => (Type::Scalar(*s), c * s.size()),
                Some(_) => {
                    return Err(Diag::new(
                        pos,
                        "assigning several components of a vector at once is not supported",
                    ))
                }
                None => {
                    return Err(Diag::new(
                        pos,
                        format!("no component {field} in {}", ty.name()),
                    ))
                }
            },
            _ => return Err(Diag::new(pos, format!("{} has no fields", ty.name()))),
        };
        for p in &mut ptrs {
            p.offset += offset as i64;
        }
        Ok((ptrs, fty))
    }

    /// Evaluates `e` to a pointer per lane and the type it points to.
    fn pointers(&mut self, e: &Expr, mask: &Mask) -> Result<(Vec<Ptr>, Rc<Type>), Diag> {
        let values = self.eval(e, mask)?;
        let mut ptrs = vec![NOWHERE; self.lanes];
        let mut elem: Option<Rc<Type>> = None;
        for l in mask.iter() {
            match &values[l] {
                Value::Ptr(p, t) => {
                    ptrs[l] = *p;
                    elem.get_or_insert_with(|| t.clone());
                }
                Value::Int(_, 0) => return Err(Diag::new(e.pos, "dereference of a null pointer")),
                v => {
                    return Err(Diag::new(
                        e.pos,
                        format!("{} is not a pointer or array", v.describe()),
                    ))
                }
            }
        }
        Ok((
            ptrs,
            elem.unwrap_or_else(|| Rc::new(Type::Scalar(Scalar::Int))),
        ))
    }

    fn member(&mut self, inner: &Expr, field: &str, mask: &Mask, pos: Pos) -> Result<Lanes, Diag> {
        if is_lvalue(inner) {
            let (ptrs, ty) = self.place(inner, mask)?;
            let single = match &ty {
                Type::Vector(_, n) => swizzle(field, *n as usize).is_some_and(|c| c.len() == 1),
                _ => true,
            };
            if single {
                let (ptrs, fty) = self.field_place(ptrs, &ty, field, pos)?;
                return self.rvalue(pos, mask, &ptrs, &fty);
            }
            let whole = self.rvalue(pos, mask, &ptrs, &ty)?;
            return self.extract(&whole, field, mask, pos);
        }
        let whole = self.eval(inner, mask)?;
        self.extract(&whole, field, mask, pos)
    }

    /// A field or swizzle of values.
    fn extract(&self, whole: &Lanes, field: &str, mask: &Mask, pos: Pos) -> Result<Lanes, Diag> {
        self.per_lane(mask, |_, l| match &whole[l] {
            Value::Struct(d, fields) => d
                .fields
                .iter()
                .position(|(n, _, _)| n == field)
                .map(|k| fields[k].clone())
                .ok_or_else(|| Diag::new(pos, format!("{} has no field {field}", d.name))),
            Value::Vector(s, items) => {
                let comps = swizzle(field, items.len()).ok_or_else(|| {
                    Diag::new(
                        pos,
                        format!("no component {field} in a vector of {}", items.len()),
                    )
                })?;
                if comps.len() == 1 {
                    Ok(items.get(comps[0]).cloned().unwrap_or(Value::Int(*s, 0)))
                } else {
                    Ok(Value::Vector(
                        *s,
                        Rc::new(
                            comps
                                .iter()
                                .map(|c| items.get(*c).cloned().unwrap_or(Value::Int(*s, 0)))
                                .collect(),
                        ),
                    ))
                }
            }
            v => Err(Diag::new(
                pos,
                format!("{} has no field {field}", v.describe()),
            )),
        })
    }

    /// `(T)(a, b, …)`: components from scalars and vectors, or one scalar broadcast.
    pub(crate) fn vector_literal(
        &mut self,
        ty: &Type,
        items: &[Expr],
        mask: &Mask,
        pos: Pos,
    ) -> Result<Lanes, Diag> {
        let Type::Vector(s, n) = ty else {
            return Err(Diag::new(
                pos,
                format!("{} is not a vector type", ty.name()),
            ));
        };
        let parts: Vec<Lanes> = items
            .iter()
            .map(|e| self.eval(e, mask))
            .collect::<Result<_, _>>()?;
        self.per_lane(mask, |_, l| {
            let mut comps = Vec::new();
            for p in &parts {
                match &p[l] {
                    Value::Vector(_, items) => comps.extend(items.iter().cloned()),
                    v => comps.push(v.clone()),
                }
            }
            let comps: Vec<Value> = comps
                .iter()
                .map(|c| value::to_scalar(c, *s))
                .collect::<Result<_, _>>()
                .map_err(|m| Diag::new(pos, m))?;
            match comps.len() {
                1 => Ok(Value::Vector(
                    *s,
                    Rc::new(vec![comps[0].clone(); *n as usize]),
                )),
                k if k == *n as usize => Ok(Value::Vector(*s, Rc::new(comps))),
                k => Err(Diag::new(
                    pos,
                    format!("{k} components for a {}", ty.name()),
                )),
            }
        })
    }

    fn call_user(
        &mut self,
        f: &Rc<crate::ast::Function>,
        args: &[Expr],
        mask: &Mask,
        pos: Pos,
    ) -> Result<Lanes, Diag> {
        if args.len() != f.params.len() {
            return Err(Diag::new(
                pos,
                format!(
                    "{} takes {} arguments, {} given",
                    f.name,
                    f.params.len(),
                    args.len()
                ),
            ));
        }
        if self.frames.len() > 64 {
            return Err(Diag::new(
                pos,
                "calls nested deeper than 64 (recursion is not allowed in OpenCL C)",
            ));
        }
        let values: Vec<Lanes> = args
            .iter()
            .map(|a| self.eval(a, mask))
            .collect::<Result<_, _>>()?;
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(Diag::new(
                pos,
                format!(
                    "calls nested deeper than {MAX_CALL_DEPTH} (OpenCL C does not allow recursion)"
                ),
            ));
        }
        let sp = self.sp;
        self.frames.push(super::Frame {
            scopes: vec![std::collections::HashMap::new()],
            ret: vec![Value::Void; self.lanes],
            ret_ty: f.ret.clone(),
        });
        let mut result = Ok(());
        for (p, v) in f.params.iter().zip(&values) {
            result = result.and_then(|_| {
                let offset = self.declare_private(&p.name, &p.ty, pos)?;
                self.store_private(offset, &p.ty, v, mask, pos)
            });
        }
        let flow = result.and_then(|_| self.exec(&f.body, mask));
        let frame = self.frames.pop().expect("pushed above");
        self.sp = sp;
        flow?;
        Ok(frame.ret)
    }
}
