//! Checks the stream path (`enqueue_outputs`, which the Python package takes for CUDA
//! tensors) on a GPU: for shapes that reach each row and column kernel, the typed
//! result array it writes in device memory must equal the host reference's, bit for bit.
//! Prints one line per case and exits non-zero on any difference.
//!
//!     cargo run --release -p redlab-cuda --example stream_check

use cudarc::driver::result;
use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::{self, Selection};
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{DType, Op, Packed, Problem};
use redlab_cuda::CudaDevice;
use redlab_kernels::segments::SegmentJob;

fn main() {
    let device = CudaDevice::open(0).expect("cuda:0");
    let max_wg = device.capabilities().max_work_group;
    let stream = result::stream::create(result::stream::StreamKind::NonBlocking).expect("stream");
    let shapes: [(&[usize], isize); 8] = [
        (&[1001, 32], 1),
        (&[4097, 16], 1),
        (&[999, 8], 1),
        (&[131, 64], 1),
        (&[3, 43, 16], 2),
        (&[5000, 31], 1),
        (&[300, 1000], 1),
        (&[9000, 136], 0),
    ];
    let problems = [
        (Op::Sum, DType::F32),
        (Op::Max, DType::F32),
        (Op::Min, DType::I32),
        (Op::Sum, DType::I32),
        (Op::Xor, DType::U32),
        (Op::Sum, DType::F64),
    ];
    let mut failures = 0;
    for (dims, axis) in shapes {
        for (op, dtype) in problems {
            let problem = Problem::new(op, dtype, None).expect("problem");
            let n: usize = dims.iter().product();
            let data = generate(dtype, n, Distribution::Normal, 11 + n as u64).expect("data");
            let plan = AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan");
            let selection = Selection::Axes(&plan);
            let expected = segmented::reference(&problem, data.view(), selection).expect("ref");
            let want = Packed::of_values(&problem, &expected).expect("packed");
            let job = SegmentJob::new(selection)
                .expect("job")
                .for_device(max_wg)
                .for_problem(&problem);
            let bytes = data.view().bytes();
            let mut got = vec![0u8; want.bytes.len()];
            // SAFETY: both buffers are allocated with the sizes used below, on the device's
            // primary context, and freed after the stream is synchronized.
            unsafe {
                let input = result::malloc_sync(bytes.len().max(16)).expect("alloc");
                let out = result::malloc_sync(got.len().max(16)).expect("alloc");
                result::memcpy_htod_sync(input, bytes).expect("upload");
                device
                    .enqueue_outputs(&problem, input, &job, stream as u64, out, got.len())
                    .expect("enqueue");
                result::stream::synchronize(stream).expect("wait");
                result::memcpy_dtoh_sync(&mut got, out).expect("read");
                result::free_sync(input).expect("free");
                result::free_sync(out).expect("free");
            }
            let same = got == want.bytes;
            failures += usize::from(!same);
            println!(
                "{} {problem} {dims:?} axis {axis}: {}",
                if same { "ok  " } else { "FAIL" },
                job.explain().split(':').next().unwrap_or("")
            );
        }
    }
    println!("stream path: {failures} failures");
    std::process::exit(i32::from(failures > 0));
}
