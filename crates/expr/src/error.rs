//! What can be wrong with a user-defined reduction: a parse error with the column of the
//! bad token, or a type error in one line.

/// A parse or type error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// The text does not follow the grammar (docs/expressions.md).
    #[error("{part}: column {column}: {message} (in '{text}')")]
    Parse {
        /// Which part of the reduction (`map`, `combine`, …); filled in by the caller.
        part: String,
        /// 1-based column of the bad token.
        column: usize,
        /// What was expected or found.
        message: String,
        /// The text, for the caret line.
        text: String,
        /// Spaces and a `^` under the column.
        caret: String,
    },
    /// A well-formed expression whose types do not fit, or a reduction whose parts do
    /// not fit together.
    #[error("{0}")]
    Type(String),
}

impl ExprError {
    /// A parse error at `column`; the part and the text are added by [`ExprError::in_part`].
    pub fn parse(column: usize, message: impl Into<String>) -> ExprError {
        ExprError::Parse {
            part: String::new(),
            column,
            message: message.into(),
            text: String::new(),
            caret: String::new(),
        }
    }

    /// A type error.
    pub fn typing(message: impl Into<String>) -> ExprError {
        ExprError::Type(message.into())
    }

    /// The text with a caret under the bad column, on two lines (for interfaces that
    /// can show more than the one-line message).
    pub fn pointer(&self) -> Option<String> {
        match self {
            ExprError::Parse { text, caret, .. } => Some(format!("  {text}\n  {caret}")),
            ExprError::Type(_) => None,
        }
    }

    /// The column of a parse error.
    pub fn column(&self) -> Option<usize> {
        match self {
            ExprError::Parse { column, .. } => Some(*column),
            ExprError::Type(_) => None,
        }
    }

    /// The same error, saying which part of the reduction it is in and quoting `text`.
    pub fn in_part(self, part: &str, source: &str) -> ExprError {
        match self {
            ExprError::Parse {
                column, message, ..
            } => ExprError::Parse {
                part: part.to_string(),
                caret: format!("{}^", " ".repeat(column.saturating_sub(1))),
                column,
                message,
                text: source.to_string(),
            },
            ExprError::Type(m) => ExprError::Type(format!("{part}: {m}")),
        }
    }
}
