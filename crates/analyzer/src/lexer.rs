//! Tokens of OpenCL C. The lexer keeps what the preprocessor needs (which tokens begin a
//! line, which follow whitespace) and collects `// @watch NAME` annotations from
//! comments, which mark local arrays whose bank map the report should draw.

use std::rc::Rc;

use crate::source::{Diag, Pos};

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(Rc<str>),
    /// An integer literal with its suffix flags; `decimal` is false for hex and octal
    /// (which C types differently).
    Int {
        /// The value.
        value: u64,
        /// A `u` suffix.
        unsigned: bool,
        /// An `l` suffix.
        long: bool,
        /// Written in decimal.
        decimal: bool,
    },
    /// A floating literal; `single` for an `f` suffix, `half` for `h`.
    Float {
        /// The value.
        value: f64,
        /// An `f` suffix.
        single: bool,
        /// An `h` suffix.
        half: bool,
    },
    /// A string literal (its contents).
    Str(String),
    /// A character literal.
    Char(i64),
    /// An operator or punctuator.
    Punct(&'static str),
}

/// One token.
#[derive(Debug, Clone)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where it is (for macro expansions: where the macro was used).
    pub pos: Pos,
    /// The first token of a logical line.
    pub bol: bool,
    /// Whitespace came before it.
    pub space: bool,
    /// Macros that must not expand this token again (the preprocessor's hide set).
    pub hide: Rc<Vec<Rc<str>>>,
}

impl Token {
    /// Whether the token is the punctuator `p`.
    pub fn is(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(q) if *q == p)
    }

    /// The identifier's name, if it is one.
    pub fn ident(&self) -> Option<&Rc<str>> {
        match &self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }

    /// The token as source text (for `#` and `##` and for messages).
    pub fn text(&self) -> String {
        match &self.tok {
            Tok::Ident(s) => s.to_string(),
            Tok::Int {
                value,
                unsigned,
                long,
                ..
            } => format!(
                "{value}{}{}",
                if *unsigned { "u" } else { "" },
                if *long { "l" } else { "" }
            ),
            Tok::Float { value, single, .. } => {
                format!("{value:?}{}", if *single { "f" } else { "" })
            }
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Char(c) => format!("'{}'", char::from_u32(*c as u32).unwrap_or('?')),
            Tok::Punct(p) => p.to_string(),
        }
    }
}

const PUNCTS: &[&str] = &[
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", "+", "-", "*", "/", "%", "<", ">", "=", "!",
    "~", "&", "|", "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}", "#",
];

/// The tokens of `text` (file index `file`) and the names marked `@watch` in comments.
pub fn lex(text: &str, file: u32) -> Result<(Vec<Token>, Vec<String>), Diag> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut watches = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let mut bol = true;
    let mut space = false;
    let empty: Rc<Vec<Rc<str>>> = Rc::new(Vec::new());
    while i < bytes.len() {
        let c = bytes[i];
        // Line splices join lines without starting a new logical line.
        if c == b'\\' && matches!(bytes.get(i + 1), Some(b'\n') | Some(b'\r')) {
            i += 1;
            if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            i += 1;
            line += 1;
            col = 1;
            space = true;
            continue;
        }
        if c == b'\n' {
            i += 1;
            line += 1;
            col = 1;
            bol = true;
            space = false;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            col += 1;
            space = true;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            let end = text[i..].find('\n').map_or(bytes.len(), |e| i + e);
            collect_watches(&text[i + 2..end], &mut watches);
            col += (end - i) as u32;
            i = end;
            space = true;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let Some(close) = text[i + 2..].find("*/") else {
                return Err(Diag::new(Pos { file, line, col }, "unterminated comment"));
            };
            let body = &text[i + 2..i + 2 + close];
            collect_watches(body, &mut watches);
            for ch in body.chars() {
                if ch == '\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
            }
            col += 4;
            i += close + 4;
            space = true;
            continue;
        }
        let pos = Pos { file, line, col };
        let start = i;
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Ident(Rc::from(&text[start..i]))
        } else if c.is_ascii_digit()
            || (c == b'.' && bytes.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            // A preprocessing number: digits, letters, dots and signed exponents.
            i += 1;
            while i < bytes.len() {
                let d = bytes[i];
                let exponent_sign = matches!(d, b'+' | b'-')
                    && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')
                    && !text[start..i].starts_with("0x")
                    && !text[start..i].starts_with("0X");
                let hex_exponent_sign =
                    matches!(d, b'+' | b'-') && matches!(bytes[i - 1], b'p' | b'P');
                if d.is_ascii_alphanumeric()
                    || d == b'.'
                    || d == b'_'
                    || exponent_sign
                    || hex_exponent_sign
                {
                    i += 1;
                } else {
                    break;
                }
            }
            number(&text[start..i])
                .ok_or_else(|| Diag::new(pos, format!("malformed number '{}'", &text[start..i])))?
        } else if c == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            if i >= bytes.len() || bytes[i] != b'"' {
                return Err(Diag::new(pos, "unterminated string"));
            }
            i += 1;
            Tok::Str(text[start + 1..i - 1].to_string())
        } else if c == b'\'' {
            let rest = &text[i + 1..];
            let (value, used) = match rest.as_bytes() {
                [b'\\', b'n', b'\'', ..] => (10, 3),
                [b'\\', b'0', b'\'', ..] => (0, 3),
                [b'\\', b't', b'\'', ..] => (9, 3),
                [b'\\', b'\\', b'\'', ..] => (92, 3),
                [b'\\', b'\'', b'\'', ..] => (39, 3),
                [ch, b'\'', ..] => (*ch as i64, 2),
                _ => return Err(Diag::new(pos, "malformed character literal")),
            };
            i += 1 + used;
            Tok::Char(value)
        } else {
            let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(**p)) else {
                return Err(Diag::new(
                    pos,
                    format!(
                        "unexpected character '{}'",
                        text[i..].chars().next().unwrap_or('?')
                    ),
                ));
            };
            i += p.len();
            Tok::Punct(p)
        };
        col += (i - start) as u32;
        tokens.push(Token {
            tok,
            pos,
            bol,
            space,
            hide: empty.clone(),
        });
        bol = false;
        space = false;
    }
    Ok((tokens, watches))
}

/// Names after `@watch` in a comment.
fn collect_watches(comment: &str, out: &mut Vec<String>) {
    let mut rest = comment;
    while let Some(at) = rest.find("@watch") {
        rest = &rest[at + 6..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
}

/// Parses a preprocessing number as an integer or floating literal.
pub fn number(s: &str) -> Option<Tok> {
    let lower = s.to_ascii_lowercase();
    let hex = lower.starts_with("0x");
    let is_float = if hex {
        lower.contains('.') || lower.contains('p')
    } else {
        lower.contains('.') || lower.contains('e')
    };
    if is_float {
        let (body, single, half) = if let Some(b) = lower.strip_suffix('f') {
            (b, true, false)
        } else if let Some(b) = lower.strip_suffix('h') {
            (b, false, true)
        } else if let Some(b) = lower.strip_suffix('l') {
            (b, false, false)
        } else {
            (lower.as_str(), false, false)
        };
        let value = if hex {
            hex_float(&body[2..])?
        } else {
            body.parse::<f64>().ok()?
        };
        return Some(Tok::Float {
            value,
            single,
            half,
        });
    }
    let digits_end = lower
        .find(|c: char| {
            c == 'u'
                || c == 'l'
                || (!hex && !c.is_ascii_digit())
                || (hex && !c.is_ascii_hexdigit() && c != 'x')
        })
        .unwrap_or(lower.len());
    let (digits, suffix) = lower.split_at(digits_end);
    if !suffix.chars().all(|c| c == 'u' || c == 'l') || suffix.matches('u').count() > 1 {
        return None;
    }
    let value = if hex {
        u64::from_str_radix(&digits[2..], 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<u64>().ok()?
    };
    Some(Tok::Int {
        value,
        unsigned: suffix.contains('u'),
        long: suffix.contains('l'),
        decimal: !(hex || digits.len() > 1 && digits.starts_with('0')),
    })
}

/// A hexadecimal floating literal's value (`1.8p3` → 12.0), without the `0x`.
fn hex_float(s: &str) -> Option<f64> {
    let (mantissa, exponent) = match s.split_once('p') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut value = 0f64;
    for c in int.chars() {
        value = value * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        value += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exponent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Tok> {
        lex(text, 0)
            .expect("lexes")
            .0
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn numbers_carry_their_suffixes() {
        assert_eq!(
            kinds("0x7fffffffffffffffL 1UL 017 1.5f 2e3")[..3],
            [
                Tok::Int {
                    value: i64::MAX as u64,
                    unsigned: false,
                    long: true,
                    decimal: false
                },
                Tok::Int {
                    value: 1,
                    unsigned: true,
                    long: true,
                    decimal: true
                },
                Tok::Int {
                    value: 15,
                    unsigned: false,
                    long: false,
                    decimal: false
                },
            ]
        );
        assert_eq!(
            kinds("1.5f")[0],
            Tok::Float {
                value: 1.5,
                single: true,
                half: false
            }
        );
        assert_eq!(
            kinds("0x1.8p1")[0],
            Tok::Float {
                value: 3.0,
                single: false,
                half: false
            }
        );
        assert_eq!(
            kinds("2e-3")[0],
            Tok::Float {
                value: 2e-3,
                single: false,
                half: false
            }
        );
    }

    #[test]
    fn splices_continue_a_logical_line_and_watches_are_collected() {
        let (tokens, watches) = lex("#define A \\\n 1\nx // @watch sdata\n", 0).expect("lexes");
        let bol: Vec<bool> = tokens.iter().map(|t| t.bol).collect();
        assert_eq!(bol, [true, false, false, false, true]);
        assert_eq!(tokens[3].pos.line, 2);
        assert_eq!(watches, ["sdata"]);
    }

    #[test]
    fn bad_characters_name_their_position() {
        let err = lex("int a;\n  $", 0).expect_err("fails");
        assert_eq!((err.pos.line, err.pos.col), (2, 3));
    }
}
