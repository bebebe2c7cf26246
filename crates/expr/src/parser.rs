//! Recursive descent over the grammar in docs/expressions.md, one function per
//! precedence level (C's levels and associativity). Nesting is bounded, so no input can
//! exhaust the stack.

use crate::ast::{Ast, AstKind, BinaryOp, UnaryOp};
use crate::error::ExprError;
use crate::lexer::{tokenize, Spanned, Token};

/// Deepest nesting of parentheses, unary operators and conditionals accepted.
pub const MAX_DEPTH: usize = 64;

/// Most tokens in one expression: it bounds the depth of operator chains too, which every
/// later pass walks recursively.
pub const MAX_TOKENS: usize = 1024;

/// Parses one expression (the whole text).
pub fn parse(text: &str) -> Result<Ast, ExprError> {
    let tokens = tokenize(text)?;
    if tokens.len() > MAX_TOKENS {
        return Err(ExprError::parse(
            tokens[MAX_TOKENS].column,
            format!("longer than {MAX_TOKENS} tokens"),
        ));
    }
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
    };
    let ast = parser.ternary()?;
    let next = parser.peek();
    if next.token != Token::End {
        return Err(ExprError::parse(
            next.column,
            format!(
                "expected an operator or the end, found {}",
                describe(&next.token)
            ),
        ));
    }
    Ok(ast)
}

/// How many inputs a map's text names (`x`: 1, `x * y`: 2, `z`: 3), at least one: what
/// a generated run must create before the types can be checked.
pub fn inputs_named(text: &str) -> Result<usize, ExprError> {
    let ast = parse(text).map_err(|e| e.in_part("map", text))?;
    let mut most = 1;
    visit_names(&ast, &mut |name| {
        if let Some(k) = crate::types::input_position(name) {
            most = most.max(k + 1);
        }
    });
    Ok(most)
}

/// Whether the map `text` reads the element index `i` (its values then depend on where
/// each element sits, not only on the elements).
pub fn reads_index(text: &str) -> Result<bool, ExprError> {
    let ast = parse(text).map_err(|e| e.in_part("map", text))?;
    let mut reads = false;
    visit_names(&ast, &mut |name| reads |= name == "i");
    Ok(reads)
}

/// Calls `visit` with every name `ast` reads.
fn visit_names(ast: &Ast, visit: &mut impl FnMut(&str)) {
    match &ast.kind {
        AstKind::Name(n) => visit(n),
        AstKind::Int(_) | AstKind::Float(_) => {}
        AstKind::Unary(_, e) => visit_names(e, visit),
        AstKind::Binary(_, a, b) => {
            visit_names(a, visit);
            visit_names(b, visit);
        }
        AstKind::Select(c, a, b) => {
            visit_names(c, visit);
            visit_names(a, visit);
            visit_names(b, visit);
        }
        AstKind::Call(_, args) => args.iter().for_each(|a| visit_names(a, visit)),
    }
}

struct Parser {
    tokens: Vec<Spanned>,
    at: usize,
    depth: usize,
}

/// The binary levels from loosest to tightest (after `?:`).
const LEVELS: &[&[(&str, BinaryOp)]] = &[
    &[("||", BinaryOp::Or)],
    &[("&&", BinaryOp::And)],
    &[("|", BinaryOp::BitOr)],
    &[("^", BinaryOp::BitXor)],
    &[("&", BinaryOp::BitAnd)],
    &[("==", BinaryOp::Eq), ("!=", BinaryOp::Ne)],
    &[
        ("<", BinaryOp::Lt),
        ("<=", BinaryOp::Le),
        (">", BinaryOp::Gt),
        (">=", BinaryOp::Ge),
    ],
    &[("+", BinaryOp::Add), ("-", BinaryOp::Sub)],
    &[
        ("*", BinaryOp::Mul),
        ("/", BinaryOp::Div),
        ("%", BinaryOp::Rem),
    ],
];

fn describe(token: &Token) -> String {
    match token {
        Token::Int(v) => format!("the number {v}"),
        Token::Float(v) => format!("the number {v}"),
        Token::Name(n) => format!("'{n}'"),
        Token::Punct(p) => format!("'{p}'"),
        Token::End => "the end of the expression".into(),
    }
}

impl Parser {
    fn peek(&self) -> Spanned {
        self.tokens[self.at.min(self.tokens.len() - 1)].clone()
    }

    fn bump(&mut self) -> Spanned {
        let t = self.peek();
        if self.at < self.tokens.len() - 1 {
            self.at += 1;
        }
        t
    }

    fn eat(&mut self, punct: &str) -> bool {
        if self.peek().token == Token::Punct(leak(punct)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: &str) -> Result<(), ExprError> {
        if self.eat(punct) {
            return Ok(());
        }
        let next = self.peek();
        Err(ExprError::parse(
            next.column,
            format!("expected '{punct}', found {}", describe(&next.token)),
        ))
    }

    fn enter(&mut self, column: usize) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::parse(
                column,
                format!("nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        Ok(())
    }

    fn ternary(&mut self) -> Result<Ast, ExprError> {
        let column = self.peek().column;
        self.enter(column)?;
        let cond = self.binary(0)?;
        let result = if self.eat("?") {
            let then = self.ternary()?;
            self.expect(":")?;
            let otherwise = self.ternary()?;
            Ast {
                column,
                kind: AstKind::Select(Box::new(cond), Box::new(then), Box::new(otherwise)),
            }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(result)
    }

    fn binary(&mut self, level: usize) -> Result<Ast, ExprError> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            let next = self.peek();
            let Token::Punct(p) = next.token else { break };
            let Some(&(_, op)) = LEVELS[level].iter().find(|(s, _)| *s == p) else {
                break;
            };
            self.bump();
            let right = self.binary(level + 1)?;
            left = Ast {
                column: left.column,
                kind: AstKind::Binary(op, Box::new(left), Box::new(right)),
            };
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Ast, ExprError> {
        let next = self.peek();
        let op = match next.token {
            Token::Punct("-") => Some(UnaryOp::Neg),
            Token::Punct("!") => Some(UnaryOp::Not),
            Token::Punct("+") => None,
            _ => return self.primary(),
        };
        self.bump();
        self.enter(next.column)?;
        let operand = self.unary()?;
        self.depth -= 1;
        Ok(match op {
            Some(op) => Ast {
                column: next.column,
                kind: AstKind::Unary(op, Box::new(operand)),
            },
            None => operand,
        })
    }

    fn primary(&mut self) -> Result<Ast, ExprError> {
        let next = self.bump();
        let column = next.column;
        let kind = match next.token {
            Token::Int(v) => AstKind::Int(v),
            Token::Float(v) => AstKind::Float(v),
            Token::Name(name) => {
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.ternary()?);
                            if self.eat(")") {
                                break;
                            }
                            if !self.eat(",") {
                                let next = self.peek();
                                return Err(ExprError::parse(
                                    next.column,
                                    format!(
                                        "expected ',' or ')' in the call of {name}, found {}",
                                        describe(&next.token)
                                    ),
                                ));
                            }
                        }
                    }
                    AstKind::Call(name, args)
                } else {
                    AstKind::Name(name)
                }
            }
            Token::Punct("(") => {
                let inner = self.ternary()?;
                self.expect(")")?;
                return Ok(inner);
            }
            other => {
                return Err(ExprError::parse(
                    column,
                    format!("expected a value, found {}", describe(&other)),
                ))
            }
        };
        Ok(Ast { column, kind })
    }
}

/// The static spelling of an operator (tokens hold `&'static str`).
fn leak(punct: &str) -> &'static str {
    ["?", ":", "(", ")", ","]
        .into_iter()
        .find(|p| *p == punct)
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(a: &Ast) -> String {
        match &a.kind {
            AstKind::Int(v) => v.to_string(),
            AstKind::Float(v) => format!("{v:?}"),
            AstKind::Name(n) => n.clone(),
            AstKind::Unary(UnaryOp::Neg, e) => format!("(-{})", shape(e)),
            AstKind::Unary(UnaryOp::Not, e) => format!("(!{})", shape(e)),
            AstKind::Binary(op, l, r) => format!("({} {} {})", shape(l), op.symbol(), shape(r)),
            AstKind::Select(c, t, e) => format!("({} ? {} : {})", shape(c), shape(t), shape(e)),
            AstKind::Call(f, args) => format!(
                "{f}({})",
                args.iter().map(shape).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    #[test]
    fn precedence_and_associativity_follow_c() {
        let p = |s: &str| shape(&parse(s).expect("parses"));
        assert_eq!(p("x + y * z"), "(x + (y * z))");
        assert_eq!(p("x - y - z"), "((x - y) - z)");
        assert_eq!(p("a < b && c || !d"), "(((a < b) && c) || (!d))");
        assert_eq!(p("c ? 1 : d ? 2 : 3"), "(c ? 1 : (d ? 2 : 3))");
        assert_eq!(p("max(abs(x), -y) * 2"), "(max(abs(x), (-y)) * 2)");
        assert_eq!(p("a & b ^ c | d"), "(((a & b) ^ c) | d)");
    }

    #[test]
    fn the_names_a_map_reads_are_found_at_any_depth() {
        assert_eq!(inputs_named("x").ok(), Some(1));
        assert_eq!(inputs_named("max(abs(x), c ? z : 1)").ok(), Some(3));
        assert_eq!(inputs_named("2").ok(), Some(1));
        assert_eq!(reads_index("x * i").ok(), Some(true));
        assert_eq!(reads_index("x > 0 ? f32(i) : -x").ok(), Some(true));
        assert_eq!(reads_index("x * x + inf").ok(), Some(false));
        assert!(reads_index("x * * i").is_err());
    }

    #[test]
    fn errors_point_at_the_bad_token() {
        let col = |s: &str| parse(s).expect_err("rejects").column();
        assert_eq!(col("x * * y"), Some(5));
        assert_eq!(col("max(x, y"), Some(9));
        assert_eq!(col("x y"), Some(3));
        assert_eq!(col(""), Some(1));
        assert_eq!(col("(x"), Some(3));
        assert_eq!(col("c ? x"), Some(6));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("{}x{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(parse(&deep).is_err());
        let unary = format!("{}x", "-".repeat(10_000));
        assert!(parse(&unary).is_err());
        let chain = vec!["x"; 5000].join("+");
        assert!(parse(&chain).is_err());
    }
}
