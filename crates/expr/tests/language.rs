//! The language as users meet it: the documented examples, the error messages (parse
//! errors with the column, one-line type errors), and the block evaluator held to the
//! scalar one on random expressions and seeded inputs.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlab_core::{reference, ArrayRef, DType, Scalar, Value};
use redlab_expr::{host, oracle, ExprError, Reduction};

fn f32s(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-4.0f32..4.0)).collect()
}

fn fast(r: &Reduction, inputs: &[ArrayRef<'_>]) -> Value {
    host::reduce(r, inputs, reference::reduce).expect("reduces")
}

#[test]
fn the_documented_examples_give_the_reference_results() {
    let n = 3 * 8192 * 16 + 77; // several chunks and a partial tile
    let (x, y) = (f32s(n, 1), f32s(n, 2));
    let inputs = [ArrayRef::from_slice(&x), ArrayRef::from_slice(&y)];
    let both = [DType::F32, DType::F32];
    let cases = [
        Reduction::builder("x * y", "sum").build(&both),
        Reduction::builder("x * x", "sum")
            .post("sqrt(r)")
            .build(&both),
        Reduction::builder("x > 1.5", "sum").build(&both),
        Reduction::builder("abs(x - y)", "sum").build(&both),
        Reduction::builder("abs(x)", "max").build(&both),
        Reduction::builder("x * x", "argmax").build(&both),
        Reduction::builder("x", "sum").post("r / n").build(&both),
        Reduction::builder("x", "max(a, b)")
            .identity("-inf")
            .build(&both),
        Reduction::builder("x + y", "a + b")
            .identity("-0.0")
            .build(&both),
    ];
    for case in cases {
        let r = case.expect("builds");
        let want = oracle::reduce(&r, &inputs).expect("reference");
        let got = fast(&r, &inputs);
        assert!(got.same_as(&want), "{}: {got} vs {want}", r.describe());
    }
    // The dot product is the canonical sum of the products, the L2 norm its root.
    let products: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    let p = redlab_core::Problem::new(redlab_core::Op::Sum, DType::F32, None).expect("valid");
    let canonical = reference::reduce(&p, ArrayRef::from_slice(&products)).expect("sum");
    let dot = Reduction::builder("x * y", "sum")
        .build(&both)
        .expect("builds");
    assert!(fast(&dot, &inputs).same_as(&canonical));
    let count = Reduction::builder("x > 1.5", "sum")
        .build(&both)
        .expect("builds");
    let want = x.iter().filter(|v| **v > 1.5).count() as u64;
    assert_eq!(fast(&count, &inputs), Value::Scalar(Scalar::U64(want)));
    let argmax = Reduction::builder("x * x", "argmax")
        .build(&both)
        .expect("builds");
    let best = (0..n).fold(0, |b, k| if x[k] * x[k] > x[b] * x[b] { k } else { b });
    assert_eq!(fast(&argmax, &inputs).index(), Some(best as u64));
}

#[test]
fn parse_errors_show_the_column_and_a_caret() {
    let e = Reduction::builder("x * * y", "sum")
        .build(&[DType::F32, DType::F32])
        .expect_err("rejects");
    assert_eq!(e.column(), Some(5));
    let text = e.to_string();
    assert!(
        text.starts_with("map: column 5: expected a value"),
        "{text}"
    );
    assert!(
        text.ends_with("(in 'x * * y')") && !text.contains('\n'),
        "{text}"
    );
    assert_eq!(e.pointer().as_deref(), Some("  x * * y\n      ^"));
    let e = Reduction::builder("x", "a +")
        .identity("0")
        .build(&[DType::F32])
        .expect_err("rejects");
    assert!(e.to_string().starts_with("combine: column 4"), "{e}");
}

#[test]
fn type_errors_are_one_clear_line() {
    let one_line = |e: ExprError| {
        let s = e.to_string();
        assert!(!s.contains('\n'), "{s}");
        s
    };
    let f = [DType::F32];
    let s = one_line(
        Reduction::builder("x * 2", "xor")
            .build(&f)
            .expect_err("rejects"),
    );
    assert!(
        s.contains("xor is defined for integer types only, not f32"),
        "{s}"
    );
    let s = one_line(
        Reduction::builder("x ^ 1", "sum")
            .build(&f)
            .expect_err("rejects"),
    );
    assert!(s.contains("'^' is defined for integers only"), "{s}");
    let s = one_line(
        Reduction::builder("x * y", "sum")
            .build(&f)
            .expect_err("rejects"),
    );
    assert!(
        s.contains("'y' is input 2 but the reduction has 1 input"),
        "{s}"
    );
    let s = one_line(
        Reduction::builder("foo(x)", "sum")
            .build(&f)
            .expect_err("rejects"),
    );
    assert!(s.contains("unknown function 'foo'"), "{s}");
    let s = one_line(
        Reduction::builder("x", "a + b")
            .build(&f)
            .expect_err("rejects"),
    );
    assert!(s.contains("needs --identity"), "{s}");
    let s = one_line(
        Reduction::builder("x", "median")
            .build(&f)
            .expect_err("rejects"),
    );
    assert!(
        s.contains("unknown name 'median'") && s.contains("built-in combines"),
        "{s}"
    );
    let dot = Reduction::builder("x * y", "sum")
        .build(&[DType::F32, DType::F32])
        .expect("builds");
    let (a, b) = (f32s(10, 1), f32s(11, 2));
    let err = host::check_inputs(&dot, &[ArrayRef::from_slice(&a), ArrayRef::from_slice(&b)])
        .expect_err("lengths differ");
    let s = one_line(err);
    assert!(
        s.contains("input 2 (y) has 11 elements but input 1 (x) has 10"),
        "{s}"
    );
}

#[test]
fn integer_edge_cases_follow_the_documented_rules() {
    let x = [i64::MIN, -7, 0, 7, i64::MAX];
    let input = [ArrayRef::from_slice(&x)];
    let check = |map: &str, want: &[i64]| {
        let r = Reduction::builder(map, "argmax")
            .build(&[DType::I64])
            .expect("builds");
        for (i, w) in want.iter().enumerate() {
            let v = redlab_expr::eval::eval(
                &r.map,
                &redlab_expr::eval::Env {
                    inputs: &input,
                    index: i as u64,
                    vars: &[],
                },
            );
            assert_eq!(v, redlab_expr::types::Val::I64(*w), "{map} at {i}");
        }
    };
    check("x / 0", &[0, 0, 0, 0, 0]);
    check("x % 0", &[0, 0, 0, 0, 0]);
    check("x / -1", &[i64::MIN, 7, 0, -7, -i64::MAX]);
    check("abs(x)", &[i64::MIN, 7, 0, 7, i64::MAX]);
    check("i32(x)", &[0, -7, 0, 7, -1]);
    check("i8(x * 40)", &[0, -24, 0, 24, -40]);
    let r = Reduction::builder("i16(x * 1e9)", "sum")
        .build(&[DType::I64])
        .expect("builds");
    assert_eq!(r.mapped, DType::I16);
}

/// Random expressions over two inputs, as text, from a small grammar.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("x".to_string()),
        Just("y".to_string()),
        Just("i".to_string()),
        (-5i32..6).prop_map(|v| v.to_string()),
        (-20i32..20).prop_map(|v| format!("{}.25", v)),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "%", "<", ">=", "==", "&&"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (
                prop::sample::select(vec![
                    "abs", "floor", "ceil", "sqrt", "exp", "log", "f32", "i32", "u8", "isnan", "-"
                ]),
                inner.clone()
            )
                .prop_map(|(f, a)| format!("{f}({a})")),
            (
                prop::sample::select(vec!["min", "max"]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn blocks_and_chunks_agree_with_the_scalar_evaluator(
        map in expression(),
        combine in prop::sample::select(vec!["sum", "min", "max", "argmin", "argmax", "prod"]),
        dtypes in prop::sample::select(vec![(DType::F32, DType::F32), (DType::I32, DType::F64), (DType::U16, DType::I8), (DType::F64, DType::F64)]),
        n in prop::sample::select(vec![0usize, 1, 13, 1023, 8193, 131_073]),
        seed in 0u64..1000,
    ) {
        // Every generated map type-checks: the grammar only makes well-typed text.
        let r = Reduction::builder(&map, combine).build(&[dtypes.0, dtypes.1]).expect("builds");
        let gen = |d: DType, s: u64| redlab_core::generate::generate(d, n, redlab_core::generate::Distribution::Normal, s).expect("generates");
        let (a, b) = (gen(dtypes.0, seed), gen(dtypes.1, seed + 1));
        let inputs = [a.view(), b.view()];
        let want = oracle::reduce(&r, &inputs).expect("reference");
        let got = fast(&r, &inputs);
        prop_assert!(got.same_as(&want), "{}: {} vs {}", r.describe(), got, want);
    }

    #[test]
    fn the_parser_never_panics(text in "\\PC{0,64}") {
        let _ = Reduction::builder(&text, "sum").build(&[DType::F32, DType::F32]);
        let _ = Reduction::builder("x", &text).identity(&text).post(&text).build(&[DType::F32]);
    }
}

#[test]
fn casts_and_constant_selects_in_blocks_equal_the_scalar_evaluator() {
    // Values that every cast handles differently: NaN, infinities, beyond every integer
    // range, negative, fractions, both zeros; repeated past one block and a partial tile.
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e20,
        -1e20,
        -1.5,
        300.7,
        70000.2,
        -0.0,
        0.0,
        4.2e9,
        -129.9,
    ];
    let n = 2 * 8192 + 77;
    let x: Vec<f32> = (0..n)
        .map(|k| specials[k % specials.len()] * (1.0 + (k % 7) as f32))
        .collect();
    let y = f32s(n, 5);
    let inputs = [ArrayRef::from_slice(&x), ArrayRef::from_slice(&y)];
    let both = [DType::F32, DType::F32];
    let maps = [
        "i8(x)",
        "u8(x)",
        "i16(x)",
        "u16(x)",
        "i32(x)",
        "u32(x)",
        "i64(x)",
        "u64(x)",
        "f64(x)",
        "i32(x > y)",
        "u8(x < 0)",
        "f32(i16(x))",
        "i8(f64(x) * 3)",
        "x > 0 ? 1 : 0",
        "x > y ? -3 : 7",
        "x > 0 ? 2.5 : -0.0",
        "(x > 0) + (y < 0)",
        "u64(x) + u64(y > 1)",
        "i64(x) * 2 - (x != x)",
        "f16(x)",
        "bf16(x)",
        "f16(x * 1e-9) + bf16(x * 1e-45)",
        "f16(f64(x) / 3) - bf16(f64(y) * 1e30)",
        "bf16(i64(x)) + f16(x > y)",
    ];
    for map in maps {
        for combine in ["sum", "max", "argmin"] {
            let r = Reduction::builder(map, combine)
                .build(&both)
                .expect("builds");
            let want = oracle::reduce(&r, &inputs).expect("reference");
            let got = fast(&r, &inputs);
            assert!(got.same_as(&want), "{}: {got} vs {want}", r.describe());
        }
    }
}
