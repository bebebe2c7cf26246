//! Cost per call of an axis reduction enqueued on a stream (`enqueue_outputs`, the path
//! the Python package takes for CUDA tensors), for small shapes where the host side
//! is most of the call: the host microseconds per call when calls are issued back to
//! back, and the device-event time of one call at a time (as a framework's own
//! per-call timing sees it). Beside them, the driver calls such a call may make: a
//! header copy from pageable and from pinned host memory, and a stream write of one
//! 8-byte word. Used to decide how the job's header reaches the device.
//!
//!     cargo run --release -p redlab-cuda --example axis_costs

use cudarc::driver::{result, sys};
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{DType, Op, Problem};
use redlab_cuda::CudaDevice;
use redlab_kernels::segments::SegmentJob;

#[path = "support/event_timing.rs"]
mod event_timing;
#[path = "support/host_timing.rs"]
mod host_timing;
use host_timing::host_per_call;

fn main() {
    let device = CudaDevice::open(0).expect("cuda:0");
    let max_wg = device.capabilities().max_work_group;
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("problem");
    let stream = result::stream::create(result::stream::StreamKind::NonBlocking).expect("stream");
    let input = unsafe { result::malloc_sync(1 << 24) }.expect("alloc");
    let results = [
        unsafe { result::malloc_sync(1 << 16) }.expect("alloc"),
        unsafe { result::malloc_sync(1 << 16) }.expect("alloc"),
    ];
    // SAFETY: 16 MiB of device memory; the values do not matter for the cost.
    unsafe { result::memset_d8_async(input, 0x3c, 1 << 24, stream) }.expect("memset");
    let calls = 5000;
    println!("| call | host µs per call, back to back | event µs per call |");
    println!("|---|---:|---:|");
    for (dims, axis) in [
        ([1024usize, 64usize], 1isize),
        ([1024, 64], 0),
        ([64, 1024], 1),
    ] {
        let plan = AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
        let job = SegmentJob::new(Selection::Axes(&plan))
            .expect("job")
            .for_device(max_wg)
            .for_problem(&problem);
        let bytes = job.outputs() * 4;
        // Alternating result arrays, as a loop that keeps the last result does.
        let mut k = 0;
        let mut call = || {
            k += 1;
            // SAFETY: the input holds every element; each result array has room.
            unsafe {
                device.enqueue_outputs(&problem, input, &job, stream as u64, results[k % 2], bytes)
            }
            .expect("enqueue");
        };
        let host = host_per_call(calls, &mut call);
        let event = event_timing::event_per_call(stream, calls, || {}, &mut call);
        let what = format!(
            "enqueue_outputs sum f32 {}x{} axis {axis}",
            dims[0], dims[1]
        );
        println!("| {what} | {host:.2} | {event:.2} |");
        let host_plan = host_per_call(calls, || {
            let plan = AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
            let job = SegmentJob::new(Selection::Axes(&plan)).expect("job");
            let job = job.for_device(max_wg).for_problem(&problem);
            std::hint::black_box(job.result_layout(results[0], 4));
        });
        println!(
            "| plan and header of {}x{} axis {axis} (host only) | {host_plan:.2} | — |",
            dims[0], dims[1]
        );
    }
    let header = vec![7u8; 160];
    let scratch = unsafe { result::malloc_sync(4096) }.expect("alloc");
    let copy_pageable = || {
        // SAFETY: 4096 bytes of room; the pageable source is staged before the return.
        unsafe { result::memcpy_htod_async(scratch, &header, stream) }.expect("copy");
    };
    let pinned = unsafe { result::malloc_host(4096, 0) }.expect("pinned") as *mut u8;
    let copy_pinned = || {
        // SAFETY: 160 bytes of pinned memory, unchanged while copies are in flight.
        let src = unsafe { std::slice::from_raw_parts(pinned, 160) };
        unsafe { result::memcpy_htod_async(scratch, src, stream) }.expect("copy");
    };
    let write_word = || {
        // SAFETY: an 8-byte aligned word of the scratch buffer.
        let r = unsafe { sys::cuStreamWriteValue64_v2(stream, scratch + 80, 42, 0) };
        assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "cuStreamWriteValue64_v2");
    };
    for (what, f) in [
        (
            "cuMemcpyHtoDAsync 160 B pageable",
            &copy_pageable as &dyn Fn(),
        ),
        ("cuMemcpyHtoDAsync 160 B pinned", &copy_pinned),
        ("cuStreamWriteValue64", &write_word),
    ] {
        let host = host_per_call(calls, f);
        let event = event_timing::event_per_call(stream, calls, || {}, f);
        println!("| {what} | {host:.2} | {event:.2} |");
    }
}
