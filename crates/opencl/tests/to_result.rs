//! Whole arrays reduced by the production kernel built as the CUDA stream path builds
//! it, its last group storing the finished result (`SEPARATE_RESULT`): argmin/argmax as
//! their index, float min/max as the float their order key stands for (f16/bf16 narrowed
//! exactly), statistics after their `post`. Each stored result is the host's, bit for
//! bit, on the first OpenCL device (PoCL in CI).
//!
//! Without an OpenCL platform the test prints a visible SKIPPED line and passes, unless
//! `REDLAB_REQUIRE_OPENCL=1` (CI sets it).

mod common;

use redlab_core::generate::{generate, Distribution};
use redlab_core::{DType, Op, Problem, Scalar, Value};
use redlab_expr::oracle;
use redlab_kernels::RunError;
use redlab_opencl::OpenClDevice;

fn device() -> Option<OpenClDevice> {
    common::device("OpenCL stored-result tests")
}

const SIZES: &[usize] = &[0, 1, 7, 8193, 300_007];

/// The stored bytes as the scalar a host reduction returns (zero-extended bits).
fn stored_bits(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    raw[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(raw)
}

/// Selections and float min/max store an index or a float from an order key; the other
/// operators their accumulator's bytes. Normal data, and small integers for ties.
#[test]
fn operators_store_their_results_in_the_hosts_form() {
    let Some(device) = device() else { return };
    for dtype in [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::I8,
    ] {
        for op in [Op::ArgMin, Op::ArgMax, Op::Min, Op::Max, Op::Sum] {
            let problem = Problem::new(op, dtype, None).expect("valid");
            for (k, &n) in SIZES.iter().enumerate() {
                for distribution in [Distribution::Normal, Distribution::Ints] {
                    let data = generate(dtype, n, distribution, 60 + k as u64).expect("data");
                    let (result_type, bytes) = match device.reduce_to_result(&problem, data.view())
                    {
                        Err(RunError::Skipped(why)) => {
                            assert!(n == 0, "{problem} n={n}: {why}");
                            continue;
                        }
                        other => other.unwrap_or_else(|e| panic!("{problem} n={n}: {e}")),
                    };
                    assert!(n > 0, "{problem} ran with no elements");
                    let want = redlab_core::reference::reduce(&problem, data.view()).expect("host");
                    let want_bits = match want {
                        Value::Scalar(s) => {
                            assert_eq!(result_type, s.dtype(), "{problem}");
                            s.bits()
                        }
                        Value::Indexed { index, .. } => {
                            assert_eq!(result_type, DType::I64, "{problem}");
                            Scalar::I64(index as i64).bits()
                        }
                        other => panic!("{problem}: {other:?}"),
                    };
                    assert_eq!(
                        stored_bits(&bytes),
                        want_bits,
                        "{problem} n={n} {distribution:?}: device {bytes:?}, host {want:?}"
                    );
                }
            }
        }
    }
}

/// Whole-array statistics finished on the device, with the kernel the CUDA stream path
/// launches (the production kernel applying `post` in its last group): the stored
/// result is the host's statistic bit for bit, in the host's type. Normal data for
/// the float sums' order, small integers for the zeros any/all/count_nonzero look at.
/// norminf's max, held as an order key, is stored as its float; only empty inputs are
/// turned away.
#[test]
fn whole_array_statistics_finish_on_the_device_with_the_hosts_bits() {
    let Some(device) = device() else { return };
    for dtype in [DType::F32, DType::F64, DType::I32, DType::F16] {
        for &name in redlab_expr::stats::NAMES {
            let reduction = redlab_expr::stats::reduction(name, dtype).expect("statistic");
            for (k, &n) in SIZES.iter().enumerate() {
                for distribution in [Distribution::Normal, Distribution::Ints] {
                    let data = generate(dtype, n, distribution, 40 + k as u64).expect("generates");
                    let outcome = device.reduce_whole_to_result(&reduction, data.view());
                    let (result_type, bytes) = match outcome {
                        Err(RunError::Skipped(why)) => {
                            assert!(n == 0, "{name} {dtype} n={n}: {why}");
                            continue;
                        }
                        other => other.unwrap_or_else(|e| panic!("{name} {dtype} n={n}: {e}")),
                    };
                    assert!(n > 0, "{name} {dtype} ran with no elements");
                    let want = oracle::reduce(&reduction, &[data.view()])
                        .expect("reference")
                        .scalar()
                        .expect("a scalar");
                    assert_eq!(result_type, want.dtype(), "{name} {dtype}");
                    assert_eq!(
                        stored_bits(&bytes),
                        want.bits(),
                        "{name} {dtype} n={n} {distribution:?}: device bytes {bytes:?}, host {want}"
                    );
                }
            }
        }
    }
}
