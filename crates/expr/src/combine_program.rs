//! A custom combine applied in place over blocks of partials: `a[k] = combine(a[k], b[k])`.
//!
//! The canonical fold of a custom combine ([`crate::custom_outputs`]) joins a row of 1024
//! lanes with the next row, then halves the lanes ten times. Through the block evaluator
//! every such step copied both operands into fresh columns (each `a` and `b` a clone) and
//! allocated one column per node: on a 2-core machine copies and allocation were about
//! 40% of `max(a, b)` over 2^24 f32, the loop itself 13%. Here the combine is compiled once
//! for its accumulator type into a short list of steps over registers of 512 values that
//! each thread keeps from run to run, and the step that yields the result writes into
//! `a` itself when its left operand is `a` (`a + b`, `max(a, b)`, `a ^ (b * 3)`): a
//! one-operation combine is then one pass over `a`, nothing allocated.
//!
//! Each step calls the block evaluator's own typed loops ([`crate::loops`]) and per-element
//! rules ([`crate::eval`]), so every value has the bits the block evaluator and the
//! scalar reference give it. Combines with nodes outside these steps (conversions
//! between types, inputs, `i`, rounding to f16/bf16) keep the block evaluator.

use redlab_core::{ArrayRef, DType};

use crate::block::{convert_column, eval_block, in_place, Column};
use crate::types::{Arith, Cmp, Func, Kind, Node, Ty, Val};
use execute::Lane;

mod execute;

/// Values per register: a chunk of `a` and `b` goes through every step before the next.
const CHUNK: usize = 512;

/// A value operand: the left partial, the right partial, or a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    A,
    B,
    Reg(usize),
}

/// One operation over a chunk; `dst` names a register (values) or a mask (bools).
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `dst = x op y`.
    Arith(Arith, usize, Src, Src),
    /// `dst = f(x, y)` (`min`, `max`, `pow`).
    Call2(Func, usize, Src, Src),
    /// `dst = f(x)`.
    Call1(Func, usize, Src),
    /// `dst = -x`.
    Neg(usize, Src),
    /// `dst = x` cast to the narrow integer type and widened back.
    Narrow(DType, usize, Src),
    /// mask `dst = x op y`.
    Compare(Cmp, usize, Src, Src),
    /// mask `dst = isnan(x)`.
    IsNan(usize, Src),
    /// mask `dst = !x`.
    Not(usize, usize),
    /// mask `dst = x && y` (true) or `x || y` (false).
    Logic(bool, usize, usize, usize),
    /// `dst = c ? yes : no`.
    Select(usize, usize, Src, Src),
}

/// A combine compiled for one accumulator type.
#[derive(Debug, Clone, PartialEq)]
struct Program {
    steps: Vec<Step>,
    /// Registers filled once per call: constants of the accumulator type.
    consts: Vec<(usize, Val)>,
    /// Masks filled once per call: constant bools.
    const_masks: Vec<(usize, bool)>,
    registers: usize,
    masks: usize,
    /// Where the result is after the steps.
    out: Src,
    /// The last step computes `out` straight into `a` (its left operand is `a`).
    last_in_place: bool,
}

/// What a node compiles to.
enum Slot {
    Value(Src),
    Mask(usize),
}

impl Program {
    /// The combine as steps over values of `acc`, if every node has a step.
    fn compile(combine: &Node, acc: Ty) -> Option<Program> {
        if combine.ty != acc || acc == Ty::Bool {
            return None;
        }
        let mut p = Program {
            steps: Vec::new(),
            consts: Vec::new(),
            const_masks: Vec::new(),
            registers: 0,
            masks: 0,
            out: Src::A,
            last_in_place: false,
        };
        let Slot::Value(out) = p.emit(combine, acc)? else {
            return None;
        };
        p.out = out;
        // The last step may write into `a` when it reads `a` only as its left operand
        // and `a` is read by no step after it (there is none).
        p.last_in_place = match p.steps.last() {
            Some(Step::Arith(_, d, Src::A, y) | Step::Call2(_, d, Src::A, y)) => {
                Src::Reg(*d) == out && *y != Src::A
            }
            Some(Step::Call1(_, d, Src::A) | Step::Neg(d, Src::A) | Step::Narrow(_, d, Src::A)) => {
                Src::Reg(*d) == out
            }
            _ => false,
        };
        Some(p)
    }

    fn register(&mut self) -> usize {
        self.registers += 1;
        self.registers - 1
    }

    fn mask(&mut self) -> usize {
        self.masks += 1;
        self.masks - 1
    }

    fn value(&mut self, node: &Node, acc: Ty) -> Option<Src> {
        match self.emit(node, acc)? {
            Slot::Value(s) => Some(s),
            Slot::Mask(_) => None,
        }
    }

    fn boolean(&mut self, node: &Node, acc: Ty) -> Option<usize> {
        match self.emit(node, acc)? {
            Slot::Mask(m) => Some(m),
            Slot::Value(_) => None,
        }
    }

    /// Steps for `node` (whose type must be `acc` or bool), then where its values are.
    fn emit(&mut self, node: &Node, acc: Ty) -> Option<Slot> {
        let float = matches!(acc, Ty::F32 | Ty::F64);
        if node.ty == Ty::Bool {
            let m = match &node.kind {
                Kind::Const(Val::Bool(v)) => {
                    let m = self.mask();
                    self.const_masks.push((m, *v));
                    return Some(Slot::Mask(m));
                }
                Kind::Compare(op, x, y) if x.ty == acc && y.ty == acc => {
                    let (x, y) = (self.value(x, acc)?, self.value(y, acc)?);
                    let m = self.mask();
                    self.steps.push(Step::Compare(*op, m, x, y));
                    m
                }
                Kind::Call(Func::IsNan, args) if float && args[0].ty == acc => {
                    let x = self.value(&args[0], acc)?;
                    let m = self.mask();
                    self.steps.push(Step::IsNan(m, x));
                    m
                }
                Kind::Not(x) => {
                    let x = self.boolean(x, acc)?;
                    let m = self.mask();
                    self.steps.push(Step::Not(m, x));
                    m
                }
                Kind::Logic(and, x, y) => {
                    let (x, y) = (self.boolean(x, acc)?, self.boolean(y, acc)?);
                    let m = self.mask();
                    self.steps.push(Step::Logic(*and, m, x, y));
                    m
                }
                _ => return None,
            };
            return Some(Slot::Mask(m));
        }
        if node.ty != acc {
            return None;
        }
        let src = match &node.kind {
            Kind::Var(0) => Src::A,
            Kind::Var(1) => Src::B,
            Kind::Const(v) => {
                let r = self.register();
                self.consts.push((r, *v));
                Src::Reg(r)
            }
            Kind::Neg(x) => {
                let x = self.value(x, acc)?;
                let r = self.register();
                self.steps.push(Step::Neg(r, x));
                Src::Reg(r)
            }
            Kind::Arith(op, x, y) => {
                let bitwise = matches!(op, Arith::BitAnd | Arith::BitOr | Arith::BitXor);
                if float && bitwise {
                    return None;
                }
                let (x, y) = (self.value(x, acc)?, self.value(y, acc)?);
                let r = self.register();
                self.steps.push(Step::Arith(*op, r, x, y));
                Src::Reg(r)
            }
            Kind::Call(f, args) if args.iter().all(|a| a.ty == acc) => {
                let two = matches!(f, Func::Min | Func::Max | Func::Pow);
                let supported = match f {
                    Func::Min | Func::Max | Func::Abs => true,
                    Func::Pow | Func::Sqrt | Func::Exp | Func::Log | Func::Floor | Func::Ceil => {
                        float
                    }
                    Func::IsNan => false,
                };
                if !supported || args.len() != 1 + usize::from(two) {
                    return None;
                }
                let x = self.value(&args[0], acc)?;
                let r = if two {
                    let y = self.value(&args[1], acc)?;
                    let r = self.register();
                    self.steps.push(Step::Call2(*f, r, x, y));
                    r
                } else {
                    let r = self.register();
                    self.steps.push(Step::Call1(*f, r, x));
                    r
                };
                Src::Reg(r)
            }
            Kind::Select(c, yes, no) => {
                let c = self.boolean(c, acc)?;
                let (yes, no) = (self.value(yes, acc)?, self.value(no, acc)?);
                let r = self.register();
                self.steps.push(Step::Select(r, c, yes, no));
                Src::Reg(r)
            }
            Kind::Narrow(d, x) if narrows(acc, *d) && x.ty == acc => {
                let x = self.value(x, acc)?;
                let r = self.register();
                self.steps.push(Step::Narrow(*d, r, x));
                Src::Reg(r)
            }
            _ => return None,
        };
        Some(Slot::Value(src))
    }
}

/// Whether `Narrow(dtype)` keeps `acc` (an integer cast to a narrower one of its sign).
fn narrows(acc: Ty, dtype: DType) -> bool {
    match acc {
        Ty::I64 => matches!(dtype, DType::I8 | DType::I16 | DType::I32),
        Ty::U64 => matches!(dtype, DType::U8 | DType::U16 | DType::U32),
        _ => false,
    }
}

/// A custom combine over columns of partials: compiled for the accumulator type where
/// it can be, through the block evaluator otherwise.
pub(crate) struct Combiner<'n> {
    node: &'n Node,
    acc: Ty,
    program: Option<Program>,
}

impl<'n> Combiner<'n> {
    /// The combine `node` over partials of `acc`.
    pub(crate) fn new(node: &'n Node, acc: Ty) -> Combiner<'n> {
        Combiner {
            node,
            acc,
            program: Program::compile(node, acc),
        }
    }

    /// The accumulator's type, which the partials it combines have.
    pub(crate) fn acc(&self) -> Ty {
        self.acc
    }

    /// The combine's expression.
    pub(crate) fn node(&self) -> &'n Node {
        self.node
    }

    /// Whether the combine runs compiled (not through the block evaluator).
    #[cfg(test)]
    fn compiled(&self) -> bool {
        self.program.is_some()
    }

    /// `a[k] = combine(a[k], b[k])` for every `k < b.len()`; `a` keeps its later values.
    pub(crate) fn apply(&self, a: &mut Column, b: Row<'_>) {
        let done = match (&self.program, &mut *a) {
            (Some(p), Column::F32(x)) => p.run_row(x, &b),
            (Some(p), Column::F64(x)) => p.run_row(x, &b),
            (Some(p), Column::I64(x)) => p.run_row(x, &b),
            (Some(p), Column::U64(x)) => p.run_row(x, &b),
            _ => false,
        };
        if !done {
            self.apply_tree(a, b.into_column());
        }
    }

    /// `a[k] = combine(a[k], a[half + k])` for `k < half`, then `a` holds those `half`
    /// values.
    pub(crate) fn halve(&self, a: &mut Column, half: usize) {
        if let Some(p) = &self.program {
            fn go<T: Lane>(p: &Program, v: &mut Vec<T>, half: usize) {
                let (low, high) = v.split_at_mut(half);
                p.run(low, &high[..half]);
                v.truncate(half)
            }
            match a {
                Column::F32(v) => return go(p, v, half),
                Column::F64(v) => return go(p, v, half),
                Column::I64(v) => return go(p, v, half),
                Column::U64(v) => return go(p, v, half),
                Column::Bool(_) => {}
            }
        }
        let (low, high) = (a.slice(0, half), a.slice(half, 2 * half));
        *a = eval_block(self.node, &[], 0, half, &[low, high]);
    }

    /// [`Combiner::apply`] through the block evaluator.
    fn apply_tree(&self, a: &mut Column, b: Column) {
        let n = b.len();
        let head = a.slice(0, n);
        let joined = eval_block(self.node, &[], 0, n, &[head, b]);
        *a = if n == a.len() {
            joined
        } else {
            splice(joined, a, n)
        };
    }
}

/// One row of partials for [`Combiner::apply`]: values of its own, or an input's f32 or
/// f64 values read where they are (a map that is one input of the accumulator's type,
/// whose copy into a block had been a third of a custom `max(a, b)`'s time).
pub(crate) enum Row<'r> {
    /// Mapped values.
    Owned(Column),
    /// An f32 input's values.
    F32(&'r [f32]),
    /// An f64 input's values.
    F64(&'r [f64]),
    /// Runs of an f32 input's neighbouring values, one after another (a block of
    /// columns' rows).
    F32Runs(&'r [f32], Runs),
    /// Runs of an f64 input's neighbouring values, one after another.
    F64Runs(&'r [f64], Runs),
}

/// Where a row's values lie in a buffer as runs: `rows` runs of `count` neighbouring
/// values, run `r` starting at `first + r·stride`. The row holds them one run after
/// another; a combine reads them there, where copying each run (16 bytes for a block
/// of four f32 columns) had been most of a custom combine over columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Runs {
    /// Where the first run starts.
    pub first: usize,
    /// Values from one run's start to the next's.
    pub stride: usize,
    /// Runs.
    pub rows: usize,
    /// Values per run.
    pub count: usize,
}

impl Runs {
    /// The runs' values, one run after another.
    fn gather<T: Copy>(&self, values: &[T]) -> Vec<T> {
        let mut out = Vec::with_capacity(self.rows * self.count);
        for r in 0..self.rows {
            out.extend_from_slice(self.run(values, r));
        }
        out
    }

    /// Run `r`'s values.
    pub(crate) fn run<'v, T>(&self, values: &'v [T], r: usize) -> &'v [T] {
        let at = self.first + r * self.stride;
        &values[at..at + self.count]
    }
}

impl<'r> Row<'r> {
    /// The whole of the input that `map` is, as `Row::F32` or `Row::F64`, where `map`
    /// reads one f32 or f64 input of the accumulator's type unconverted.
    pub(crate) fn input_itself(map: &Node, inputs: &[ArrayRef<'r>], acc: Ty) -> Option<Row<'r>> {
        if map.ty != acc {
            return None;
        }
        in_place::<f32>(map, inputs, Ty::F32)
            .map(Row::F32)
            .or_else(|| in_place::<f64>(map, inputs, Ty::F64).map(Row::F64))
    }

    /// Values `start .. start + len` of `map` over `inputs`, as partials of `acc`: the
    /// input itself when `map` reads one input of that type unconverted.
    pub(crate) fn mapped(
        map: &Node,
        inputs: &[ArrayRef<'r>],
        (start, len): (usize, usize),
        acc: Ty,
    ) -> Row<'r> {
        match Row::input_itself(map, inputs, acc) {
            Some(Row::F32(x)) => Row::F32(&x[start..start + len]),
            Some(Row::F64(x)) => Row::F64(&x[start..start + len]),
            _ => Row::Owned(convert_column(
                eval_block(map, inputs, start, len, &[]),
                acc,
            )),
        }
    }

    /// How many values the row holds.
    pub(crate) fn len(&self) -> usize {
        match self {
            Row::Owned(c) => c.len(),
            Row::F32(x) => x.len(),
            Row::F64(x) => x.len(),
            Row::F32Runs(_, runs) | Row::F64Runs(_, runs) => runs.rows * runs.count,
        }
    }

    /// The row's values as a column of their own.
    pub(crate) fn into_column(self) -> Column {
        match self {
            Row::Owned(c) => c,
            Row::F32(x) => Column::F32(x.to_vec()),
            Row::F64(x) => Column::F64(x.to_vec()),
            Row::F32Runs(x, runs) => Column::F32(runs.gather(x)),
            Row::F64Runs(x, runs) => Column::F64(runs.gather(x)),
        }
    }
}

/// `head` followed by `rest`'s values from `from` on.
fn splice(head: Column, rest: &Column, from: usize) -> Column {
    let tail = rest.slice(from, rest.len());
    match (head, tail) {
        (Column::Bool(mut a), Column::Bool(b)) => {
            a.extend(b);
            Column::Bool(a)
        }
        (Column::I64(mut a), Column::I64(b)) => {
            a.extend(b);
            Column::I64(a)
        }
        (Column::U64(mut a), Column::U64(b)) => {
            a.extend(b);
            Column::U64(a)
        }
        (Column::F32(mut a), Column::F32(b)) => {
            a.extend(b);
            Column::F32(a)
        }
        (Column::F64(mut a), Column::F64(b)) => {
            a.extend(b);
            Column::F64(a)
        }
        (a, _) => a,
    }
}

#[cfg(test)]
mod tests;
