//! The CPU backend against the host reference: every operator × type × accumulator on
//! edge sizes, floats bit for bit at several thread counts, special values, and
//! property-based random inputs.

use half::{bf16, f16};
use proptest::prelude::*;
use redlab_core::canonical::{LANES, TILE};
use redlab_core::generate::{generate, Distribution};
use redlab_core::{acc, reference, ArrayRef, DType, HostArray, Op, Problem, Scalar, Value};
use redlab_cpu::CpuBackend;

/// 0, 1, 2, small primes, 2^k ± 1 around the lane and tile sizes, and ~10^6.
fn edge_sizes() -> Vec<usize> {
    let mut sizes = vec![0, 1, 2, 3, 5, 7, 13, 31, 97, 1009];
    for base in [LANES, TILE, 2 * TILE, 8 * TILE, 16 * TILE, 1 << 16] {
        sizes.extend([base - 1, base, base + 1]);
    }
    sizes.extend([1_000_003]);
    sizes
}

fn problems() -> Vec<Problem> {
    let mut all = Vec::new();
    for op in Op::ALL {
        for dtype in DType::ALL {
            if op.check_dtype(dtype).is_err() {
                continue;
            }
            for acc in acc::allowed_accs(op, dtype) {
                all.push(Problem::new(op, dtype, Some(acc)).expect("allowed problem"));
            }
        }
    }
    all
}

fn check(cpu: &CpuBackend, problem: &Problem, data: &HostArray, what: &str) {
    let expected = reference::reduce(problem, data.view()).expect("reference runs");
    let got = cpu.compute(problem, data.view()).expect("cpu runs");
    assert!(
        got.same_as(&expected),
        "{problem} n={} {what}: cpu {got:?} != reference {expected:?}",
        data.len()
    );
}

#[test]
fn every_op_type_and_accumulator_matches_on_edge_sizes() {
    let cpu = CpuBackend::new(Some(2)).expect("cpu");
    let problems = problems();
    assert!(
        problems.len() > 60,
        "the matrix must cover every combination"
    );
    for (k, problem) in problems.iter().enumerate() {
        for &n in &edge_sizes() {
            // Small integers keep float products finite and sums exact-ish; normal data
            // exercises rounding. Alternate so both meet every size.
            let dist = if (k + n) % 2 == 0 {
                Distribution::Normal
            } else {
                Distribution::Ints
            };
            let data = generate(problem.dtype, n, dist, 1000 + n as u64).expect("fits");
            check(&cpu, problem, &data, &format!("{dist:?}"));
        }
    }
}

#[test]
fn float_results_do_not_depend_on_thread_count() {
    let backends: Vec<CpuBackend> = [1, 2, 3, 8]
        .iter()
        .map(|&t| CpuBackend::new(Some(t)).expect("cpu"))
        .collect();
    for (dtype, acc) in [
        (DType::F32, DType::F32),
        (DType::F32, DType::F64),
        (DType::F64, DType::F64),
        (DType::F16, DType::F32),
        (DType::BF16, DType::F32),
    ] {
        for op in [Op::Sum, Op::Prod, Op::Min, Op::ArgMax] {
            let problem =
                Problem::new(op, dtype, Some(acc).filter(|_| op.is_arithmetic())).expect("valid");
            for n in [TILE * 37 + 5, 1_000_003] {
                let data = generate(dtype, n, Distribution::Uniform, 42).expect("fits");
                let values: Vec<Value> = backends
                    .iter()
                    .map(|b| b.compute(&problem, data.view()).expect("runs"))
                    .collect();
                for (b, v) in backends.iter().zip(&values) {
                    assert_eq!(
                        v.scalar().map(|s| s.bits()),
                        values[0].scalar().map(|s| s.bits()),
                        "{problem} n={n} threads={}",
                        b.threads()
                    );
                }
                check(&backends[0], &problem, &data, "thread invariance");
            }
        }
    }
}

fn value_of<T: redlab_core::Element>(op: Op, data: &[T]) -> Value {
    let cpu = CpuBackend::new(Some(2)).expect("cpu");
    let problem = Problem::new(op, T::DTYPE, None).expect("valid");
    let got = cpu
        .compute(&problem, ArrayRef::from_slice(data))
        .expect("runs");
    let expected = reference::reduce(&problem, ArrayRef::from_slice(data)).expect("runs");
    assert!(got.same_as(&expected), "{problem}: {got:?} vs {expected:?}");
    got
}

/// Plants `value` at `index` in a large random f32 array.
fn planted(n: usize, index: usize, value: f32) -> Vec<f32> {
    let base = generate(DType::F32, n, Distribution::Uniform, 5).expect("fits");
    let mut data = base.view().typed::<f32>().expect("f32").to_vec();
    data[index] = value;
    data
}

#[test]
fn nan_propagates_and_argmin_reports_the_first_nan() {
    let mut data = planted(300_007, 250_000, f32::NAN);
    data[260_000] = f32::NAN;
    assert!(value_of(Op::Sum, &data)
        .scalar()
        .is_some_and(|s| s.is_nan()));
    assert!(value_of(Op::Max, &data)
        .scalar()
        .is_some_and(|s| s.is_nan()));
    assert_eq!(value_of(Op::ArgMin, &data).index(), Some(250_000));
    assert_eq!(value_of(Op::ArgMax, &data).index(), Some(250_000));
}

#[test]
fn infinities_are_handled() {
    let data = planted(100_003, 77_777, f32::INFINITY);
    assert_eq!(
        value_of(Op::Sum, &data),
        Value::Scalar(Scalar::F32(f32::INFINITY))
    );
    assert_eq!(value_of(Op::ArgMax, &data).index(), Some(77_777));
    let mut both = data.clone();
    both[3] = f32::NEG_INFINITY;
    assert!(value_of(Op::Sum, &both)
        .scalar()
        .is_some_and(|s| s.is_nan()));
    assert_eq!(value_of(Op::ArgMin, &both).index(), Some(3));
}

#[test]
fn negative_zero_is_kept() {
    let v = value_of(Op::Sum, &[-0.0f32]);
    assert_eq!(
        v.scalar().map(|s| s.bits()),
        Some((-0.0f32).to_bits() as u64)
    );
    let v = value_of(Op::Sum, &[-0.0f64; TILE + 3]);
    assert_eq!(v.scalar().map(|s| s.bits()), Some((-0.0f64).to_bits()));
    let v = value_of(Op::Min, &[0.0f32, -0.0, 0.0]);
    assert_eq!(
        v.scalar().map(|s| s.bits()),
        Some((-0.0f32).to_bits() as u64)
    );
    assert_eq!(value_of(Op::ArgMax, &[-0.0f32, 0.0, -0.0]).index(), Some(1));
    assert_eq!(
        value_of(Op::Sum, &[] as &[f32]),
        Value::Scalar(Scalar::F32(0.0))
    );
}

#[test]
fn integer_sums_wrap_in_the_accumulator() {
    let data = vec![u64::MAX; 100_001];
    // Σ = 100001 · (2^64 − 1) ≡ −100001 (mod 2^64).
    assert_eq!(
        value_of(Op::Sum, &data),
        Value::Scalar(Scalar::U64(0u64.wrapping_sub(100_001)))
    );
    let cpu = CpuBackend::new(Some(2)).expect("cpu");
    let problem = Problem::new(Op::Sum, DType::I32, Some(DType::I32)).expect("valid");
    let data = vec![i32::MAX; 70_000];
    let got = cpu
        .compute(&problem, ArrayRef::from_slice(&data))
        .expect("runs");
    assert_eq!(
        got,
        Value::Scalar(Scalar::I32(i32::MAX.wrapping_mul(70_000)))
    );
    let wide = Problem::new(Op::Sum, DType::I32, None).expect("valid");
    let got = cpu
        .compute(&wide, ArrayRef::from_slice(&data))
        .expect("runs");
    assert_eq!(got, Value::Scalar(Scalar::I64(i32::MAX as i64 * 70_000)));
}

#[test]
fn empty_input_has_no_extreme() {
    for op in [Op::Min, Op::Max, Op::ArgMin, Op::ArgMax] {
        assert_eq!(value_of(op, &[] as &[u16]), Value::Empty);
        assert_eq!(value_of(op, &[] as &[bf16]), Value::Empty);
    }
    assert_eq!(
        value_of(Op::Prod, &[] as &[i8]),
        Value::Scalar(Scalar::I64(1))
    );
    assert_eq!(
        value_of(Op::And, &[] as &[u8]),
        Value::Scalar(Scalar::U8(u8::MAX))
    );
    assert_eq!(
        value_of(Op::Sum, &[] as &[f16]),
        Value::Scalar(Scalar::F32(0.0))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_f32_arrays_match_bit_for_bit(data in prop::collection::vec(-1.0e6f32..1.0e6, 0..40_000)) {
        for op in [Op::Sum, Op::Prod, Op::Min, Op::ArgMin] {
            let cpu = CpuBackend::new(Some(3)).expect("cpu");
            let problem = Problem::new(op, DType::F32, None).expect("valid");
            let got = cpu.compute(&problem, ArrayRef::from_slice(&data)).expect("runs");
            let expected = reference::reduce(&problem, ArrayRef::from_slice(&data)).expect("runs");
            prop_assert!(got.same_as(&expected), "{} {:?} {:?}", op, got, expected);
        }
    }

    #[test]
    fn random_i64_arrays_match_exactly(data in prop::collection::vec(any::<i64>(), 0..20_000)) {
        let cpu = CpuBackend::new(Some(2)).expect("cpu");
        for op in [Op::Sum, Op::Prod, Op::Xor, Op::Max, Op::ArgMax] {
            let problem = Problem::new(op, DType::I64, None).expect("valid");
            let got = cpu.compute(&problem, ArrayRef::from_slice(&data)).expect("runs");
            let expected = reference::reduce(&problem, ArrayRef::from_slice(&data)).expect("runs");
            prop_assert_eq!(got, expected);
        }
    }
}

#[test]
fn f16_sums_of_every_finite_half_match_the_reference() {
    // Every finite f16 (subnormals and both zeros included), in a scrambled order, so the
    // whole-row conversion (F16C where the CPU has it) meets every bit pattern the
    // bit-level conversion of the reference does; prefixes of several lengths cover
    // partial rows and tiles.
    let mut values: Vec<f16> = (0..=u16::MAX)
        .map(f16::from_bits)
        .filter(|h| h.is_finite())
        .collect();
    let len = values.len();
    for i in 0..len {
        values.swap(i, (i * 7919 + 13) % len);
    }
    for n in [255, 256, 1000, 8192, 8193, len] {
        // value_of holds the CPU's sum to the reference's bits.
        value_of(Op::Sum, &values[..n]);
    }
}
