//! probe: var and sum of the same columns, alternating
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{ArrayRef, DType, Op, Problem};
use std::time::Instant;
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let (rows, cols, srows, scols) = (args[0], args[1], args[2], args[3]);
    let cpu = redlab_cpu::CpuBackend::new(None).unwrap();
    let mut x = 1u32;
    let mut gen = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                (x >> 8) as f32 / 1e7 - 0.8
            })
            .collect()
    };
    let data = gen(rows * cols);
    let other = gen(srows * scols);
    let plan = AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[0]), false).unwrap();
    let splan = AxisPlan::new(Layout::c_order(&[srows, scols]), Some(&[0]), false).unwrap();
    let problem = Problem::new(Op::Sum, DType::F32, None).unwrap();
    let stat = redlab_cpu::statistics::Statistic::parse("var", 0.0).unwrap();
    for alternate in [false, true, false, true] {
        let mut best = f64::MAX;
        for _ in 0..300 {
            if alternate {
                std::hint::black_box(
                    cpu.compute_outputs_packed(
                        &problem,
                        ArrayRef::from_slice(&other),
                        Selection::Axes(&splan),
                    )
                    .unwrap(),
                );
            }
            let t = Instant::now();
            std::hint::black_box(
                cpu.statistic(stat, ArrayRef::from_slice(&data), Selection::Axes(&plan))
                    .unwrap(),
            );
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "var {rows}x{cols} best {:.1} us, {} a sum of {srows}x{scols} between calls",
            best * 1e6,
            if alternate { "with" } else { "without" }
        );
    }
}
