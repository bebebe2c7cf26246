use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{ArrayRef, DType, Op, Problem};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows: usize = args[1].parse().unwrap();
    let cols: usize = args[2].parse().unwrap();
    let axis: isize = args[3].parse().unwrap();
    let reps: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(2000);
    let cpu = redlab_cpu::CpuBackend::new(None).unwrap();
    let mut x = 1u32;
    let data: Vec<f32> = (0..rows * cols).map(|_| { x = x.wrapping_mul(1664525).wrapping_add(1013904223); (x >> 8) as f32 / 1e7 - 0.8 }).collect();
    let plan = AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[axis]), false).unwrap();
    let problem = Problem::new(Op::Sum, DType::F32, None).unwrap();
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        let p = cpu.compute_outputs_packed(&problem, ArrayRef::from_slice(&data), Selection::Axes(&plan)).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(p);
    }
    let stat = redlab_cpu::statistics::Statistic::parse("var", 0.0).unwrap();
    let mut best_var = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        let p = cpu.statistic(stat, ArrayRef::from_slice(&data), Selection::Axes(&plan)).unwrap();
        best_var = best_var.min(t.elapsed().as_secs_f64());
        std::hint::black_box(p);
    }
    println!("{rows}x{cols}:{axis} sum best {:.2} us var {:.2} us", best * 1e6, best_var * 1e6);
}
