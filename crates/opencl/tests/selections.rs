//! The production kernel's order-free selections (order_free.h) on the first OpenCL
//! device (PoCL in CI): argmin/argmax scan order keys per work-item and chunk, so ties
//! must still go to the first index, the first NaN must win wherever it lies, -0.0 must
//! sort below +0.0, and min/max must propagate NaN, for every grid shape (UNROLL,
//! groups per compute unit) and at sizes around the chunk boundaries. Checked against
//! the host reference.

mod common;

use half::{bf16, f16};
use redlab_core::generate::{generate, Distribution};
use redlab_core::{reference, ArrayRef, DType, Op, Problem};
use redlab_kernels::registry;

/// Small integers (many ties) with signed zeros, and NaNs planted by `plant`: none,
/// one late, or an early positive and a later negative NaN (`kind` 0, 1, 2).
fn tied_floats(n: usize, seed: u64, kind: usize) -> Vec<f64> {
    let ints = generate(DType::I32, n, Distribution::Ints, seed).expect("data");
    let ints = ints.view().typed::<i32>().expect("i32").to_vec();
    let mut values: Vec<f64> = ints
        .iter()
        .enumerate()
        .map(|(i, &v)| match v {
            // Zeros of both signs, so the order key (-0.0 below +0.0) decides.
            0 if i % 2 == 1 => -0.0,
            v => v as f64,
        })
        .collect();
    match kind {
        1 if n > 0 => values[n - 1 - n / 5] = -f64::NAN,
        2 if n > 0 => {
            values[n / 3] = f64::NAN;
            values[n - 1] = -f64::NAN;
        }
        _ => {}
    }
    values
}

#[test]
fn order_free_selections_keep_the_first_of_ties_and_the_first_nan() {
    let Some(device) = common::device("order-free selection tests") else {
        return;
    };
    let production = registry::find("production").expect("registered");
    let sizes = [1, 7, 2049, 8191, 8193, 65_537, 300_007];
    let grids = [(4, 1), (8, 8), (32, 2)];
    let mut failures = Vec::new();
    for n in sizes {
        for kind in 0..3 {
            let values = tied_floats(n, 40 + n as u64 + kind as u64, kind);
            let f32s: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            let f16s: Vec<f16> = values.iter().map(|&v| f16::from_f64(v)).collect();
            let bf16s: Vec<bf16> = values.iter().map(|&v| bf16::from_f64(v)).collect();
            // Integers: the same ties, NaNs as extremes of their own.
            let i32s: Vec<i32> = values
                .iter()
                .map(|&v| if v.is_nan() { 1000 } else { v as i32 })
                .collect();
            let u8s: Vec<u8> = values
                .iter()
                .map(|&v| if v.is_nan() { 255 } else { (v + 100.0) as u8 })
                .collect();
            let arrays = [
                ArrayRef::from_slice(&values),
                ArrayRef::from_slice(&f32s),
                ArrayRef::from_slice(&f16s),
                ArrayRef::from_slice(&bf16s),
                ArrayRef::from_slice(&i32s),
                ArrayRef::from_slice(&u8s),
            ];
            for data in arrays {
                let input = device.upload(data).expect("upload");
                for op in [Op::ArgMin, Op::ArgMax, Op::Min, Op::Max] {
                    let problem = Problem::new(op, data.dtype(), None).expect("valid");
                    let expected = reference::reduce(&problem, data).expect("reference");
                    for (unroll, per_cu) in grids {
                        let params = [("UNROLL", unroll), ("GROUPS_PER_CU", per_cu)];
                        match device.run(&production, &problem, &input, &params) {
                            Ok(run) if run.value.same_as(&expected) => {}
                            Ok(run) => failures.push(format!(
                                "{problem} n={n} NaNs {kind} {params:?}: {} want {}",
                                run.value, expected
                            )),
                            Err(e) => failures.push(format!("{problem} n={n} {params:?}: {e}")),
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
