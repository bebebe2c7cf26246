//! Host cost of the driver calls a stream-path reduction makes, per call, on the legacy
//! default stream and on a stream of our own: a kernel launch, a 4-byte device-to-device
//! copy, an 8-byte memset. Used to decide how the stream path hands its result over.
//!
//!     cargo run --release -p redlab-cuda --example stream_costs

use std::time::Instant;

use cudarc::driver::{result, sys};
use redlab_cuda::{compile, CudaDevice};

const SOURCE: &str = r#"extern "C" __global__ void copy_result(const unsigned char* src, unsigned char* dst, unsigned long long n) {
    if (threadIdx.x < n) dst[threadIdx.x] = src[threadIdx.x];
}"#;

fn per_call(label: &str, calls: usize, mut f: impl FnMut()) {
    f();
    result::ctx::synchronize().expect("synchronize");
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    let host = start.elapsed().as_secs_f64() / calls as f64;
    result::ctx::synchronize().expect("synchronize");
    println!("{label:<40} {:8.2} µs per call (host)", host * 1e6);
}

fn main() {
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
    }
}
