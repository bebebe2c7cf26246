//! Runs every variant once on opencl:0 for one problem and prints the outcome.

use redlab_core::generate::{generate, Distribution};
use redlab_core::{reference, DType, Op, Problem};
use redlab_kernels::registry;
use redlab_opencl::OpenClDevice;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let op: Op = args.get(1).map_or(Ok(Op::Sum), |s| s.parse())?;
    let dtype: DType = args.get(2).map_or(Ok(DType::I32), |s| s.parse())?;
    let n: usize = args.get(3).map_or(Ok(100_003), |s| s.parse())?;
    let device = OpenClDevice::open(0)?;
    let problem = Problem::new(op, dtype, None)?;
    let data = generate(dtype, n, Distribution::Ints, 3)?;
    let expected = reference::reduce(&problem, data.view())?;
    let input = device.upload(data.view()).map_err(|e| e.to_string())?;
    for variant in registry::all() {
        let start = std::time::Instant::now();
        match device.run(&variant, &problem, &input, &[]) {
            Ok(run) => println!(
                "{:<24} {} {:?} (expected {}) {:?} wall {:?}",
                variant.name,
                if run.value.same_as(&expected) {
                    "OK   "
                } else {
                    "WRONG"
                },
                run.value,
                expected,
                run.passes,
                start.elapsed()
            ),
            Err(e) => println!("{:<24} {e}", variant.name),
        }
    }
    Ok(())
}
