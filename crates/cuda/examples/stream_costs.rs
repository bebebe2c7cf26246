//! Host cost of the driver calls a stream-path reduction makes, per call, on the legacy
//! default stream and on a stream of our own: a kernel launch, a 4-byte device-to-device
//! copy, an 8-byte memset, a context bind; and for each length given, the stream path's
//! own `enqueue_reduce` of an f32 sum (what the Python package's torch fast path calls,
//! without Python), so the difference from the bare launch is what redlab adds. Calls
//! run back to back with one synchronize per batch, as a pipelined caller runs them;
//! each row is the median of 7 batches. Used to decide how the stream path hands its
//! result over.
//!
//!     cargo run --release -p redlab-cuda --example stream_costs -- 1024 16384

use cudarc::driver::{result, sys};
use redlab_core::{DType, Op, Problem};
use redlab_cuda::{compile, CudaDevice, Landing};

#[path = "support/host_timing.rs"]
mod host_timing;

const SOURCE: &str = r#"extern "C" __global__ void copy_result(const unsigned char* src, unsigned char* dst, unsigned long long n) {
    if (threadIdx.x < n) dst[threadIdx.x] = src[threadIdx.x];
}"#;

/// Prints the median host microseconds per call of `f` (and the batches' range).
fn per_call(label: &str, calls: usize, f: impl FnMut()) {
    let batches = host_timing::host_batches(7, calls, f);
    println!(
        "{label:<48} {:7.2} µs per call (host; batches {:.2}–{:.2})",
        batches[3], batches[0], batches[6]
    );
}

fn main() {
    let lengths: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a length"))
        .collect();
    let device = CudaDevice::open(0).expect("cuda:0");
    let arch = device.query().arch();
    // SAFETY: the primary context retained by `open` is made current for this thread.
    let ctx = unsafe { result::primary_ctx::retain(result::device::get(0).expect("device")) }
        .expect("context");
    unsafe { result::ctx::set_current(ctx) }.expect("current");
    let ptx = compile::compile(SOURCE, "copy.cu", &arch).expect("compiles");
    // SAFETY: NUL-terminated PTX.
    let module = unsafe { result::module::load_data(ptx.as_ptr().cast()) }.expect("module");
    let copy =
        unsafe { result::module::get_function(module, c"copy_result".into()) }.expect("function");
    let src = unsafe { result::malloc_sync(64) }.expect("alloc");
    let dst = unsafe { result::malloc_sync(64) }.expect("alloc");
    let longest = lengths.iter().copied().max().unwrap_or(0);
    // SAFETY: a fresh allocation of `longest` f32, filled before use.
    let input = unsafe { result::malloc_sync(longest.max(1) * 4) }.expect("alloc");
    unsafe { result::memset_d8_sync(input, 0x3f, longest.max(1) * 4) }.expect("fill");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("problem");
    let own = result::stream::create(result::stream::StreamKind::NonBlocking).expect("stream");
    for (name, stream) in [("legacy default", std::ptr::null_mut()), ("own", own)] {
        let calls = 20_000;
        per_call(&format!("launch 1×32 threads, {name}"), calls, || {
            let (mut a, mut b, mut n) = (src, dst, 4u64);
            let mut params = [
                (&mut a as *mut u64).cast(),
                (&mut b as *mut u64).cast(),
                (&mut n as *mut u64).cast(),
            ];
            // SAFETY: three parameters matching the kernel's signature.
            unsafe { result::launch_kernel(copy, (1, 1, 1), (32, 1, 1), 0, stream, &mut params) }
                .expect("launch");
        });
        per_call(&format!("cuMemcpyDtoDAsync 4 B, {name}"), calls, || {
            // SAFETY: both buffers hold 64 bytes.
            unsafe { result::memcpy_dtod_async(dst, src, 4, stream as sys::CUstream) }
                .expect("copy");
        });
        per_call(&format!("cuMemsetD8Async 8 B, {name}"), calls, || {
            // SAFETY: the buffer holds 64 bytes.
            unsafe { result::memset_d8_async(dst, 0, 8, stream as sys::CUstream) }.expect("memset");
        });
        per_call(&format!("cuCtxSetCurrent, {name}"), calls, || {
            // SAFETY: the retained primary context.
            unsafe { result::ctx::set_current(ctx) }.expect("current");
        });
        for &n in &lengths {
            per_call(
                &format!("enqueue_reduce f32 sum n={n}, {name}"),
                calls,
                || {
                    // SAFETY: `input` holds `longest >= n` f32 of this device and `dst` room
                    // for the result; both outlive the synchronize that ends each batch.
                    unsafe {
                        device.enqueue_reduce(
                            &problem,
                            input,
                            n,
                            stream as sys::CUstream as u64,
                            Landing::Result(dst),
                        )
                    }
                    .expect("enqueue");
                },
            );
        }
    }
}
