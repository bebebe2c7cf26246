//! probe: the library call behind a Python `Reduction(map="x * y")(x, y)` and
//! `redlab.sum(x)` over 1000 f32, best of 7 rounds of 20000 calls.
use redlab::{ArrayRef, DType, Device, Op, Problem, Reduction};
use std::time::Instant;
fn main() {
    let n = 1000;
    let mut s = 1u32;
    let x: Vec<f32> = (0..n)
        .map(|_| {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 / 1e7 - 0.8
        })
        .collect();
    let y: Vec<f32> = x.iter().rev().copied().collect();
    let device = Device::open("cpu", None).unwrap();
    let reduction = Reduction::builder("x * y", "sum")
        .build(&[DType::F32, DType::F32])
        .unwrap();
    let xb: &[u8] = bytemuck::cast_slice(&x);
    let yb: &[u8] = bytemuck::cast_slice(&y);
    let problem = Problem::new(Op::Sum, DType::F32, None).unwrap();
    let time = |label: &str, f: &dyn Fn()| {
        let mut best = f64::MAX;
        for _ in 0..7 {
            let t = Instant::now();
            for _ in 0..20000 {
                f();
            }
            best = best.min(t.elapsed().as_secs_f64() / 20000.0);
        }
        println!("{label} {:.2} us", best * 1e6);
    };
    time("library reduce_mapped x*y", &|| {
        let data = [
            ArrayRef::from_bytes(DType::F32, xb).unwrap(),
            ArrayRef::from_bytes(DType::F32, yb).unwrap(),
        ];
        std::hint::black_box(device.reduce_mapped(&reduction, &data).unwrap());
    });
    time("library reduce sum", &|| {
        let data = ArrayRef::from_bytes(DType::F32, xb).unwrap();
        std::hint::black_box(device.reduce(&problem, data).unwrap());
    });
}
