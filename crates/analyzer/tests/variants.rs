//! Every built-in variant runs in the simulator, through the same pass driver as the GPU
//! backends, on seeded random inputs of small awkward sizes, for operators and types
//! that exercise every path (order-sensitive float sums, integer widening, float keys
//! for min/max, argmin structs, halves): each result must pass the reference check
//! (bit for bit for canonical variants and integers), and no launch may report an
//! error (race, out-of-bounds or uninitialized read, barrier divergence).

use redlab_analyzer::sim::LaunchConfig;
use redlab_analyzer::variant::{self, VariantOptions};
use redlab_analyzer::AnalyzeError;
use redlab_core::{DType, Op, Problem};
use redlab_kernels::registry;

fn options() -> VariantOptions {
    VariantOptions {
        config: LaunchConfig::linear(1, 1),
        params: Vec::new(),
        defines: Vec::new(),
        compute_units: 2,
        seed: 7,
    }
}

fn problems() -> Vec<Problem> {
    [
        (Op::Sum, DType::F32),
        (Op::Sum, DType::I32),
        (Op::Sum, DType::F16),
        (Op::Prod, DType::F64),
        (Op::Max, DType::F32),
        (Op::Min, DType::I8),
        (Op::ArgMin, DType::F64),
        (Op::ArgMax, DType::U16),
        (Op::Xor, DType::U64),
    ]
    .into_iter()
    .map(|(op, dtype)| Problem::new(op, dtype, None).expect("valid problem"))
    .collect()
}

/// 0, 1, a prime, 2^k ± 1 around the work-group and tile sizes.
const SIZES: &[usize] = &[0, 1, 7, 257, 8193];

#[test]
fn every_variant_gives_the_reference_result_without_errors() {
    let mut ran = 0;
    let mut failures = Vec::new();
    for v in registry::all() {
        for problem in problems() {
            for &n in SIZES {
                // Products of thousands of random values end at 0 or infinity; keep them
                // short so the check means something.
                if problem.op == Op::Prod && n > 257 {
                    continue;
                }
                match variant::run(&v, &problem, n, &options()) {
                    Ok(run) => {
                        ran += 1;
                        if let Err(why) = &run.verdict {
                            failures.push(format!("{} {problem} n={n}: {why}", v.name));
                        }
                        for p in &run.passes {
                            for f in p.report.metrics.findings.values() {
                                failures.push(format!(
                                    "{} {problem} n={n}: {:?} at line {}: {}",
                                    v.name, f.kind, f.line, f.message
                                ));
                            }
                        }
                    }
                    // The variant declines the problem (no collective, no atomic form).
                    Err(AnalyzeError::Usage(why)) if why.contains("skipped") => {}
                    Err(e) => failures.push(format!("{} {problem} n={n}: {e}", v.name)),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran > 500, "only {ran} runs");
}
