//! var, std, logsumexp and the NaN-skipping statistics on the CPU: the same bits at any
//! thread count and whatever else is reduced in the call; close to the plain two-pass
//! methods; numpy's rules for NaN, infinities and empty outputs.

use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{ArrayRef, DType, Value};
use redlab_cpu::statistics::{reference, Statistic};
use redlab_cpu::CpuBackend;

const ALL: [Statistic; 6] = [
    Statistic::Var { ddof: 0.0 },
    Statistic::Std { ddof: 1.0 },
    Statistic::LogSumExp,
    Statistic::NanMin,
    Statistic::NanMax,
    Statistic::NanMean,
];

fn whole(cpu: &CpuBackend, stat: Statistic, data: ArrayRef<'_>) -> Value {
    // One segment: the whole array.
    let range = std::slice::from_ref(&(0..data.len())).to_vec();
    cpu.statistic(stat, data, Selection::Ranges(&range))
        .expect("computes")
        .remove(0)
}

fn close(a: &Value, b: &Value, tolerance: f64) -> bool {
    match (a.scalar(), b.scalar()) {
        (Some(x), Some(y)) => {
            let (x, y) = (x.to_f64(), y.to_f64());
            (x.is_nan() && y.is_nan())
                || x == y
                || (x - y).abs() <= tolerance * x.abs().max(y.abs())
        }
        _ => a.same_as(b),
    }
}

#[test]
fn bits_do_not_depend_on_threads_and_values_are_close_to_two_pass() {
    let one = CpuBackend::new(Some(1)).expect("cpu");
    let two = CpuBackend::new(Some(2)).expect("cpu");
    for (dtype, tolerance) in [(DType::F64, 1e-9), (DType::F32, 1e-5), (DType::I32, 1e-9)] {
        for n in [1usize, 2, 7, 1023, 8193, 65537, 300_007] {
            let data = generate(dtype, n, Distribution::Normal, n as u64).expect("data");
            for stat in ALL {
                let a = whole(&one, stat, data.view());
                let b = whole(&two, stat, data.view());
                assert!(a.same_as(&b), "{stat:?} {dtype} n={n}: {a} vs {b}");
                let expected = reference(stat, data.view()).expect("reference");
                assert!(
                    close(&a, &expected, tolerance),
                    "{stat:?} {dtype} n={n}: {a} vs {expected}"
                );
            }
        }
    }
}

#[test]
fn each_row_has_the_bits_of_its_own_reduction() {
    let cpu = CpuBackend::new(None).expect("cpu");
    let (rows, cols) = (37, 1031);
    let data = generate(DType::F64, rows * cols, Distribution::Normal, 5).expect("data");
    let plan = AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[1]), false).expect("plan");
    for stat in ALL {
        let values = cpu
            .statistic(stat, data.view(), Selection::Axes(&plan))
            .expect("computes");
        for (k, v) in values.iter().enumerate() {
            let row = data.view().slice(k * cols, (k + 1) * cols);
            assert!(v.same_as(&whole(&cpu, stat, row)), "{stat:?} row {k}");
        }
    }
    // Columns go through the gathered path and still match their own reductions.
    let plan = AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[0]), false).expect("plan");
    let values = cpu
        .statistic(
            Statistic::Var { ddof: 0.0 },
            data.view(),
            Selection::Axes(&plan),
        )
        .expect("computes");
    let column: Vec<f64> = (0..rows)
        .map(|r| data.view().typed::<f64>().expect("f64")[r * cols + 3])
        .collect();
    assert!(values[3].same_as(&whole(
        &cpu,
        Statistic::Var { ddof: 0.0 },
        ArrayRef::from_slice(&column)
    )));
}

#[test]
fn special_values_follow_numpy() {
    let cpu = CpuBackend::new(None).expect("cpu");
    let f = |stat, v: &[f64]| {
        whole(&cpu, stat, ArrayRef::from_slice(v))
            .scalar()
            .map(|s| s.to_f64())
    };
    assert!(f(Statistic::Var { ddof: 0.0 }, &[]).expect("nan").is_nan());
    assert!(f(Statistic::Var { ddof: 1.0 }, &[3.0])
        .expect("nan")
        .is_nan());
    assert_eq!(f(Statistic::Var { ddof: 0.0 }, &[3.0]), Some(0.0));
    assert!(f(Statistic::Var { ddof: 0.0 }, &[1.0, f64::NAN])
        .expect("nan")
        .is_nan());
    assert_eq!(f(Statistic::LogSumExp, &[]), Some(f64::NEG_INFINITY));
    assert!(f(Statistic::NanMax, &[f64::NAN, f64::NAN])
        .expect("nan")
        .is_nan());
    assert_eq!(f(Statistic::NanMax, &[f64::NAN, 2.0, -1.0]), Some(2.0));
    assert_eq!(f(Statistic::NanMin, &[f64::NAN, 2.0, -1.0]), Some(-1.0));
    assert_eq!(f(Statistic::NanMean, &[f64::NAN, 2.0, 4.0]), Some(3.0));
    assert!(f(Statistic::NanMean, &[f64::NAN]).expect("nan").is_nan());
    assert_eq!(
        whole(&cpu, Statistic::NanMin, ArrayRef::from_slice::<f64>(&[])),
        Value::Empty
    );
    // Integers keep their type for nanmin/nanmax.
    let ints = [5i32, -7, 9];
    assert_eq!(
        whole(&cpu, Statistic::NanMin, ArrayRef::from_slice(&ints)).to_string(),
        "-7"
    );
}
