//! Host cost per call of the stream path's `enqueue_reduce` (what the Python package's
//! torch fast path calls, without Python), next to a bare launch of a one-warp kernel:
//! calls back to back, one synchronize per batch, as a pipelined caller runs them. The
//! difference is what redlab adds to the driver's launch.
//!
//!     cargo run --release -p redlab-cuda --example enqueue_costs -- 1024 16384

use std::time::Instant;

use cudarc::driver::{result, sys};
use redlab_core::{DType, Op, Problem};
use redlab_cuda::{compile, CudaDevice, Landing};

const SOURCE: &str = r#"extern "C" __global__ void touch(const float* src, float* dst, unsigned long long n) {
    if (threadIdx.x == 0 && n == 0) dst[0] = src[0];
}"#;

/// Median host microseconds per call over 7 batches of `calls`.
fn per_call(label: &str, calls: usize, mut f: impl FnMut()) {
    f();
    result::ctx::synchronize().expect("synchronize");
    let mut batches: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            let host = start.elapsed().as_secs_f64() / calls as f64;
            result::ctx::synchronize().expect("synchronize");
            host * 1e6
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    println!(
        "{label:<48} {:7.2} µs per call (host; batches {:.2}–{:.2})",
        batches[3], batches[0], batches[6]
    );
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a length"))
        .collect();
    let device = CudaDevice::open(0).expect("cuda:0");
    let arch = device.query().arch();
    // SAFETY: the primary context retained by `open` is made current for this thread.
    let ctx = unsafe { result::primary_ctx::retain(result::device::get(0).expect("device")) }
        .expect("context");
    unsafe { result::ctx::set_current(ctx) }.expect("current");
    let ptx = compile::compile(SOURCE, "touch.cu", &arch).expect("compiles");
    // SAFETY: NUL-terminated PTX.
    let module = unsafe { result::module::load_data(ptx.as_ptr().cast()) }.expect("module");
    let touch = unsafe { result::module::get_function(module, c"touch".into()) }.expect("function");
    let largest = sizes.iter().copied().max().unwrap_or(1024);
    // SAFETY: fresh allocations of the sizes used below.
    let input = unsafe { result::malloc_sync(largest * 4) }.expect("alloc");
    let out = unsafe { result::malloc_sync(64) }.expect("alloc");
    unsafe { result::memset_d8_sync(input, 0x3f, largest * 4) }.expect("fill");
    let own = result::stream::create(result::stream::StreamKind::NonBlocking).expect("stream");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("problem");
    let calls = 20_000;
    for (name, stream) in [("legacy default", std::ptr::null_mut()), ("own", own)] {
        per_call(&format!("bare launch 1×32, {name}"), calls, || {
            let (mut a, mut b, mut n) = (input, out, 1u64);
            let mut params = [
                (&mut a as *mut u64).cast(),
                (&mut b as *mut u64).cast(),
                (&mut n as *mut u64).cast(),
            ];
            // SAFETY: three parameters matching the kernel's signature.
            unsafe { result::launch_kernel(touch, (1, 1, 1), (32, 1, 1), 0, stream, &mut params) }
                .expect("launch");
        });
        per_call(&format!("cuCtxSetCurrent, {name}"), calls, || {
            // SAFETY: the retained primary context.
            unsafe { result::ctx::set_current(ctx) }.expect("current");
        });
        for &n in &sizes {
            per_call(
                &format!("enqueue_reduce f32 sum n={n}, {name}"),
                calls,
                || {
                    // SAFETY: `input` holds `largest >= n` f32 on this device, `out` room for
                    // the result; both outlive the synchronize that ends each batch.
                    unsafe {
                        device.enqueue_reduce(
                            &problem,
                            input,
                            n,
                            stream as sys::CUstream as u64,
                            Landing::Result(out),
                        )
                    }
                    .expect("enqueue");
                },
            );
        }
    }
}
