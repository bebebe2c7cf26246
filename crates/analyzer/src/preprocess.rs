//! The C preprocessor, as far as OpenCL kernels use it: object- and function-like
//! `#define` (with `#` and `##`), `#undef`, `#if/#ifdef/#ifndef/#elif/#else/#endif` with
//! `defined`, `#include "…"` through a resolver, `#error`, and `-D` options; `#pragma`
//! and `#line` are accepted and ignored.
//!
//! Expansion follows the hide-set algorithm: each token remembers which macros produced
//! it, and a macro never expands inside its own expansion. Expanded tokens take the
//! position of the macro's use, so metrics of code inside a macro such as a tree step
//! count on the line that uses it.

use std::collections::HashMap;
use std::rc::Rc;

use crate::lexer::{lex, Tok, Token};
use crate::parser::MAX_NESTING;
use crate::source::{Diag, Files, Pos};

/// Finds the text of an included file: `(name asked for, including file's name)` →
/// `(name to show, text)`; `None` when there is no such file, an error when there is
/// one that cannot be used (a device, a directory, too large).
pub type Resolver<'a> = dyn Fn(&str, &str) -> Result<Option<(String, String)>, String> + 'a;

/// Names every kernel sees, as an OpenCL compiler predefines them.
const PREDEFINED: &str = "\
#define __OPENCL_VERSION__ 200
#define __OPENCL_C_VERSION__ 200
#define CL_VERSION_1_0 100
#define CL_VERSION_1_1 110
#define CL_VERSION_1_2 120
#define CL_VERSION_2_0 200
#define __ENDIAN_LITTLE__ 1
#define __IMAGE_SUPPORT__ 0
#define REDLAB_ANALYZER 1
#define true 1
#define false 0
#define NULL ((void*)0)
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define CLK_IMAGE_MEM_FENCE 4
#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-127 - 1)
#define CHAR_MAX 127
#define CHAR_MIN (-127 - 1)
#define UCHAR_MAX 255
#define SHRT_MAX 32767
#define SHRT_MIN (-32767 - 1)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 0xffffffffU
#define LONG_MAX 0x7fffffffffffffffL
#define LONG_MIN (-0x7fffffffffffffffL - 1L)
#define ULONG_MAX 0xffffffffffffffffUL
#define FLT_MAX 3.40282347e+38f
#define FLT_MIN 1.17549435e-38f
#define FLT_EPSILON 1.1920929e-07f
#define DBL_MAX 1.7976931348623157e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.220446049250313e-16
#define INFINITY (1.0f / 0.0f)
#define HUGE_VALF (1.0f / 0.0f)
#define HUGE_VAL (1.0 / 0.0)
#define NAN (0.0f / 0.0f)
#define MAXFLOAT 3.40282347e+38f
#define M_PI 3.141592653589793
#define M_PI_F 3.14159274f
";

#[derive(Debug, Clone)]
struct Macro {
    params: Option<Vec<Rc<str>>>,
    variadic: bool,
    body: Vec<Token>,
}

#[derive(Debug, Clone, Copy)]
struct Cond {
    /// Lines of this branch are kept.
    active: bool,
    /// Some branch of this `#if` was taken already.
    taken: bool,
    /// The enclosing region is kept.
    outer: bool,
    /// `#else` was seen.
    in_else: bool,
    pos: Pos,
}

/// The preprocessed program: tokens, the files they came from, and `@watch` names.
#[derive(Debug, Clone)]
pub struct Preprocessed {
    /// Tokens after expansion, with no directives left.
    pub tokens: Vec<Token>,
    /// Every file read.
    pub files: Files,
    /// Local arrays marked `// @watch NAME`.
    pub watches: Vec<String>,
}

/// Preprocesses `text` (called `name`) with `-D` definitions `defines` (`NAME` or
/// `NAME=VALUE`) and `resolve` for `#include`.
pub fn preprocess(
    name: &str,
    text: &str,
    defines: &[String],
    resolve: &Resolver<'_>,
) -> Result<Preprocessed, (Diag, Files)> {
    let mut pp = Preprocessor {
        macros: HashMap::new(),
        files: Files::default(),
        watches: Vec::new(),
        resolve,
        depth: 0,
        expanded: 0,
    };
    let mut sink = Vec::new();
    let mut prelude = PREDEFINED.to_string();
    for d in defines {
        let (n, v) = d.split_once('=').unwrap_or((d.as_str(), "1"));
        prelude.push_str(&format!("#define {n} {v}\n"));
    }
    let result = pp
        .file("<predefined>", &prelude, &mut sink)
        .and_then(|_| pp.file(name, text, &mut sink));
    match result {
        Ok(()) => Ok(Preprocessed {
            tokens: sink,
            files: pp.files,
            watches: pp.watches,
        }),
        Err(d) => Err((d, pp.files)),
    }
}

struct Preprocessor<'a> {
    macros: HashMap<Rc<str>, Macro>,
    files: Files,
    watches: Vec<String>,
    resolve: &'a Resolver<'a>,
    depth: usize,
    /// Tokens produced by macro expansion so far (see [`MAX_EXPANDED_TOKENS`]).
    expanded: usize,
}

/// The most tokens macro expansion may produce in one program: far above any real
/// kernel's, and the stop for macros that grow exponentially.
pub const MAX_EXPANDED_TOKENS: usize = 4_000_000;

/// The deepest macro-inside-macro expansion: each level carries the names it must not
/// expand again, so unbounded chains of `#define`s cost time growing with their square.
pub const MAX_MACRO_NESTING: usize = 256;

/// The deepest nesting of `#include`.
pub const MAX_INCLUDE_DEPTH: usize = 16;

impl Preprocessor<'_> {
    fn file(&mut self, name: &str, text: &str, out: &mut Vec<Token>) -> Result<(), Diag> {
        let id = self.files.add(name, text);
        let (tokens, watches) = lex(text, id)?;
        for w in watches {
            if !self.watches.contains(&w) {
                self.watches.push(w);
            }
        }
        let mut input: Vec<Token> = tokens.into_iter().rev().collect();
        let mut conds: Vec<Cond> = Vec::new();
        while let Some(tok) = input.pop() {
            let active = conds.last().is_none_or(|c| c.active);
            if tok.bol && tok.is("#") && tok.hide.is_empty() {
                let mut line = Vec::new();
                while input.last().is_some_and(|t| !t.bol) {
                    line.extend(input.pop());
                }
                self.directive(&tok, line, &mut conds, active, name, out)?;
                continue;
            }
            if !active {
                continue;
            }
            if !self.expand_one(&tok, &mut input)? {
                out.push(tok);
            }
        }
        if let Some(c) = conds.last() {
            return Err(Diag::new(c.pos, "#if without #endif"));
        }
        Ok(())
    }

    fn directive(
        &mut self,
        hash: &Token,
        line: Vec<Token>,
        conds: &mut Vec<Cond>,
        active: bool,
        file_name: &str,
        out: &mut Vec<Token>,
    ) -> Result<(), Diag> {
        let Some(first) = line.first() else {
            return Ok(()); // the null directive
        };
        let Some(word) = first.ident().cloned() else {
            return Err(Diag::new(first.pos, "expected a directive name after '#'"));
        };
        let rest = &line[1..];
        let pos = first.pos;
        match &*word {
            "if" | "ifdef" | "ifndef" => {
                let value = if !active {
                    false
                } else if &*word == "if" {
                    self.condition(rest, pos)?
                } else {
                    let name = rest
                        .first()
                        .and_then(Token::ident)
                        .ok_or_else(|| Diag::new(pos, format!("#{word} needs a macro name")))?;
                    self.macros.contains_key(name) == (&*word == "ifdef")
                };
                conds.push(Cond {
                    active: active && value,
                    taken: value,
                    outer: active,
                    in_else: false,
                    pos: hash.pos,
                });
            }
            "elif" => {
                let c = conds
                    .last()
                    .copied()
                    .ok_or_else(|| Diag::new(pos, "#elif without #if"))?;
                if c.in_else {
                    return Err(Diag::new(pos, "#elif after #else"));
                }
                let value = c.outer && !c.taken && self.condition(rest, pos)?;
                if let Some(top) = conds.last_mut() {
                    top.active = value;
                    top.taken |= value;
                }
            }
            "else" => {
                let top = conds
                    .last_mut()
                    .ok_or_else(|| Diag::new(pos, "#else without #if"))?;
                if top.in_else {
                    return Err(Diag::new(pos, "#else after #else"));
                }
                top.in_else = true;
                top.active = top.outer && !top.taken;
                top.taken = true;
            }
            "endif" => {
                conds
                    .pop()
                    .ok_or_else(|| Diag::new(pos, "#endif without #if"))?;
            }
            _ if !active => {}
            "define" => self.define(rest, pos)?,
            "undef" => {
                if let Some(name) = rest.first().and_then(Token::ident) {
                    self.macros.remove(name);
                }
            }
            "include" => {
                let name = match rest.first().map(|t| &t.tok) {
                    Some(Tok::Str(s)) => s.clone(),
                    Some(Tok::Punct("<")) => rest[1..]
                        .iter()
                        .take_while(|t| !t.is(">"))
                        .map(Token::text)
                        .collect(),
                    _ => return Err(Diag::new(pos, "#include needs \"file\"")),
                };
                let found = (self.resolve)(&name, file_name)
                    .map_err(|why| Diag::new(pos, format!("cannot include \"{name}\": {why}")))?;
                let Some((shown, text)) = found else {
                    return Err(Diag::new(
                        pos,
                        format!("cannot find included file \"{name}\""),
                    ));
                };
                if self.depth >= MAX_INCLUDE_DEPTH {
                    return Err(Diag::new(
                        pos,
                        format!("#include nested deeper than {MAX_INCLUDE_DEPTH}"),
                    ));
                }
                self.depth += 1;
                let r = self.file(&shown, &text, out);
                self.depth -= 1;
                r?;
            }
            "error" => {
                let text: Vec<String> = rest.iter().map(Token::text).collect();
                return Err(Diag::new(pos, format!("#error {}", text.join(" "))));
            }
            "pragma" | "line" | "warning" => {}
            other => return Err(Diag::new(pos, format!("unknown directive #{other}"))),
        }
        Ok(())
    }

    fn define(&mut self, rest: &[Token], pos: Pos) -> Result<(), Diag> {
        let Some(name) = rest.first().and_then(Token::ident).cloned() else {
            return Err(Diag::new(pos, "#define needs a name"));
        };
        let function_like = rest.get(1).is_some_and(|t| t.is("(") && !t.space);
        let (params, variadic, body_start) = if function_like {
            let mut params = Vec::new();
            let mut variadic = false;
            let mut i = 2;
            loop {
                let t = rest
                    .get(i)
                    .ok_or_else(|| Diag::new(pos, "unterminated macro parameter list"))?;
                if t.is(")") {
                    i += 1;
                    break;
                }
                if t.is("...") {
                    variadic = true;
                } else if let Some(p) = t.ident() {
                    params.push(p.clone());
                } else if !t.is(",") {
                    return Err(Diag::new(t.pos, "malformed macro parameter list"));
                }
                i += 1;
            }
            (Some(params), variadic, i)
        } else {
            (None, false, 1)
        };
        self.macros.insert(
            name,
            Macro {
                params,
                variadic,
                body: rest[body_start..].to_vec(),
            },
        );
        Ok(())
    }

    /// Expands `tok` if it names a macro, pushing the expansion back onto `input`;
    /// returns whether it did.
    fn expand_one(&mut self, tok: &Token, input: &mut Vec<Token>) -> Result<bool, Diag> {
        let Some(name) = tok.ident() else {
            return Ok(false);
        };
        if tok.hide.contains(name) {
            return Ok(false);
        }
        let Some(m) = self.macros.get(name).cloned() else {
            return Ok(false);
        };
        if tok.hide.len() >= MAX_MACRO_NESTING {
            return Err(Diag::new(
                tok.pos,
                format!(
                    "macro {name} expands macros nested deeper than {MAX_MACRO_NESTING} levels"
                ),
            ));
        }
        self.expanded = self.expanded.saturating_add(m.body.len());
        if self.expanded > MAX_EXPANDED_TOKENS {
            return Err(Diag::new(
                tok.pos,
                format!("macro expansion produced more than {MAX_EXPANDED_TOKENS} tokens (a macro that grows without bound?)"),
            ));
        }
        let Some(params) = &m.params else {
            let hide = with(&tok.hide, name);
            let body = m.body.iter().map(|b| relocate(b, tok.pos, &hide));
            input.extend(body.collect::<Vec<_>>().into_iter().rev());
            return Ok(true);
        };
        if !input.last().is_some_and(|t| t.is("(")) {
            return Ok(false);
        }
        input.pop();
        let (args, rparen) = collect_args(input, tok.pos)?;
        let expected = params.len();
        let args = match (args.len(), m.variadic) {
            (1, false) if expected == 0 && args[0].is_empty() => Vec::new(),
            (n, false) if n == expected => args,
            (n, true) if n >= expected => {
                let mut fixed: Vec<Vec<Token>> = args[..expected].to_vec();
                let mut va = Vec::new();
                for (k, a) in args[expected..].iter().enumerate() {
                    if k > 0 {
                        va.push(punct(",", tok.pos));
                    }
                    va.extend(a.iter().cloned());
                }
                fixed.push(va);
                fixed
            }
            (n, _) => {
                return Err(Diag::new(
                    tok.pos,
                    format!("macro {name} takes {expected} arguments, {n} given"),
                ))
            }
        };
        let mut names: Vec<Rc<str>> = params.clone();
        if m.variadic {
            names.push(Rc::from("__VA_ARGS__"));
        }
        let hide: Vec<Rc<str>> = tok
            .hide
            .iter()
            .filter(|h| rparen.hide.contains(h))
            .cloned()
            .collect();
        let hide = with(&Rc::new(hide), name);
        let body = self.substitute(&m.body, &names, &args, tok.pos)?;
        let body: Vec<Token> = body.iter().map(|b| relocate(b, tok.pos, &hide)).collect();
        input.extend(body.into_iter().rev());
        Ok(true)
    }

    /// The body with parameters replaced: `#p` stringified, operands of `##` raw, the rest
    /// fully expanded first.
    fn substitute(
        &mut self,
        body: &[Token],
        names: &[Rc<str>],
        args: &[Vec<Token>],
        pos: Pos,
    ) -> Result<Vec<Token>, Diag> {
        let param = |t: &Token| t.ident().and_then(|n| names.iter().position(|p| p == n));
        let mut out: Vec<Token> = Vec::new();
        let mut i = 0;
        while i < body.len() {
            let t = &body[i];
            if t.is("#") {
                if let Some(k) = body.get(i + 1).and_then(param) {
                    let text: Vec<String> = args[k].iter().map(Token::text).collect();
                    out.push(Token {
                        tok: Tok::Str(text.join(" ")),
                        ..t.clone()
                    });
                    i += 2;
                    continue;
                }
            }
            if t.is("##") {
                let right = body
                    .get(i + 1)
                    .ok_or_else(|| Diag::new(pos, "'##' at the end of a macro"))?;
                let right_tokens = match param(right) {
                    Some(k) => args[k].clone(),
                    None => vec![right.clone()],
                };
                let left = out.pop();
                let mut rest = right_tokens.into_iter();
                match (left, rest.next()) {
                    (Some(l), Some(r)) => {
                        let text = format!("{}{}", l.text(), r.text());
                        let (pasted, _) = lex(&text, pos.file)?;
                        if pasted.len() != 1 {
                            return Err(Diag::new(
                                pos,
                                format!("'##' made '{text}', not one token"),
                            ));
                        }
                        out.push(Token {
                            tok: pasted[0].tok.clone(),
                            ..l
                        });
                    }
                    (Some(l), None) => out.push(l),
                    (None, Some(r)) => out.push(r),
                    (None, None) => {}
                }
                out.extend(rest);
                i += 2;
                continue;
            }
            if let Some(k) = param(t) {
                let next_is_paste = body.get(i + 1).is_some_and(|n| n.is("##"));
                if next_is_paste {
                    out.extend(args[k].iter().cloned());
                } else {
                    out.extend(self.expand_all(args[k].clone())?);
                }
            } else {
                out.push(t.clone());
            }
            i += 1;
        }
        Ok(out)
    }

    /// Fully expands a token list on its own (no directives).
    fn expand_all(&mut self, tokens: Vec<Token>) -> Result<Vec<Token>, Diag> {
        let mut input: Vec<Token> = tokens.into_iter().rev().collect();
        let mut out = Vec::new();
        while let Some(tok) = input.pop() {
            if !self.expand_one(&tok, &mut input)? {
                out.push(tok);
            }
        }
        Ok(out)
    }

    /// The value of an `#if` / `#elif` condition.
    fn condition(&mut self, tokens: &[Token], pos: Pos) -> Result<bool, Diag> {
        // `defined` is resolved before expansion.
        let mut resolved = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i].ident().is_some_and(|n| &**n == "defined") {
                let (name, used) = match (tokens.get(i + 1), tokens.get(i + 2)) {
                    (Some(p), Some(n)) if p.is("(") => (n.ident().cloned(), 4),
                    (Some(n), _) => (n.ident().cloned(), 2),
                    _ => (None, 1),
                };
                let name = name.ok_or_else(|| Diag::new(pos, "'defined' needs a macro name"))?;
                let value = self.macros.contains_key(&name) as u64;
                resolved.push(int_token(value, tokens[i].pos));
                i += used;
            } else {
                resolved.push(tokens[i].clone());
                i += 1;
            }
        }
        let expanded = self.expand_all(resolved)?;
        let mut eval = CondEval {
            tokens: &expanded,
            i: 0,
            pos,
            depth: 0,
        };
        let v = eval.ternary()?;
        if eval.i != expanded.len() {
            return Err(Diag::new(pos, "unexpected tokens in #if"));
        }
        Ok(v != 0)
    }
}

fn with(hide: &Rc<Vec<Rc<str>>>, name: &Rc<str>) -> Rc<Vec<Rc<str>>> {
    let mut h: Vec<Rc<str>> = (**hide).clone();
    if !h.contains(name) {
        h.push(name.clone());
    }
    Rc::new(h)
}

fn relocate(t: &Token, pos: Pos, hide: &Rc<Vec<Rc<str>>>) -> Token {
    let mut h: Vec<Rc<str>> = (*t.hide).clone();
    for n in hide.iter() {
        if !h.contains(n) {
            h.push(n.clone());
        }
    }
    Token {
        tok: t.tok.clone(),
        pos,
        bol: false,
        space: t.space,
        hide: Rc::new(h),
    }
}

fn punct(p: &'static str, pos: Pos) -> Token {
    Token {
        tok: Tok::Punct(p),
        pos,
        bol: false,
        space: false,
        hide: Rc::new(Vec::new()),
    }
}

fn int_token(value: u64, pos: Pos) -> Token {
    Token {
        tok: Tok::Int {
            value,
            unsigned: false,
            long: false,
            decimal: true,
        },
        pos,
        bol: false,
        space: true,
        hide: Rc::new(Vec::new()),
    }
}

/// A macro call's arguments (split at top-level commas) and its closing parenthesis.
fn collect_args(input: &mut Vec<Token>, pos: Pos) -> Result<(Vec<Vec<Token>>, Token), Diag> {
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    while let Some(t) = input.pop() {
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            if depth == 0 {
                return Ok((args, t));
            }
            depth -= 1;
        } else if t.is(",") && depth == 0 {
            args.push(Vec::new());
            continue;
        }
        if let Some(a) = args.last_mut() {
            a.push(t);
        }
    }
    Err(Diag::new(pos, "unterminated macro call"))
}

/// Integer expressions of `#if`, with C's precedence; unknown names are 0.
struct CondEval<'t> {
    tokens: &'t [Token],
    i: usize,
    pos: Pos,
    depth: usize,
}

impl CondEval<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.i)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is(p)) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn ternary(&mut self) -> Result<i64, Diag> {
        let c = self.binary(0)?;
        if self.eat("?") {
            self.depth += 1;
            let a = self.ternary();
            let b = if self.eat(":") {
                self.ternary()
            } else {
                Err(Diag::new(self.pos, "expected ':' in #if"))
            };
            self.depth -= 1;
            let (a, b) = (a?, b?);
            return Ok(if c != 0 { a } else { b });
        }
        Ok(c)
    }

    fn binary(&mut self, min_prec: u8) -> Result<i64, Diag> {
        const OPS: &[(&str, u8)] = &[
            ("||", 1),
            ("&&", 2),
            ("|", 3),
            ("^", 4),
            ("&", 5),
            ("==", 6),
            ("!=", 6),
            ("<", 7),
            (">", 7),
            ("<=", 7),
            (">=", 7),
            ("<<", 8),
            (">>", 8),
            ("+", 9),
            ("-", 9),
            ("*", 10),
            ("/", 10),
            ("%", 10),
        ];
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self
            .peek()
            .and_then(|t| OPS.iter().find(|(o, _)| t.is(o)).copied())
        {
            if prec < min_prec.max(1) {
                break;
            }
            self.i += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = match op {
                "||" => ((lhs != 0) || (rhs != 0)) as i64,
                "&&" => ((lhs != 0) && (rhs != 0)) as i64,
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&" => lhs & rhs,
                "==" => (lhs == rhs) as i64,
                "!=" => (lhs != rhs) as i64,
                "<" => (lhs < rhs) as i64,
                ">" => (lhs > rhs) as i64,
                "<=" => (lhs <= rhs) as i64,
                ">=" => (lhs >= rhs) as i64,
                "<<" => lhs.wrapping_shl(rhs as u32),
                ">>" => lhs.wrapping_shr(rhs as u32),
                "+" => lhs.wrapping_add(rhs),
                "-" => lhs.wrapping_sub(rhs),
                "*" => lhs.wrapping_mul(rhs),
                _ if rhs == 0 => return Err(Diag::new(self.pos, "division by zero in #if")),
                "/" => lhs.wrapping_div(rhs),
                _ => lhs.wrapping_rem(rhs),
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<i64, Diag> {
        if self.depth >= MAX_NESTING {
            return Err(Diag::new(
                self.pos,
                format!("#if expression nested deeper than {MAX_NESTING} levels"),
            ));
        }
        self.depth += 1;
        let v = self.unary_inner();
        self.depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> Result<i64, Diag> {
        if self.eat("!") {
            return Ok((self.unary()? == 0) as i64);
        }
        if self.eat("-") {
            return Ok(self.unary()?.wrapping_neg());
        }
        if self.eat("+") {
            return self.unary();
        }
        if self.eat("~") {
            return Ok(!self.unary()?);
        }
        if self.eat("(") {
            let v = self.ternary()?;
            if !self.eat(")") {
                return Err(Diag::new(self.pos, "expected ')' in #if"));
            }
            return Ok(v);
        }
        let t = self
            .peek()
            .ok_or_else(|| Diag::new(self.pos, "#if expression ends early"))?;
        let v = match &t.tok {
            Tok::Int { value, .. } => *value as i64,
            Tok::Char(c) => *c,
            Tok::Ident(_) => 0,
            _ => return Err(Diag::new(t.pos, format!("'{}' in #if", t.text()))),
        };
        self.i += 1;
        Ok(v)
    }
}

#[cfg(test)]
#[path = "preprocess_tests.rs"]
mod tests;
