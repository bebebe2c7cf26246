//! Compiling a typed map tree into [`RowProgram`] steps: each node becomes one step
//! writing a row register, registers are reused after their one use (the map is a
//! tree), a select on a comparison with a constant becomes one fused step, and so does
//! an absolute value feeding a unary function or such a comparison (of a difference
//! too, against a constant), or taken of a difference.

use redlab_core::DType;

use super::{Compared, RowFloat, RowProgram, Slot, Step, MAX_REGISTERS};
use crate::types::{Arith, Cmp, Func, Kind, Node, Ty};

/// `map` over inputs of `inputs`' types as a row program, or `None` where it is not
/// all of type `T` over arrays of `T` or needs more than [`MAX_REGISTERS`] registers.
pub(super) fn compile<T: RowFloat>(map: &Node, inputs: &[DType]) -> Option<RowProgram<T>> {
    let mut compiler = Compiler::<T> {
        inputs: inputs.to_vec(),
        steps: Vec::new(),
        alloc: Allocator::default(),
    };
    let result = compiler.value(map)?;
    if compiler.alloc.count > MAX_REGISTERS {
        return None;
    }
    Some(RowProgram {
        steps: compiler.steps,
        result,
        registers: compiler.alloc.count,
        masks: compiler.alloc.masks,
    })
}

/// Register allocation while compiling: registers are freed after their one use (the
/// map is a tree).
#[derive(Default)]
struct Allocator {
    free: Vec<usize>,
    count: usize,
    free_masks: Vec<usize>,
    masks: usize,
}

impl Allocator {
    fn value(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.count += 1;
            self.count - 1
        })
    }
    fn mask(&mut self) -> usize {
        self.free_masks.pop().unwrap_or_else(|| {
            self.masks += 1;
            self.masks - 1
        })
    }
}

struct Compiler<T> {
    inputs: Vec<DType>,
    steps: Vec<Step<T>>,
    alloc: Allocator,
}

impl<T: RowFloat> Compiler<T> {
    /// Frees `slot` after its one use, when it is a register.
    fn release(&mut self, slot: Slot<T>) {
        if let Slot::Reg(r) = slot {
            self.alloc.free.push(r);
        }
    }

    /// A value node of type `T`.
    fn value(&mut self, node: &Node) -> Option<Slot<T>> {
        if node.ty != T::TY {
            return None;
        }
        Some(match &node.kind {
            Kind::Input(k) => {
                if *self.inputs.get(*k)? != T::DTYPE {
                    return None;
                }
                Slot::Input(*k)
            }
            Kind::Const(v) => Slot::Const(T::of(*v)?),
            Kind::Neg(e) => {
                let a = self.value(e)?;
                let dst = self.alloc.value();
                self.release(a);
                self.steps.push(Step::Neg { dst, a });
                Slot::Reg(dst)
            }
            Kind::Arith(op, x, y) => {
                if matches!(op, Arith::BitAnd | Arith::BitOr | Arith::BitXor) {
                    return None;
                }
                let (a, b) = (self.value(x)?, self.value(y)?);
                let dst = self.alloc.value();
                self.release(a);
                self.release(b);
                self.steps.push(Step::Arith { op: *op, dst, a, b });
                Slot::Reg(dst)
            }
            Kind::Call(f, args) => match (f, args.as_slice()) {
                (Func::Min | Func::Max | Func::Pow, [x, y]) => {
                    let (a, b) = (self.value(x)?, self.value(y)?);
                    let dst = self.alloc.value();
                    self.release(a);
                    self.release(b);
                    self.steps.push(Step::Binary { f: *f, dst, a, b });
                    Slot::Reg(dst)
                }
                (Func::Abs, [x]) if Self::difference(x).is_some() => {
                    let (p, q) = Self::difference(x)?;
                    let (a, b) = (self.value(p)?, self.value(q)?);
                    let dst = self.alloc.value();
                    self.release(a);
                    self.release(b);
                    self.steps.push(Step::AbsOfDifference { dst, a, b });
                    Slot::Reg(dst)
                }
                (
                    Func::Abs | Func::Sqrt | Func::Exp | Func::Log | Func::Floor | Func::Ceil,
                    [x],
                ) => {
                    let (x, abs) = Self::strip_abs(x);
                    let a = self.value(x)?;
                    let dst = self.alloc.value();
                    self.release(a);
                    self.steps.push(if abs {
                        Step::UnaryOfAbs { f: *f, dst, a }
                    } else {
                        Step::Unary { f: *f, dst, a }
                    });
                    Slot::Reg(dst)
                }
                _ => return None,
            },
            Kind::Select(c, x, y) => {
                if let Some((op, l, r)) = Self::fusable_compare(c) {
                    return self.select_compare(op, l, r, x, y);
                }
                let mask = self.mask(c)?;
                let (a, b) = (self.value(x)?, self.value(y)?);
                let dst = self.alloc.value();
                self.release(a);
                self.release(b);
                self.alloc.free_masks.push(mask);
                self.steps.push(Step::Select { dst, mask, a, b });
                Slot::Reg(dst)
            }
            _ => return None,
        })
    }

    /// `c` as (operator, compared value, what it is compared with) where it compares two
    /// values of `T`, at least one not a constant: the shape a [`Step::SelectCompare`]
    /// takes. A constant on the left is moved to the right with the mirrored operator
    /// (`2 > x` is `x < 2`, NaN included: both are false). `None` leaves the select to
    /// the general mask path.
    fn fusable_compare(c: &Node) -> Option<(Cmp, &Node, &Node)> {
        let Kind::Compare(op, l, r) = &c.kind else {
            return None;
        };
        if l.ty != T::TY || r.ty != T::TY {
            return None;
        }
        match (is_const(l), is_const(r)) {
            (false, _) => Some((*op, l, r)),
            (true, false) => Some((op.mirrored(), r, l)),
            (true, true) => None,
        }
    }

    /// `(p, q)` where `node` is `p - q` of type `T`: under an `abs`, the shape a
    /// [`Step::AbsOfDifference`] takes.
    fn difference(node: &Node) -> Option<(&Node, &Node)> {
        match &node.kind {
            Kind::Arith(Arith::Sub, p, q) if node.ty == T::TY => Some((p, q)),
            _ => None,
        }
    }

    /// `(inner, true)` where `node` is `abs(inner)` of type `T`, else `(node, false)`:
    /// the steps that can take the absolute value inside their own loop
    /// ([`Step::UnaryOfAbs`], [`Step::SelectCompare`]) fold it in instead of writing it
    /// to a register first.
    fn strip_abs(node: &Node) -> (&Node, bool) {
        match &node.kind {
            Kind::Call(Func::Abs, args) if node.ty == T::TY => match args.as_slice() {
                // (A constant stays under its abs: a compared row must be a row.)
                [inner] if inner.ty == T::TY && !matches!(inner.kind, Kind::Const(_)) => {
                    (inner, true)
                }
                _ => (node, false),
            },
            _ => (node, false),
        }
    }

    /// `l op r ? x : y` as one [`Step::SelectCompare`]; `None` when a part does not
    /// compile to row steps.
    fn select_compare(
        &mut self,
        op: Cmp,
        l: &Node,
        r: &Node,
        x: &Node,
        y: &Node,
    ) -> Option<Slot<T>> {
        let (l, abs) = Self::strip_abs(l);
        // `|p - q| cmp r` (r a constant or a row): the difference is taken inside the
        // select's loop too, with a row first. `|c - x|` is compared as `|x - c|`, the
        // same value: rounding to nearest is symmetric, so `c - x` is exactly `-(x - c)`.
        let difference = Self::difference(l).filter(|_| abs).and_then(|(p, q)| {
            match (is_const(p), is_const(q)) {
                (false, _) => Some((p, q)),
                (true, false) => Some((q, p)),
                (true, true) => None,
            }
        });
        let (row, compared) = match difference {
            Some((p, q)) => (self.value(p)?, Compared::AbsDifference(self.value(q)?)),
            None if abs => (self.value(l)?, Compared::Abs),
            None => (self.value(l)?, Compared::Row),
        };
        let value = self.value(r)?;
        let (a, b) = (self.value(x)?, self.value(y)?);
        let dst = self.alloc.value();
        for slot in [row, value, a, b].into_iter().chain(compared.operand()) {
            self.release(slot);
        }
        self.steps.push(Step::SelectCompare {
            op,
            compared,
            dst,
            row,
            value,
            a,
            b,
        });
        Some(Slot::Reg(dst))
    }

    /// A bool node: a comparison of two `T` values, or `&&`, `||`, `!` of such.
    fn mask(&mut self, node: &Node) -> Option<usize> {
        if node.ty != Ty::Bool {
            return None;
        }
        Some(match &node.kind {
            Kind::Compare(op, x, y) => {
                let (a, b) = (self.value(x)?, self.value(y)?);
                let dst = self.alloc.mask();
                self.release(a);
                self.release(b);
                self.steps.push(Step::Compare { op: *op, dst, a, b });
                dst
            }
            Kind::Logic(and, x, y) => {
                let (a, b) = (self.mask(x)?, self.mask(y)?);
                let dst = self.alloc.mask();
                self.alloc.free_masks.extend([a, b]);
                self.steps.push(Step::Logic {
                    and: *and,
                    dst,
                    a,
                    b,
                });
                dst
            }
            Kind::Not(x) => {
                let a = self.mask(x)?;
                let dst = self.alloc.mask();
                self.alloc.free_masks.push(a);
                self.steps.push(Step::Not { dst, a });
                dst
            }
            _ => return None,
        })
    }
}

/// Whether `node` is a constant.
fn is_const(node: &Node) -> bool {
    matches!(node.kind, Kind::Const(_))
}
