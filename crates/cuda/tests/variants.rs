//! Every variant × operator × type × edge size on the first CUDA device,
//! checked against the host reference: bit for bit for the canonical kernel, exactly for
//! integers and selections, and within the worst-case summation bound for other float
//! sums and products (their order is the strategy's own).
//!
//! Without a CUDA device (CI has none) the tests print a visible SKIPPED line and pass,
//! unless `REDLAB_REQUIRE_CUDA=1`, which turns that into a failure. CI instead compiles
//! every kernel through NVRTC (`redlab check-kernels`). The full matrix runs with
//! `REDLAB_CUDA_FULL=1`; otherwise every variant meets every operator on i32 and f32 and
//! every type on sum and argmax.
//!
//! The matrix itself (sizes, problems, inputs and checks) is
//! `redlab_kernels::conformance`, shared by both GPU backends.

use std::sync::Mutex;

use redlab_core::generate::{generate, Distribution};
use redlab_core::reference;
use redlab_core::{DType, HostArray, Op, Problem};
use redlab_cuda::{CudaDevice, RunError};
use redlab_kernels::{conformance, registry};

/// One test at a time on the device, so that timings and memory do not interfere.
static DEVICE_LOCK: Mutex<()> = Mutex::new(());

/// The device, or `None` after printing why (failing if OpenCL is required).
fn device() -> Option<CudaDevice> {
    match CudaDevice::open(0) {
        Ok(device) => Some(device),
        Err(e) => {
            let required = std::env::var("REDLAB_REQUIRE_CUDA").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "REDLAB_REQUIRE_CUDA=1 but CUDA is not usable: {e}"
            );
            eprintln!("SKIPPED: CUDA tests need a device: {e}");
            None
        }
    }
}

#[test]
fn every_variant_op_and_type_matches_the_reference() {
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let full = std::env::var("REDLAB_CUDA_FULL").is_ok_and(|v| v == "1");
    let problems = conformance::problems(full);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let outcome = conformance::run_matrix(
        &problems,
        workers,
        |data| device.upload(data),
        |variant, problem, input| device.run(variant, problem, input, &[]),
    );
    eprintln!(
        "cuda matrix: {} runs verified, {} variant × problem pairs skipped",
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
    // A zero-sized work-group: the local array `sdata[0]` does not compile.
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

#[test]
fn graph_replay_resets_the_ticket_and_matches() {
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let production = registry::find("production").expect("registered");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
    let inputs: Vec<HostArray> = (0..3)
        .map(|w| generate(DType::F32, 5_000_011, Distribution::Normal, 40 + w).expect("fits"))
        .collect();
    let uploads: Vec<_> = inputs
        .iter()
        .map(|d| device.upload(d.view()).expect("upload"))
        .collect();
    let graph = device
        .graph_run(&production, &problem, &uploads, 7, &[])
        .expect("graph");
    let expected = reference::reduce(&problem, inputs[graph.last_input].view()).expect("ref");
    assert!(
        graph.value.same_as(&expected),
        "{} vs {expected}",
        graph.value
    );
    assert!(graph.seconds_per_reduction > 0.0);
}

#[test]
fn device_resident_inputs_reduce_without_a_copy() {
    let _serial = DEVICE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(device) = device() else { return };
    let problem = Problem::new(Op::Max, DType::I64, None).expect("valid");
    let data = generate(DType::I64, 1_000_003, Distribution::Normal, 8).expect("fits");
    let owned = device.upload(data.view()).expect("upload");
    let ptr = owned.device_ptr().expect("non-empty");
    // SAFETY: `owned` keeps the memory alive and unchanged for this test.
    let borrowed = unsafe { device.device_resident(ptr, data.len(), DType::I64) }.expect("aligned");
    // SAFETY: as above; the misaligned address is refused before any use.
    let misaligned = unsafe { device.device_resident(ptr + 4, 10, DType::I32) };
    assert!(misaligned.is_err());
    let run = device
        .run(
            &registry::find("production").expect("registered"),
            &problem,
            &borrowed,
            &[],
        )
        .expect("runs");
    let expected = reference::reduce(&problem, data.view()).expect("ref");
    assert!(run.value.same_as(&expected));
    assert_eq!(borrowed.upload_s, 0.0);
}
