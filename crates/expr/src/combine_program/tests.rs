//! The compiled combines against the block evaluator, bit for bit.

use redlab_core::DType;

use super::*;
use crate::Reduction;

/// The combine's node and identity as `Reduction` builds them for inputs of `dtype`.
fn combine_of(text: &str, identity: &str, dtype: DType) -> (Node, Val) {
    let r = Reduction::builder("x", text)
        .identity(identity)
        .build(&[dtype])
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let (node, identity, _) = r.custom().expect("a custom combine");
    (node.clone(), identity)
}

/// Seeded values of `ty` with the awkward ones mixed in: NaN, infinities, signed
/// zeros for floats; the extremes and zero (a divisor) for integers.
fn values(ty: Ty, n: usize, seed: u64) -> Column {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let floats: Vec<f64> = (0..n)
        .map(|_| match next() % 16 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => 0.0,
            4 => -0.0,
            _ => (next() % 20001) as f64 / 97.0 - 103.0,
        })
        .collect();
    let ints: Vec<u64> = (0..n)
        .map(|_| match next() % 12 {
            0 => 0,
            1 => i64::MIN as u64,
            2 => i64::MAX as u64,
            3 => u64::MAX,
            _ => next() % 2001,
        })
        .collect();
    match ty {
        Ty::F32 => Column::F32(floats.iter().map(|&x| x as f32).collect()),
        Ty::F64 => Column::F64(floats),
        Ty::I64 => Column::I64(
            ints.iter()
                .map(|&x| (x as i64).wrapping_sub(1000))
                .collect(),
        ),
        Ty::U64 => Column::U64(ints),
        Ty::Bool => unreachable!("no bool partials"),
    }
}

/// Bits of every value, so that NaN equals NaN and -0.0 differs from 0.0.
fn bits(c: &Column) -> Vec<u64> {
    (0..c.len())
        .map(|k| match c.get(k) {
            Val::F32(x) => u64::from(x.to_bits()),
            Val::F64(x) => x.to_bits(),
            Val::I64(x) => x as u64,
            Val::U64(x) => x,
            Val::Bool(b) => u64::from(b),
        })
        .collect()
}

const COMPILED: [(&str, &str); 14] = [
    ("a + b", "-0.0"),
    ("max(a, b)", "-inf"),
    ("min(b, a)", "inf"),
    ("a * b", "1"),
    ("b - a", "0"),
    ("a + b * 1.5", "-0.0"),
    ("abs(a) > abs(b) ? a : b", "0"),
    ("isnan(a) || a < b ? b : a", "-inf"),
    ("!(a >= b) && true ? a / b : -a", "1"),
    ("sqrt(abs(a)) + floor(b) - ceil(a) % 3", "0"),
    ("pow(abs(a), 0.5) + exp(b * 0.001) - log(abs(b) + 1)", "0"),
    ("a == b || a != a ? a : b", "0"),
    ("a <= b ? b : a", "-inf"),
    ("a", "0"),
];

const COMPILED_INT: [(&str, &str); 10] = [
    ("a + b", "0"),
    ("a ^ (b * 3)", "0"),
    ("max(a, b)", "0"),
    ("min(a, b)", "0"),
    ("a / b + a % b", "0"),
    ("(a & b) | (a ^ -b)", "0"),
    ("abs(a) > b ? a - b : b * a", "0"),
    ("i32(a * b)", "1"),
    ("b", "0"),
    ("i16(a) + i8(b)", "0"),
];

/// Every step against the block evaluator, over chunks longer and shorter than a
/// register, both as a row join (`apply`) and as a halving (`halve`).
fn same_as_block_evaluator(text: &str, identity: &str, dtype: DType) {
    let (node, id) = combine_of(text, identity, dtype);
    let ty = id.ty();
    let combiner = Combiner::new(&node, ty);
    assert!(combiner.compiled(), "{text} over {dtype} should compile");
    let reference = Combiner {
        node: &node,
        acc: ty,
        program: None,
    };
    for n in [1, 7, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5] {
        let (a, b) = (values(ty, n + 3, n as u64), values(ty, n, 7 * n as u64));
        let (mut fast, mut slow) = (a.clone(), a.clone());
        combiner.apply(&mut fast, Row::Owned(b.clone()));
        reference.apply(&mut slow, Row::Owned(b));
        assert_eq!(
            bits(&fast),
            bits(&slow),
            "{text} over {dtype}, apply of {n}"
        );
        assert_eq!(
            bits(&fast)[n..],
            bits(&a)[n..],
            "{text}: values past b kept"
        );
        let (mut fast, mut slow) = (a.clone(), a);
        combiner.halve(&mut fast, n.div_ceil(2));
        reference.halve(&mut slow, n.div_ceil(2));
        assert_eq!(
            bits(&fast),
            bits(&slow),
            "{text} over {dtype}, halve of {n}"
        );
    }
}

#[test]
fn compiled_float_combines_give_the_block_evaluators_bits() {
    for dtype in [DType::F32, DType::F64] {
        for (text, identity) in COMPILED {
            same_as_block_evaluator(text, identity, dtype);
        }
    }
}

#[test]
fn compiled_integer_combines_give_the_block_evaluators_bits() {
    for dtype in [DType::I32, DType::I64, DType::U32] {
        for (text, identity) in COMPILED_INT {
            // Casts to signed types leave an unsigned accumulator's type.
            if dtype == DType::U32 && (text.contains("i32") || text.contains("i16")) {
                continue;
            }
            same_as_block_evaluator(text, identity, dtype);
        }
    }
}

#[test]
fn combines_with_other_types_inside_stay_on_the_block_evaluator() {
    for (text, identity, dtype) in [
        ("f64(a) > 0.5 ? a : b", "0", DType::F32),
        ("a + f32(b > 0)", "-0.0", DType::F32),
        ("f16(a + b)", "-0.0", DType::F32),
    ] {
        let (node, id) = combine_of(text, identity, dtype);
        let combiner = Combiner::new(&node, id.ty());
        assert!(
            !combiner.compiled(),
            "{text} has a conversion: block evaluator"
        );
        let (mut a, b) = (values(id.ty(), 40, 3), values(id.ty(), 40, 4));
        let before = a.clone();
        combiner.apply(&mut a, Row::Owned(b));
        assert_ne!(
            bits(&a),
            bits(&before),
            "{text}: the fallback still combines"
        );
    }
}
