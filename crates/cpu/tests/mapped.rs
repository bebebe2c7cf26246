//! User-defined reductions on the CPU backend against the scalar oracle, bit for bit:
//! the fused row-program path (float sums and products of float maps) on edge sizes,
//! both accumulators and several thread counts, and random expressions in and out of the
//! fused subset; integer maps, reduced row by row, against the oracle too.

use proptest::prelude::*;
use redlab_core::canonical::{LANES, TILE};
use redlab_core::generate::{generate, Distribution};
use redlab_core::{ArrayRef, DType, HostArray};
use redlab_cpu::CpuBackend;
use redlab_expr::rows::RowProgram;
use redlab_expr::{oracle, Reduction};

/// 0, 1, small primes, 2^k ± 1 around the lane, tile and chunk sizes, and ~10^6.
fn edge_sizes() -> Vec<usize> {
    let mut sizes = vec![0, 1, 2, 13, 97, 1009];
    for base in [LANES, TILE, 16 * TILE, 1 << 17] {
        sizes.extend([base - 1, base, base + 1]);
    }
    sizes.push(1_000_003);
    sizes
}

fn inputs(dtype: DType, n: usize, seed: u64) -> (HostArray, HostArray) {
    let make = |s| generate(dtype, n, Distribution::Normal, s).expect("generates");
    (make(seed), make(seed + 1))
}

/// Whether `reduction` runs on the fused path (its map compiles to a row program).
fn fused(reduction: &Reduction) -> bool {
    match reduction.mapped {
        DType::F32 => RowProgram::<f32>::compile(&reduction.map, &reduction.inputs).is_some(),
        DType::F64 => RowProgram::<f64>::compile(&reduction.map, &reduction.inputs).is_some(),
        _ => false,
    }
}

/// Asserts that every backend in `cpus` gives the oracle's bits for `r` over `arrays`.
fn agrees_on_every_pool(cpus: &[CpuBackend], r: &Reduction, arrays: &[ArrayRef<'_>], n: usize) {
    let want = oracle::reduce(r, arrays).expect("reference");
    for cpu in cpus {
        let got = cpu.reduce_mapped(r, arrays).expect("reduces").value;
        assert!(
            got.same_as(&want),
            "{} n={n} threads={}: {got} vs {want}",
            r.describe(),
            cpu.threads()
        );
    }
}

#[test]
fn fused_maps_equal_the_oracle_on_edge_sizes_at_any_thread_count() {
    let maps = [
        "x * y",
        "x * 2",
        "x * x",
        "abs(x - y)",
        "sqrt(abs(x)) - 0.5",
        "x > 0 ? x : 0",
        "min(x, y) * max(y, -1)",
        "(x < y && x > -1) || !(y >= 2) ? exp(x) : -log(abs(y))",
    ];
    let cpus: Vec<CpuBackend> = [1, 2, 3]
        .iter()
        .map(|&t| CpuBackend::new(Some(t)).expect("threads"))
        .collect();
    for dtype in [DType::F32, DType::F64] {
        for &n in &edge_sizes() {
            let (x, y) = inputs(dtype, n, n as u64 + 7);
            let arrays = [x.view(), y.view()];
            for map in maps {
                for (combine, acc) in [("sum", None), ("prod", None), ("sum", Some(DType::F64))] {
                    let mut builder = Reduction::builder(map, combine);
                    if let Some(acc) = acc {
                        builder = builder.acc(acc);
                    }
                    let r = builder.build(&[dtype, dtype]).expect("builds");
                    assert!(fused(&r), "{map} over {dtype} should take the fused path");
                    agrees_on_every_pool(&cpus, &r, &arrays, n);
                }
            }
        }
    }
}

#[test]
fn integer_maps_equal_the_oracle_row_by_row_at_any_thread_count() {
    // Integer tiles are mapped and reduced one row at a time; every order-free combine
    // and the indexed ones (which keep whole tiles), over mixed and narrow input types,
    // on sizes around rows, tiles and chunks.
    let cases: &[(&str, [DType; 2])] = &[
        ("x * 3 - y", [DType::I32, DType::I16]),
        ("(x & 255) ^ y", [DType::U16, DType::U64]),
        ("(x > y) + i % 5", [DType::I8, DType::I64]),
        ("abs(x) % 7 - y / 3", [DType::I64, DType::I32]),
        ("i16(x * y)", [DType::I32, DType::I32]),
    ];
    let cpus: Vec<CpuBackend> = [1, 3]
        .iter()
        .map(|&t| CpuBackend::new(Some(t)).expect("threads"))
        .collect();
    let mut sizes: Vec<usize> = edge_sizes().into_iter().filter(|&n| n < 1 << 18).collect();
    sizes.push(300_007);
    for &(map, dtypes) in cases {
        for &n in &sizes {
            let make = |d, s| generate(d, n, Distribution::Normal, s).expect("generates");
            let (x, y) = (make(dtypes[0], n as u64), make(dtypes[1], n as u64 + 1));
            let arrays = [x.view(), y.view()];
            for combine in ["sum", "prod", "min", "max", "and", "or", "xor", "argmax"] {
                let r = Reduction::builder(map, combine)
                    .build(&dtypes)
                    .expect("builds");
                agrees_on_every_pool(&cpus, &r, &arrays, n);
            }
        }
    }
}

#[test]
fn post_and_errors_are_those_of_the_block_path() {
    let cpu = CpuBackend::new(Some(2)).expect("threads");
    let (x, y) = inputs(DType::F32, 3 * TILE + 5, 3);
    let l2 = Reduction::builder("x * x", "sum")
        .post("sqrt(r)")
        .build(&[DType::F32])
        .expect("builds");
    let want = oracle::reduce(&l2, &[x.view()]).expect("reference");
    let got = cpu.reduce_mapped(&l2, &[x.view()]).expect("reduces").value;
    assert!(got.same_as(&want), "{got} vs {want}");
    // Inputs of different lengths: one clear error, not a panic in the row loops.
    let dot = Reduction::builder("x * y", "sum")
        .build(&[DType::F32, DType::F32])
        .expect("builds");
    let short = y.view().slice(0, 10);
    let err = cpu
        .reduce_mapped(&dot, &[x.view(), short])
        .expect_err("lengths differ");
    assert!(err.to_string().contains("equal lengths"), "{err}");
    let err = cpu
        .reduce_mapped(&dot, &[x.view()])
        .expect_err("one input missing");
    assert!(err.to_string().contains("2 inputs"), "{err}");
}

/// Random float expressions over `x` and `y`, mostly inside the fused subset, sometimes
/// outside it (`i`, `isnan`), so both paths meet the oracle.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("x".to_string()),
        Just("y".to_string()),
        (-4.0f64..4.0).prop_map(|c| format!("{c:.3}")),
        Just("i".to_string()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "%"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (
                prop::sample::select(vec![
                    "abs", "sqrt", "exp", "log", "floor", "ceil", "-", "f16", "bf16"
                ]),
                inner.clone()
            )
                .prop_map(|(f, a)| format!("{f}({a})")),
            (
                prop::sample::select(vec!["min", "max", "pow"]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
            (
                inner.clone(),
                prop::sample::select(vec!["<", ">", "<=", ">=", "==", "!="]),
                inner.clone(),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(a, c, b, t, e)| format!("(({a} {c} {b}) ? {t} : {e})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, t, e)| format!("(isnan({a}) ? {t} : {e})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_maps_equal_the_oracle(
        map in expression(),
        combine in prop::sample::select(vec!["sum", "prod"]),
        dtype in prop::sample::select(vec![DType::F32, DType::F64]),
        n in prop::sample::select(vec![0usize, 1, 13, 1025, 8193, 131_073]),
        seed in 0u64..1000,
    ) {
        let cpu = CpuBackend::new(Some(2)).expect("threads");
        let (x, y) = inputs(dtype, n, seed);
        let arrays: [ArrayRef<'_>; 2] = [x.view(), y.view()];
        let r = Reduction::builder(&map, combine).build(&[dtype, dtype]).expect("builds");
        let want = oracle::reduce(&r, &arrays).expect("reference");
        let got = cpu.reduce_mapped(&r, &arrays).expect("reduces").value;
        prop_assert!(got.same_as(&want), "{} (fused: {}): {} vs {}", r.describe(), fused(&r), got, want);
    }
}
