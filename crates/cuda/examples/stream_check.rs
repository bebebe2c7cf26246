//! Checks the stream path (`enqueue_outputs`, which the Python package takes for CUDA
//! tensors) on a GPU: for shapes that reach each row and column kernel, the typed
//! result array it writes in device memory must equal the waiting path's bit for bit,
//! and the host reference's (bit for bit, except that a NaN result may be another NaN:
//! the kernels return one canonical NaN, the reference the first NaN it meets). Float
//! inputs carry NaNs in some rows, and every f16 and bf16 bit pattern is reduced alone
//! (rows of one), which exercises the narrowing of min/max results exhaustively.
//! Prints one line per case and exits non-zero on any difference.
//!
//!     cargo run --release -p redlab-cuda --example stream_check

use cudarc::driver::{result, sys};
use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::{self, Selection};
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::{ArrayRef, DType, Op, Packed, Problem};
use redlab_cuda::CudaDevice;
use redlab_kernels::segments::SegmentJob;

fn main() {
    let device = CudaDevice::open(0).expect("cuda:0");
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
        (Op::ArgMax, DType::F32),
        (Op::ArgMin, DType::I32),
        (Op::ArgMin, DType::F64),
        (Op::Max, DType::F16),
        (Op::Min, DType::BF16),
        (Op::ArgMax, DType::F16),
    ];
    let mut failures = 0;
    for (dims, axis) in shapes {
        for (op, dtype) in problems {
            let n: usize = dims.iter().product();
            let data = generate(dtype, n, Distribution::Normal, 11 + n as u64).expect("data");
            let mut bytes = data.view().bytes().to_vec();
            with_nans(dtype, &mut bytes);
            failures += check(&device, stream, op, dtype, &bytes, dims, axis);
        }
    }
    // Every 16-bit pattern alone in its row: min/max narrow each one back to itself.
    let patterns: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
    for (op, dtype) in [
        (Op::Max, DType::F16),
        (Op::Min, DType::F16),
        (Op::Max, DType::BF16),
        (Op::Min, DType::BF16),
    ] {
        failures += check(&device, stream, op, dtype, &patterns, &[65536, 1], 1);
    }
    println!("stream path: {failures} failures");
    std::process::exit(i32::from(failures > 0));
}

/// Makes every 97th element of a float input a NaN (a different payload each time).
fn with_nans(dtype: DType, bytes: &mut [u8]) {
    let size = dtype.size_bytes();
    let nan: &[u8] = match dtype {
        DType::F16 => &[0x01, 0x7e],
        DType::BF16 => &[0xc1, 0x7f],
        DType::F32 => &[0x01, 0x00, 0xc0, 0x7f],
        DType::F64 => &[0x01, 0, 0, 0, 0, 0, 0xf8, 0x7f],
        _ => return,
    };
    for (k, element) in bytes.chunks_exact_mut(size).enumerate().step_by(97) {
        element.copy_from_slice(nan);
        element[0] |= (k as u8) & 0x3f;
    }
}

/// Whether the `size`-byte little-endian float `bits` is a NaN.
fn is_nan(dtype: DType, bits: &[u8]) -> bool {
    let mut word = [0u8; 8];
    word[..bits.len()].copy_from_slice(bits);
    let w = u64::from_le_bytes(word);
    let (exponent, mantissa) = match dtype {
        DType::F16 => (0x7c00, 0x03ff),
        DType::BF16 => (0x7f80, 0x007f),
        DType::F32 => (0x7f80_0000, 0x007f_ffff),
        DType::F64 => (0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
        _ => return false,
    };
    w & exponent == exponent && w & mantissa != 0
}

/// Runs one case through the stream path and compares; returns 1 on a failure.
fn check(
    device: &CudaDevice,
    stream: sys::CUstream,
    op: Op,
    dtype: DType,
    bytes: &[u8],
    dims: &[usize],
    axis: isize,
) -> usize {
    let problem = Problem::new(op, dtype, None).expect("problem");
    let data = ArrayRef::from_bytes(dtype, bytes).expect("view");
    let plan = AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan");
    let selection = Selection::Axes(&plan);
    let expected = segmented::reference(&problem, data, selection).expect("ref");
    let want = Packed::of_values(&problem, &expected).expect("packed");
    let (waiting, _) = device
        .compute_outputs_packed(&problem, data, selection)
        .expect("waiting path");
    let job = SegmentJob::new(selection)
        .expect("job")
        .for_device(device.capabilities().max_work_group)
        .for_problem(&problem);
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
    let result_type = Packed::result_dtype(&problem);
    let size = result_type.size_bytes();
    let as_reference = got
        .chunks_exact(size)
        .zip(want.bytes.chunks_exact(size))
        .all(|(g, w)| g == w || (is_nan(result_type, g) && is_nan(result_type, w)));
    let same = as_reference && got == waiting.bytes;
    println!(
        "{} {problem} {dims:?} axis {axis}: {}{}",
        if same { "ok  " } else { "FAIL" },
        job.explain().split(':').next().unwrap_or(""),
        if got == want.bytes {
            ""
        } else {
            " (NaN bits as the waiting path)"
        }
    );
    usize::from(!same)
}
