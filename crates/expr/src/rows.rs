//! Row programs: a float map compiled into a short list of steps over row registers of
//! at most [`LANES`] values, so a backend can evaluate the map one row of a canonical
//! tile at a time and add the row into the tile's lanes while it is still in L1.
//!
//! The block evaluator ([`crate::block`]) maps a whole tile into a new column and the
//! built-in kernel reads it back: a second pass over 32 KiB per tile and an allocation
//! per operation, which held one-operation maps to 0.24–0.60 of the built-in sum's
//! speed on the CPU. A row program allocates its registers once per task, every step is
//! one loop with its operator chosen outside (as in the block evaluator's loops), constants stay
//! scalars inside the loops, and the last step's values go straight into the lanes
//! (for arithmetic and the common selects; `rows/steps.rs` says why not every select).
//!
//! Only maps whose every node is of one float type `T` (f32 or f64) and whose inputs are
//! arrays of `T` compile; anything else returns `None` and runs on the block evaluator.
//! Each step applies the per-element rules of [`crate::eval`] ([`FloatRules`]), so a
//! row program's values are bit for bit the evaluator's.

use redlab_core::canonical::LANES;
use redlab_core::DType;

use crate::eval::FloatRules;

mod compile;
mod steps;
use crate::types::{Arith, Cmp, Func, Node, Ty, Val};

/// The most value registers a program may use (8 KiB each for f64): a map needing more
/// is unusual and runs on the block evaluator.
pub const MAX_REGISTERS: usize = 8;

/// The float types a row program computes in.
pub trait RowFloat:
    FloatRules
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + Default
    + Send
    + Sync
    + 'static
{
    /// The expression type of `Self`.
    const TY: Ty;
    /// The array type of `Self`.
    const DTYPE: DType;
    /// The value's bits, for branch-free selects.
    type Bits: Copy
        + Default
        + PartialEq
        + std::fmt::Debug
        + std::ops::BitAnd<Output = Self::Bits>
        + std::ops::BitOr<Output = Self::Bits>
        + std::ops::Not<Output = Self::Bits>
        + Send
        + Sync;
    /// `v` as `Self`, when it is a constant of this type.
    fn of(v: Val) -> Option<Self>;
    /// The value's bits.
    fn bits(self) -> Self::Bits;
    /// The value with these bits.
    fn with_bits(bits: Self::Bits) -> Self;
    /// All ones when `c`, else zero: a lane of a mask, made without a branch.
    fn mask(c: bool) -> Self::Bits;
}

impl RowFloat for f32 {
    const TY: Ty = Ty::F32;
    const DTYPE: DType = DType::F32;
    type Bits = u32;
    #[inline(always)]
    fn bits(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn with_bits(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    #[inline(always)]
    fn mask(c: bool) -> u32 {
        (u32::from(c)).wrapping_neg()
    }
    fn of(v: Val) -> Option<f32> {
        match v {
            Val::F32(x) => Some(x),
            _ => None,
        }
    }
}

impl RowFloat for f64 {
    const TY: Ty = Ty::F64;
    const DTYPE: DType = DType::F64;
    type Bits = u64;
    #[inline(always)]
    fn bits(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn with_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
    #[inline(always)]
    fn mask(c: bool) -> u64 {
        (u64::from(c)).wrapping_neg()
    }
    fn of(v: Val) -> Option<f64> {
        match v {
            Val::F64(x) => Some(x),
            _ => None,
        }
    }
}

/// Where a step reads a row of values from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot<T> {
    /// An input array, at the row's own elements.
    Input(usize),
    /// A value register.
    Reg(usize),
    /// The same value in every lane.
    Const(T),
}

/// One loop over a row.
#[derive(Debug, Clone, PartialEq)]
enum Step<T> {
    Neg {
        dst: usize,
        a: Slot<T>,
    },
    Arith {
        op: Arith,
        dst: usize,
        a: Slot<T>,
        b: Slot<T>,
    },
    Unary {
        f: Func,
        dst: usize,
        a: Slot<T>,
    },
    /// `f(|a|)` (`sqrt(abs(x))`): one loop instead of two. A step of its own, so that the
    /// plain unary loops stay as they were.
    UnaryOfAbs {
        f: Func,
        dst: usize,
        a: Slot<T>,
    },
    /// `|a - b|` (`abs(x - y)`, the L1 distance's map): one loop instead of a difference
    /// written to a register and a second loop taking its absolute value.
    AbsOfDifference {
        dst: usize,
        a: Slot<T>,
        b: Slot<T>,
    },
    Binary {
        f: Func,
        dst: usize,
        a: Slot<T>,
        b: Slot<T>,
    },
    Compare {
        op: Cmp,
        dst: usize,
        a: Slot<T>,
        b: Slot<T>,
    },
    Logic {
        and: bool,
        dst: usize,
        a: usize,
        b: usize,
    },
    Not {
        dst: usize,
        a: usize,
    },
    Select {
        dst: usize,
        mask: usize,
        a: Slot<T>,
        b: Slot<T>,
    },
    /// `row cmp value ? a : b`: a select whose condition compares a row with a constant
    /// or with another row (`x > 0 ? x : 0`, `x > y ? 1 : 0`), the comparison made
    /// inside the select's loop instead of in a mask register of its own. `compared`
    /// says what of the row is compared: `abs(x) > 0.5 ? x : 0` loads each element
    /// once, in one loop, and so does the tolerance count `abs(x - y) < 0.5 ? 1 : 0`.
    SelectCompare {
        op: Cmp,
        compared: Compared<T>,
        dst: usize,
        row: Slot<T>,
        value: Slot<T>,
        a: Slot<T>,
        b: Slot<T>,
    },
}

/// What a [`Step::SelectCompare`] compares with its value: its row as it is, the row's
/// absolute value, or the absolute value of the row minus a second operand (a row or a
/// constant), compared with a constant (a tolerance) or a row (`abs(x - y) < y`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Compared<T> {
    Row,
    Abs,
    AbsDifference(Slot<T>),
}

impl<T> Compared<T> {
    /// The second operand of a difference, if it is one.
    fn operand(self) -> Option<Slot<T>> {
        match self {
            Compared::AbsDifference(q) => Some(q),
            Compared::Row | Compared::Abs => None,
        }
    }
}

/// A compiled map; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct RowProgram<T> {
    steps: Vec<Step<T>>,
    result: Slot<T>,
    registers: usize,
    masks: usize,
}

/// A task's registers for [`RowProgram::fold`].
pub struct RowScratch<T: RowFloat> {
    regs: Vec<Vec<T>>,
    masks: Vec<Vec<T::Bits>>,
}

impl<T: RowFloat> RowProgram<T> {
    /// Compiles `map` over inputs of `inputs`' types, or `None` where the map is not all
    /// of type `T` over arrays of `T` (see the module documentation).
    pub fn compile(map: &Node, inputs: &[DType]) -> Option<RowProgram<T>> {
        compile::compile(map, inputs)
    }

    /// Registers for one task.
    pub fn scratch(&self) -> RowScratch<T> {
        RowScratch {
            regs: vec![vec![T::default(); LANES]; self.registers],
            masks: vec![vec![T::Bits::default(); LANES]; self.masks],
        }
    }

    /// `lanes[j] = fold(lanes[j], map(start + j))` for every `j < lanes.len()` (at most
    /// [`LANES`]), where `inputs[k]` is input `k`'s whole array (inputs the map does not
    /// read may be empty). Every step but the last writes a register; the last step's
    /// values go straight into `fold`, in the same loop, where it is arithmetic or a
    /// common select (see `rows/steps.rs`).
    #[inline(always)]
    pub fn fold<A: Copy>(
        &self,
        inputs: &[&[T]],
        start: usize,
        lanes: &mut [A],
        scratch: &mut RowScratch<T>,
        fold: impl Fn(A, T) -> A + Copy,
    ) {
        let end = start + lanes.len();
        let sink = Fold { lanes, fold };
        match self.steps.split_last() {
            Some((last, body)) if steps::fuses_into_fold(last) => {
                steps::run_steps(body, inputs, start, end, scratch);
                return steps::fold_step(last, inputs, &scratch.regs, start, end, sink);
            }
            _ => steps::run_steps(&self.steps, inputs, start, end, scratch),
        }
        match read(self.result, inputs, &scratch.regs, start, end) {
            Operand::Row(row) => sink.each(row.iter().copied()),
            Operand::Value(c) => sink.each(std::iter::repeat(c)),
        }
    }
}

/// Where a step's values go: a register, or straight into the caller's lanes.
///
/// Values come as an iterator zipped with the destination, never by index: the row
/// operands and the destination have the same length, but indexing them kept a bounds
/// check the compiler could not drop, and it ran the last 32 values of every row as a
/// scalar loop (without it, `x*2` in cache ran 12–22% faster on the CPU).
trait Sink<T> {
    /// Puts each of `values` into the next lane.
    fn each(self, values: impl Iterator<Item = T>);
}

/// Into a register.
struct Store<'a, T>(&'a mut [T]);

impl<T> Sink<T> for Store<'_, T> {
    #[inline(always)]
    fn each(self, values: impl Iterator<Item = T>) {
        for (out, v) in self.0.iter_mut().zip(values) {
            *out = v;
        }
    }
}

/// Into the caller's lanes, through its fold.
struct Fold<'a, A, F> {
    lanes: &'a mut [A],
    fold: F,
}

impl<T, A: Copy, F: Fn(A, T) -> A> Sink<T> for Fold<'_, A, F> {
    #[inline(always)]
    fn each(self, values: impl Iterator<Item = T>) {
        for (lane, v) in self.lanes.iter_mut().zip(values) {
            *lane = (self.fold)(*lane, v);
        }
    }
}

/// A step's operand over one row: values in memory, or one value for every lane.
#[derive(Clone, Copy)]
enum Operand<'a, T> {
    Row(&'a [T]),
    Value(T),
}

/// The operand a slot stands for.
#[inline(always)]
fn read<'a, T: Copy>(
    slot: Slot<T>,
    inputs: &[&'a [T]],
    regs: &'a [Vec<T>],
    start: usize,
    end: usize,
) -> Operand<'a, T> {
    match slot {
        Slot::Input(k) => Operand::Row(&inputs[k][start..end]),
        Slot::Reg(r) => Operand::Row(&regs[r][..end - start]),
        Slot::Const(c) => Operand::Value(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{eval, Env};
    use crate::Reduction;
    use redlab_core::ArrayRef;

    /// Every mapped value of `map` over seeded inputs, through a row program (folded
    /// with "take the new value") and through the one-element evaluator, bit for bit.
    fn check<T: RowFloat + redlab_core::Element>(map: &str, inputs: usize, compiles: bool) {
        let n = 2 * LANES + 37;
        let dtypes = vec![<T as RowFloat>::DTYPE; inputs];
        let reduction = Reduction::builder(map, "sum")
            .build(&dtypes)
            .expect("builds");
        let program = RowProgram::<T>::compile(&reduction.map, &dtypes);
        assert_eq!(program.is_some(), compiles, "{map}");
        let Some(program) = program else { return };
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let arrays: Vec<Vec<f64>> = (0..inputs)
            .map(|_| {
                (0..n)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.4) * 8.0
                    })
                    .collect()
            })
            .collect();
        let typed: Vec<Vec<T>> = arrays
            .iter()
            .map(|a| {
                a.iter()
                    .map(|&v| T::of(convert_val::<T>(v)).expect("a float"))
                    .collect()
            })
            .collect();
        let slices: Vec<&[T]> = typed.iter().map(|a| a.as_slice()).collect();
        let refs: Vec<ArrayRef<'_>> = typed.iter().map(|a| ArrayRef::from_slice(a)).collect();
        let mut scratch = program.scratch();
        for start in (0..n).step_by(LANES) {
            let len = LANES.min(n - start);
            let mut lanes = vec![T::default(); len];
            program.fold(&slices, start, &mut lanes, &mut scratch, |_, v| v);
            for (j, &got) in lanes.iter().enumerate() {
                let env = Env {
                    inputs: &refs,
                    index: (start + j) as u64,
                    vars: &[],
                };
                let want = eval(&reduction.map, &env);
                assert_eq!(
                    Some(got.bits()),
                    T::of(want).map(|w| w.bits()),
                    "{map} at {}",
                    start + j
                );
            }
        }

        fn convert_val<T: RowFloat>(v: f64) -> Val {
            crate::eval::convert_val(Val::F64(v), T::TY)
        }
    }

    #[test]
    fn row_programs_equal_the_evaluator() {
        let maps = [
            "x",
            "x * 2",
            "x * x",
            "x - x + y",
            "2 - x",
            "x * y",
            "abs(x - y)",
            "-x / 3",
            "sqrt(abs(x))",
            "exp(x) + log(abs(y))",
            "floor(x) * ceil(y) % 3",
            "min(x, y) + max(x, 0.5) + pow(abs(x), 1.5)",
            "x > 0 ? x : 0",
            "(x > 0 && y < 1) || !(x == y) ? x * y : -y",
            "x >= y ? (x <= 1 ? x : 1) : (y != 2 ? y : x)",
            "x == 0.5 ? y : x",
            "x != 1 ? 2 : y",
            "x < -1 ? y : 4.5 + x",
            "abs(x) <= 1 ? x * y : 0",
            "y >= 0 ? x : y",
            "2.5 > x ? x : y",
            "(x > 0 ? x : 0) + (y < 0.5 ? y : -x)",
            // An abs folded into the step that reads it.
            "abs(x) > 0.5 ? x : 0",
            "abs(x - y) >= 1 ? y : x",
            "log(abs(x - y))",
            "abs(abs(x)) + floor(abs(y))",
            "-abs(x) < -0.5 ? x : y",
            // Rows compared with rows, and constants on the left, in the select's loop.
            "x > y ? y : 0",
            "x == x ? y : 0",
            "abs(x) < y ? x : y",
            "x <= y * 2 ? 3 : x",
            "0.5 <= x ? y : 1",
            "1 < abs(x) ? x : 0",
            "-1 >= y ? x : -y",
            "abs(x - y) < 0.25 ? x : 0",
            // The absolute value of a difference compared inside the select's loop.
            "abs(x - y) >= 1 ? y : 0",
            "abs(x - 0.5) != 0.25 ? y : x",
            "abs(y - x) <= 0.75 ? x - y : y * 2",
            "abs(x - y) == 0 ? x : 2",
            "abs(x - y) > y ? 1 : x",
            "abs(1.5 - x) < 1 ? x : y",
            // ... and with a row.
            "abs(x - y) < y ? 2 : y",
            "abs(x - y) <= x * 0.5 ? x : y",
            "abs(2 - x) > y ? x : 0",
            "abs(y - x) != x ? x - y : 2",
            // A difference's absolute value in one loop, with rows and constants.
            "abs(x - 0.5)",
            "abs(1.5 - y) * x",
            "sqrt(abs(x - y) + abs(y - x * 2))",
            "abs(abs(x) - y)",
        ];
        for map in maps {
            check::<f32>(map, 2, true);
            check::<f64>(map, 2, true);
        }
    }

    /// The common selects run inside the fold and the others through their register
    /// (`rows/steps.rs`); both give the evaluator's values bit for bit.
    #[test]
    fn common_selects_fuse_into_the_fold() {
        // In f64, where the float literals' type is the map's: the selects between two
        // constants type-check (the CPU builds them in f32 for counts itself).
        for (map, inputs, fuses) in [
            ("x > 0 ? x : 0", 1, true),
            ("abs(x) >= 1 ? x : 0", 1, true),
            ("x != 0.5 ? 2.5 : -1.5", 1, true),
            ("abs(x) < 0.5 ? 1.5 : 0.5", 1, true),
            ("x > y ? 1.5 : 0.5", 2, true),
            ("x <= y ? x : y", 2, true),
            ("abs(x - y) < 0.5 ? 1.5 : 0.5", 2, true),
            ("abs(x - y) < y ? 1.5 : 0.5", 2, true),
            ("abs(x - 0.5) >= y ? 1.5 : 0.5", 2, true),
            ("x > 0 ? y : 0", 2, false),
            ("x > y ? x : 0", 2, false),
            ("abs(x) > 1 ? 1.5 : y", 2, false),
        ] {
            let dtypes = vec![DType::F64; inputs];
            let reduction = Reduction::builder(map, "sum")
                .build(&dtypes)
                .expect("builds");
            let program = RowProgram::<f64>::compile(&reduction.map, &dtypes).expect(map);
            let last = program.steps.last().expect("a step");
            assert!(matches!(last, Step::SelectCompare { .. }), "{map}");
            assert_eq!(steps::fuses_into_fold(last), fuses, "{map}");
            check::<f64>(map, inputs, true);
        }
    }

    /// A select on any comparison of values of `T` is one step: no mask register and
    /// no second loop over the row.
    #[test]
    fn selects_on_comparisons_take_one_step() {
        for (map, steps) in [
            ("x > y ? y : 0", 1),
            ("2 > x ? x : 0", 1),
            ("abs(x) <= y ? x : y", 1),
            ("abs(x - y) < 0.5 ? x : 0", 1),
            ("abs(x - y) >= 0.25 ? 1 : y", 1),
            ("0.5 > abs(x - 1.5) ? y : 2", 1),
            ("abs(1.5 - x) < 1 ? x : y", 1),
            // A difference compared with a row, in the same loop.
            ("abs(x - y) < y ? x : 0", 1),
            ("abs(x - 2) >= y ? x : 0", 1),
            ("x > 0 && y > 0 ? x : 0", 4),
            // Not a select, but fused the same way: |x - y| is one loop.
            ("abs(x - y)", 1),
        ] {
            let dtypes = [DType::F32; 2];
            let reduction = Reduction::builder(map, "sum")
                .build(&dtypes)
                .expect("builds");
            let program = RowProgram::<f32>::compile(&reduction.map, &dtypes).expect("compiles");
            assert_eq!(program.steps.len(), steps, "{map}: {:?}", program.steps);
            assert_eq!(program.masks > 0, steps > 2, "{map}");
        }
    }

    #[test]
    fn maps_outside_one_float_type_are_refused() {
        check::<f32>("i", 1, false);
        check::<f32>("isnan(x) ? 0 : x", 1, false);
        check::<f64>("x + i", 1, false);
    }
}
