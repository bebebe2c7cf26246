//! The conformance matrix that both GPU backends' tests run: every registered variant ×
//! operator × type over edge sizes, each result checked against the host reference
//! (`accuracy::check_result`: canonical variants bit for bit, the others within their
//! operator's bound). A backend hands in its upload and its run as closures, so the same
//! inputs and the same checks hold on OpenCL and CUDA devices alike.

use std::sync::Mutex;

use redlab_core::generate::{generate, Distribution};
use redlab_core::reference::{self, accuracy};
use redlab_core::{ArrayRef, DType, HostArray, Op, Problem, Value};

use crate::driver::{Run, RunError};
use crate::registry::{self, Variant};

/// 0, 1, primes, 2^k ± 1 around work-group and tile sizes, and a million and three.
pub const EDGE_SIZES: &[usize] = &[
    0, 1, 2, 3, 7, 31, 255, 257, 1023, 4099, 8191, 8193, 65537, 1_000_003,
];

/// A size of several million, past every variant's single-pass range.
pub const LARGE: usize = 3_000_017;

/// The problems of the matrix: every operator × type when `full`; otherwise every
/// operator on i32 and f32 and every type on sum and argmax (most of the coverage at a
/// fraction of the builds).
pub fn problems(full: bool) -> Vec<Problem> {
    let mut all = Vec::new();
    for op in Op::ALL {
        for dtype in DType::ALL {
            let covered = full
                || matches!(dtype, DType::I32 | DType::F32)
                || matches!(op, Op::Sum | Op::ArgMax);
            if let (true, Ok(p)) = (covered, Problem::new(op, dtype, None)) {
                all.push(p);
            }
        }
    }
    all
}

/// What a matrix run found.
#[derive(Debug, Default)]
pub struct MatrixOutcome {
    /// Runs made and checked.
    pub ran: usize,
    /// Variant × problem pairs the device declined (`RunError::Skipped`), with a reason.
    pub skipped: usize,
    /// One line per wrong result or failed run.
    pub failures: Vec<String>,
}

/// Runs every registered variant on every problem of `problems` at every size of
/// [`EDGE_SIZES`], on `workers` threads that take problems in turn. Inputs are seeded
/// random data (integers for products, which would overflow to nothing otherwise).
/// A declined pair is counted once (its reason holds at every size); an error ends that
/// pair with a failure line.
pub fn run_matrix<I>(
    problems: &[Problem],
    workers: usize,
    upload: impl Fn(ArrayRef<'_>) -> Result<I, RunError> + Sync,
    run: impl Fn(&Variant, &Problem, &I) -> Result<Run, RunError> + Sync,
) -> MatrixOutcome {
    let variants = registry::all();
    let outcome = Mutex::new(MatrixOutcome::default());
    let next = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..workers.max(1) {
            scope.spawn(|| loop {
                let k = {
                    let mut next = next.lock().expect("lock");
                    *next += 1;
                    *next - 1
                };
                let Some(problem) = problems.get(k) else {
                    break;
                };
                let dist = if problem.op == Op::Prod {
                    Distribution::Ints
                } else {
                    Distribution::Normal
                };
                let inputs: Vec<(HostArray, Value)> = EDGE_SIZES
                    .iter()
                    .map(|&n| {
                        let data = generate(problem.dtype, n, dist, 17 + n as u64).expect("fits");
                        let expected = reference::reduce(problem, data.view()).expect("reference");
                        (data, expected)
                    })
                    .collect();
                for variant in &variants {
                    for (data, expected) in &inputs {
                        let result =
                            upload(data.view()).and_then(|input| run(variant, problem, &input));
                        let mut outcome = outcome.lock().expect("lock");
                        match result {
                            Ok(done) => {
                                outcome.ran += 1;
                                if let Err(why) = accuracy::check_result(
                                    problem,
                                    data.view(),
                                    &done.value,
                                    expected,
                                    variant.canonical,
                                ) {
                                    outcome.failures.push(format!(
                                        "{} {problem} n={}: {why}",
                                        variant.name,
                                        data.len()
                                    ));
                                }
                            }
                            Err(RunError::Skipped(why)) => {
                                assert!(
                                    !why.is_empty(),
                                    "{}: a skip without a reason",
                                    variant.name
                                );
                                outcome.skipped += 1;
                                break;
                            }
                            Err(e) => {
                                outcome.failures.push(format!(
                                    "{} {problem} n={}: {e}",
                                    variant.name,
                                    data.len()
                                ));
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    outcome.into_inner().expect("lock")
}

/// Every registered variant over one input of [`LARGE`] elements, uploaded once, for an
/// f32 sum, an i16 argmax and a u8 sum; one line per wrong result or failed run.
pub fn large_inputs<I>(
    upload: impl Fn(ArrayRef<'_>) -> Result<I, RunError>,
    run: impl Fn(&Variant, &Problem, &I) -> Result<Run, RunError>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (op, dtype) in [
        (Op::Sum, DType::F32),
        (Op::ArgMax, DType::I16),
        (Op::Sum, DType::U8),
    ] {
        let problem = Problem::new(op, dtype, None).expect("valid");
        let data = generate(dtype, LARGE, Distribution::Normal, 99).expect("fits");
        let expected = reference::reduce(&problem, data.view()).expect("reference");
        let input = match upload(data.view()) {
            Ok(input) => input,
            Err(e) => {
                failures.push(format!("{problem}: upload of {LARGE} elements: {e}"));
                continue;
            }
        };
        for variant in registry::all() {
            match run(&variant, &problem, &input) {
                Ok(done) => {
                    if let Err(why) = accuracy::check_result(
                        &problem,
                        data.view(),
                        &done.value,
                        &expected,
                        variant.canonical,
                    ) {
                        failures.push(format!("{} {problem} n={LARGE}: {why}", variant.name));
                    }
                }
                Err(RunError::Skipped(_)) => {}
                Err(e) => failures.push(format!("{} {problem}: {e}", variant.name)),
            }
        }
    }
    failures
}
