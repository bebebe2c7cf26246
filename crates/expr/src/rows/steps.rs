//! The loops of a [`RowProgram`](super::RowProgram): one loop per step, its operator and
//! the shape of its operands (row or constant) chosen outside the loop.
//!
//! Every step of a row but the last runs in [`run_steps`], compiled once per float type
//! (and per instruction set), whatever the reduction folding the values. Only the last
//! step's loops are compiled again inside each fold, so their values go straight into
//! the lanes ([`fuses_into_fold`]): the arithmetic steps, and the selects of the common
//! shapes (a clamp `x > 0 ? x : 0`, an indicator `x > y ? 1 : 0`, a choice between two
//! rows, a tolerance count `abs(x - y) < 0.5 ? 1 : 0`). Other selects as the last step
//! are written to their register and folded from there. A select's loops are the bulk
//! of the program (the comparison, what it compares and both sides' shapes multiply
//! them): compiled into every fold of every type and instruction set, they had made
//! the CPU crate take over twenty minutes to build with optimizations.

use super::{read, Compared, Operand, RowFloat, RowScratch, Sink, Slot, Step, Store};
use crate::types::{Arith, Cmp, Func};

/// `sink.each` of `$g(a, b)` with each operand a row or a scalar: four loops, so a
/// constant stays in a register instead of being read from a row in memory.
macro_rules! each2 {
    ($sink:expr, $a:expr, $b:expr, $g:expr) => {
        match ($a, $b) {
            // The same row on both sides (`x*x`): one load per element.
            (Operand::Row(a), Operand::Row(b)) if std::ptr::eq(a, b) => {
                $sink.each(a.iter().map(|&p| $g(p, p)))
            }
            (Operand::Row(a), Operand::Row(b)) => {
                $sink.each(a.iter().zip(b).map(|(&p, &q)| $g(p, q)))
            }
            (Operand::Row(a), Operand::Value(q)) => $sink.each(a.iter().map(|&p| $g(p, q))),
            (Operand::Value(p), Operand::Row(b)) => $sink.each(b.iter().map(|&q| $g(p, q))),
            (Operand::Value(p), Operand::Value(q)) => $sink.each(std::iter::repeat($g(p, q))),
        }
    };
}

/// `sink.each` of `$g(a)`, as [`each2`].
macro_rules! each1 {
    ($sink:expr, $a:expr, $g:expr) => {
        match $a {
            Operand::Row(a) => $sink.each(a.iter().map(|&p| $g(p))),
            Operand::Value(p) => $sink.each(std::iter::repeat($g(p))),
        }
    };
}

/// Runs `steps` over lanes `start..end` of the row, each into its register. A map of one
/// step (the common case) has none to run here, and skips the instruction-set dispatch
/// that every row would otherwise pay.
#[inline(always)]
pub(super) fn run_steps<T: RowFloat>(
    steps: &[Step<T>],
    inputs: &[&[T]],
    start: usize,
    end: usize,
    scratch: &mut RowScratch<T>,
) {
    if !steps.is_empty() {
        run_steps_dispatched(steps, inputs, start, end, scratch);
    }
}

/// [`run_steps`]' loops. Not inlined into the folds that call it: one copy per float
/// type and instruction set.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn run_steps_dispatched<T: RowFloat>(
    steps: &[Step<T>],
    inputs: &[&[T]],
    start: usize,
    end: usize,
    scratch: &mut RowScratch<T>,
) {
    for step in steps {
        run_step(step, inputs, start, end, scratch);
    }
}

/// Whether `step`, as a program's last, runs inside the fold ([`fold_step`]) rather
/// than into its register first.
pub(super) fn fuses_into_fold<T: PartialEq>(step: &Step<T>) -> bool {
    is_arithmetic(step) || select_fuses(step)
}

/// The steps [`arith_step`] runs.
fn is_arithmetic<T>(step: &Step<T>) -> bool {
    matches!(
        step,
        Step::Neg { .. }
            | Step::Arith { .. }
            | Step::Unary { .. }
            | Step::UnaryOfAbs { .. }
            | Step::AbsOfDifference { .. }
            | Step::Binary { .. }
    )
}

/// The select shapes [`fused_select`] has loops for.
fn select_fuses<T: PartialEq>(step: &Step<T>) -> bool {
    let Step::SelectCompare {
        compared,
        row,
        value,
        a,
        b,
        ..
    } = step
    else {
        return false;
    };
    let constant = |s: &Slot<T>| matches!(s, Slot::Const(_));
    let both_constant = constant(a) && constant(b);
    match compared {
        // `x > 0 ? x : 0`, `abs(x) > 1 ? x : 0` and indicators against a constant.
        Compared::Row | Compared::Abs if constant(value) => {
            both_constant || (a == row && constant(b))
        }
        // `x > y ? 1 : 0` and `x > y ? x : y`.
        Compared::Row => both_constant || (!constant(a) && !constant(b)),
        Compared::Abs => false,
        // `abs(x - y) < 0.5 ? 1 : 0`, `abs(x - y) < y ? 1 : 0`, `abs(x - 0.5) >= y ? 1 : 0`.
        Compared::AbsDifference(s) => both_constant && (!constant(s) || !constant(value)),
    }
}

/// The last step of a row inside the fold: `step` must be one [`fuses_into_fold`] takes.
#[inline(always)]
pub(super) fn fold_step<T: RowFloat>(
    step: &Step<T>,
    inputs: &[&[T]],
    regs: &[Vec<T>],
    start: usize,
    end: usize,
    sink: impl Sink<T>,
) {
    if is_arithmetic(step) {
        arith_step(step, inputs, regs, start, end, sink)
    } else {
        fused_select(step, inputs, regs, start, end, sink)
    }
}

/// The select shapes of [`select_fuses`], one loop per comparison and shape. The row
/// compared is loaded once, also where it is the chosen side.
#[inline(always)]
fn fused_select<T: RowFloat>(
    step: &Step<T>,
    inputs: &[&[T]],
    regs: &[Vec<T>],
    start: usize,
    end: usize,
    sink: impl Sink<T>,
) {
    let Step::SelectCompare {
        op,
        compared,
        row: l,
        value,
        a,
        b,
        ..
    } = *step
    else {
        unreachable!("only selects on a comparison fuse")
    };
    let row = |slot| read(slot, inputs, regs, start, end);
    let Operand::Row(l) = row(l) else {
        unreachable!("the compiler gives SelectCompare a row")
    };
    let abs = |d: T| T::call(Func::Abs, d, d);
    macro_rules! shapes {
        ($cmp:expr) => {
            match (compared, row(value), row(a), row(b)) {
                (Compared::Row, Operand::Value(v), Operand::Row(_), Operand::Value(q)) => {
                    sink.each(l.iter().map(|&x| pick_on($cmp(x, v), x, q)))
                }
                (Compared::Row, Operand::Value(v), Operand::Value(p), Operand::Value(q)) => {
                    sink.each(l.iter().map(|&x| pick_on($cmp(x, v), p, q)))
                }
                (Compared::Abs, Operand::Value(v), Operand::Row(_), Operand::Value(q)) => {
                    sink.each(l.iter().map(|&x| pick_on($cmp(abs(x), v), x, q)))
                }
                (Compared::Abs, Operand::Value(v), Operand::Value(p), Operand::Value(q)) => {
                    sink.each(l.iter().map(|&x| pick_on($cmp(abs(x), v), p, q)))
                }
                (Compared::Row, Operand::Row(w), Operand::Value(p), Operand::Value(q)) => {
                    sink.each(l.iter().zip(w).map(|(&x, &y)| pick_on($cmp(x, y), p, q)))
                }
                (Compared::Row, Operand::Row(w), Operand::Row(p), Operand::Row(q)) => sink.each(
                    l.iter()
                        .zip(w)
                        .zip(p.iter().zip(q))
                        .map(|((&x, &y), (&p, &q))| pick_on($cmp(x, y), p, q)),
                ),
                (
                    Compared::AbsDifference(s),
                    Operand::Value(v),
                    Operand::Value(p),
                    Operand::Value(q),
                ) => {
                    let Operand::Row(s) = row(s) else {
                        unreachable!("select_fuses takes a difference of two rows here")
                    };
                    let lanes = l.iter().zip(s);
                    sink.each(lanes.map(|(&x, &y)| pick_on($cmp(abs(x - y), v), p, q)))
                }
                (
                    Compared::AbsDifference(s),
                    Operand::Row(w),
                    Operand::Value(p),
                    Operand::Value(q),
                ) => match row(s) {
                    Operand::Row(s) => sink.each(
                        l.iter()
                            .zip(s)
                            .zip(w)
                            .map(|((&x, &y), &z)| pick_on($cmp(abs(x - y), z), p, q)),
                    ),
                    Operand::Value(c) => sink.each(
                        l.iter()
                            .zip(w)
                            .map(|(&x, &z)| pick_on($cmp(abs(x - c), z), p, q)),
                    ),
                },
                _ => unreachable!("select_fuses takes only these shapes"),
            }
        };
    }
    match op {
        Cmp::Eq => shapes!(|p: T, q: T| p == q),
        Cmp::Ne => shapes!(|p: T, q: T| p != q),
        Cmp::Lt => shapes!(|p: T, q: T| p < q),
        Cmp::Le => shapes!(|p: T, q: T| p <= q),
        Cmp::Gt => shapes!(|p: T, q: T| p > q),
        Cmp::Ge => shapes!(|p: T, q: T| p >= q),
    }
}

/// Runs one step into its register. The destination is taken out of the file while it
/// is written, so the sources (always other registers: the allocator never gives a step
/// one of its own sources as destination) can be read alongside it.
#[inline(always)]
fn run_step<T: RowFloat>(
    step: &Step<T>,
    inputs: &[&[T]],
    start: usize,
    end: usize,
    scratch: &mut RowScratch<T>,
) {
    let len = end - start;
    match *step {
        Step::Compare { op, dst, a, b } => {
            let regs = &scratch.regs;
            let (a, b) = (
                read(a, inputs, regs, start, end),
                read(b, inputs, regs, start, end),
            );
            compare_row(op, Store(&mut scratch.masks[dst][..len]), a, b);
        }
        Step::Logic { and, dst, a, b } => {
            let mut out = std::mem::take(&mut scratch.masks[dst]);
            let (a, b) = (&scratch.masks[a][..len], &scratch.masks[b][..len]);
            let store = Store(&mut out[..len]);
            let pairs = a.iter().zip(b);
            if and {
                store.each(pairs.map(|(&p, &q)| p & q));
            } else {
                store.each(pairs.map(|(&p, &q)| p | q));
            }
            scratch.masks[dst] = out;
        }
        Step::Not { dst, a } => {
            let mut out = std::mem::take(&mut scratch.masks[dst]);
            let a = &scratch.masks[a][..len];
            Store(&mut out[..len]).each(a.iter().map(|&p| !p));
            scratch.masks[dst] = out;
        }
        Step::Neg { dst, .. }
        | Step::Arith { dst, .. }
        | Step::Unary { dst, .. }
        | Step::UnaryOfAbs { dst, .. }
        | Step::AbsOfDifference { dst, .. }
        | Step::Binary { dst, .. }
        | Step::Select { dst, .. }
        | Step::SelectCompare { dst, .. } => {
            let mut out = std::mem::take(&mut scratch.regs[dst]);
            let sink = Store(&mut out[..len]);
            let regs = &scratch.regs;
            if is_arithmetic(step) {
                arith_step(step, inputs, regs, start, end, sink);
            } else {
                select_step(step, inputs, regs, &scratch.masks, start, end, sink);
            }
            scratch.regs[dst] = out;
        }
    }
}

/// An arithmetic step into `sink`; each operator is a loop of its
/// own, chosen outside the loop (a choice per element had cost 10–20× the loop).
#[inline(always)]
fn arith_step<T: RowFloat>(
    step: &Step<T>,
    inputs: &[&[T]],
    regs: &[Vec<T>],
    start: usize,
    end: usize,
    sink: impl Sink<T>,
) {
    let row = |slot| read(slot, inputs, regs, start, end);
    match *step {
        Step::Neg { a, .. } => each1!(sink, row(a), |p: T| -p),
        Step::Arith { op, a, b, .. } => {
            let (a, b) = (row(a), row(b));
            match op {
                Arith::Add => each2!(sink, a, b, |p: T, q: T| p + q),
                Arith::Sub => each2!(sink, a, b, |p: T, q: T| p - q),
                Arith::Mul => each2!(sink, a, b, |p: T, q: T| p * q),
                Arith::Div => each2!(sink, a, b, |p: T, q: T| p / q),
                other => each2!(sink, a, b, |p, q| T::arith(other, p, q)),
            }
        }
        Step::Unary { f, a, .. } => {
            let a = row(a);
            macro_rules! call {
                ($g:expr) => {
                    each1!(sink, a, |p| T::call($g, p, p))
                };
            }
            match f {
                Func::Abs => call!(Func::Abs),
                Func::Sqrt => call!(Func::Sqrt),
                Func::Exp => call!(Func::Exp),
                Func::Log => call!(Func::Log),
                Func::Floor => call!(Func::Floor),
                Func::Ceil => call!(Func::Ceil),
                other => call!(other),
            }
        }
        Step::UnaryOfAbs { f, a, .. } => {
            let a = row(a);
            macro_rules! call {
                ($g:expr) => {
                    each1!(sink, a, |p| {
                        let m = T::call(Func::Abs, p, p);
                        T::call($g, m, m)
                    })
                };
            }
            match f {
                Func::Sqrt => call!(Func::Sqrt),
                Func::Exp => call!(Func::Exp),
                Func::Log => call!(Func::Log),
                other => call!(other),
            }
        }
        Step::AbsOfDifference { a, b, .. } => {
            each2!(sink, row(a), row(b), |p: T, q: T| {
                let d = p - q;
                T::call(Func::Abs, d, d)
            })
        }
        Step::Binary { f, a, b, .. } => {
            let (a, b) = (row(a), row(b));
            match f {
                Func::Min => each2!(sink, a, b, |p, q| T::call(Func::Min, p, q)),
                Func::Max => each2!(sink, a, b, |p, q| T::call(Func::Max, p, q)),
                other => each2!(sink, a, b, |p, q| T::call(other, p, q)),
            }
        }
        Step::Compare { .. }
        | Step::Logic { .. }
        | Step::Not { .. }
        | Step::Select { .. }
        | Step::SelectCompare { .. } => unreachable!("not an arithmetic step"),
    }
}

/// A select step into `sink`, its loops chosen outside as [`arith_step`]'s.
#[inline(always)]
fn select_step<T: RowFloat>(
    step: &Step<T>,
    inputs: &[&[T]],
    regs: &[Vec<T>],
    masks: &[Vec<T::Bits>],
    start: usize,
    end: usize,
    sink: impl Sink<T>,
) {
    let row = |slot| read(slot, inputs, regs, start, end);
    match *step {
        Step::Select { mask, a, b, .. } => {
            let m = &masks[mask][..end - start];
            // Both sides are computed already; picking by bits keeps the loop free of
            // branches that random data would mispredict.
            let pick = |c: T::Bits, p: T, q: T| T::with_bits((p.bits() & c) | (q.bits() & !c));
            match (row(a), row(b)) {
                (Operand::Row(a), Operand::Row(b)) => {
                    sink.each(m.iter().zip(a).zip(b).map(|((&c, &p), &q)| pick(c, p, q)))
                }
                (Operand::Row(a), Operand::Value(q)) => {
                    sink.each(m.iter().zip(a).map(|(&c, &p)| pick(c, p, q)))
                }
                (Operand::Value(p), Operand::Row(b)) => {
                    sink.each(m.iter().zip(b).map(|(&c, &q)| pick(c, p, q)))
                }
                (Operand::Value(p), Operand::Value(q)) => {
                    sink.each(m.iter().map(|&c| pick(c, p, q)))
                }
            }
        }
        Step::SelectCompare {
            op,
            compared,
            row: l,
            value,
            a,
            b,
            ..
        } => {
            let Operand::Row(l) = row(l) else {
                unreachable!("the compiler gives SelectCompare a row")
            };
            let (value, a, b) = (row(value), row(a), row(b));
            let abs = |d: T| T::call(Func::Abs, d, d);
            // What is compared, with what, and the comparison: chosen outside the loops
            // like the operator. Each lane yields its row value and the condition;
            // `$key` is what of the row is compared.
            macro_rules! against {
                ($key:expr, $cmp:expr) => {
                    match value {
                        Operand::Value(v) => {
                            let lanes = l.iter().map(|&x| (x, $cmp($key(x), v)));
                            select_compare(sink, lanes, l, a, b)
                        }
                        Operand::Row(v) => {
                            let lanes = l.iter().zip(v).map(|(&x, &w)| (x, $cmp($key(x), w)));
                            select_compare(sink, lanes, l, a, b)
                        }
                    }
                };
            }
            macro_rules! lanes {
                ($cmp:expr) => {
                    match compared {
                        Compared::Row => against!(|x: T| x, $cmp),
                        Compared::Abs => against!(abs, $cmp),
                        Compared::AbsDifference(s) => match (row(s), value) {
                            (Operand::Row(s), Operand::Value(v)) => {
                                let lanes =
                                    l.iter().zip(s).map(|(&x, &s)| (x, $cmp(abs(x - s), v)));
                                select_compare(sink, lanes, l, a, b)
                            }
                            (Operand::Value(s), Operand::Value(v)) => {
                                let lanes = l.iter().map(|&x| (x, $cmp(abs(x - s), v)));
                                select_compare(sink, lanes, l, a, b)
                            }
                            (Operand::Row(s), Operand::Row(v)) => {
                                let lanes = l
                                    .iter()
                                    .zip(s)
                                    .zip(v)
                                    .map(|((&x, &s), &w)| (x, $cmp(abs(x - s), w)));
                                select_compare(sink, lanes, l, a, b)
                            }
                            (Operand::Value(s), Operand::Row(v)) => {
                                let lanes =
                                    l.iter().zip(v).map(|(&x, &w)| (x, $cmp(abs(x - s), w)));
                                select_compare(sink, lanes, l, a, b)
                            }
                        },
                    }
                };
            }
            match op {
                Cmp::Eq => lanes!(|p: T, q: T| p == q),
                Cmp::Ne => lanes!(|p: T, q: T| p != q),
                Cmp::Lt => lanes!(|p: T, q: T| p < q),
                Cmp::Le => lanes!(|p: T, q: T| p <= q),
                Cmp::Gt => lanes!(|p: T, q: T| p > q),
                Cmp::Ge => lanes!(|p: T, q: T| p >= q),
            }
        }
        _ => unreachable!("not a select step"),
    }
}

/// The loops of [`Step::SelectCompare`]: `lanes` gives each lane's row value and its
/// condition, `l` is the compared row itself (so that a select choosing it reads it
/// once), and `a`/`b` are the two sides, each a row or one value.
#[inline(always)]
fn select_compare<T: RowFloat>(
    sink: impl Sink<T>,
    lanes: impl Iterator<Item = (T, bool)>,
    l: &[T],
    a: Operand<'_, T>,
    b: Operand<'_, T>,
) {
    // Picking by bits keeps the loop free of branches that random data would mispredict.
    match (a, b) {
        (Operand::Row(a), Operand::Row(b)) => sink.each(
            lanes
                .zip(a)
                .zip(b)
                .map(|(((_, c), &p), &q)| pick_on(c, p, q)),
        ),
        // The compared row is the chosen one (`x > 0 ? x : 0`): one load per element.
        (Operand::Row(a), Operand::Value(q)) if std::ptr::eq(l, a) => {
            sink.each(lanes.map(|(x, c)| pick_on(c, x, q)))
        }
        (Operand::Row(a), Operand::Value(q)) => {
            sink.each(lanes.zip(a).map(|((_, c), &p)| pick_on(c, p, q)))
        }
        (Operand::Value(p), Operand::Row(b)) => {
            sink.each(lanes.zip(b).map(|((_, c), &q)| pick_on(c, p, q)))
        }
        (Operand::Value(p), Operand::Value(q)) => sink.each(lanes.map(|(_, c)| pick_on(c, p, q))),
    }
}

/// `out = mask(a cmp b)`, the comparison chosen outside the loop.
#[inline(always)]
fn compare_row<T: RowFloat>(
    op: Cmp,
    out: Store<'_, T::Bits>,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
) {
    match op {
        Cmp::Eq => each2!(out, a, b, |p, q| T::mask(p == q)),
        Cmp::Ne => each2!(out, a, b, |p, q| T::mask(p != q)),
        Cmp::Lt => each2!(out, a, b, |p, q| T::mask(p < q)),
        Cmp::Le => each2!(out, a, b, |p, q| T::mask(p <= q)),
        Cmp::Gt => each2!(out, a, b, |p, q| T::mask(p > q)),
        Cmp::Ge => each2!(out, a, b, |p, q| T::mask(p >= q)),
    }
}

/// `c ? p : q` by bits, free of branches that random data would mispredict.
#[inline(always)]
fn pick_on<T: RowFloat>(c: bool, p: T, q: T) -> T {
    let m = T::mask(c);
    T::with_bits((p.bits() & m) | (q.bits() & !m))
}
