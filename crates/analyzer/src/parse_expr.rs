//! Expressions: C's precedence levels by recursive descent, casts (told apart from
//! parenthesized expressions by the typedef table), vector literals `(float4)(…)`,
//! compound literals, and C's rules for the types of integer literals.

use crate::ast::{BinOp, Expr, ExprKind, UnOp};
use crate::lexer::Tok;
use crate::parser::Parser;
use crate::source::Diag;
use crate::types::{Scalar, Type};

const ASSIGN_OPS: &[(&str, Option<BinOp>)] = &[
    ("=", None),
    ("+=", Some(BinOp::Add)),
    ("-=", Some(BinOp::Sub)),
    ("*=", Some(BinOp::Mul)),
    ("/=", Some(BinOp::Div)),
    ("%=", Some(BinOp::Rem)),
    ("<<=", Some(BinOp::Shl)),
    (">>=", Some(BinOp::Shr)),
    ("&=", Some(BinOp::And)),
    ("|=", Some(BinOp::Or)),
    ("^=", Some(BinOp::Xor)),
];

/// Binary operators by precedence level, loosest first (`&&`/`||` are separate).
const LEVELS: &[&[(&str, BinOp)]] = &[
    &[("|", BinOp::Or)],
    &[("^", BinOp::Xor)],
    &[("&", BinOp::And)],
    &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
    &[
        ("<", BinOp::Lt),
        (">", BinOp::Gt),
        ("<=", BinOp::Le),
        (">=", BinOp::Ge),
    ],
    &[("<<", BinOp::Shl), (">>", BinOp::Shr)],
    &[("+", BinOp::Add), ("-", BinOp::Sub)],
    &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
];

/// A node built around `e` at `e`'s position; `e` moves in (cloning it here made long
/// operator chains quadratic).
fn wrap(e: Expr, kind: impl FnOnce(Box<Expr>) -> ExprKind) -> Expr {
    let pos = e.pos;
    Expr {
        kind: kind(Box::new(e)),
        pos,
    }
}

impl Parser<'_> {
    /// A full expression (with commas).
    pub fn expression(&mut self) -> Result<Expr, Diag> {
        self.left_chain(",", Self::assignment, ExprKind::Comma)
    }

    /// A left-associative chain `operand (op operand)*`, one nesting level per operator
    /// (the tree gets one level deeper with each).
    fn left_chain(
        &mut self,
        op: &str,
        operand: fn(&mut Self) -> Result<Expr, Diag>,
        make: fn(Box<Expr>, Box<Expr>) -> ExprKind,
    ) -> Result<Expr, Diag> {
        self.chain(|this| {
            let mut e = operand(this)?;
            while this.eat(op) {
                this.deepen()?;
                let rhs = operand(this)?;
                e = wrap(e, |e| make(e, Box::new(rhs)));
            }
            Ok(e)
        })
    }

    /// An assignment expression.
    pub fn assignment(&mut self) -> Result<Expr, Diag> {
        let lhs = self.conditional()?;
        for (p, op) in ASSIGN_OPS {
            if self.eat(p) {
                let rhs = self.nested(Self::assignment)?;
                return Ok(wrap(lhs, |lhs| ExprKind::Assign(*op, lhs, Box::new(rhs))));
            }
        }
        Ok(lhs)
    }

    fn conditional(&mut self) -> Result<Expr, Diag> {
        let c = self.logical_or()?;
        if self.eat("?") {
            let a = self.nested(Self::expression)?;
            self.expect(":")?;
            let b = self.nested(Self::conditional)?;
            return Ok(wrap(c, |c| ExprKind::Cond(c, Box::new(a), Box::new(b))));
        }
        Ok(c)
    }

    fn logical_or(&mut self) -> Result<Expr, Diag> {
        self.left_chain("||", Self::logical_and, |a, b| {
            ExprKind::Logical(false, a, b)
        })
    }

    fn logical_and(&mut self) -> Result<Expr, Diag> {
        self.left_chain("&&", |p| p.binary(0), |a, b| ExprKind::Logical(true, a, b))
    }

    fn binary(&mut self, level: usize) -> Result<Expr, Diag> {
        if level == LEVELS.len() {
            return self.unary();
        }
        self.chain(|this| {
            let mut e = this.binary(level + 1)?;
            'outer: loop {
                for (p, op) in LEVELS[level] {
                    if this.eat(p) {
                        this.deepen()?;
                        let rhs = this.binary(level + 1)?;
                        e = wrap(e, |e| ExprKind::Binary(*op, e, Box::new(rhs)));
                        continue 'outer;
                    }
                }
                return Ok(e);
            }
        })
    }

    fn unary(&mut self) -> Result<Expr, Diag> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> Result<Expr, Diag> {
        let pos = self.pos();
        let un = |op, e: Expr| Expr {
            kind: ExprKind::Unary(op, Box::new(e)),
            pos,
        };
        for (p, op) in [
            ("-", UnOp::Neg),
            ("+", UnOp::Plus),
            ("!", UnOp::Not),
            ("~", UnOp::BitNot),
            ("*", UnOp::Deref),
            ("&", UnOp::AddrOf),
        ] {
            if self.eat(p) {
                let e = self.unary()?;
                return Ok(un(op, e));
            }
        }
        for (p, inc) in [("++", true), ("--", false)] {
            if self.eat(p) {
                let e = self.unary()?;
                return Ok(Expr {
                    kind: ExprKind::PreIncDec(inc, Box::new(e)),
                    pos,
                });
            }
        }
        if self
            .peek()
            .and_then(|t| t.ident())
            .is_some_and(|w| &**w == "sizeof")
        {
            self.i += 1;
            if self.at("(") && self.starts_type(1) {
                self.i += 1;
                let ty = self.type_name()?;
                self.expect(")")?;
                return Ok(Expr {
                    kind: ExprKind::SizeOf(ty.size()),
                    pos,
                });
            }
            let operand = self.unary()?;
            if !matches!(
                operand.kind,
                ExprKind::Ident(_)
                    | ExprKind::Index(..)
                    | ExprKind::Member(..)
                    | ExprKind::Arrow(..)
                    | ExprKind::Unary(UnOp::Deref, _)
            ) {
                return Err(Diag::new(
                    pos,
                    "sizeof takes a type name, a variable, an element or a member (not a computed value)",
                ));
            }
            return Ok(Expr {
                kind: ExprKind::SizeOfPlace(Box::new(operand)),
                pos,
            });
        }
        if self.at("(") && self.starts_type(1) {
            self.i += 1;
            let ty = self.type_name()?;
            self.expect(")")?;
            if matches!(ty, Type::Vector(..)) && self.at("(") {
                self.i += 1;
                let mut items = Vec::new();
                while !self.at(")") {
                    items.push(self.assignment()?);
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect(")")?;
                let lit = Expr {
                    kind: ExprKind::VectorLit(ty, items),
                    pos,
                };
                return self.postfix(lit);
            }
            if self.at("{") {
                let init = self.initializer()?;
                let lit = Expr {
                    kind: ExprKind::Compound(ty, Box::new(init)),
                    pos,
                };
                return self.postfix(lit);
            }
            let e = self.unary()?;
            return Ok(Expr {
                kind: ExprKind::Cast(ty, Box::new(e)),
                pos,
            });
        }
        let primary = self.primary()?;
        self.postfix(primary)
    }

    /// A type name in a cast or `sizeof`: specifiers and pointer stars.
    fn type_name(&mut self) -> Result<Type, Diag> {
        let specs = self.specs()?;
        let mut ty = specs.ty;
        let mut space = specs.space;
        self.chain(|this| {
            while this.eat("*") {
                this.deepen()?;
                ty = Type::Pointer(std::rc::Rc::new(ty), space);
                space = None;
                while this
                    .peek()
                    .and_then(|t| t.ident())
                    .is_some_and(|w| matches!(&**w, "const" | "volatile" | "restrict"))
                {
                    this.i += 1;
                }
            }
            this.array_suffix(ty)
        })
    }

    fn postfix(&mut self, mut e: Expr) -> Result<Expr, Diag> {
        self.chain(|this| loop {
            let pos = e.pos;
            if this.at("[")
                || this.at(".")
                || this.at("->")
                || this.at("++")
                || this.at("--")
                || this.at("(")
            {
                this.deepen()?;
            }
            let kind = if this.eat("[") {
                let index = this.expression()?;
                this.expect("]")?;
                ExprKind::Index(Box::new(e), Box::new(index))
            } else if this.eat(".") {
                ExprKind::Member(Box::new(e), this.ident()?)
            } else if this.eat("->") {
                ExprKind::Arrow(Box::new(e), this.ident()?)
            } else if this.eat("++") {
                ExprKind::PostIncDec(true, Box::new(e))
            } else if this.eat("--") {
                ExprKind::PostIncDec(false, Box::new(e))
            } else if this.at("(") {
                let ExprKind::Ident(name) = &e.kind else {
                    return Err(Diag::new(pos, "only named functions can be called"));
                };
                let name = name.clone();
                this.i += 1;
                let mut args = Vec::new();
                while !this.at(")") {
                    args.push(this.assignment()?);
                    if !this.eat(",") {
                        break;
                    }
                }
                this.expect(")")?;
                ExprKind::Call(name, args)
            } else {
                return Ok(e);
            };
            e = Expr { kind, pos };
        })
    }

    fn primary(&mut self) -> Result<Expr, Diag> {
        let pos = self.pos();
        let Some(t) = self.peek() else {
            return Err(self.error("expected an expression".into()));
        };
        let kind = match &t.tok {
            Tok::Int {
                value,
                unsigned,
                long,
                decimal,
            } => ExprKind::Int(*value, int_literal_type(*value, *unsigned, *long, *decimal)),
            Tok::Float {
                value,
                single,
                half,
            } => {
                let s = if *single {
                    Scalar::Float
                } else if *half {
                    Scalar::Half
                } else {
                    Scalar::Double
                };
                ExprKind::Float(*value, s)
            }
            Tok::Char(c) => ExprKind::Int(*c as u64, Scalar::Int),
            Tok::Str(s) => ExprKind::Str(s.clone()),
            Tok::Ident(name) => ExprKind::Ident(name.clone()),
            Tok::Punct("(") => {
                self.i += 1;
                let e = self.expression()?;
                self.expect(")")?;
                return Ok(e);
            }
            Tok::Punct(_) => return Err(self.error("expected an expression".into())),
        };
        self.i += 1;
        Ok(Expr { kind, pos })
    }
}

/// The C type of an integer literal.
fn int_literal_type(value: u64, unsigned: bool, long: bool, decimal: bool) -> Scalar {
    let fits_int = value <= i32::MAX as u64;
    let fits_uint = value <= u32::MAX as u64;
    let fits_long = value <= i64::MAX as u64;
    match (unsigned, long) {
        (true, true) => Scalar::ULong,
        (true, false) if fits_uint => Scalar::UInt,
        (true, false) => Scalar::ULong,
        (false, true) if fits_long => Scalar::Long,
        (false, true) => Scalar::ULong,
        (false, false) if fits_int => Scalar::Int,
        (false, false) if !decimal && fits_uint => Scalar::UInt,
        (false, false) if fits_long => Scalar::Long,
        (false, false) => Scalar::ULong,
    }
}

/// The value of an integer constant expression, if it is one.
pub fn const_int(e: &Expr) -> Option<i64> {
    Some(match &e.kind {
        ExprKind::Int(v, _) => *v as i64,
        ExprKind::SizeOf(n) => *n as i64,
        ExprKind::Cast(Type::Scalar(s), inner) if !s.is_float() => const_int(inner)?,
        ExprKind::Unary(UnOp::Neg, a) => const_int(a)?.wrapping_neg(),
        ExprKind::Unary(UnOp::Plus, a) => const_int(a)?,
        ExprKind::Unary(UnOp::BitNot, a) => !const_int(a)?,
        ExprKind::Unary(UnOp::Not, a) => (const_int(a)? == 0) as i64,
        ExprKind::Cond(c, a, b) => {
            if const_int(c)? != 0 {
                const_int(a)?
            } else {
                const_int(b)?
            }
        }
        ExprKind::Logical(and, a, b) => {
            let (a, b) = (const_int(a)? != 0, const_int(b)? != 0);
            (if *and { a && b } else { a || b }) as i64
        }
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (const_int(a)?, const_int(b)?);
            match op {
                BinOp::Add => a.wrapping_add(b),
                BinOp::Sub => a.wrapping_sub(b),
                BinOp::Mul => a.wrapping_mul(b),
                BinOp::Div => a.checked_div(b)?,
                BinOp::Rem => a.checked_rem(b)?,
                BinOp::Shl => a.wrapping_shl(b as u32),
                BinOp::Shr => a.wrapping_shr(b as u32),
                BinOp::And => a & b,
                BinOp::Or => a | b,
                BinOp::Xor => a ^ b,
                BinOp::Lt => (a < b) as i64,
                BinOp::Gt => (a > b) as i64,
                BinOp::Le => (a <= b) as i64,
                BinOp::Ge => (a >= b) as i64,
                BinOp::Eq => (a == b) as i64,
                BinOp::Ne => (a != b) as i64,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_take_c_types() {
        assert_eq!(int_literal_type(1, false, false, true), Scalar::Int);
        assert_eq!(
            int_literal_type(0xffff_ffff, false, false, false),
            Scalar::UInt
        );
        assert_eq!(
            int_literal_type(0xffff_ffff, false, false, true),
            Scalar::Long
        );
        assert_eq!(int_literal_type(1, true, true, true), Scalar::ULong);
        assert_eq!(
            int_literal_type(u64::MAX, false, true, false),
            Scalar::ULong
        );
    }
}
