//! User-defined reductions on the first OpenCL device (PoCL in CI), held to the scalar
//! reference of the expression crate: floats bit for bit when the combine is a float sum
//! or product (the map per element, then the canonical order), integers and selections
//! exactly. The examples of docs/expressions.md, every built-in combine, inputs of
//! mixed types, and the sizes the project checks every kernel on (0, 1, small primes,
//! 2^k ± 1, several subtrees).
//!
//! Without an OpenCL platform the test prints a visible SKIPPED line and passes, unless
//! `REDLAB_REQUIRE_OPENCL=1` (CI sets it).

mod common;

use redlab_core::generate::{generate, Distribution};
use redlab_core::{DType, HostArray};
use redlab_expr::{oracle, Reduction};
use redlab_opencl::OpenClDevice;

fn device() -> Option<OpenClDevice> {
    common::device("OpenCL expression tests")
}

const SIZES: &[usize] = &[0, 1, 7, 31, 1023, 1025, 8191, 8193, 65_537, 300_007];

fn inputs(dtypes: &[DType], n: usize, seed: u64) -> Vec<HostArray> {
    dtypes
        .iter()
        .enumerate()
        .map(|(k, &d)| generate(d, n, Distribution::Normal, seed + k as u64).expect("generates"))
        .collect()
}

fn check(device: &OpenClDevice, map: &str, combine: &str, post: Option<&str>, dtypes: &[DType]) {
    check_with(device, Reduction::builder(map, combine), post, dtypes);
}

fn check_with(
    device: &OpenClDevice,
    mut builder: redlab_expr::ReductionBuilder,
    post: Option<&str>,
    dtypes: &[DType],
) {
    if let Some(p) = post {
        builder = builder.post(p);
    }
    let reduction = builder.build(dtypes).expect("builds");
    for &n in SIZES {
        let arrays = inputs(dtypes, n, 11 + n as u64);
        let views: Vec<_> = arrays.iter().map(HostArray::view).collect();
        let want = oracle::reduce(&reduction, &views).expect("reference");
        let got = device
            .reduce_mapped(&reduction, &views)
            .unwrap_or_else(|e| panic!("{} at n={n}: {e}", reduction.describe()))
            .value;
        assert!(
            got.same_as(&want),
            "{} at n={n}: device {got} vs reference {want}",
            reduction.describe()
        );
    }
}

#[test]
fn documented_examples_match_the_reference_bit_for_bit() {
    let Some(device) = device() else { return };
    let two = [DType::F32, DType::F32];
    check(&device, "x * y", "sum", None, &two);
    check(&device, "x * x", "sum", Some("sqrt(r)"), &[DType::F32]);
    check(&device, "x > 0.5", "sum", None, &[DType::F32]);
    check(&device, "abs(x - y)", "sum", None, &two);
    check(&device, "abs(x)", "max", None, &[DType::F32]);
    check(&device, "x * x", "argmax", None, &[DType::F32]);
    check(&device, "x * y", "sum", None, &[DType::F64, DType::F64]);
    check(&device, "x", "sum", Some("r / n"), &[DType::F64]);
}

#[test]
fn every_builtin_combine_and_mixed_input_types() {
    let Some(device) = device() else { return };
    for combine in ["sum", "prod", "min", "max", "argmin", "argmax"] {
        check(
            &device,
            "x * 0.5 + y",
            combine,
            None,
            &[DType::F32, DType::I16],
        );
        check(
            &device,
            "min(x, y) - i % 7",
            combine,
            None,
            &[DType::I32, DType::I64],
        );
    }
    for combine in ["and", "or", "xor", "sum"] {
        check(
            &device,
            "u32(x) ^ (y * 3)",
            combine,
            None,
            &[DType::U8, DType::U32],
        );
    }
    check(&device, "i8(x * 40.0) / 3", "sum", None, &[DType::F16]);
    // Rounding to the 16-bit formats: ties (products of f32s land on them about once in
    // 8192), f16 subnormals and overflow, bf16 subnormals, and from f64 both exact ties and
    // near-ties decided by bits below the top 32. Each term is scaled to O(1) and overflow
    // is counted, so no term hides behind another or poisons the sum.
    check(
        &device,
        "f16(x * y) + f16(x * 1e-6) * 1e6 + bf16(x * y) + bf16(x * 1e-39) * 1e20 * 1e19 + (abs(f16(x * 7e4)) == inf)",
        "sum",
        None,
        &[DType::F32, DType::F32],
    );
    check(
        &device,
        "f16(f64(x * y)) + f16(f64(x * y) * (1 + 1e-12)) + bf16(f64(x * y)) + bf16(f64(x * y) * (1 - 1e-12)) + f16(f64(x) * 1e-6) * 1e6 + (abs(f16(f64(x) * 7e4)) == inf)",
        "sum",
        None,
        &[DType::F32, DType::F32],
    );
    check(
        &device,
        "x < y ? sqrt(abs(x)) : floor(y) / 3",
        "sum",
        None,
        &[DType::BF16, DType::F32],
    );
    check(
        &device,
        "isnan(sqrt(x)) || x == 0",
        "sum",
        None,
        &[DType::F64],
    );
    check(
        &device,
        "x + y + z",
        "sum",
        None,
        &[DType::F32, DType::F32, DType::F32],
    );
}

#[test]
fn custom_combines_run_in_the_canonical_order() {
    let Some(device) = device() else { return };
    let custom = |map: &str, combine: &str, identity: &str| {
        Reduction::builder(map, combine).identity(identity)
    };
    // A float sum written by hand: the canonical order makes it equal the CPU's bits.
    check_with(
        &device,
        custom("x * y", "a + b", "-0.0"),
        None,
        &[DType::F32, DType::F32],
    );
    check_with(
        &device,
        custom("x", "max(a, b)", "-inf"),
        None,
        &[DType::F64],
    );
    check_with(
        &device,
        custom("x", "a ^ (b * 3)", "0"),
        None,
        &[DType::I32],
    );
    check_with(
        &device,
        custom("abs(x)", "a + b + a * b * 0", "0"),
        Some("r / n"),
        &[DType::F32],
    );
    // An accumulator wider than the map.
    check_with(
        &device,
        custom("x", "a + b", "0").acc(DType::F64),
        None,
        &[DType::F32],
    );
}

/// Random maps over two inputs, from a grammar that only makes well-typed text.
fn random_map() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just("x".to_string()),
        Just("y".to_string()),
        Just("i".to_string()),
        (-4i32..5).prop_map(|v| v.to_string()),
        (-9i32..9).prop_map(|v| format!("{v}.5")),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "%", ">", "=="]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (
                prop::sample::select(vec!["abs", "floor", "sqrt", "i16", "f64", "f16", "bf16"]),
                inner.clone()
            )
                .prop_map(|(f, a)| format!("{f}({a})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("min({a}, {b})")),
        ]
    })
}

proptest::proptest! {
    // Each case builds one program on the device, so the count stays small.
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

    #[test]
    fn random_maps_on_the_device_equal_the_scalar_reference(
        map in random_map(),
        combine in proptest::sample::select(vec!["sum", "max", "argmin"]),
        n in proptest::sample::select(vec![1usize, 1025, 20_011]),
    ) {
        let Some(device) = device() else { return Ok(()) };
        let reduction = Reduction::builder(&map, combine)
            .build(&[DType::F32, DType::I32])
            .expect("the grammar makes well-typed maps");
        let arrays = inputs(&[DType::F32, DType::I32], n, 5);
        let views: Vec<_> = arrays.iter().map(HostArray::view).collect();
        let want = oracle::reduce(&reduction, &views).expect("reference");
        let got = device.reduce_mapped(&reduction, &views).expect("runs").value;
        proptest::prop_assert!(got.same_as(&want), "{}: device {} vs reference {}", reduction.describe(), got, want);
    }
}
