//! What many small outputs cost on the host: a row reduction with millions of outputs,
//! once turned into a value per output and then packed (`compute_outputs` and
//! `Packed::of_values`, the way typed results were made before) and once decoded
//! straight into the typed array (`compute_outputs_packed`). Both run the same kernels;
//! the difference is host work after the device is done.
//!
//! `cargo run --release -p redlab-opencl --example outputs_host_cost -- [ROWS] [LEN] [ROUNDS]`
//! on the first OpenCL device; prints the median wall time of each way and their ratio,
//! and checks that both give the same bytes.

use std::time::Instant;

use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{DType, Op, Packed, Problem};
use redlab_opencl::OpenClDevice;

fn median(mut seconds: Vec<f64>) -> f64 {
    seconds.sort_by(f64::total_cmp);
    seconds[seconds.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let rows = args.next().transpose()?.unwrap_or(1 << 22);
    let len = args.next().transpose()?.unwrap_or(4);
    let rounds = args.next().transpose()?.unwrap_or(7);
    let device = OpenClDevice::open(0)?;
    for (op, dtype) in [
        (Op::Sum, DType::F32),
        (Op::Max, DType::F32),
        (Op::Sum, DType::I32),
    ] {
        let problem = Problem::new(op, dtype, None)?;
        let data = generate(dtype, rows * len, Distribution::Normal, 7)?;
        let plan = AxisPlan::new(Layout::c_order(&[rows, len]), Some(&[1]), false)?;
        let selection = Selection::Axes(&plan);
        let (mut via_values, mut direct) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let start = Instant::now();
            let (values, _) = device.compute_outputs(&problem, data.view(), selection)?;
            let a = Packed::of_values(&problem, &values)?;
            via_values.push(start.elapsed().as_secs_f64());
            let start = Instant::now();
            let (b, _) = device.compute_outputs_packed(&problem, data.view(), selection)?;
            direct.push(start.elapsed().as_secs_f64());
            assert_eq!(a, b, "{problem}: the two ways disagree");
        }
        let (a, b) = (median(via_values), median(direct));
        println!(
            "{problem} {rows}x{len} axis 1: values then packed {:.2} ms, packed directly {:.2} ms, {:.2}x",
            a * 1e3,
            b * 1e3,
            a / b
        );
    }
    Ok(())
}
