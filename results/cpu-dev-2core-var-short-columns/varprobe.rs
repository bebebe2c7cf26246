//! probe: var (or STAT) along axis 0 of R x C f32, the library call (`CpuBackend::statistic`, one
//! `Value` per column, and `statistic_packed`, one typed array), best of REPS.
//! Usage (as an example of the redlab-cpu crate): varprobe R C REPS [THREADS];
//! ONLY_PACKED=1 skips the `Value` call.
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{ArrayRef, DType};
use std::time::Instant;
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let (rows, cols, reps) = (args[0], args[1], args[2]);
    let threads = args.get(3).copied();
    let cpu = redlab_cpu::CpuBackend::new(threads).unwrap();
    let mut x = 1u32;
    let data: Vec<f32> = (0..rows * cols)
        .map(|_| {
            x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            (x >> 8) as f32 / 1e7 - 0.8
        })
        .collect();
    let plan = AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[0]), false).unwrap();
    let name = std::env::var("STAT").unwrap_or_else(|_| "var".into());
    let stat = redlab_cpu::statistics::Statistic::parse(&name, 0.0).unwrap();
    let bytes: &[u8] = bytemuck::cast_slice(&data);
    for packed in [std::env::var("ONLY_PACKED").is_ok(), true] {
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            let a = ArrayRef::from_bytes(DType::F32, bytes).unwrap();
            if packed {
                std::hint::black_box(cpu.statistic_packed(stat, a, Selection::Axes(&plan)));
            } else {
                std::hint::black_box(cpu.statistic(stat, a, Selection::Axes(&plan)).unwrap());
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name} {rows}x{cols} axis 0 packed={packed}: {:.1} us",
            best * 1e6
        );
    }
}
