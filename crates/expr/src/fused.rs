//! Fused integer maps: a one-operation map of signed integer inputs summed into i64 in
//! one loop per operator and operand layout, with no mapped values written anywhere.
//!
//! The row path ([`crate::host`]) widens each row of input into i64 registers, applies
//! the map's operation in a second loop and reduces in a third: three passes over L1 per
//! row, which held one-operation integer maps to 0.36–0.54 of the built-in sum's speed on
//! two cores (results/cpu-dev-2core-expr-integer). Here the widening load, the operation
//! and the wrapping sum are one iterator chain, which the compiler vectorizes (integer
//! addition is associative, so the reduction may be split into vector lanes).
//!
//! Only maps whose root is one operation — `+ − ×`, `& | ^`, `min`, `max`, `abs`, unary
//! `−`, a comparison (counted), or the input itself — over inputs of i32 or i64 and i64
//! constants qualify; their results are the
//! evaluator's bit for bit (the same wrapping rules, [`IntRules`]). Anything else returns
//! `None` and runs on the row path.

use redlab_core::{ArrayRef, DType};

use crate::eval::{int_call, IntRules};
use crate::types::{Arith, Cmp, Func, Kind, Node, Ty, Val};

/// An operand: an input's elements (widened to i64 as they are read) or a constant.
#[derive(Clone, Copy)]
enum Leaf<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
    Const(i64),
}

fn leaf<'a>(node: &Node, inputs: &[ArrayRef<'a>], start: usize, len: usize) -> Option<Leaf<'a>> {
    if node.ty != Ty::I64 {
        return None;
    }
    match node.kind {
        Kind::Const(Val::I64(c)) => Some(Leaf::Const(c)),
        Kind::Input(k) => {
            let part = inputs.get(k)?.slice(start, start + len);
            match part.dtype() {
                DType::I32 => part.typed::<i32>().ok().map(Leaf::I32),
                DType::I64 => part.typed::<i64>().ok().map(Leaf::I64),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The wrapping sum of `f(a[k], b[k])` over `len` elements, where either operand may be
/// a constant.
#[inline(always)]
fn fold<F: Fn(i64, i64) -> i64 + Copy>(a: Leaf<'_>, b: Leaf<'_>, len: usize, f: F) -> i64 {
    use Leaf::{Const, I32, I64};
    // Each operand is widened to i64 as it is read.
    match (a, b) {
        (I32(x), I32(y)) => fold_pairs(x, y, move |p: i32, q: i32| f(p.into(), q.into())),
        (I32(x), I64(y)) => fold_pairs(x, y, move |p: i32, q: i64| f(p.into(), q)),
        (I64(x), I32(y)) => fold_pairs(x, y, move |p: i64, q: i32| f(p, q.into())),
        (I64(x), I64(y)) => fold_pairs(x, y, f),
        (I32(x), Const(c)) => fold_one(x, move |p: i32| f(p.into(), c)),
        (I64(x), Const(c)) => fold_one(x, move |p: i64| f(p, c)),
        (Const(c), I32(y)) => fold_one(y, move |q: i32| f(c, q.into())),
        (Const(c), I64(y)) => fold_one(y, move |q: i64| f(c, q)),
        (Const(c), Const(d)) => f(c, d).wrapping_mul(len as i64),
    }
}

/// The wrapping i64 sum of `f(x[k], y[k])`: `f` widens (and maps) the elements.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
fn fold_pairs<A: Copy, B: Copy, F: Fn(A, B) -> i64 + Copy>(x: &[A], y: &[B], f: F) -> i64 {
    x.iter()
        .zip(y)
        .map(|(&p, &q)| f(p, q))
        .fold(0i64, i64::wrapping_add)
}

/// The wrapping i64 sum of `f(x[k])`: `f` widens (and maps) the element.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq+avx512vl", "x86_64+avx2+fma"))]
fn fold_one<A: Copy, F: Fn(A) -> i64 + Copy>(x: &[A], f: F) -> i64 {
    x.iter().map(|&p| f(p)).fold(0i64, i64::wrapping_add)
}

/// The wrapping sum of an operand's elements (a constant counts `len` times).
fn plain_sum(a: Leaf<'_>, len: usize) -> i64 {
    fold(a, Leaf::Const(0), len, |p, _| p)
}

/// `Σ(x ⊕ c)` and `Σ(c ⊕ x)` for `+ − ×` with one constant operand, from `Σx` alone.
///
/// Wrapping i64 arithmetic is the ring of integers modulo 2^64, where multiplication
/// distributes over addition: `Σ c·x = c·Σx` and `Σ(x + c) = Σx + c·len` hold bit for bit,
/// overflow included. The element loop is then the widening sum alone; without
/// AVX-512DQ a 64-bit multiply per element costs more than the memory it reads.
fn linear(op: Arith, a: Leaf<'_>, b: Leaf<'_>, len: usize) -> Option<i64> {
    // Decided before any element is read: other operators take their own loop.
    if !matches!(op, Arith::Add | Arith::Sub | Arith::Mul) {
        return None;
    }
    let (sum, c, constant_first) = match (a, b) {
        (x @ (Leaf::I32(_) | Leaf::I64(_)), Leaf::Const(c)) => (plain_sum(x, len), c, false),
        (Leaf::Const(c), y @ (Leaf::I32(_) | Leaf::I64(_))) => (plain_sum(y, len), c, true),
        _ => return None,
    };
    let repeated = c.wrapping_mul(len as i64);
    match (op, constant_first) {
        (Arith::Add, _) => Some(sum.wrapping_add(repeated)),
        (Arith::Sub, false) => Some(sum.wrapping_sub(repeated)),
        (Arith::Sub, true) => Some(repeated.wrapping_sub(sum)),
        (Arith::Mul, _) => Some(sum.wrapping_mul(c)),
        _ => None,
    }
}

/// `Σ min(x, c)`, `Σ max(x, y)` … where every operand is i32 (or a constant that is one):
/// sign extension is monotonic, so it commutes with `min` and `max`, and the selection
/// runs on eight 32-bit lanes per AVX2 register before the widening, not on four 64-bit
/// ones after it (AVX2 has no 64-bit `min`/`max`: a compare and a blend each).
fn narrow_select(func: Func, a: Leaf<'_>, b: Leaf<'_>) -> Option<i64> {
    let narrow = |c: i64| i32::try_from(c).ok();
    // Which side a constant is on does not matter: both operators are commutative.
    let (x, y) = match (a, b) {
        (Leaf::I32(x), Leaf::I32(y)) => (x, Err(y)),
        (Leaf::I32(x), Leaf::Const(c)) | (Leaf::Const(c), Leaf::I32(x)) => (x, Ok(narrow(c)?)),
        _ => return None,
    };
    macro_rules! select {
        ($pick:expr) => {
            match y {
                Ok(c) => fold_one(x, move |p| i64::from($pick(p, c))),
                Err(y) => fold_pairs(x, y, move |p, q| i64::from($pick(p, q))),
            }
        };
    }
    Some(match func {
        Func::Min => select!(|p: i32, q: i32| p.min(q)),
        Func::Max => select!(|p: i32, q: i32| p.max(q)),
        _ => return None,
    })
}

/// The wrapping i64 sum of `map` over elements `start..start + len` of `inputs`, when
/// the map is one fusable operation (see the module's documentation).
pub(crate) fn int_sum(
    map: &Node,
    inputs: &[ArrayRef<'_>],
    start: usize,
    len: usize,
) -> Option<i64> {
    if map.ty != Ty::I64 {
        return None;
    }
    let operand = |node: &Node| leaf(node, inputs, start, len);
    macro_rules! arith {
        ($a:expr, $b:expr, $op:expr) => {
            fold($a, $b, len, |p, q| i64::arith($op, p, q))
        };
    }
    match &map.kind {
        Kind::Arith(op, a, b) => {
            let (a, b) = (operand(a)?, operand(b)?);
            if let Some(sum) = linear(*op, a, b, len) {
                return Some(sum);
            }
            Some(match op {
                Arith::Add => arith!(a, b, Arith::Add),
                Arith::Sub => arith!(a, b, Arith::Sub),
                Arith::Mul => arith!(a, b, Arith::Mul),
                Arith::BitAnd => arith!(a, b, Arith::BitAnd),
                Arith::BitOr => arith!(a, b, Arith::BitOr),
                Arith::BitXor => arith!(a, b, Arith::BitXor),
                // Division by zero has its own rule per element; the row path keeps it.
                Arith::Div | Arith::Rem => return None,
            })
        }
        Kind::Call(func @ (Func::Min | Func::Max), args) if args.len() == 2 => {
            let (a, b) = (operand(&args[0])?, operand(&args[1])?);
            let func = *func;
            Some(
                narrow_select(func, a, b)
                    .unwrap_or_else(|| fold(a, b, len, |p, q| int_call(func, p, q))),
            )
        }
        Kind::Call(Func::Abs, args) if args.len() == 1 => {
            let a = operand(&args[0])?;
            Some(fold(a, Leaf::Const(0), len, |p, _| IntRules::abs(p)))
        }
        // Σ(−x) = −Σx in wrapping arithmetic.
        Kind::Neg(a) => Some(plain_sum(operand(a)?, len).wrapping_neg()),
        // An input widened to i64 (`x` over i32): the widening load alone.
        Kind::Input(_) => Some(plain_sum(operand(map)?, len)),
        _ => None,
    }
}

/// How many of elements `start..start + len` satisfy `map`, when the map is one
/// comparison of i32/i64 inputs and i64 constants (`x > 0`, `x > y`): the sum of a
/// bool map, whose mapped values are 0 and 1.
pub(crate) fn int_count(
    map: &Node,
    inputs: &[ArrayRef<'_>],
    start: usize,
    len: usize,
) -> Option<u64> {
    let Kind::Compare(cmp, a, b) = &map.kind else {
        return None;
    };
    let (a, b) = (leaf(a, inputs, start, len)?, leaf(b, inputs, start, len)?);
    macro_rules! count {
        ($test:expr) => {
            fold(a, b, len, |p, q| i64::from($test(p, q)))
        };
    }
    let count = match cmp {
        Cmp::Eq => count!(|p, q| p == q),
        Cmp::Ne => count!(|p, q| p != q),
        Cmp::Lt => count!(|p, q| p < q),
        Cmp::Le => count!(|p, q| p <= q),
        Cmp::Gt => count!(|p, q| p > q),
        Cmp::Ge => count!(|p, q| p >= q),
    };
    Some(count as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{eval, Env};
    use crate::Reduction;

    /// Seeded values spread over the whole range, the extremes included so that every
    /// operation wraps somewhere.
    fn values(seed: u64, len: usize) -> Vec<i64> {
        let mut state = seed;
        (0..len)
            .map(|k| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match k % 97 {
                    0 => i64::MIN,
                    1 => i64::MAX,
                    _ => (state >> 1) as i64 ^ ((state >> 40) as i64),
                }
            })
            .collect()
    }

    fn expected(reduction: &Reduction, inputs: &[ArrayRef<'_>], len: usize) -> i64 {
        (0..len)
            .map(|i| {
                let env = Env {
                    inputs,
                    index: i as u64,
                    vars: &[],
                };
                match eval(&reduction.map, &env) {
                    Val::I64(v) => v,
                    other => panic!("not an i64: {other:?}"),
                }
            })
            .fold(0i64, i64::wrapping_add)
    }

    #[test]
    fn fused_maps_equal_the_evaluator_on_every_layout() {
        let len = 1021; // a prime: no vector width divides it
        let wide_x = values(1, len);
        let wide_y = values(2, len);
        let narrow_x: Vec<i32> = wide_x.iter().map(|&v| v as i32).collect();
        let narrow_y: Vec<i32> = wide_y.iter().map(|&v| (v >> 7) as i32).collect();
        let maps = [
            "x + y",
            "x - y",
            "x * y",
            "x & y",
            "x | y",
            "x ^ y",
            "min(x, y)",
            "max(x, y)",
            "x * 3",
            "7 - x",
            "x - 9",
            "x + 123456789",
            "-5 * y",
            "9223372036854775807 * x",
            "x & 255",
            "x | -4096",
            "-77 ^ x",
            "x & 4294967295",
            "abs(x)",
            "-x",
            "max(x, 0)",
            "min(-3, x)",
            "max(x, 4294967296)",
            "min(x, -2147483649)",
            "3 * 5",
        ];
        for (xs, ys) in [
            (
                ArrayRef::from_slice(&narrow_x),
                ArrayRef::from_slice(&narrow_y),
            ),
            (
                ArrayRef::from_slice(&narrow_x),
                ArrayRef::from_slice(&wide_y),
            ),
            (
                ArrayRef::from_slice(&wide_x),
                ArrayRef::from_slice(&narrow_y),
            ),
            (ArrayRef::from_slice(&wide_x), ArrayRef::from_slice(&wide_y)),
        ] {
            let inputs = [xs, ys];
            for map in maps {
                let reduction = Reduction::builder(map, "sum")
                    .build(&[xs.dtype(), ys.dtype()])
                    .expect("checks");
                let want = expected(&reduction, &inputs, len);
                for (start, part) in [(0, len), (5, 600), (len, 0)] {
                    let got = int_sum(&reduction.map, &inputs, start, part)
                        .unwrap_or_else(|| panic!("{map} did not fuse"));
                    let part_want = if part == len {
                        want
                    } else {
                        let window = [xs.slice(start, start + part), ys.slice(start, start + part)];
                        expected(&reduction, &window, part)
                    };
                    assert_eq!(
                        got,
                        part_want,
                        "{map} over {:?}, {start}+{part}",
                        inputs.map(|a| a.dtype())
                    );
                }
            }
        }
    }

    #[test]
    fn fused_comparisons_count_what_the_evaluator_counts() {
        let len = 1021;
        let wide_x = values(3, len);
        let narrow_y: Vec<i32> = values(4, len).iter().map(|&v| (v >> 9) as i32).collect();
        let inputs = [
            ArrayRef::from_slice(&wide_x),
            ArrayRef::from_slice(&narrow_y),
        ];
        for map in [
            "x > 0", "x > y", "x >= y", "x >= x", "y < x", "y <= y", "x == x", "x != y", "x < x",
        ] {
            let reduction = Reduction::builder(map, "sum")
                .build(&[DType::I64, DType::I32])
                .expect("checks");
            let want = (0..len)
                .filter(|&i| {
                    let env = Env {
                        inputs: &inputs,
                        index: i as u64,
                        vars: &[],
                    };
                    eval(&reduction.map, &env) == Val::Bool(true)
                })
                .count() as u64;
            assert_eq!(
                int_count(&reduction.map, &inputs, 0, len),
                Some(want),
                "{map}"
            );
        }
    }

    #[test]
    fn maps_of_more_than_one_operation_or_other_types_do_not_fuse() {
        let x: Vec<i32> = (0..64).map(|k| k * 7 - 100).collect();
        let f: Vec<f32> = (0..64).map(|k| k as f32 * 0.5).collect();
        let inputs = [ArrayRef::from_slice(&x), ArrayRef::from_slice(&f)];
        for map in ["x * 2 + 1", "x / 3", "x % 5", "x > 0 ? 1 : 0", "i", "x > 0"] {
            let reduction = Reduction::builder(map, "sum")
                .build(&[DType::I32, DType::F32])
                .expect("checks");
            assert_eq!(int_sum(&reduction.map, &inputs, 0, 64), None, "{map}");
        }
        let float = Reduction::builder("y * 2", "sum")
            .build(&[DType::I32, DType::F32])
            .expect("checks");
        assert_eq!(int_sum(&float.map, &inputs, 0, 64), None);
    }
}
