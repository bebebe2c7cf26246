//! A user-defined reduction: `map` per element, `combine`, `identity`, an optional
//! `post` on the result and an accumulator type, checked together against the inputs'
//! types. [`ReductionBuilder`] is the library's way to write one; the CLI's
//! `--map/--combine/--identity/--post/--acc` build the same.
//!
//! A built-in combine (sum, prod, min, max, and, or, xor, argmin, argmax) turns the
//! reduction into an ordinary [`Problem`] over the mapped values, so every backend runs
//! it with the production machinery and the canonical order: `map x*y, sum` gives the
//! same bits everywhere. A custom combine (an expression in `a` and `b`) runs in the
//! canonical order too, but its result depends on that order unless the expression is
//! exact (docs/expressions.md).

use redlab_core::{DType, Op, Problem, Value};

use crate::error::ExprError;
use crate::eval::{eval, Env};
use crate::parser::parse;
use crate::types::{check, convert, result_dtype, Arith, Kind, Node, Scope, Ty, Val, MAX_INPUTS};

/// How partial results are joined.
#[derive(Debug, Clone, PartialEq)]
pub enum Combine {
    /// A built-in operator over the mapped values.
    Builtin(Problem),
    /// An expression in `a` (the lower-index partial) and `b`, with its identity.
    Custom {
        /// The expression, of the accumulator type.
        node: Node,
        /// Its text.
        text: String,
        /// The identity, a constant of the accumulator type.
        identity: Val,
        /// The accumulator type.
        acc: Ty,
    },
}

/// A checked reduction, ready for any backend.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduction {
    /// The map's text, as given.
    pub map_text: String,
    /// The map, typed.
    pub map: Node,
    /// The inputs' element types, in order (`x`, `y`, …).
    pub inputs: Vec<DType>,
    /// The array type of mapped values.
    pub mapped: DType,
    /// The combine.
    pub combine: Combine,
    /// `post`, in `r` (the result; the index for argmin/argmax) and `n` (the count).
    pub post: Option<(String, Node)>,
}

/// Builds a [`Reduction`]; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct ReductionBuilder {
    map: String,
    combine: String,
    identity: Option<String>,
    post: Option<String>,
    acc: Option<DType>,
}

impl Reduction {
    /// A builder with `map` and `combine` (a built-in name or an expression in `a`, `b`).
    ///
    /// ```
    /// use redlab_core::DType;
    /// use redlab_expr::Reduction;
    ///
    /// let dot = Reduction::builder("x * y", "sum").build(&[DType::F32, DType::F32])?;
    /// assert_eq!(dot.mapped, DType::F32);
    /// let l2 = Reduction::builder("x * x", "sum").post("sqrt(r)").build(&[DType::F64])?;
    /// assert!(l2.post.is_some());
    /// # Ok::<(), redlab_expr::ExprError>(())
    /// ```
    pub fn builder(map: &str, combine: &str) -> ReductionBuilder {
        ReductionBuilder {
            map: map.into(),
            combine: combine.into(),
            ..ReductionBuilder::default()
        }
    }

    /// The built-in problem, when the combine is one.
    pub fn problem(&self) -> Option<&Problem> {
        match &self.combine {
            Combine::Builtin(p) => Some(p),
            Combine::Custom { .. } => None,
        }
    }

    /// The custom combine's expression (of the accumulator type), identity and
    /// accumulator type; `None` for a built-in combine.
    pub fn custom(&self) -> Option<(&Node, Val, Ty)> {
        match &self.combine {
            Combine::Custom {
                node,
                identity,
                acc,
                ..
            } => Some((node, *identity, *acc)),
            Combine::Builtin(_) => None,
        }
    }

    /// [`Reduction::custom`], or an error that names the reduction.
    pub fn custom_or_err(&self) -> Result<(&Node, Val, Ty), redlab_core::Error> {
        self.custom().ok_or_else(|| {
            redlab_core::Error::Shape(format!("{}: not a custom combine", self.describe()))
        })
    }

    /// Applies `post` (if any) to a reduction's result over `n` elements. Results
    /// without a value (min of nothing) stay so; a custom combine's result over nothing
    /// is its identity, whatever a kernel's empty-input rule gave.
    pub fn finish(&self, value: Value, n: usize) -> Value {
        let value = match &self.combine {
            Combine::Custom { identity, acc, .. } if n == 0 => {
                Value::Scalar(crate::eval::to_scalar(*identity, acc.dtype()))
            }
            _ => value,
        };
        let Some((_, post)) = &self.post else {
            return value;
        };
        let r = match value {
            Value::Scalar(s) => crate::eval::from_scalar(s),
            Value::Indexed { index, .. } => Val::U64(index),
            Value::Empty => return Value::Empty,
        };
        let vars = [r, Val::U64(n as u64)];
        let out = eval(
            post,
            &Env {
                inputs: &[],
                index: 0,
                vars: &vars,
            },
        );
        Value::Scalar(crate::eval::to_scalar(out, result_dtype(post)))
    }

    /// The same reduction over a slice that starts at element `start` of the whole
    /// input: the map reads `i + start` where it reads `i`, so the slice's elements map
    /// as they do in the whole array. A group of devices hands each member such a slice;
    /// a GPU compiles one kernel per distinct start (its source carries the constant).
    pub fn with_index_from(&self, start: u64) -> Reduction {
        let mut shifted = self.clone();
        if start != 0 {
            shifted.map = index_from(&self.map, start);
        }
        shifted
    }

    /// A short description (`map x * y, combine sum`).
    pub fn describe(&self) -> String {
        let combine = match &self.combine {
            Combine::Builtin(p) => p.to_string(),
            Combine::Custom { text, acc, .. } => format!("'{text}' in {}", acc.name()),
        };
        let post = self
            .post
            .as_ref()
            .map_or(String::new(), |(t, _)| format!(", post '{t}'"));
        format!("map '{}', combine {combine}{post}", self.map_text)
    }
}

/// `node` with every `i` replaced by `i + start` (u64, wrapping as `i` itself does).
fn index_from(node: &Node, start: u64) -> Node {
    let shift = |n: &Node| Box::new(index_from(n, start));
    let kind = match &node.kind {
        Kind::Index => {
            let offset = Node {
                ty: Ty::U64,
                kind: Kind::Const(Val::U64(start)),
            };
            Kind::Arith(Arith::Add, Box::new(node.clone()), Box::new(offset))
        }
        Kind::Const(_) | Kind::Input(_) | Kind::Var(_) => node.kind.clone(),
        Kind::Neg(a) => Kind::Neg(shift(a)),
        Kind::Not(a) => Kind::Not(shift(a)),
        Kind::Arith(op, a, b) => Kind::Arith(*op, shift(a), shift(b)),
        Kind::Compare(op, a, b) => Kind::Compare(*op, shift(a), shift(b)),
        Kind::Logic(and, a, b) => Kind::Logic(*and, shift(a), shift(b)),
        Kind::Select(c, a, b) => Kind::Select(shift(c), shift(a), shift(b)),
        Kind::Call(f, args) => Kind::Call(*f, args.iter().map(|a| index_from(a, start)).collect()),
        Kind::Convert(a) => Kind::Convert(shift(a)),
        Kind::Narrow(d, a) => Kind::Narrow(*d, shift(a)),
    };
    Node { ty: node.ty, kind }
}

impl ReductionBuilder {
    /// The identity of a custom combine (required there; built-ins have their own).
    pub fn identity(mut self, identity: &str) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// An expression in `r` and `n` applied to the result.
    pub fn post(mut self, post: &str) -> Self {
        self.post = Some(post.into());
        self
    }

    /// The accumulator type (default: the built-in operator's rule for the mapped type,
    /// or the mapped type for custom combines).
    pub fn acc(mut self, acc: DType) -> Self {
        self.acc = Some(acc);
        self
    }

    /// The optional parts as flags and keyword arguments give them: each one present
    /// is set as [`Self::identity`], [`Self::post`] and [`Self::acc`] set it.
    pub fn with_options(
        mut self,
        identity: Option<&str>,
        post: Option<&str>,
        acc: Option<DType>,
    ) -> Self {
        if let Some(identity) = identity {
            self.identity = Some(identity.into());
        }
        if let Some(post) = post {
            self.post = Some(post.into());
        }
        self.acc = acc.or(self.acc);
        self
    }

    /// Checks everything against the inputs' types.
    pub fn build(self, inputs: &[DType]) -> Result<Reduction, ExprError> {
        if inputs.is_empty() || inputs.len() > MAX_INPUTS {
            return Err(ExprError::typing(format!(
                "a reduction reads 1 to {MAX_INPUTS} inputs, not {}",
                inputs.len()
            )));
        }
        let map_ast = parse(&self.map).map_err(|e| e.in_part("map", &self.map))?;
        let scope = Scope {
            inputs: inputs.to_vec(),
            index: true,
            vars: Vec::new(),
        };
        let map = check(&map_ast, &scope).map_err(|e| e.in_part("map", &self.map))?;
        let mapped = result_dtype(&map);
        let combine = match self.combine.trim().parse::<Op>() {
            Ok(op) => {
                if let Some(id) = &self.identity {
                    return Err(ExprError::typing(format!(
                        "identity: '{id}' given, but the built-in combine {op} has its own"
                    )));
                }
                let problem = Problem::new(op, mapped, self.acc).map_err(|e| {
                    ExprError::typing(format!("combine: {e} (the map '{}' is {mapped})", self.map))
                })?;
                Combine::Builtin(problem)
            }
            Err(_) => self.custom(mapped)?,
        };
        let post = match &self.post {
            None => None,
            Some(text) => {
                let r = match &combine {
                    Combine::Builtin(p) if p.op.is_indexed() => Ty::U64,
                    Combine::Builtin(p) if p.op.is_arithmetic() => Ty::of_dtype(p.acc),
                    Combine::Builtin(p) => Ty::of_dtype(p.dtype),
                    Combine::Custom { acc, .. } => *acc,
                };
                let scope = Scope {
                    inputs: Vec::new(),
                    index: false,
                    vars: vec![("r".into(), r), ("n".into(), Ty::U64)],
                };
                let ast = parse(text).map_err(|e| e.in_part("post", text))?;
                let node = check(&ast, &scope).map_err(|e| e.in_part("post", text))?;
                Some((text.clone(), node))
            }
        };
        Ok(Reduction {
            map_text: self.map,
            map,
            inputs: inputs.to_vec(),
            mapped,
            combine,
            post,
        })
    }

    fn custom(&self, mapped: DType) -> Result<Combine, ExprError> {
        let text = &self.combine;
        let acc = match self.acc {
            Some(DType::F16 | DType::BF16) => {
                return Err(ExprError::typing(
                    "acc: custom combines accumulate in i64, u64, f32 or f64",
                ))
            }
            Some(d) => Ty::of_dtype(d),
            None => Ty::of_dtype(mapped),
        };
        let ast = parse(text).map_err(|e| e.in_part("combine", text))?;
        let scope = Scope {
            inputs: Vec::new(),
            index: false,
            vars: vec![("a".into(), acc), ("b".into(), acc)],
        };
        let node = check(&ast, &scope).map_err(|e| {
            let hint = if text.chars().all(|c| c.is_alphanumeric() || c == '_') {
                " (built-in combines: sum, prod, min, max, and, or, xor, argmin, argmax)"
            } else {
                ""
            };
            match e.in_part("combine", text) {
                ExprError::Type(m) => ExprError::Type(format!("{m}{hint}")),
                other => other,
            }
        })?;
        let node = convert(node, acc);
        let Some(identity_text) = &self.identity else {
            return Err(ExprError::typing(format!(
                "identity: the custom combine '{text}' needs --identity, the value that \
                 leaves any partial unchanged"
            )));
        };
        let ast = parse(identity_text).map_err(|e| e.in_part("identity", identity_text))?;
        let constant =
            check(&ast, &Scope::default()).map_err(|e| e.in_part("identity", identity_text))?;
        let identity = crate::eval::convert_val(
            eval(
                &constant,
                &Env {
                    inputs: &[],
                    index: 0,
                    vars: &[],
                },
            ),
            acc,
        );
        Ok(Combine::Custom {
            node,
            text: text.clone(),
            identity,
            acc,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_given_together_build_what_the_setters_build() {
        let types = [DType::I32];
        let chained = Reduction::builder("x", "a > b ? a : b")
            .identity("-5")
            .post("r * 2")
            .acc(DType::I64)
            .build(&types)
            .expect("builds");
        let together = Reduction::builder("x", "a > b ? a : b")
            .with_options(Some("-5"), Some("r * 2"), Some(DType::I64))
            .build(&types)
            .expect("builds");
        assert_eq!(together, chained);
        let Combine::Custom { acc, .. } = &together.combine else {
            panic!("a custom combine");
        };
        assert_eq!(acc.dtype(), DType::I64);
        // Nothing given: the defaults, and a custom combine still asks for its identity.
        let plain = Reduction::builder("x * 2", "sum")
            .with_options(None, None, None)
            .build(&types)
            .expect("builds");
        assert_eq!(
            plain,
            Reduction::builder("x * 2", "sum")
                .build(&types)
                .expect("builds")
        );
        assert!(plain.post.is_none());
        let missing = Reduction::builder("x", "a + b")
            .with_options(None, None, None)
            .build(&types);
        assert!(missing.is_err());
    }
}
