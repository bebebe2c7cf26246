//! User-defined reductions run unchanged in the simulator: the production kernel with
//! the map as its `lift()`, the inputs packed as the devices pack them, every result
//! bit for bit the scalar reference's, and no race, bound or barrier error reported.

use redlab_analyzer::sim::LaunchConfig;
use redlab_analyzer::variant::VariantOptions;
use redlab_core::DType;
use redlab_expr::Reduction;

fn options() -> VariantOptions {
    VariantOptions {
        config: LaunchConfig::linear(1, 1),
        params: Vec::new(),
        defines: Vec::new(),
        compute_units: 2,
        seed: 5,
    }
}

#[test]
fn expressions_run_in_the_simulator_with_the_reference_bits() {
    let cases: &[(&str, &str, Option<&str>, &[DType])] = &[
        ("x * y", "sum", None, &[DType::F32, DType::F32]),
        ("x * x", "sum", Some("sqrt(r)"), &[DType::F64]),
        ("x > 0.25", "sum", None, &[DType::F32]),
        ("abs(x - y)", "max", None, &[DType::F32, DType::F16]),
        ("x * x", "argmax", None, &[DType::F32]),
        ("i32(x) ^ y", "xor", None, &[DType::I16, DType::I32]),
        (
            "f16(x * y) + f16(x * 1e-6) * 1e6 + bf16(x * y) + bf16(x * 1e-39) * 1e20 * 1e19 + (abs(f16(x * 7e4)) == inf)",
            "sum",
            None,
            &[DType::F32, DType::F32],
        ),
        (
            "f16(f64(x * y)) + f16(f64(x * y) * (1 + 1e-12)) + bf16(f64(x * y)) + bf16(f64(x * y) * (1 - 1e-12)) + f16(f64(x) * 1e-6) * 1e6 + (abs(f16(f64(x) * 7e4)) == inf)",
            "sum",
            None,
            &[DType::F32, DType::F32],
        ),
    ];
    for &(map, combine, post, inputs) in cases {
        let mut builder = Reduction::builder(map, combine);
        if let Some(p) = post {
            builder = builder.post(p);
        }
        let reduction = builder.build(inputs).expect("builds");
        for n in [0, 1, 1025, 20_011] {
            let run = redlab_analyzer::mapped::run(&reduction, n, &options())
                .unwrap_or_else(|e| panic!("{} at n={n}: {e}", reduction.describe()));
            assert!(
                run.verdict.is_ok(),
                "{} at n={n}: {:?}",
                reduction.describe(),
                run.verdict
            );
            for pass in &run.passes {
                let findings: Vec<_> = pass.report.metrics.findings.values().collect();
                assert!(
                    findings.is_empty(),
                    "{} at n={n}: {findings:?}",
                    reduction.describe()
                );
            }
            assert_eq!(
                run.passes.is_empty(),
                n == 0,
                "{} at n={n}",
                reduction.describe()
            );
        }
    }
}
