//! CLamsee sessions: device code in the CLamsee dialect of OpenCL C and the host code
//! that drives it, in one file, read as the CLamsee reduction tutorial writes them.
//!
//! Device code: `using Device;`, kernels written `kernel NAME(…) { … }` (no return type),
//! local arrays sized by a kernel argument (`local float sdata[local_size];`), `@watch
//! NAME;` statements and a `@computeBranchingBehavior;` annotation after a kernel.
//! Standard OpenCL C (`__kernel void`) is accepted too.
//!
//! Host code, one statement per `;`:
//! - `integer NAME = EXPR;` (also `int`, `uint`, `long`, `float`, `double`);
//! - `TYPE [EXPR] NAME;`: an array of EXPR elements, zero-filled;
//! - `Arrays.fill(NAME, EXPR);`;
//! - `Device.setLocalWorkSize(X[, Y[, Z]]);`, `Device.setGlobalWorkSize(…);`;
//! - `Device.KERNEL(ARG, …);`: a launch; arrays are passed by name and keep what the
//!   kernel wrote for the next call.
//!
//! This module only reads the file ([`parse`]) and sizes local arrays for a call
//! ([`instantiate`]); [`crate::session`] runs it.

use redlab_expr::ast::{Ast, AstKind, BinaryOp, UnaryOp};

use crate::AnalyzeError;

/// A host statement.
#[derive(Debug, Clone, PartialEq)]
pub enum HostStmt {
    /// `integer NAME = EXPR;`: a scalar (`float` and `double` ones hold floats).
    Scalar {
        /// The variable.
        name: String,
        /// Whether it holds a float.
        float: bool,
        /// Its value.
        value: Ast,
    },
    /// `TYPE [LEN] NAME;`.
    Array {
        /// The array.
        name: String,
        /// The OpenCL C element type name (`float`, `int` …).
        elem: String,
        /// Its length.
        len: Ast,
    },
    /// `Arrays.fill(NAME, VALUE);`.
    Fill {
        /// The array.
        array: String,
        /// The value.
        value: Ast,
    },
    /// `Device.setGlobalWorkSize(…)` (`global`) or `Device.setLocalWorkSize(…)`.
    WorkSize {
        /// Which size.
        global: bool,
        /// One to three dimensions.
        dims: Vec<Ast>,
    },
    /// `Device.KERNEL(ARGS);`.
    Call {
        /// The kernel.
        kernel: String,
        /// Its arguments (array names or expressions).
        args: Vec<Ast>,
        /// The statement as written, for messages.
        text: String,
    },
}

/// A kernel of the session, in standard OpenCL C.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Its parameters: name and whether it is a pointer.
    pub params: Vec<(String, bool)>,
    /// The translated source of this kernel alone.
    pub source: String,
}

/// A parsed session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Session {
    /// The kernels, in order.
    pub kernels: Vec<Kernel>,
    /// Whether `@computeBranchingBehavior` was asked for (the analyzer always computes
    /// it; the flag is reported).
    pub branching: bool,
    /// The host statements, in order.
    pub host: Vec<HostStmt>,
}

fn error(message: impl Into<String>) -> AnalyzeError {
    AnalyzeError::Usage(format!("session: {}", message.into()))
}

/// Removes `//` and `/* */` comments (newlines kept, so lines still count).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && d == '/' {
                        break;
                    }
                    last = d;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Byte index just past the bracket that closes the one at `open`.
fn matching(text: &str, open: usize, left: u8, right: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    for (k, &b) in bytes.iter().enumerate().skip(open) {
        if b == left {
            depth += 1;
        } else if b == right {
            depth -= 1;
            if depth == 0 {
                return Some(k + 1);
            }
        }
    }
    None
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads a session file.
pub fn parse(text: &str) -> Result<Session, AnalyzeError> {
    let text = strip_comments(text);
    let mut session = Session::default();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        if trimmed.is_empty() {
            break;
        }
        at += rest.len() - trimmed.len();
        let word: String = trimmed.chars().take_while(|c| is_ident(*c)).collect();
        if trimmed.starts_with('@') {
            let end = trimmed
                .find(';')
                .ok_or_else(|| error("an annotation needs a ';'"))?;
            let name = trimmed[1..end].trim();
            match name {
                "computeBranchingBehavior" => session.branching = true,
                other => {
                    return Err(error(format!(
                        "unknown annotation @{other} outside a kernel (@watch goes inside one)"
                    )))
                }
            }
            at += end + 1;
        } else if word == "using" {
            let end = trimmed
                .find(';')
                .ok_or_else(|| error("'using' needs a ';'"))?;
            at += end + 1;
        } else if word == "kernel" || word == "__kernel" {
            let open = trimmed
                .find('{')
                .ok_or_else(|| error("a kernel needs a body"))?;
            let close = matching(trimmed, open, b'{', b'}')
                .ok_or_else(|| error("a kernel's '{' is never closed"))?;
            session.kernels.push(kernel(&trimmed[..close])?);
            at += close;
        } else {
            let end = statement_end(trimmed).ok_or_else(|| {
                error(format!(
                    "'{}' needs a ';'",
                    trimmed.lines().next().unwrap_or("").trim()
                ))
            })?;
            session.host.push(host_statement(trimmed[..end].trim())?);
            at += end + 1;
        }
    }
    Ok(session)
}

/// The index of the `;` that ends a host statement (outside parentheses).
fn statement_end(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (k, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ';' if depth == 0 => return Some(k),
            _ => {}
        }
    }
    None
}

/// Translates one kernel definition to standard OpenCL C.
fn kernel(text: &str) -> Result<Kernel, AnalyzeError> {
    let paren = text
        .find('(')
        .ok_or_else(|| error("a kernel needs parameters"))?;
    let head: Vec<&str> = text[..paren].split_whitespace().collect();
    let name = head
        .last()
        .filter(|n| n.chars().all(is_ident))
        .ok_or_else(|| {
            error(format!(
                "cannot read the kernel header '{}'",
                text[..paren].trim()
            ))
        })?
        .to_string();
    // `kernel NAME(` has no return type: CLamsee kernels return nothing.
    let ret = if head.len() >= 3 {
        head[1..head.len() - 1].join(" ")
    } else {
        "void".into()
    };
    let close =
        matching(text, paren, b'(', b')').ok_or_else(|| error("unclosed parameter list"))?;
    let params_text = &text[paren + 1..close - 1];
    let params = params_text
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let pname: String = p
                .trim()
                .chars()
                .rev()
                .take_while(|c| is_ident(*c))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            (pname, p.contains('*'))
        })
        .collect();
    let mut body = text[close..].to_string();
    // `@watch NAME;` becomes the analyzer's `// @watch NAME` marker.
    let mut from = 0;
    while let Some(found) = body[from..].find("@watch") {
        let k = from + found;
        let end = body[k..]
            .find(';')
            .map(|e| k + e)
            .ok_or_else(|| error("@watch needs a ';'"))?;
        let target = body[k + 6..end].trim().to_string();
        let marker = format!("\n// @watch {target}\n");
        body.replace_range(k..=end, &marker);
        from = k + marker.len();
    }
    if body.replace("// @watch", "").contains('@') {
        return Err(error(format!(
            "kernel {name}: unknown annotation inside the body"
        )));
    }
    Ok(Kernel {
        source: format!("__kernel {ret} {name}({params_text}){body}\n"),
        name,
        params,
    })
}

fn parse_expr(text: &str) -> Result<Ast, AnalyzeError> {
    redlab_expr::parser::parse(text.trim())
        .map_err(|e| error(format!("cannot read '{}': {e}", text.trim())))
}

/// Splits `a, b(c, d), e` at top-level commas.
fn split_args(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (k, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

fn host_statement(stmt: &str) -> Result<HostStmt, AnalyzeError> {
    let call = |prefix: &str| -> Option<Result<Vec<&str>, AnalyzeError>> {
        let rest = stmt.strip_prefix(prefix)?;
        let inner = rest
            .trim()
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'));
        Some(
            inner
                .map(split_args)
                .ok_or_else(|| error(format!("cannot read '{stmt}'"))),
        )
    };
    if let Some(args) = call("Arrays.fill") {
        let args = args?;
        let [array, value] = args.as_slice() else {
            return Err(error(format!(
                "'{stmt}': Arrays.fill takes an array and a value"
            )));
        };
        return Ok(HostStmt::Fill {
            array: array.trim().to_string(),
            value: parse_expr(value)?,
        });
    }
    for (prefix, global) in [
        ("Device.setGlobalWorkSize", true),
        ("Device.setLocalWorkSize", false),
    ] {
        if let Some(args) = call(prefix) {
            let dims = args?
                .into_iter()
                .map(parse_expr)
                .collect::<Result<Vec<_>, _>>()?;
            if dims.is_empty() || dims.len() > 3 {
                return Err(error(format!(
                    "'{stmt}': a work size has 1 to 3 dimensions"
                )));
            }
            return Ok(HostStmt::WorkSize { global, dims });
        }
    }
    if let Some(rest) = stmt.strip_prefix("Device.") {
        let kernel: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if let Some(args) = call(&format!("Device.{kernel}")) {
            let args = args?
                .into_iter()
                .map(parse_expr)
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(HostStmt::Call {
                kernel,
                args,
                text: stmt.to_string(),
            });
        }
    }
    let word: String = stmt.chars().take_while(|c| is_ident(*c)).collect();
    let after = stmt[word.len()..].trim_start();
    if after.starts_with('[') {
        let close = matching(after, 0, b'[', b']')
            .ok_or_else(|| error(format!("'{stmt}': unclosed '['")))?;
        let name = after[close..].trim();
        if name.is_empty() || !name.chars().all(is_ident) {
            return Err(error(format!("'{stmt}': expected TYPE [LENGTH] NAME")));
        }
        let elem = crate::args::opencl_name(&word).to_string();
        return Ok(HostStmt::Array {
            name: name.to_string(),
            elem,
            len: parse_expr(&after[1..close - 1])?,
        });
    }
    let scalar_types = ["integer", "int", "uint", "long", "ulong", "float", "double"];
    if scalar_types.contains(&word.as_str()) {
        let (name, value) = after
            .split_once('=')
            .ok_or_else(|| error(format!("'{stmt}': a variable needs '= VALUE'")))?;
        return Ok(HostStmt::Scalar {
            name: name.trim().to_string(),
            float: matches!(word.as_str(), "float" | "double"),
            value: parse_expr(value)?,
        });
    }
    Err(error(format!(
        "cannot read the host statement '{stmt}' (known: integer NAME = …, TYPE [LEN] NAME, Arrays.fill, Device.setLocalWorkSize, Device.setGlobalWorkSize, Device.KERNEL(…))"
    )))
}

/// A host value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HostValue {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
}

impl HostValue {
    /// As a float.
    pub fn as_f64(self) -> f64 {
        match self {
            HostValue::Int(v) => v as f64,
            HostValue::Float(v) => v,
        }
    }
}

/// Evaluates a host expression over named scalars (integer arithmetic stays integer, as
/// in C: `global_size/local_size` divides exactly).
pub fn eval(
    ast: &Ast,
    lookup: &dyn Fn(&str) -> Option<HostValue>,
) -> Result<HostValue, AnalyzeError> {
    use HostValue::{Float, Int};
    Ok(match &ast.kind {
        AstKind::Int(v) => Int(i64::try_from(*v).map_err(|_| error(format!("{v} is too large")))?),
        AstKind::Float(v) => Float(*v),
        AstKind::Name(n) => lookup(n).ok_or_else(|| error(format!("unknown name '{n}'")))?,
        AstKind::Unary(UnaryOp::Neg, e) => match eval(e, lookup)? {
            Int(v) => Int(v.wrapping_neg()),
            Float(v) => Float(-v),
        },
        AstKind::Binary(op, a, b) => {
            let (x, y) = (eval(a, lookup)?, eval(b, lookup)?);
            match (x, y) {
                (Int(p), Int(q)) => Int(match op {
                    BinaryOp::Add => p.wrapping_add(q),
                    BinaryOp::Sub => p.wrapping_sub(q),
                    BinaryOp::Mul => p.wrapping_mul(q),
                    BinaryOp::Div | BinaryOp::Rem if q == 0 => {
                        return Err(error("division by zero in host code"))
                    }
                    BinaryOp::Div => p.wrapping_div(q),
                    BinaryOp::Rem => p.wrapping_rem(q),
                    other => {
                        return Err(error(format!(
                            "'{}' is not supported in host code",
                            other.symbol()
                        )))
                    }
                }),
                (p, q) => Float(match op {
                    BinaryOp::Add => p.as_f64() + q.as_f64(),
                    BinaryOp::Sub => p.as_f64() - q.as_f64(),
                    BinaryOp::Mul => p.as_f64() * q.as_f64(),
                    BinaryOp::Div => p.as_f64() / q.as_f64(),
                    other => {
                        return Err(error(format!(
                            "'{}' is not supported in host code",
                            other.symbol()
                        )))
                    }
                }),
            }
        }
        _ => return Err(error("host expressions take numbers, names and + - * / %")),
    })
}

/// The kernel's source with every local array's length that names a scalar parameter
/// replaced by its value for this call (OpenCL C needs constant lengths; CLamsee sizes
/// them from arguments).
pub fn instantiate(
    kernel: &Kernel,
    scalars: &[(String, HostValue)],
) -> Result<String, AnalyzeError> {
    let mut source = kernel.source.clone();
    let mut search = 0;
    while let Some(found) = find_word(&source[search..], &["local", "__local"]) {
        let start = search + found;
        let Some(open_rel) = source[start..].find(['[', ';', '(', '{']) else {
            break;
        };
        let open = start + open_rel;
        if source.as_bytes()[open] != b'[' {
            search = open + 1;
            continue;
        }
        let close = matching(&source, open, b'[', b']')
            .ok_or_else(|| error("unclosed '[' in a local array"))?;
        let inner = source[open + 1..close - 1].to_string();
        let names_param = scalars.iter().any(|(n, _)| contains_word(&inner, n));
        if names_param {
            let ast = parse_expr(&inner)?;
            let lookup = |n: &str| scalars.iter().find(|(m, _)| m == n).map(|(_, v)| *v);
            let len = match eval(&ast, &lookup)? {
                HostValue::Int(v) if v > 0 => v,
                other => {
                    return Err(error(format!(
                        "kernel {}: local array length {inner} is {other:?}",
                        kernel.name
                    )))
                }
            };
            source.replace_range(open + 1..close - 1, &len.to_string());
        }
        search = open + 1;
    }
    Ok(source)
}

fn find_word(text: &str, words: &[&str]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for w in words {
        let mut from = 0;
        while let Some(k) = text[from..].find(w) {
            let at = from + k;
            let before = text[..at].chars().next_back().is_none_or(|c| !is_ident(c));
            let after = text[at + w.len()..]
                .chars()
                .next()
                .is_none_or(|c| !is_ident(c));
            if before && after {
                best = Some(best.map_or(at, |b: usize| b.min(at)));
                break;
            }
            from = at + w.len();
        }
    }
    best
}

fn contains_word(text: &str, word: &str) -> bool {
    find_word(text, &[word]).is_some()
}
