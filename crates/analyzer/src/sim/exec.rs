//! Statements under an active mask: blocks narrow the mask as lanes break, continue or
//! return; `if` splits it and both ways run (each with its lanes) before the lanes
//! reconverge; loops run while any lane stays in, each evaluation of the condition
//! being one branch instance per warp.

use std::collections::HashMap;

use crate::ast::{Initializer, Stmt, StmtKind};
use crate::mask::Mask;
use crate::source::{Diag, Pos};
use crate::types::Type;
use crate::value::Value;

use super::{Flow, Lanes, Sim, Slot};

fn merge(a: Option<Mask>, b: Option<Mask>) -> Option<Mask> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.or(&b)),
        (a, b) => a.or(b),
    }
}

impl Flow {
    fn join(self, other: Flow) -> Flow {
        Flow {
            brk: merge(self.brk, other.brk),
            cont: merge(self.cont, other.cont),
            ret: merge(self.ret, other.ret),
        }
    }

    /// Lanes that left the enclosing block.
    fn left(&self, len: usize) -> Mask {
        let mut m = Mask::empty(len);
        for x in [&self.brk, &self.cont, &self.ret].into_iter().flatten() {
            m = m.or(x);
        }
        m
    }
}

impl Sim<'_> {
    /// Runs `s` for the lanes of `mask`.
    pub(crate) fn exec(&mut self, s: &Stmt, mask: &Mask) -> Result<Flow, Diag> {
        if mask.is_empty() {
            return Ok(Flow::default());
        }
        match &s.kind {
            StmtKind::Empty => Ok(Flow::default()),
            StmtKind::Expr(e) => {
                self.step(s.pos, mask, None)?;
                self.eval(e, mask)?;
                Ok(Flow::default())
            }
            StmtKind::Decl(decls) => {
                for d in decls {
                    let slot = self.declare(d)?;
                    if let Some(init) = &d.init {
                        self.step(d.pos, mask, None)?;
                        let Slot::Private { offset, .. } = slot else {
                            return Err(Diag::new(
                                d.pos,
                                "local and constant variables cannot be initialized here",
                            ));
                        };
                        for (rel, ty, values) in self.init_values(&d.ty, init, mask, d.pos)? {
                            self.store_private(offset + rel, &ty, &values, mask, d.pos)?;
                        }
                    }
                }
                Ok(Flow::default())
            }
            StmtKind::Block(body) => self.scoped(|sim| sim.block(body, mask)),
            StmtKind::If(c, then, other) => {
                let values = self.eval(c, mask)?;
                let taken = mask.filter(|l| values[l].truthy());
                self.branch(c.pos, mask, &taken)?;
                let rest = mask.minus(&taken);
                let mut flow = self.exec(then, &taken)?;
                if let Some(other) = other {
                    flow = flow.join(self.exec(other, &rest)?);
                }
                Ok(flow)
            }
            StmtKind::While(c, body) => self.looped(mask, Some(c), None, body, false),
            StmtKind::DoWhile(body, c) => self.looped(mask, Some(c), None, body, true),
            StmtKind::For(init, c, step, body) => self.scoped(|sim| {
                if let Some(init) = init {
                    sim.exec(init, mask)?;
                }
                sim.looped(mask, c.as_ref(), step.as_ref(), body, false)
            }),
            StmtKind::Switch(value, groups) => self.scoped(|sim| sim.switched(value, groups, mask)),
            StmtKind::Break => Ok(Flow {
                brk: Some(mask.clone()),
                ..Flow::default()
            }),
            StmtKind::Continue => Ok(Flow {
                cont: Some(mask.clone()),
                ..Flow::default()
            }),
            StmtKind::Return(e) => {
                self.step(s.pos, mask, None)?;
                if let Some(e) = e {
                    let values = self.eval(e, mask)?;
                    let frame = self.frames.last_mut().expect("a frame is always present");
                    let ty = frame.ret_ty.clone();
                    for lane in mask.iter() {
                        frame.ret[lane] = crate::value::convert(&values[lane], &ty)
                            .map_err(|m| Diag::new(e.pos, m))?;
                    }
                }
                Ok(Flow {
                    ret: Some(mask.clone()),
                    ..Flow::default()
                })
            }
        }
    }

    /// Runs `f` in a new scope; variables declared inside are freed after.
    fn scoped(&mut self, f: impl FnOnce(&mut Self) -> Result<Flow, Diag>) -> Result<Flow, Diag> {
        let sp = self.sp;
        self.frames
            .last_mut()
            .expect("a frame is always present")
            .scopes
            .push(HashMap::new());
        let r = f(self);
        self.frames
            .last_mut()
            .expect("a frame is always present")
            .scopes
            .pop();
        self.sp = sp;
        r
    }

    fn block(&mut self, body: &[Stmt], mask: &Mask) -> Result<Flow, Diag> {
        let mut active = mask.clone();
        let mut flow = Flow::default();
        for s in body {
            if active.is_empty() {
                break;
            }
            let f = self.exec(s, &active)?;
            active = active.minus(&f.left(self.lanes));
            flow = flow.join(f);
        }
        Ok(flow)
    }

    /// `switch`: each lane enters at the label equal to its value (or `default`, or not
    /// at all) and falls through the following groups until it breaks; the switch takes
    /// its breaks, while `continue` and `return` go on to the enclosing construct.
    fn switched(
        &mut self,
        value: &crate::ast::Expr,
        groups: &[(Option<crate::ast::Expr>, Vec<Stmt>)],
        mask: &Mask,
    ) -> Result<Flow, Diag> {
        let values = self.eval(value, mask)?;
        let mut entries = Vec::with_capacity(groups.len());
        let mut matched = Mask::empty(self.lanes);
        for (label, _) in groups {
            let Some(label) = label else {
                entries.push(None);
                continue;
            };
            let labels = self.eval(label, mask)?;
            let mut equal = Mask::empty(self.lanes);
            for l in mask.iter() {
                let same = crate::value::binary(crate::ast::BinOp::Eq, &values[l], &labels[l])
                    .map_err(|m| Diag::new(label.pos, m))?;
                if same.truthy() {
                    equal.set(l);
                }
            }
            self.branch(label.pos, mask, &equal)?;
            matched = matched.or(&equal);
            entries.push(Some(equal));
        }
        let default = mask.minus(&matched);
        let mut active = Mask::empty(self.lanes);
        let mut left = Mask::empty(self.lanes);
        let mut flow = Flow::default();
        for ((_, body), entry) in groups.iter().zip(entries) {
            let entering = entry.unwrap_or_else(|| default.clone());
            active = active.or(&entering).minus(&left);
            if active.is_empty() {
                continue;
            }
            let f = self.block(body, &active)?;
            let gone = f.left(self.lanes);
            left = left.or(&gone);
            active = active.minus(&gone);
            flow = flow.join(Flow {
                brk: None,
                cont: f.cont,
                ret: f.ret,
            });
        }
        Ok(flow)
    }

    fn looped(
        &mut self,
        mask: &Mask,
        cond: Option<&crate::ast::Expr>,
        step: Option<&crate::ast::Expr>,
        body: &Stmt,
        body_first: bool,
    ) -> Result<Flow, Diag> {
        let mut active = mask.clone();
        let mut ret: Option<Mask> = None;
        let mut first = true;
        loop {
            if !(first && body_first) {
                if let Some(c) = cond {
                    let values = self.eval(c, &active)?;
                    let taken = active.filter(|l| values[l].truthy());
                    self.branch(c.pos, &active, &taken)?;
                    active = taken;
                }
            }
            first = false;
            if active.is_empty() {
                break;
            }
            let f = self.exec(body, &active)?;
            for gone in [&f.brk, &f.ret].into_iter().flatten() {
                active = active.minus(gone);
            }
            ret = merge(ret, f.ret);
            if active.is_empty() {
                break;
            }
            if let Some(s) = step {
                self.step(s.pos, &active, None)?;
                self.eval(s, &active)?;
            }
        }
        Ok(Flow {
            ret,
            ..Flow::default()
        })
    }

    /// The stores an initializer makes: `(offset in the variable, type, values)`.
    pub(crate) fn init_values(
        &mut self,
        ty: &Type,
        init: &Initializer,
        mask: &Mask,
        pos: Pos,
    ) -> Result<Vec<(usize, Type, Lanes)>, Diag> {
        let mut out = Vec::new();
        self.init_into(ty, init, mask, pos, 0, &mut out)?;
        Ok(out)
    }

    fn init_into(
        &mut self,
        ty: &Type,
        init: &Initializer,
        mask: &Mask,
        pos: Pos,
        base: usize,
        out: &mut Vec<(usize, Type, Lanes)>,
    ) -> Result<(), Diag> {
        match (ty, init) {
            (Type::Array(elem, n), Initializer::List(items)) => {
                if items.len() > *n {
                    return Err(Diag::new(
                        pos,
                        format!("{} initializers for {n} elements", items.len()),
                    ));
                }
                for (k, item) in items.iter().enumerate() {
                    self.init_into(elem, item, mask, pos, base + k * elem.size(), out)?;
                }
                // C zero-fills the elements without an initializer.
                for k in items.len()..*n {
                    let zero = vec![Value::Int(crate::types::Scalar::Int, 0); self.lanes];
                    self.zero_fill(elem, base + k * elem.size(), &zero, out);
                }
            }
            (Type::Struct(d), Initializer::List(items)) => {
                if d.is_union && items.len() > 1 {
                    return Err(Diag::new(
                        pos,
                        format!("union {} takes one initializer (its first field)", d.name),
                    ));
                }
                for ((_, t, o), item) in d.fields.iter().zip(items) {
                    self.init_into(t, item, mask, pos, base + o, out)?;
                }
            }
            (Type::Vector(..), Initializer::List(items)) => {
                let exprs: Vec<crate::ast::Expr> = items
                    .iter()
                    .filter_map(|i| match i {
                        Initializer::Expr(e) => Some(e.clone()),
                        Initializer::List(_) => None,
                    })
                    .collect();
                let values = self.vector_literal(ty, &exprs, mask, pos)?;
                out.push((base, ty.clone(), values));
            }
            (_, Initializer::List(items)) if items.len() == 1 => {
                self.init_into(ty, &items[0], mask, pos, base, out)?;
            }
            (_, Initializer::Expr(e)) => {
                let values = self.eval(e, mask)?;
                out.push((base, ty.clone(), values));
            }
            _ => {
                return Err(Diag::new(
                    pos,
                    format!("cannot initialize a {} with a list", ty.name()),
                ))
            }
        }
        Ok(())
    }

    fn zero_fill(&self, ty: &Type, base: usize, zero: &Lanes, out: &mut Vec<(usize, Type, Lanes)>) {
        match ty {
            Type::Array(e, n) => {
                for k in 0..*n {
                    self.zero_fill(e, base + k * e.size(), zero, out);
                }
            }
            Type::Struct(d) => {
                for (_, t, o) in &d.fields {
                    self.zero_fill(t, base + o, zero, out);
                }
            }
            t => out.push((base, t.clone(), zero.clone())),
        }
    }
}
