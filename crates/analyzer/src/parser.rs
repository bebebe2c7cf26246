//! A recursive-descent parser for the OpenCL C that kernels are written in: declarations
//! with address spaces, typedefs and structs, helper and kernel functions with
//! attributes, and structured statements. Expressions are in [`crate::parse_expr`].
//! General C parsers do not know address spaces or vector types, which is why this one
//! is written for the language.

use std::collections::HashMap;
use std::rc::Rc;

use crate::ast::{Expr, Function, Initializer, Param, Program, Stmt, StmtKind, VarDecl};
use crate::lexer::{Tok, Token};
use crate::source::{Diag, Pos};
use crate::types::{Scalar, Space, StructDef, Type};

/// Parses preprocessed tokens into a program.
pub fn parse(tokens: &[Token]) -> Result<Program, Diag> {
    let mut p = Parser {
        tokens,
        i: 0,
        typedefs: HashMap::new(),
        structs: HashMap::new(),
        next_id: 0,
        depth: 0,
        packed: false,
        aligned: None,
    };
    p.program()
}

/// What a declaration's specifiers say.
pub(crate) struct Specs {
    pub ty: Type,
    pub space: Option<Space>,
    pub is_kernel: bool,
    pub is_typedef: bool,
    pub reqd_wg: Option<[usize; 3]>,
}

/// Parser state.
pub(crate) struct Parser<'t> {
    pub tokens: &'t [Token],
    pub i: usize,
    pub typedefs: HashMap<Rc<str>, Type>,
    pub structs: HashMap<Rc<str>, Rc<StructDef>>,
    pub next_id: usize,
    /// The current nesting (see [`MAX_NESTING`]).
    pub depth: usize,
    /// Whether an `__attribute__((packed))` was read since the flag was last cleared.
    pub packed: bool,
    /// The alignment an `__attribute__((aligned(N)))` asked for since it was last taken.
    pub aligned: Option<usize>,
}

/// The largest array, in bytes, a declaration may have.
pub const MAX_ARRAY_BYTES: u64 = 1 << 32;

/// The deepest nesting of statements and expressions the parser accepts. The parser,
/// the simulator and dropping the tree all recurse over it, so the bound keeps every
/// one of them well inside the native stack; real kernels nest a few dozen levels.
pub const MAX_NESTING: usize = 256;

const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "inline",
    "__inline",
    "static",
    "extern",
    "__read_only",
    "__write_only",
    "read_only",
    "write_only",
];

impl<'t> Parser<'t> {
    pub fn pos(&self) -> Pos {
        self.tokens
            .get(self.i)
            .or(self.tokens.last())
            .map_or(Pos::default(), |t| t.pos)
    }

    pub fn peek(&self) -> Option<&'t Token> {
        self.tokens.get(self.i)
    }

    pub fn peek_at(&self, k: usize) -> Option<&'t Token> {
        self.tokens.get(self.i + k)
    }

    pub fn at(&self, p: &str) -> bool {
        self.peek().is_some_and(|t| t.is(p))
    }

    pub fn eat(&mut self, p: &str) -> bool {
        if self.at(p) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, p: &str) -> Result<(), Diag> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.error(format!("expected '{p}'")))
        }
    }

    pub fn error(&self, what: String) -> Diag {
        let found = self.peek().map_or("the end of the file".to_string(), |t| {
            format!("'{}'", t.text())
        });
        Diag::new(self.pos(), format!("{what}, found {found}"))
    }

    pub fn ident(&mut self) -> Result<Rc<str>, Diag> {
        match self.peek().map(|t| &t.tok) {
            Some(Tok::Ident(name)) => {
                self.i += 1;
                Ok(name.clone())
            }
            _ => Err(self.error("expected a name".into())),
        }
    }

    fn word_at(&self, k: usize) -> Option<&'t str> {
        self.peek_at(k).and_then(|t| t.ident()).map(|s| &**s)
    }

    /// Whether a type (or a qualifier that starts one) begins at offset `k`.
    pub fn starts_type(&self, k: usize) -> bool {
        let Some(w) = self.word_at(k) else {
            return false;
        };
        address_space(w).is_some()
            || QUALIFIERS.contains(&w)
            || matches!(
                w,
                "unsigned" | "signed" | "struct" | "union" | "void" | "typedef"
            )
            || matches!(w, "__kernel" | "kernel" | "__attribute__")
            || Type::from_name(w).is_some()
            || self.typedefs.contains_key(w)
    }

    fn program(&mut self) -> Result<Program, Diag> {
        let mut program = Program::default();
        while self.peek().is_some() {
            if self.eat(";") {
                continue;
            }
            let specs = self.specs()?;
            if self.eat(";") {
                continue; // a struct declaration alone
            }
            let start = self.pos();
            let (name, ty) = self.declarator(specs.ty.clone(), specs.space)?;
            if specs.is_typedef {
                self.typedefs.insert(name, ty);
                while self.eat(",") {
                    let (n, t) = self.declarator(specs.ty.clone(), specs.space)?;
                    self.typedefs.insert(n, t);
                }
                self.expect(";")?;
                continue;
            }
            if self.at("(") {
                if let Some(f) = self.function(name, ty, &specs, start)? {
                    program.functions.push(Rc::new(f));
                }
                continue;
            }
            // Program-scope variables: only __constant ones are meaningful to a kernel.
            let mut decls = vec![(name, ty, start)];
            loop {
                let init = if self.eat("=") {
                    Some(self.initializer()?)
                } else {
                    None
                };
                let (name, ty, pos) = decls.pop().ok_or_else(|| self.error("internal".into()))?;
                let ty = complete_array(ty, init.as_ref());
                program.constants.push(VarDecl {
                    id: self.fresh(),
                    name,
                    ty,
                    space: Space::Constant,
                    init,
                    align: None,
                    pos,
                });
                if !self.eat(",") {
                    break;
                }
                let pos = self.pos();
                let (n, t) = self.declarator(specs.ty.clone(), specs.space)?;
                decls.push((n, t, pos));
            }
            self.expect(";")?;
        }
        Ok(program)
    }

    pub fn fresh(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    fn function(
        &mut self,
        name: Rc<str>,
        ret: Type,
        specs: &Specs,
        pos: Pos,
    ) -> Result<Option<Function>, Diag> {
        self.expect("(")?;
        let mut params = Vec::new();
        if !(self.word_at(0) == Some("void") && self.peek_at(1).is_some_and(|t| t.is(")"))) {
            while !self.at(")") {
                let s = self.specs()?;
                let (n, t) = self.declarator(s.ty, s.space)?;
                // Array parameters are pointers.
                let t = match t {
                    Type::Array(e, _) => Type::Pointer(e, s.space),
                    t => t,
                };
                params.push(Param { name: n, ty: t });
                if !self.eat(",") {
                    break;
                }
            }
        } else {
            self.i += 1;
        }
        self.expect(")")?;
        let mut reqd = specs.reqd_wg;
        while self.word_at(0) == Some("__attribute__") {
            reqd = self.attribute()?.or(reqd);
        }
        if self.eat(";") {
            return Ok(None); // a prototype
        }
        if !self.at("{") {
            return Err(self.error("expected a function body".into()));
        }
        let body = self.statement()?;
        Ok(Some(Function {
            name,
            ret,
            params,
            body,
            is_kernel: specs.is_kernel,
            reqd_work_group_size: reqd,
            pos,
        }))
    }

    /// `__attribute__((…))`; returns `reqd_work_group_size` if that is what it says.
    fn attribute(&mut self) -> Result<Option<[usize; 3]>, Diag> {
        self.i += 1;
        self.expect("(")?;
        self.expect("(")?;
        let mut reqd = None;
        while !self.at(")") {
            let name = self.ident()?;
            self.packed |= &*name == "packed" || &*name == "__packed__";
            if (&*name == "aligned" || &*name == "__aligned__") && !self.at("(") {
                // `aligned` alone: the target's largest alignment (16 bytes, a float4).
                self.aligned = Some(16);
            }
            if self.eat("(") {
                let mut values = Vec::new();
                while !self.at(")") {
                    let e = self.assignment()?;
                    values.push(self.const_int(&e).unwrap_or(0) as usize);
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect(")")?;
                if &*name == "reqd_work_group_size" && values.len() == 3 {
                    reqd = Some([values[0], values[1], values[2]]);
                }
                if let ("aligned" | "__aligned__", [a]) = (&*name, values.as_slice()) {
                    self.aligned = Some((*a).clamp(1, 1 << 12));
                }
            }
            if !self.eat(",") {
                break;
            }
        }
        self.expect(")")?;
        self.expect(")")?;
        Ok(reqd)
    }

    /// Declaration specifiers: qualifiers, address space, base type.
    pub fn specs(&mut self) -> Result<Specs, Diag> {
        let mut specs = Specs {
            ty: Type::Void,
            space: None,
            is_kernel: false,
            is_typedef: false,
            reqd_wg: None,
        };
        let mut base: Option<Type> = None;
        let mut unsigned = None;
        let mut longs = 0;
        while let Some(w) = self.word_at(0) {
            if let Some(space) = address_space(w) {
                specs.space = Some(space);
            } else if QUALIFIERS.contains(&w) {
            } else if w == "__kernel" || w == "kernel" {
                specs.is_kernel = true;
            } else if w == "typedef" {
                specs.is_typedef = true;
            } else if w == "__attribute__" {
                specs.reqd_wg = self.attribute()?.or(specs.reqd_wg);
                continue;
            } else if w == "unsigned" || w == "signed" {
                unsigned = Some(w == "unsigned");
            } else if w == "long" && base.is_none() {
                longs += 1;
            } else if (w == "struct" || w == "union") && base.is_none() {
                self.i += 1;
                base = Some(if w == "union" {
                    self.nested(|p| p.struct_type_inner(true))?
                } else {
                    self.struct_type()?
                });
                continue;
            } else if base.is_none() && unsigned.is_none() && longs == 0 && w == "void" {
                base = Some(Type::Void);
            } else if base.is_none()
                && (Type::from_name(w).is_some() || self.typedefs.contains_key(w))
            {
                if w == "int" && (longs > 0 || unsigned.is_some()) {
                    // `long int`, `unsigned int`: the int is implied already.
                } else {
                    base = Type::from_name(w).or_else(|| self.typedefs.get(w).cloned());
                }
            } else {
                break;
            }
            self.i += 1;
        }
        let base = match (base, longs) {
            (None, 0) if unsigned.is_some() => Some(Type::Scalar(Scalar::Int)),
            (None, n) if n > 0 => Some(Type::Scalar(Scalar::Long)),
            (b, _) => b,
        };
        let Some(mut ty) = base else {
            return Err(self.error("expected a type".into()));
        };
        if unsigned == Some(true) {
            ty = match ty {
                Type::Scalar(Scalar::Char) => Type::Scalar(Scalar::UChar),
                Type::Scalar(Scalar::Short) => Type::Scalar(Scalar::UShort),
                Type::Scalar(Scalar::Int) => Type::Scalar(Scalar::UInt),
                Type::Scalar(Scalar::Long) => Type::Scalar(Scalar::ULong),
                t => t,
            };
        }
        specs.ty = ty;
        Ok(specs)
    }

    fn struct_type(&mut self) -> Result<Type, Diag> {
        self.nested(|p| p.struct_type_inner(false))
    }

    /// A struct (or, with `union`, a union) type: a tag, a body, or both.
    fn struct_type_inner(&mut self, union: bool) -> Result<Type, Diag> {
        self.packed = false;
        while self.word_at(0) == Some("__attribute__") {
            self.attribute()?;
        }
        // Kept here: a struct nested in the body reads attributes of its own.
        let mut packed = self.packed;
        let tag = match self.peek().map(|t| &t.tok) {
            Some(Tok::Ident(name)) => {
                self.i += 1;
                Some(name.clone())
            }
            _ => None,
        };
        if !self.eat("{") {
            let tag = tag.ok_or_else(|| self.error("expected a struct name or body".into()))?;
            return self
                .structs
                .get(&tag)
                .cloned()
                .map(Type::Struct)
                .ok_or_else(|| self.error(format!("unknown struct {tag}")));
        }
        let mut fields = Vec::new();
        while !self.eat("}") {
            let s = self.specs()?;
            loop {
                let (n, t) = self.declarator(s.ty.clone(), s.space)?;
                fields.push((n.to_string(), t));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(";")?;
        }
        self.packed = false;
        while self.word_at(0) == Some("__attribute__") {
            self.attribute()?;
        }
        packed |= self.packed;
        let name = tag
            .as_deref()
            .unwrap_or(if union { "union" } else { "struct" });
        let def = Rc::new(match (union, packed) {
            (true, _) => StructDef::union(name, fields),
            (false, false) => StructDef::new(name, fields),
            (false, true) => StructDef::packed(name, fields),
        });
        if let Some(tag) = tag {
            self.structs.insert(tag, def.clone());
        }
        Ok(Type::Struct(def))
    }

    /// A declarator: pointer stars, the name, array dimensions.
    pub fn declarator(
        &mut self,
        base: Type,
        space: Option<Space>,
    ) -> Result<(Rc<str>, Type), Diag> {
        let mut ty = base;
        let mut pointer_space = space;
        self.chain(|this| {
            while this.eat("*") {
                this.deepen()?;
                ty = Type::Pointer(Rc::new(ty), pointer_space);
                pointer_space = None;
                while this.word_at(0).is_some_and(|w| QUALIFIERS.contains(&w)) {
                    this.i += 1;
                }
            }
            let name = this.ident()?;
            Ok((name, this.array_suffix(ty)?))
        })
    }

    /// `[N][M]…` after a name; `[]` leaves the length to the initializer (0 for now).
    pub fn array_suffix(&mut self, ty: Type) -> Result<Type, Diag> {
        let dims = self.chain(|this| {
            let mut dims = Vec::new();
            while this.eat("[") {
                this.deepen()?;
                if this.eat("]") {
                    dims.push((0u64, this.pos()));
                    continue;
                }
                let e = this.expression()?;
                let n = this
                    .const_int(&e)
                    .ok_or_else(|| Diag::new(e.pos, "array length must be a constant"))?;
                if n <= 0 {
                    return Err(Diag::new(
                        e.pos,
                        format!("array length {n} is not positive"),
                    ));
                }
                this.expect("]")?;
                dims.push((n as u64, e.pos));
            }
            Ok(dims)
        })?;
        // Checked arithmetic: a length whose byte size overflows, or exceeds what any
        // device has, is refused here rather than wrapping into a small array.
        let mut bytes = ty.size() as u64;
        for &(n, pos) in dims.iter().rev() {
            bytes = bytes
                .checked_mul(n.max(1))
                .filter(|&b| b <= MAX_ARRAY_BYTES)
                .ok_or_else(|| {
                    Diag::new(
                        pos,
                        format!(
                            "array of more than {} GiB; the analyzer simulates arrays up to that size",
                            MAX_ARRAY_BYTES >> 30
                        ),
                    )
                })?;
        }
        Ok(dims
            .into_iter()
            .rev()
            .fold(ty, |t, (n, _)| Type::Array(Rc::new(t), n as usize)))
    }

    /// `= …` after a declarator.
    pub fn initializer(&mut self) -> Result<Initializer, Diag> {
        self.nested(Self::initializer_inner)
    }

    fn initializer_inner(&mut self) -> Result<Initializer, Diag> {
        if self.eat("{") {
            let mut items = Vec::new();
            while !self.eat("}") {
                items.push(self.initializer()?);
                if !self.eat(",") {
                    self.expect("}")?;
                    break;
                }
            }
            return Ok(Initializer::List(items));
        }
        Ok(Initializer::Expr(self.assignment()?))
    }

    /// A statement.
    pub fn statement(&mut self) -> Result<Stmt, Diag> {
        self.nested(Self::statement_inner)
    }

    /// Runs `f`, which goes one level deeper with each link of a chain it parses
    /// (operators, pointer stars, array dimensions), and restores the depth after.
    pub fn chain<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Diag>) -> Result<T, Diag> {
        let base = self.depth;
        let result = f(self);
        self.depth = base;
        result
    }

    /// Runs `f` one nesting level deeper, refusing to go past [`MAX_NESTING`].
    pub fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Diag>) -> Result<T, Diag> {
        self.deepen()?;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// One level deeper (the caller restores the depth), or an error past
    /// [`MAX_NESTING`].
    pub fn deepen(&mut self) -> Result<(), Diag> {
        if self.depth >= MAX_NESTING {
            return Err(self.error(format!(
                "statements or expressions nested deeper than {MAX_NESTING} levels (a long operator chain counts one level per operator)"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    fn statement_inner(&mut self) -> Result<Stmt, Diag> {
        let pos = self.pos();
        let kind = match self.word_at(0) {
            _ if self.eat("{") => {
                let mut body = Vec::new();
                while !self.eat("}") {
                    if self.peek().is_none() {
                        return Err(self.error("expected '}'".into()));
                    }
                    body.push(self.statement()?);
                }
                StmtKind::Block(body)
            }
            _ if self.eat(";") => StmtKind::Empty,
            Some("if") => {
                self.i += 1;
                self.expect("(")?;
                let c = self.expression()?;
                self.expect(")")?;
                let then = Box::new(self.statement()?);
                let other = if self.word_at(0) == Some("else") {
                    self.i += 1;
                    Some(Box::new(self.statement()?))
                } else {
                    None
                };
                StmtKind::If(c, then, other)
            }
            Some("while") => {
                self.i += 1;
                self.expect("(")?;
                let c = self.expression()?;
                self.expect(")")?;
                StmtKind::While(c, Box::new(self.statement()?))
            }
            Some("do") => {
                self.i += 1;
                let body = Box::new(self.statement()?);
                if self.word_at(0) != Some("while") {
                    return Err(self.error("expected 'while' after a do body".into()));
                }
                self.i += 1;
                self.expect("(")?;
                let c = self.expression()?;
                self.expect(")")?;
                self.expect(";")?;
                StmtKind::DoWhile(body, c)
            }
            Some("for") => {
                self.i += 1;
                self.expect("(")?;
                let init = if self.eat(";") {
                    None
                } else {
                    Some(Box::new(self.simple_statement()?))
                };
                let cond = if self.at(";") {
                    None
                } else {
                    Some(self.expression()?)
                };
                self.expect(";")?;
                let step = if self.at(")") {
                    None
                } else {
                    Some(self.expression()?)
                };
                self.expect(")")?;
                StmtKind::For(init, cond, step, Box::new(self.statement()?))
            }
            Some("switch") => {
                self.i += 1;
                self.expect("(")?;
                let value = self.expression()?;
                self.expect(")")?;
                self.expect("{")?;
                let mut groups: Vec<(Option<Expr>, Vec<Stmt>)> = Vec::new();
                while !self.eat("}") {
                    if self.peek().is_none() {
                        return Err(self.error("expected '}' to close the switch".into()));
                    }
                    match self.word_at(0) {
                        Some("case") => {
                            self.i += 1;
                            let label = self.expression()?;
                            self.expect(":")?;
                            groups.push((Some(label), Vec::new()));
                        }
                        Some("default") => {
                            self.i += 1;
                            self.expect(":")?;
                            groups.push((None, Vec::new()));
                        }
                        _ => {
                            let stmt = self.statement()?;
                            match groups.last_mut() {
                                Some((_, body)) => body.push(stmt),
                                None => {
                                    return Err(self.error(
                                        "a statement in a switch before any case label".into(),
                                    ))
                                }
                            }
                        }
                    }
                }
                StmtKind::Switch(value, groups)
            }
            Some("break") => {
                self.i += 1;
                self.expect(";")?;
                StmtKind::Break
            }
            Some("continue") => {
                self.i += 1;
                self.expect(";")?;
                StmtKind::Continue
            }
            Some("return") => {
                self.i += 1;
                let e = if self.at(";") {
                    None
                } else {
                    Some(self.expression()?)
                };
                self.expect(";")?;
                StmtKind::Return(e)
            }
            Some(w @ ("goto" | "case" | "default")) => {
                return Err(Diag::new(
                    pos,
                    if w == "goto" {
                        "'goto' is not supported by the analyzer".to_string()
                    } else {
                        format!("'{w}' outside a switch")
                    },
                ))
            }
            _ => return self.simple_statement(),
        };
        Ok(Stmt { kind, pos })
    }

    /// A declaration or expression statement, with its `;`.
    fn simple_statement(&mut self) -> Result<Stmt, Diag> {
        let pos = self.pos();
        if self.starts_type(0)
            && !self
                .peek_at(1)
                .is_some_and(|t| t.is("(") && !self.is_type_word(0))
        {
            let specs = self.specs()?;
            let mut decls = Vec::new();
            loop {
                let dpos = self.pos();
                let (name, ty) = self.declarator(specs.ty.clone(), specs.space)?;
                // Attributes after the declarator (`__local float s[64]
                // __attribute__((aligned(16)))`): the alignment is kept.
                self.aligned = None;
                while self.word_at(0) == Some("__attribute__") {
                    self.attribute()?;
                }
                let align = self.aligned.take();
                let init = if self.eat("=") {
                    Some(self.initializer()?)
                } else {
                    None
                };
                let ty = complete_array(ty, init.as_ref());
                let space = match specs.space {
                    Some(Space::Local) if !matches!(ty, Type::Pointer(..)) => Space::Local,
                    Some(Space::Constant) if !matches!(ty, Type::Pointer(..)) => Space::Constant,
                    _ => Space::Private,
                };
                decls.push(VarDecl {
                    id: self.fresh(),
                    name,
                    ty,
                    space,
                    init,
                    align,
                    pos: dpos,
                });
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(";")?;
            return Ok(Stmt {
                kind: StmtKind::Decl(decls),
                pos,
            });
        }
        let e = self.expression()?;
        self.expect(";")?;
        Ok(Stmt {
            kind: StmtKind::Expr(e),
            pos,
        })
    }

    fn is_type_word(&self, k: usize) -> bool {
        self.word_at(k).is_some_and(|w| {
            Type::from_name(w).is_some()
                || self.typedefs.contains_key(w)
                || address_space(w).is_some()
        })
    }

    /// The value of a constant integer expression (array lengths, attributes).
    pub fn const_int(&self, e: &Expr) -> Option<i64> {
        crate::parse_expr::const_int(e)
    }
}

/// `T a[] = {…}` takes its length from the initializer.
fn complete_array(ty: Type, init: Option<&Initializer>) -> Type {
    match (ty, init) {
        (Type::Array(e, 0), Some(Initializer::List(items))) => Type::Array(e, items.len()),
        (t, _) => t,
    }
}

/// The address space a qualifier names.
pub fn address_space(word: &str) -> Option<Space> {
    Some(match word {
        "__global" | "global" => Space::Global,
        "__local" | "local" => Space::Local,
        "__constant" | "constant" => Space::Constant,
        "__private" | "private" => Space::Private,
        _ => return None,
    })
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
