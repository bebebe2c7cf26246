//! Where the time of one waited-for axis reduction goes outside its kernels: the
//! device-event time per call of an f32 sum along an axis (`enqueue_outputs`, the stream
//! path) over an input that stays on the device, as a framework's per-call timing sees
//! it, and the same call when the whole input is copied from pageable host memory
//! before each call (as `redlab run --repeat` uploads it), the copy outside the events.
//! A difference between the two columns is a cost of the upload's aftermath, not of the
//! reduction.
//!
//!     cargo run --release -p redlab-cuda --example resident_per_call -- 8192x8192:0 16777216x8:0

use cudarc::driver::result;
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{DType, Op, Problem};
use redlab_cuda::CudaDevice;
use redlab_kernels::segments::SegmentJob;

#[path = "support/event_timing.rs"]
mod event_timing;
use event_timing::event_per_call;

/// `ROWSxCOLS:AXIS` as dimensions and the reduced axis.
fn parse(spec: &str) -> ([usize; 2], isize) {
    let (dims, axis) = spec.split_once(':').expect("ROWSxCOLS:AXIS");
    let (rows, cols) = dims.split_once('x').expect("ROWSxCOLS");
    (
        [rows.parse().expect("rows"), cols.parse().expect("cols")],
        axis.parse().expect("axis"),
    )
}

fn main() {
    let specs: Vec<String> = std::env::args().skip(1).collect();
    let shapes: Vec<([usize; 2], isize)> = if specs.is_empty() {
        vec![([8192, 8192], 0), ([16_777_216, 8], 0), ([64, 8], 0)]
    } else {
        specs.iter().map(|s| parse(s)).collect()
    };
    let device = CudaDevice::open(0).expect("cuda:0");
    let max_wg = device.capabilities().max_work_group;
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("problem");
    let stream = result::stream::create(result::stream::StreamKind::NonBlocking).expect("stream");
    let most = shapes
        .iter()
        .map(|(d, _)| d[0] * d[1] * 4)
        .max()
        .unwrap_or(4);
    let input = unsafe { result::malloc_sync(most) }.expect("alloc");
    // Small floats in pageable memory, so sums stay finite; the values do not matter.
    let host: Vec<u8> = (0..most / 4)
        .flat_map(|i| (((i * 7919) % 1000) as f32 / 1000.0).to_le_bytes())
        .collect();
    let calls = 200;
    println!("| f32 sum | resident µs per call | after an upload µs per call |");
    println!("|---|---:|---:|");
    for (dims, axis) in shapes {
        let bytes = dims[0] * dims[1] * 4;
        let plan = AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
        let job = SegmentJob::new(Selection::Axes(&plan))
            .expect("job")
            .for_device(max_wg)
            .for_problem(&problem);
        let result_bytes = job.outputs() * 4;
        let out = unsafe { result::malloc_sync(result_bytes.max(16)) }.expect("alloc");
        let call = || {
            // SAFETY: the input holds every element; the result array has room.
            unsafe {
                device.enqueue_outputs(&problem, input, &job, stream as u64, out, result_bytes)
            }
            .expect("enqueue");
        };
        let upload = || {
            // SAFETY: `bytes` of device memory at `input`; the source outlives the copy,
            // which a pageable source makes synchronous.
            unsafe { result::memcpy_htod_async(input, &host[..bytes], stream) }.expect("copy");
        };
        let resident = event_per_call(stream, calls, || {}, call);
        let uploaded = event_per_call(stream, calls.min(50), upload, call);
        println!(
            "| {}x{} axis {axis} | {resident:.1} | {uploaded:.1} |",
            dims[0], dims[1]
        );
    }
}
