//! The parsed, untyped expression tree. Every node keeps the column it starts at, so the
//! type checker can point at it too.

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-e`
    Neg,
    /// `!e`
    Not,
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `&` (integers)
    BitAnd,
    /// `|` (integers)
    BitOr,
    /// `^` (integers)
    BitXor,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    /// Whether the result is a comparison (bool).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Ast {
    /// 1-based column where the node starts.
    pub column: usize,
    /// What it is.
    pub kind: AstKind,
}

/// The kinds of node.
#[derive(Debug, Clone, PartialEq)]
pub enum AstKind {
    /// An integer literal.
    Int(u64),
    /// A float literal.
    Float(f64),
    /// A name: an input, `i`, a variable of the part, or a constant.
    Name(String),
    /// `op e`
    Unary(UnaryOp, Box<Ast>),
    /// `l op r`
    Binary(BinaryOp, Box<Ast>, Box<Ast>),
    /// `c ? a : b`
    Select(Box<Ast>, Box<Ast>, Box<Ast>),
    /// `name(args)`: a function or a cast.
    Call(String, Vec<Ast>),
}
