//! Every variant × operator × type × edge size on the first OpenCL device (PoCL in CI),
//! checked against the host reference: bit for bit for the canonical kernel, exactly for
//! integers and selections, and within the worst-case summation bound for other float
//! sums and products (their order is the strategy's own).
//!
//! Without an OpenCL platform the tests print a visible SKIPPED line and pass, unless
//! `REDLAB_REQUIRE_OPENCL=1` (CI sets it), which turns that into a failure.
//!
//! Building ~3000 programs takes PoCL about 12 minutes on 2 cores, so the full matrix
//! runs when `REDLAB_OPENCL_FULL=1` (CI sets it); otherwise every variant meets every
//! operator on i32 and f32 and every type on sum and argmax.
//!
//! The matrix itself (sizes, problems, inputs and checks) is
//! `redlab_kernels::conformance`, shared by both GPU backends.

mod common;

use std::sync::Mutex;

use redlab_core::generate::{generate, Distribution};
use redlab_core::reference;
use redlab_core::{DType, Op, Problem};
use redlab_kernels::{conformance, registry};
use redlab_opencl::{OpenClDevice, RunError};

/// One test at a time on the device: PoCL 3.1 crashed (SIGSEGV) with several contexts
/// in use from parallel tests, while any number of runs through one context is fine.
static DEVICE_LOCK: Mutex<()> = Mutex::new(());

fn device() -> Option<OpenClDevice> {
    common::device("OpenCL tests")
}

#[test]
fn every_variant_op_and_type_matches_the_reference() {
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let full = std::env::var("REDLAB_OPENCL_FULL").is_ok_and(|v| v == "1");
    let problems = conformance::problems(full);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let outcome = conformance::run_matrix(
        &problems,
        workers,
        |data| device.upload(data),
        |variant, problem, input| device.run(variant, problem, input, &[]),
    );
    eprintln!(
        "opencl matrix: {} runs verified, {} variant × problem pairs skipped",
        outcome.ran, outcome.skipped
    );
    assert!(
        outcome.ran > 4 * problems.len(),
        "too few runs: {}",
        outcome.ran
    );
    assert!(
        outcome.failures.is_empty(),
        "{} failures:\n{}",
        outcome.failures.len(),
        outcome.failures.join("\n")
    );
}

#[test]
fn large_inputs_match_for_every_variant() {
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let failures = conformance::large_inputs(
        |data| device.upload(data),
        |variant, problem, input| device.run(variant, problem, input, &[]),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_order_free_grid_covers_every_chunk_whatever_its_shape() {
    // The grid follows the chunks of 256 × UNROLL elements, capped per compute unit, or
    // is one cluster of CLUSTER_FINISH groups (on OpenCL: that many groups and the
    // ticket): every shape must still read each element once.
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let production = registry::find("production").expect("registered");
    let sizes = [1, 1023, 1025, 8191, 8193, 65_537, 1 << 20, (1 << 20) + 3];
    for (op, dtype) in [
        (Op::Max, DType::I32),
        (Op::Sum, DType::I64),
        (Op::ArgMin, DType::F32),
    ] {
        let problem = Problem::new(op, dtype, None).expect("valid");
        for n in sizes {
            let data = generate(dtype, n, Distribution::Normal, 31 + n as u64).expect("fits");
            let expected = reference::reduce(&problem, data.view()).expect("reference");
            let input = device.upload(data.view()).expect("upload");
            for (unroll, per_cu, cluster) in [(4, 1, 0), (4, 8, 8), (32, 1, 4), (8, 2, 2)] {
                let params = [
                    ("UNROLL", unroll),
                    ("GROUPS_PER_CU", per_cu),
                    ("CLUSTER_FINISH", cluster),
                ];
                let run = device
                    .run(&production, &problem, &input, &params)
                    .unwrap_or_else(|e| panic!("{problem} n={n} {params:?}: {e}"));
                assert_eq!(run.value, expected, "{problem} n={n} {params:?}");
            }
        }
    }
}

#[test]
fn canonical_sums_with_cluster_grids_equal_the_cpu_backend_bit_for_bit() {
    // With CLUSTER_FINISH the canonical path's grid is one cluster up to that many
    // subtrees, else a whole number of clusters (on OpenCL: that many groups and the
    // ticket, the kernel's path wherever clusters are missing). Every grid must keep
    // the canonical bits; sizes straddle one, two, three, eight and nine tiles.
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let cpu = redlab_cpu::CpuBackend::new(Some(2)).expect("cpu");
    let production = registry::find("production").expect("registered");
    let tile = 8192;
    let sizes = [
        1,
        tile - 1,
        tile + 1,
        3 * tile - 7,
        8 * tile,
        8 * tile + 1,
        100 * tile + 3,
    ];
    for (dtype, acc) in [
        (DType::F32, DType::F32),
        (DType::F64, DType::F64),
        (DType::F16, DType::F32),
    ] {
        let problem = Problem::new(Op::Sum, dtype, Some(acc)).expect("valid");
        for n in sizes {
            let data = generate(dtype, n, Distribution::Normal, 7 + n as u64).expect("fits");
            let want = cpu.compute(&problem, data.view()).expect("cpu");
            let input = device.upload(data.view()).expect("upload");
            for (cluster, per_cu) in [(2, 1), (4, 3), (8, 1)] {
                let params = [("CLUSTER_FINISH", cluster), ("GROUPS_PER_CU", per_cu)];
                let got = device
                    .run(&production, &problem, &input, &params)
                    .unwrap_or_else(|e| panic!("{problem} n={n} {params:?}: {e}"))
                    .value;
                assert_eq!(
                    got.scalar().map(|s| s.bits()),
                    want.scalar().map(|s| s.bits()),
                    "{problem} n={n} {params:?}: got {got}, want {want}"
                );
            }
        }
    }
}

#[test]
fn the_canonical_kernel_equals_the_cpu_backend_bit_for_bit() {
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let cpu = redlab_cpu::CpuBackend::new(Some(2)).expect("cpu");
    for name in ["canonical", "production"] {
        let canonical = registry::find(name).expect("registered");
        for (dtype, acc) in [
            (DType::F32, DType::F32),
            (DType::F32, DType::F64),
            (DType::F16, DType::F32),
            (DType::BF16, DType::F32),
            (DType::F64, DType::F64),
        ] {
            for op in [Op::Sum, Op::Prod] {
                let problem = Problem::new(op, dtype, Some(acc)).expect("valid");
                let dist = if op == Op::Prod {
                    Distribution::Ints
                } else {
                    Distribution::Uniform
                };
                let data = generate(dtype, 2_000_003, dist, 5).expect("fits");
                let input = device.upload(data.view()).expect("upload");
                let got = device
                    .run(&canonical, &problem, &input, &[])
                    .expect("runs")
                    .value;
                let want = cpu.compute(&problem, data.view()).expect("cpu");
                // Bit for bit, except that a NaN's payload is the hardware's (x86 and NVIDIA
                // produce different default NaNs); a NaN must still be a NaN.
                let both_nan = got
                    .scalar()
                    .zip(want.scalar())
                    .is_some_and(|(g, w)| g.to_f64().is_nan() && w.to_f64().is_nan());
                assert!(
                    both_nan || got.scalar().map(|s| s.bits()) == want.scalar().map(|s| s.bits()),
                    "{name} {problem}: got {got}, want {want}"
                );
            }
        }
    }
}

#[test]
fn a_kernel_that_does_not_build_reports_the_compiler_log() {
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let mut variant = registry::find("reduce2").expect("registered");
    // A parameter value the kernel cannot take: WG=3 leaves `WG / 2` trees wrong but
    // builds; a non-numeric define does not build.
    variant.params = &[redlab_kernels::registry::Param {
        name: "WG",
        default: 0,
        values: &[],
        applies: redlab_kernels::registry::Applies::Always,
        range: (0, 1024),
        power_of_two: false,
    }];
    let problem = Problem::new(Op::Sum, DType::I32, None).expect("valid");
    let data = generate(DType::I32, 1000, Distribution::Ints, 1).expect("fits");
    let input = device.upload(data.view()).expect("upload");
    match device.run(&variant, &problem, &input, &[]) {
        Err(RunError::Build(log)) => assert!(!log.trim().is_empty()),
        Err(RunError::Skipped(_)) | Err(RunError::Device(_)) => {}
        Ok(run) => panic!("a zero-sized work-group ran and gave {:?}", run.value),
    }
}
