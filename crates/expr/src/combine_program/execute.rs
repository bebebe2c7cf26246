//! Running a compiled combine: its steps over one chunk of `a` and `b` at a time, on
//! registers each thread lends from run to run, each step one of the block evaluator's
//! typed loops.

use std::cell::RefCell;
use std::thread::LocalKey;

use redlab_core::DType;

use super::{Program, Row, Runs, Src, Step, CHUNK};
use crate::block::Column;
use crate::eval::{FloatRules, IntRules};
use crate::loops::IntOperand;
use crate::loops::{float_binary, float_columns, float_unary, int_arith, int_call_columns};
use crate::types::{Arith, Cmp, Func, Val};

/// The accumulator types a program runs on: each operation a loop of the block
/// evaluator's own.
pub(super) trait Lane: Copy + Default + PartialOrd + 'static {
    fn of(v: Val) -> Self;
    /// `row`'s values, where they have this type.
    fn of_row<'a>(row: &'a Row<'_>) -> Option<&'a [Self]>;
    /// `row`'s buffer and runs, where it is runs of this type.
    fn of_runs<'a>(row: &'a Row<'_>) -> Option<(&'a [Self], Runs)>;
    /// This thread's spare registers of the type.
    fn pool() -> &'static Pool<Self>;
    fn arith(op: Arith, x: &mut [Self], y: &[Self]);
    fn call2(f: Func, x: &mut [Self], y: &[Self]);
    fn call1(f: Func, x: &mut [Self]);
    fn neg(x: &mut [Self]);
    fn narrow(dtype: DType, x: &mut [Self]);
    fn is_nan(x: &[Self], out: &mut [bool]);
    /// `out[k] = if c[k] { yes[k] } else { no[k] }`, without a branch: a branch per
    /// element on random masks had made `abs(a) > abs(b) ? a : b` twice as slow as the
    /// block evaluator it replaces.
    fn select(c: &[bool], yes: &[Self], no: &[Self], out: &mut [Self]);
}

/// The pool and constants of a lane type, the same for every type.
macro_rules! lane_basics {
    ($t:ty, $variant:ident) => {
        fn pool() -> &'static Pool<Self> {
            thread_local! {
                static POOL: RefCell<Vec<Vec<$t>>> = const { RefCell::new(Vec::new()) };
            }
            &POOL
        }
        fn of(v: Val) -> Self {
            match v {
                Val::$variant(x) => x,
                _ => unreachable!("constants have the accumulator's type"),
            }
        }
    };
}

macro_rules! float_lane {
    ($t:ty, $variant:ident, $runs:ident, $bits:ty) => {
        impl Lane for $t {
            lane_basics!($t, $variant);
            fn of_row<'a>(row: &'a Row<'_>) -> Option<&'a [Self]> {
                match row {
                    Row::Owned(Column::$variant(x)) => Some(x),
                    Row::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn of_runs<'a>(row: &'a Row<'_>) -> Option<(&'a [Self], Runs)> {
                match row {
                    Row::$runs(x, runs) => Some((x, *runs)),
                    _ => None,
                }
            }
            fn arith(op: Arith, x: &mut [Self], y: &[Self]) {
                float_columns(op, x, y)
            }
            fn call2(f: Func, x: &mut [Self], y: &[Self]) {
                float_binary(f, x, y)
            }
            fn call1(f: Func, x: &mut [Self]) {
                float_unary(f, x)
            }
            fn neg(x: &mut [Self]) {
                x.iter_mut().for_each(|p| *p = -*p)
            }
            fn narrow(_: DType, _: &mut [Self]) {
                unreachable!("floats compile no narrowing step")
            }
            fn is_nan(x: &[Self], out: &mut [bool]) {
                out.iter_mut().zip(x).for_each(|(o, p)| *o = p.nan())
            }
            fn select(c: &[bool], yes: &[Self], no: &[Self], out: &mut [Self]) {
                let picks = out.iter_mut().zip(c).zip(yes.iter().zip(no));
                for ((o, &c), (&p, &q)) in picks {
                    let keep = (c as $bits).wrapping_neg();
                    *o = <$t>::from_bits((p.to_bits() & keep) | (q.to_bits() & !keep));
                }
            }
        }
    };
}
float_lane!(f32, F32, F32Runs, u32);
float_lane!(f64, F64, F64Runs, u64);

macro_rules! int_lane {
    ($t:ty, $variant:ident, $($narrow:ident => $n:ty),*) => {
        impl Lane for $t {
            lane_basics!($t, $variant);
            fn of_row<'a>(row: &'a Row<'_>) -> Option<&'a [Self]> {
                match row {
                    Row::Owned(Column::$variant(x)) => Some(x),
                    _ => None,
                }
            }
            fn of_runs<'a>(_: &'a Row<'_>) -> Option<(&'a [Self], Runs)> {
                None
            }
            fn arith(op: Arith, x: &mut [Self], y: &[Self]) {
                int_arith(op, x, IntOperand::Column(y))
            }
            fn call2(f: Func, x: &mut [Self], y: &[Self]) {
                int_call_columns(f, x, Some(y))
            }
            fn call1(f: Func, x: &mut [Self]) {
                int_call_columns(f, x, None)
            }
            fn neg(x: &mut [Self]) {
                x.iter_mut().for_each(|p| *p = IntRules::neg(*p))
            }
            fn narrow(dtype: DType, x: &mut [Self]) {
                match dtype {
                    $(DType::$narrow => x.iter_mut().for_each(|p| *p = *p as $n as $t),)*
                    _ => unreachable!("only narrowing to a type of the same sign compiles"),
                }
            }
            fn is_nan(_: &[Self], _: &mut [bool]) {
                unreachable!("integers compile no isnan step")
            }
            fn select(c: &[bool], yes: &[Self], no: &[Self], out: &mut [Self]) {
                let picks = out.iter_mut().zip(c).zip(yes.iter().zip(no));
                for ((o, &c), (&p, &q)) in picks {
                    let keep = (c as $t).wrapping_neg();
                    *o = (p & keep) | (q & !keep);
                }
            }
        }
    };
}
int_lane!(i64, I64, I8 => i8, I16 => i16, I32 => i32);
int_lane!(u64, U64, U8 => u8, U16 => u16, U32 => u32);

/// A thread's spare registers of one type.
type Pool<V> = LocalKey<RefCell<Vec<Vec<V>>>>;

thread_local! {
    /// This thread's spare masks.
    static MASKS: RefCell<Vec<Vec<bool>>> = const { RefCell::new(Vec::new()) };
}

/// At least `count` registers of at least `size` values: the thread's pool itself, taken
/// whole (runs do not nest), so nothing is allocated once it has grown; values are left
/// from earlier runs, as every register is written before it is read.
fn lend<V: Copy + Default + 'static>(
    pool: &'static Pool<V>,
    count: usize,
    size: usize,
) -> Vec<Vec<V>> {
    let mut regs = pool.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if regs.len() < count {
        regs.resize_with(count, Vec::new);
    }
    for r in &mut regs[..count] {
        if r.len() < size {
            r.resize(size, V::default());
        }
    }
    regs
}

/// The registers back to `pool` for the thread's next run.
fn give_back<V: 'static>(pool: &'static Pool<V>, regs: Vec<Vec<V>>) {
    pool.with(|p| *p.borrow_mut() = regs);
}

/// Registers (or masks) around the one a step writes: every register is written by
/// one step only, so the step's operands are all in the others.
struct Around<'r, V> {
    low: &'r [Vec<V>],
    high: &'r [Vec<V>],
    at: usize,
}

impl<'r, V> Around<'r, V> {
    /// Every register, for a step that writes none (it writes a mask).
    fn all(file: &'r [Vec<V>]) -> Around<'r, V> {
        Around {
            low: file,
            high: &[],
            at: usize::MAX,
        }
    }

    /// Register `at` to write, and a view of the others.
    fn split(file: &'r mut [Vec<V>], at: usize) -> (&'r mut Vec<V>, Around<'r, V>) {
        let (low, rest) = file.split_at_mut(at);
        let (dst, high) = rest
            .split_first_mut()
            .expect("a step writes a register it has");
        (dst, Around { low, high, at })
    }

    /// Register `r`'s first `len` values (`r` is not the one being written).
    fn get(&self, r: usize, len: usize) -> &'r [V] {
        if r < self.at {
            &self.low[r][..len]
        } else {
            &self.high[r - self.at - 1][..len]
        }
    }
}

/// This chunk's partials and the registers a step reads.
struct Operands<'r, T> {
    a: &'r [T],
    b: &'r [T],
    regs: Around<'r, T>,
    len: usize,
}

impl<'r, T> Operands<'r, T> {
    fn read(&self, src: Src) -> &'r [T] {
        match src {
            Src::A => &self.a[..self.len],
            Src::B => &self.b[..self.len],
            Src::Reg(r) => self.regs.get(r, self.len),
        }
    }
}

impl Program {
    /// `a[k] = combine(a[k], b[k])` for `k < a.len()` (`b` at least as long).
    pub(super) fn run<T: Lane>(&self, a: &mut [T], b: &[T]) {
        let size = a.len().min(CHUNK);
        self.run_pairs(size, a.chunks_mut(CHUNK).zip(b.chunks(CHUNK)));
    }

    /// `a[k] = combine(a[k], b[k])` for `a`'s first `runs.rows × runs.count` values, `b`
    /// the runs' values read where they are in `values`.
    fn run_runs<T: Lane>(&self, a: &mut [T], values: &[T], runs: Runs) {
        let size = runs.count.min(CHUNK);
        let rows = a.chunks_mut(runs.count).take(runs.rows).enumerate();
        let pairs =
            rows.flat_map(|(r, a)| a.chunks_mut(CHUNK).zip(runs.run(values, r).chunks(CHUNK)));
        self.run_pairs(size, pairs);
    }

    /// The combine over each pair of chunks (`a` written, `b` read, of equal lengths of at
    /// most `size`).
    fn run_pairs<'v, T: Lane>(
        &self,
        size: usize,
        pairs: impl Iterator<Item = (&'v mut [T], &'v [T])>,
    ) {
        // Registers as long as the longest chunk, lent by this thread's pools: the fold's
        // late halvings combine a few values each, and fresh zeroed registers of a
        // whole chunk for each had cost several times the combining itself.
        let mut regs = lend(T::pool(), self.registers, size);
        let mut masks = lend(&MASKS, self.masks, size);
        for &(r, v) in &self.consts {
            regs[r][..size].fill(T::of(v));
        }
        for &(m, v) in &self.const_masks {
            masks[m][..size].fill(v);
        }
        let (last, before) = match self.steps.split_last() {
            Some((last, before)) if self.last_in_place => (Some(last), before),
            _ => (None, &self.steps[..]),
        };
        for (a, b) in pairs {
            let len = a.len();
            for step in before {
                step_into(step, (a, b, len), &mut regs, &mut masks);
            }
            // `a` is written below, so the last step reads `b` and registers only.
            let ops = Operands {
                a: &[],
                b,
                regs: Around::all(&regs),
                len,
            };
            match (last, self.out) {
                (Some(Step::Arith(op, _, _, y)), _) => T::arith(*op, a, ops.read(*y)),
                (Some(Step::Call2(f, _, _, y)), _) => T::call2(*f, a, ops.read(*y)),
                (Some(Step::Call1(f, _, _)), _) => T::call1(*f, a),
                (Some(Step::Neg(_, _)), _) => T::neg(a),
                (Some(Step::Narrow(t, _, _)), _) => T::narrow(*t, a),
                (Some(_), _) => unreachable!("only these steps are marked in place"),
                (None, Src::A) => {}
                (None, out) => a.copy_from_slice(ops.read(out)),
            }
        }
        give_back(T::pool(), regs);
        give_back(&MASKS, masks);
    }

    /// [`Program::run`] over `a`'s first `b.len()` values where `b`'s values have `a`'s
    /// type; whether it ran.
    pub(super) fn run_row<T: Lane>(&self, a: &mut [T], b: &Row<'_>) -> bool {
        if let Some(y) = T::of_row(b) {
            self.run(&mut a[..y.len()], y);
            return true;
        }
        T::of_runs(b)
            .map(|(values, runs)| self.run_runs(a, values, runs))
            .is_some()
    }
}

/// One step of a chunk (`a`, `b`, its length) into its register or mask: a value step
/// copies its left operand in, then runs the loop in place with the right one.
fn step_into<T: Lane>(
    step: &Step,
    (a, b, len): (&[T], &[T], usize),
    regs: &mut [Vec<T>],
    masks: &mut [Vec<bool>],
) {
    let value = |regs: &mut [Vec<T>], d: usize, x: Src, f: &dyn Fn(&mut [T], &Operands<T>)| {
        let (dst, others) = Around::split(regs, d);
        let ops = Operands {
            a,
            b,
            regs: others,
            len,
        };
        let dst = &mut dst[..len];
        dst.copy_from_slice(ops.read(x));
        f(dst, &ops);
    };
    match *step {
        Step::Arith(op, d, x, y) => value(regs, d, x, &|p, ops| T::arith(op, p, ops.read(y))),
        Step::Call2(f, d, x, y) => value(regs, d, x, &|p, ops| T::call2(f, p, ops.read(y))),
        Step::Call1(f, d, x) => value(regs, d, x, &|p, _| T::call1(f, p)),
        Step::Neg(d, x) => value(regs, d, x, &|p, _| T::neg(p)),
        Step::Narrow(t, d, x) => value(regs, d, x, &|p, _| T::narrow(t, p)),
        Step::Select(d, c, yes, no) => {
            let (dst, others) = Around::split(regs, d);
            let ops = Operands {
                a,
                b,
                regs: others,
                len,
            };
            T::select(
                &masks[c][..len],
                ops.read(yes),
                ops.read(no),
                &mut dst[..len],
            );
        }
        Step::Compare(op, m, x, y) => {
            let ops = Operands {
                a,
                b,
                regs: Around::all(regs),
                len,
            };
            compare(op, ops.read(x), ops.read(y), &mut masks[m][..len]);
        }
        Step::IsNan(m, x) => {
            let ops = Operands {
                a,
                b,
                regs: Around::all(regs),
                len,
            };
            T::is_nan(ops.read(x), &mut masks[m][..len]);
        }
        Step::Not(m, x) => {
            let (dst, others) = Around::split(masks, m);
            let x = others.get(x, len);
            dst[..len].iter_mut().zip(x).for_each(|(o, &p)| *o = !p);
        }
        Step::Logic(and, m, x, y) => {
            let (dst, others) = Around::split(masks, m);
            let (x, y) = (others.get(x, len), others.get(y, len));
            for ((o, &p), &q) in dst[..len].iter_mut().zip(x).zip(y) {
                *o = if and { p && q } else { p || q };
            }
        }
    }
}

/// mask `out[k] = x[k] op y[k]`, the comparison chosen outside the loop.
fn compare<T: PartialOrd>(op: Cmp, x: &[T], y: &[T], out: &mut [bool]) {
    let pairs = out.iter_mut().zip(x.iter().zip(y));
    match op {
        Cmp::Eq => pairs.for_each(|(o, (p, q))| *o = p == q),
        Cmp::Ne => pairs.for_each(|(o, (p, q))| *o = p != q),
        Cmp::Lt => pairs.for_each(|(o, (p, q))| *o = p < q),
        Cmp::Le => pairs.for_each(|(o, (p, q))| *o = p <= q),
        Cmp::Gt => pairs.for_each(|(o, (p, q))| *o = p > q),
        Cmp::Ge => pairs.for_each(|(o, (p, q))| *o = p >= q),
    }
}
