//! Where things are in the source (file, line, column) and the error type that names
//! them. Every error the front end or the simulator reports carries a position.

use std::fmt;

/// A position in a source file: the file's index in [`Files`], 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// Index into [`Files`].
    pub file: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

/// The files a program was read from (the main file first, then includes), with their
/// text, so reports can show source lines.
#[derive(Debug, Clone, Default)]
pub struct Files {
    names: Vec<String>,
    texts: Vec<String>,
    /// Byte offset of each line's start, per file: a report asks for the text of every
    /// line it counts, and scanning from the top each time made long files quadratic.
    line_starts: Vec<Vec<usize>>,
}

impl Files {
    /// Registers a file; returns its index.
    pub fn add(&mut self, name: &str, text: &str) -> u32 {
        self.names.push(name.to_string());
        self.texts.push(text.to_string());
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(k, _)| k + 1))
            .collect();
        self.line_starts.push(starts);
        (self.names.len() - 1) as u32
    }

    /// The name of file `index`.
    pub fn name(&self, index: u32) -> &str {
        self.names.get(index as usize).map_or("?", String::as_str)
    }

    /// The text of line `line` (1-based) of file `file`, without its newline.
    pub fn line_text(&self, file: u32, line: u32) -> &str {
        let (Some(text), Some(starts)) = (
            self.texts.get(file as usize),
            self.line_starts.get(file as usize),
        ) else {
            return "";
        };
        let k = line.saturating_sub(1) as usize;
        let Some(&start) = starts.get(k) else {
            return "";
        };
        let end = starts.get(k + 1).map_or(text.len(), |&e| e - 1);
        text[start..end].trim_end_matches('\r')
    }

    /// `name:line:col` for a position.
    pub fn describe(&self, pos: Pos) -> String {
        format!("{}:{}:{}", self.name(pos.file), pos.line, pos.col)
    }
}

/// An error at a position, before the file names are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// Where.
    pub pos: Pos,
    /// What went wrong.
    pub message: String,
}

impl Diag {
    /// An error at `pos`.
    pub fn new(pos: Pos, message: impl Into<String>) -> Diag {
        Diag {
            pos,
            message: message.into(),
        }
    }

    /// The error with its file name resolved.
    pub fn resolve(self, files: &Files) -> AnalyzeError {
        AnalyzeError::Source {
            at: files.describe(self.pos),
            message: self.message,
        }
    }
}

/// What the analyzer reports when it cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalyzeError {
    /// A problem in the kernel source, or at run time at a source position.
    #[error("{at}: {message}")]
    Source {
        /// `file:line:col`.
        at: String,
        /// What went wrong.
        message: String,
    },
    /// A problem with what was asked for (arguments, sizes, names).
    #[error("{0}")]
    Usage(String),
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_text_finds_every_line() {
        let mut files = Files::default();
        let f = files.add("a.cl", "one\r\ntwo\n\nfour");
        assert_eq!(files.line_text(f, 1), "one");
        assert_eq!(files.line_text(f, 2), "two");
        assert_eq!(files.line_text(f, 3), "");
        assert_eq!(files.line_text(f, 4), "four");
        assert_eq!(files.line_text(f, 5), "");
        assert_eq!(files.line_text(9, 1), "");
    }
}
