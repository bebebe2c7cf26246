//! The `.npy` header: the preamble (magic, version, header length) and the Python
//! dictionary literal that follows it, parsed with hard bounds.
//!
//! A general-purpose header parser was tried first and had two faults for an input
//! reader that must never hang: nested brackets in a hostile header took exponential
//! time, and dtype strings that numpy itself writes and loads (`'=i4'`, `'i4'`, `'<i'`,
//! `'float32'`) were refused. The format only needs a flat dictionary whose values are
//! strings, booleans and tuples of integers, so this parser reads exactly that grammar,
//! refuses headers longer than [`MAX_HEADER_BYTES`] or nested deeper than
//! [`MAX_DEPTH`] before looking at them further, and runs in time linear in the header.

/// The longest header accepted. numpy writes a few hundred bytes and, since 1.24, refuses
/// to read headers over 10 000 bytes unless asked; 64 KiB leaves room for long shapes.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The deepest nesting of brackets accepted (the format needs two: the dict and a tuple).
pub const MAX_DEPTH: usize = 8;

/// The most dimensions accepted (numpy's own limit is 64).
pub const MAX_DIMS: usize = 64;

/// The fields of a header that matter for reading the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The `descr` value when it is a string (`'<f4'`); `None` for a structured dtype (a
    /// list of fields).
    pub descr: Option<String>,
    /// `fortran_order`.
    pub fortran_order: bool,
    /// `shape`.
    pub shape: Vec<u64>,
    /// Bytes from the start of the file to the first data byte.
    pub data_offset: usize,
}

/// Reads the preamble and the header dictionary from the start of `bytes`.
pub fn parse(bytes: &[u8]) -> Result<Header, String> {
    if !bytes.starts_with(super::npy::MAGIC) {
        return Err("it does not start with the .npy magic bytes".into());
    }
    let major = *bytes.get(6).ok_or("the version bytes are missing")?;
    let (len, start) = match major {
        1 => {
            let b = bytes.get(8..10).ok_or("the header length is missing")?;
            (u16::from_le_bytes([b[0], b[1]]) as usize, 10)
        }
        2 | 3 => {
            let b = bytes.get(8..12).ok_or("the header length is missing")?;
            let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (usize::try_from(len).unwrap_or(usize::MAX), 12)
        }
        v => {
            return Err(format!(
                "format version {v} is not one numpy writes (1, 2 or 3)"
            ))
        }
    };
    if len > MAX_HEADER_BYTES {
        return Err(format!(
            "its header is {len} bytes long; redlab reads headers of at most {MAX_HEADER_BYTES} bytes"
        ));
    }
    let text = bytes
        .get(start..start + len)
        .ok_or("the file ends inside its header")?;
    // Version 3 headers are UTF-8; versions 1 and 2 are Latin-1, whose ASCII subset is all
    // the grammar uses. Anything else can only appear inside strings.
    let text = String::from_utf8_lossy(text);
    let value = Reader::new(&text).document()?;
    let mut header = Header {
        descr: None,
        fortran_order: false,
        shape: Vec::new(),
        data_offset: start + len,
    };
    let Literal::Dict(entries) = value else {
        return Err("its header is not a dictionary".into());
    };
    let (mut seen_descr, mut seen_order, mut seen_shape) = (false, false, false);
    for (key, value) in entries {
        match (key.as_str(), value) {
            ("descr", Literal::Str(s)) => (header.descr, seen_descr) = (Some(s), true),
            ("descr", Literal::List(_)) => seen_descr = true,
            ("fortran_order", Literal::Bool(b)) => (header.fortran_order, seen_order) = (b, true),
            ("shape", Literal::Tuple(items)) => {
                if items.len() > MAX_DIMS {
                    return Err(format!(
                        "its shape has {} dimensions; at most {MAX_DIMS} are supported",
                        items.len()
                    ));
                }
                header.shape = items
                    .into_iter()
                    .map(|d| match d {
                        Literal::Int(v) => Ok(v),
                        _ => Err("its shape holds something other than whole numbers".to_string()),
                    })
                    .collect::<Result<_, _>>()?;
                seen_shape = true;
            }
            ("descr" | "fortran_order" | "shape", other) => {
                return Err(format!(
                    "its '{key}' has the wrong kind of value ({other:?})"
                ));
            }
            // numpy ignores keys it does not know.
            _ => {}
        }
    }
    for (seen, key) in [
        (seen_descr, "descr"),
        (seen_order, "fortran_order"),
        (seen_shape, "shape"),
    ] {
        if !seen {
            return Err(format!("its header has no '{key}'"));
        }
    }
    Ok(header)
}

/// The Python literals a header may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Literal {
    Str(String),
    Int(u64),
    Bool(bool),
    None,
    Tuple(Vec<Literal>),
    List(Vec<Literal>),
    Dict(Vec<(String, Literal)>),
}

/// A cursor over the header text.
struct Reader<'t> {
    text: &'t [u8],
    at: usize,
    depth: usize,
}

impl<'t> Reader<'t> {
    fn new(text: &'t str) -> Self {
        Reader {
            text: text.as_bytes(),
            at: 0,
            depth: 0,
        }
    }

    fn document(&mut self) -> Result<Literal, String> {
        let value = self.value()?;
        self.skip_space();
        if self.at != self.text.len() {
            return Err(self.error("text after the header dictionary"));
        }
        Ok(value)
    }

    fn error(&self, what: &str) -> String {
        format!("its header cannot be read: {what} at byte {}", self.at)
    }

    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn value(&mut self) -> Result<Literal, String> {
        match self.peek() {
            Some(b'{') => self
                .nested(b'}', |r| {
                    let key = match r.value()? {
                        Literal::Str(s) => s,
                        _ => return Err(r.error("a dictionary key that is not a string")),
                    };
                    if r.peek() != Some(b':') {
                        return Err(r.error("expected ':'"));
                    }
                    r.at += 1;
                    Ok((key, r.value()?))
                })
                .map(Literal::Dict),
            Some(b'(') => self.nested(b')', Self::value).map(Literal::Tuple),
            Some(b'[') => self.nested(b']', Self::value).map(Literal::List),
            Some(q @ (b'\'' | b'"')) => self.string(q),
            Some(b'0'..=b'9') => self.integer(),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(_) => Err(self.error("unexpected character")),
            None => Err(self.error("unexpected end")),
        }
    }

    /// A bracketed, comma-separated sequence (trailing comma allowed), one level deeper.
    fn nested<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!("brackets nested deeper than {MAX_DEPTH}")));
        }
        self.at += 1;
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.at += 1;
                break;
            }
            items.push(item(self)?);
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(c) if c == close => {}
                _ => return Err(self.error("expected ',' or a closing bracket")),
            }
        }
        self.depth -= 1;
        Ok(items)
    }

    fn string(&mut self, quote: u8) -> Result<Literal, String> {
        let start = self.at + 1;
        let len = self.text[start..]
            .iter()
            .position(|&c| c == quote || c == b'\\')
            .ok_or_else(|| self.error("an unterminated string"))?;
        if self.text[start + len] == b'\\' {
            return Err(self.error("an escape in a string (no dtype or key has one)"));
        }
        self.at = start + len + 1;
        Ok(Literal::Str(
            String::from_utf8_lossy(&self.text[start..start + len]).into_owned(),
        ))
    }

    fn integer(&mut self) -> Result<Literal, String> {
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        // Python 2 wrote long integers as `3L`.
        if self.text.get(self.at) == Some(&b'L') {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.text[start..self.at])
            .unwrap_or("")
            .trim_end_matches('L');
        digits
            .parse::<u64>()
            .map(Literal::Int)
            .map_err(|_| self.error(&format!("the number {digits} is too large")))
    }

    fn word(&mut self) -> Result<Literal, String> {
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(u8::is_ascii_alphanumeric)
        {
            self.at += 1;
        }
        match &self.text[start..self.at] {
            b"True" => Ok(Literal::Bool(true)),
            b"False" => Ok(Literal::Bool(false)),
            b"None" => Ok(Literal::None),
            _ => {
                self.at = start;
                Err(self.error("a name that is not True, False or None"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dict: &str) -> Vec<u8> {
        let mut bytes = super::super::npy::MAGIC.to_vec();
        bytes.extend([1, 0]);
        bytes.extend((dict.len() as u16).to_le_bytes());
        bytes.extend(dict.as_bytes());
        bytes
    }

    #[test]
    fn reads_what_numpy_writes() {
        let h = parse(&file(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }          \n",
        ))
        .expect("valid");
        assert_eq!(h.descr.as_deref(), Some("<f4"));
        assert_eq!(h.shape, vec![3, 4]);
        assert!(!h.fortran_order);
        let h = parse(&file(
            "{'shape': (7,), 'fortran_order': True, 'descr': 'i4'}",
        ))
        .expect("valid");
        assert_eq!((h.shape, h.fortran_order), (vec![7], true));
        let h = parse(&file(
            "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': ()}",
        ))
        .expect("valid");
        assert_eq!((h.descr, h.shape), (None, vec![]));
    }

    #[test]
    fn refuses_damaged_and_hostile_headers() {
        let deep = format!("{{'descr': {}'<f4'{}}}", "[".repeat(30), "]".repeat(30));
        assert!(parse(&file(&deep))
            .expect_err("too deep")
            .contains("nested deeper"));
        let braces = format!("{}{}", "{".repeat(20), "}".repeat(20));
        assert!(parse(&file(&braces)).is_err());
        for bad in [
            "{'descr': '<f4', 'shape': (3,)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -1)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
            "{'descr': '<f4', 'fortran_order': Nope, 'shape': (3,)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} extra",
            "{'descr: '<f4'}",
        ] {
            assert!(parse(&file(bad)).is_err(), "{bad}");
        }
        let mut long = file("{}");
        long[8..10].copy_from_slice(&60000u16.to_le_bytes());
        assert!(parse(&long).expect_err("truncated").contains("ends inside"));
    }
}
