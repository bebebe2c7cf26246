//! The syntax tree the parser builds and the simulator walks. Every expression and
//! statement keeps its position, which is what per-line metrics are counted against.

use std::rc::Rc;

use crate::source::Pos;
use crate::types::{Scalar, Space, Type};

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
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
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `*`
    Deref,
    /// `&`
    AddrOf,
}

/// An expression with its position.
#[derive(Debug, Clone)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it starts.
    pub pos: Pos,
}

/// Expression forms.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// An integer literal with its C type.
    Int(u64, Scalar),
    /// A floating literal with its type.
    Float(f64, Scalar),
    /// A string literal (only as a `printf` format).
    Str(String),
    /// A variable.
    Ident(Rc<str>),
    /// A unary operator.
    Unary(UnOp, Box<Expr>),
    /// `++x` / `--x` (`true` for increment).
    PreIncDec(bool, Box<Expr>),
    /// `x++` / `x--`.
    PostIncDec(bool, Box<Expr>),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `&&` (`true`) or `||` (`false`), evaluated short-circuit.
    Logical(bool, Box<Expr>, Box<Expr>),
    /// `=` or a compound assignment.
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A call of a helper or built-in function.
    Call(Rc<str>, Vec<Expr>),
    /// `a[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `s.f` (also vector swizzles).
    Member(Box<Expr>, Rc<str>),
    /// `p->f`.
    Arrow(Box<Expr>, Rc<str>),
    /// `(T)e`.
    Cast(Type, Box<Expr>),
    /// `(float4)(a, b, …)`.
    VectorLit(Type, Vec<Expr>),
    /// `(T){…}`.
    Compound(Type, Box<Initializer>),
    /// `sizeof`, already computed.
    SizeOf(usize),
    /// `sizeof` of a variable, element or member: its declared type's size, found
    /// when it runs (the parser keeps no scopes). The operand is not read.
    SizeOfPlace(Box<Expr>),
    /// `a, b`.
    Comma(Box<Expr>, Box<Expr>),
}

/// A variable's initial value.
#[derive(Debug, Clone)]
pub enum Initializer {
    /// `= e`.
    Expr(Expr),
    /// `= { … }`.
    List(Vec<Initializer>),
}

/// One declared variable.
#[derive(Debug, Clone)]
pub struct VarDecl {
    /// Unique in the program (local arrays are allocated once per work-group by it).
    pub id: usize,
    /// Its name.
    pub name: Rc<str>,
    /// Its type.
    pub ty: Type,
    /// Where it lives.
    pub space: Space,
    /// Its initial value.
    pub init: Option<Initializer>,
    /// An alignment asked for with `__attribute__((aligned(N)))`, beyond its type's.
    pub align: Option<usize>,
    /// Where it is declared.
    pub pos: Pos,
}

/// A statement with its position.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where it starts.
    pub pos: Pos,
}

/// Statement forms.
#[derive(Debug, Clone)]
pub enum StmtKind {
    /// Declarations.
    Decl(Vec<VarDecl>),
    /// An expression.
    Expr(Expr),
    /// `{ … }`.
    Block(Vec<Stmt>),
    /// `if (c) a else b`.
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    /// `while (c) body`.
    While(Expr, Box<Stmt>),
    /// `do body while (c);`.
    DoWhile(Box<Stmt>, Expr),
    /// `for (init; cond; step) body`.
    For(Option<Box<Stmt>>, Option<Expr>, Option<Expr>, Box<Stmt>),
    /// `switch (e) { case c: … default: … }`: each label (`None`: `default`) with the
    /// statements that follow it up to the next label.
    Switch(Expr, Vec<(Option<Expr>, Vec<Stmt>)>),
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return e;`
    Return(Option<Expr>),
    /// `;`
    Empty,
}

/// A parameter.
#[derive(Debug, Clone)]
pub struct Param {
    /// Its name.
    pub name: Rc<str>,
    /// Its type.
    pub ty: Type,
}

/// A function definition.
#[derive(Debug, Clone)]
pub struct Function {
    /// Its name.
    pub name: Rc<str>,
    /// What it returns.
    pub ret: Type,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Its body (a block).
    pub body: Stmt,
    /// A `__kernel`.
    pub is_kernel: bool,
    /// `reqd_work_group_size`, if given.
    pub reqd_work_group_size: Option<[usize; 3]>,
    /// Where it is defined.
    pub pos: Pos,
}

/// A parsed program.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// Function definitions.
    pub functions: Vec<Rc<Function>>,
    /// Program-scope `__constant` variables.
    pub constants: Vec<VarDecl>,
}

impl Program {
    /// The function called `name`.
    pub fn function(&self, name: &str) -> Option<&Rc<Function>> {
        self.functions.iter().find(|f| &*f.name == name)
    }

    /// The kernels, in source order.
    pub fn kernels(&self) -> impl Iterator<Item = &Rc<Function>> {
        self.functions.iter().filter(|f| f.is_kernel)
    }
}
