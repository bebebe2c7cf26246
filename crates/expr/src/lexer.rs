//! Tokens of the expression language, each with the 1-based column where it starts, so
//! that every error can point at the character the user typed.

use crate::error::ExprError;

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// An integer literal (decimal or `0x` hexadecimal).
    Int(u64),
    /// A float literal (has a `.` or an exponent).
    Float(f64),
    /// A name: an input, a variable, a function or a type.
    Name(String),
    /// An operator or punctuation, spelled in ASCII (`×` arrives as `*`).
    Punct(&'static str),
    /// The end of the text.
    End,
}

/// A token and its column.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    /// The token.
    pub token: Token,
    /// 1-based column (in characters) of its first character.
    pub column: usize,
}

/// Two-character operators first, so that `<=` is not read as `<` then `=`.
const PUNCTS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", "!", "?", ":", "(", ")",
    ",", "&", "|", "^",
];

/// The typographic forms accepted for the arithmetic operators.
fn typographic(c: char) -> Option<&'static str> {
    match c {
        '×' | '·' => Some("*"),
        '÷' => Some("/"),
        '−' => Some("-"),
        '≤' => Some("<="),
        '≥' => Some(">="),
        '≠' => Some("!="),
        _ => None,
    }
}

/// Splits `text` into tokens, ending with [`Token::End`].
pub fn tokenize(text: &str) -> Result<Vec<Spanned>, ExprError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let column = at + 1;
        if c.is_whitespace() {
            at += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(at + 1).is_some_and(char::is_ascii_digit)) {
            let (token, len) = number(&chars[at..], column)?;
            out.push(Spanned { token, column });
            at += len;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let len = chars[at..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .count();
            let name: String = chars[at..at + len].iter().collect();
            out.push(Spanned {
                token: Token::Name(name),
                column,
            });
            at += len;
            continue;
        }
        if let Some(p) = typographic(c) {
            out.push(Spanned {
                token: Token::Punct(p),
                column,
            });
            at += 1;
            continue;
        }
        let rest: String = chars[at..chars.len().min(at + 2)].iter().collect();
        match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            Some(p) => {
                out.push(Spanned {
                    token: Token::Punct(p),
                    column,
                });
                at += p.len();
            }
            None => {
                return Err(ExprError::parse(
                    column,
                    format!("unexpected character '{c}'"),
                ))
            }
        }
    }
    out.push(Spanned {
        token: Token::End,
        column: chars.len() + 1,
    });
    Ok(out)
}

/// A number at the start of `chars`: the token and how many characters it took.
fn number(chars: &[char], column: usize) -> Result<(Token, usize), ExprError> {
    if chars.len() > 1 && chars[0] == '0' && matches!(chars[1], 'x' | 'X') {
        let len = 2 + chars[2..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        let digits: String = chars[2..len].iter().collect();
        let value = u64::from_str_radix(&digits, 16)
            .map_err(|_| ExprError::parse(column, "malformed hexadecimal literal"))?;
        return Ok((Token::Int(value), len));
    }
    let mut len = chars.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut float = false;
    if chars.get(len) == Some(&'.') {
        float = true;
        len += 1;
        len += chars[len..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
    }
    if matches!(chars.get(len), Some('e' | 'E')) {
        let mut k = len + 1;
        if matches!(chars.get(k), Some('+' | '-')) {
            k += 1;
        }
        let digits = chars[k..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err(ExprError::parse(
                column,
                "an exponent needs digits (e.g. 1e-3)",
            ));
        }
        float = true;
        len = k + digits;
    }
    let text: String = chars[..len].iter().collect();
    if chars
        .get(len)
        .is_some_and(|c| c.is_alphanumeric() || *c == '_')
    {
        return Err(ExprError::parse(
            column + len,
            format!("unexpected '{}' after the number {text}", chars[len]),
        ));
    }
    if float {
        let value: f64 = text
            .parse()
            .map_err(|_| ExprError::parse(column, format!("malformed number {text}")))?;
        Ok((Token::Float(value), len))
    } else {
        let value: u64 = text.parse().map_err(|_| {
            ExprError::parse(
                column,
                format!("integer literal {text} does not fit 64 bits"),
            )
        })?;
        Ok((Token::Int(value), len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_operators_take_two_characters() {
        let t = tokenize("x·y <= 2.5e1").expect("lexes");
        let cols: Vec<usize> = t.iter().map(|s| s.column).collect();
        assert_eq!(cols, vec![1, 2, 3, 5, 8, 13]);
        assert_eq!(t[1].token, Token::Punct("*"));
        assert_eq!(t[3].token, Token::Punct("<="));
        assert_eq!(t[4].token, Token::Float(25.0));
    }

    #[test]
    fn bad_characters_and_numbers_name_their_column() {
        let e = tokenize("x + $").expect_err("rejects");
        assert_eq!(e.column(), Some(5));
        let e = tokenize("1e+").expect_err("rejects");
        assert_eq!(e.column(), Some(1));
        let e = tokenize("12ab").expect_err("rejects");
        assert_eq!(e.column(), Some(3));
        assert!(tokenize("99999999999999999999").is_err());
    }
}
