//! OpenCL buffers, transfers and launches, each timed with a profiling event, and the
//! [`Launcher`] that lets the shared pass driver of `redlab_kernels` run variants here.

use std::ptr;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_ulong, CL_BLOCKING};
use redlab_core::{ArrayRef, Problem};
use redlab_kernels::{Launcher, RunError};

/// An input already on the device.
pub struct DeviceInput {
    pub(crate) buffer: Option<Buffer<u8>>,
    pub(crate) len: usize,
    pub(crate) bytes: usize,
    /// Host→device seconds of the upload.
    pub upload_s: f64,
}

pub(crate) fn cl(e: impl std::fmt::Display) -> RunError {
    RunError::Device(e.to_string())
}

/// Seconds between an event's start and end.
pub(crate) fn event_seconds(event: &Event) -> Result<f64, RunError> {
    event.wait().map_err(cl)?;
    let start = event.profiling_command_start().map_err(cl)?;
    let end = event.profiling_command_end().map_err(cl)?;
    Ok(end.saturating_sub(start) as f64 * 1e-9)
}

/// Creates a device buffer of `bytes` (at least one byte: OpenCL has no empty buffers).
pub(crate) fn buffer(context: &Context, bytes: usize) -> Result<Buffer<u8>, RunError> {
    // SAFETY: no host pointer is passed, so the buffer owns fresh device memory.
    unsafe { Buffer::<u8>::create(context, CL_MEM_READ_WRITE, bytes.max(1), ptr::null_mut()) }
        .map_err(cl)
}

/// Writes `bytes` into `buffer` (blocking) and returns the transfer's seconds.
pub(crate) fn write(
    queue: &CommandQueue,
    buffer: &mut Buffer<u8>,
    bytes: &[u8],
) -> Result<f64, RunError> {
    // SAFETY: blocking write of a host slice that outlives the call into a buffer at
    // least as large (callers size buffers from the same length).
    let event =
        unsafe { queue.enqueue_write_buffer(buffer, CL_BLOCKING, 0, bytes, &[]) }.map_err(cl)?;
    event_seconds(&event)
}

pub(crate) fn read(
    queue: &CommandQueue,
    buffer: &Buffer<u8>,
    bytes: usize,
) -> Result<(Vec<u8>, f64), RunError> {
    let mut out = vec![0u8; bytes];
    // SAFETY: blocking read into a host vector of exactly `bytes`, from a buffer holding
    // at least that many.
    let event =
        unsafe { queue.enqueue_read_buffer(buffer, CL_BLOCKING, 0, &mut out, &[]) }.map_err(cl)?;
    let seconds = event_seconds(&event)?;
    Ok((out, seconds))
}

/// One launch: `kernel(input, output, n)` over `global` work-items in groups of `local`.
pub(crate) fn launch(
    queue: &CommandQueue,
    kernel: &Kernel,
    input: &Buffer<u8>,
    output: &Buffer<u8>,
    n: usize,
    global: usize,
    local: usize,
) -> Result<f64, RunError> {
    launch_to(queue, kernel, (input, output, None), n, global, local)
}

/// [`launch`], with a fourth argument, the result's buffer, for a kernel built with
/// `SEPARATE_RESULT` (canonical_one.cl).
pub(crate) fn launch_to(
    queue: &CommandQueue,
    kernel: &Kernel,
    (input, output, result): (&Buffer<u8>, &Buffer<u8>, Option<&Buffer<u8>>),
    n: usize,
    global: usize,
    local: usize,
) -> Result<f64, RunError> {
    let n = n as cl_ulong;
    // SAFETY: the arguments match the kernel signature every kernel file shares
    // (`__global const T*`, `__global acc_t*`, `ulong`, and with SEPARATE_RESULT a
    // `__global uchar*`), buffers are live for the call, and the launch is waited for
    // before the buffers can be dropped.
    let event = unsafe {
        kernel.set_arg(0, &input.get()).map_err(cl)?;
        kernel.set_arg(1, &output.get()).map_err(cl)?;
        kernel.set_arg(2, &n).map_err(cl)?;
        if let Some(result) = result {
            kernel.set_arg(3, &result.get()).map_err(cl)?;
        }
        let global = [global];
        let local = [local];
        queue.enqueue_nd_range_kernel(
            kernel.get(),
            1,
            ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            &[],
        )
    }
    .map_err(cl)?;
    event_seconds(&event)
}

/// The OpenCL side of the shared pass driver: one context and its profiling queue.
pub(crate) struct ClLauncher<'a> {
    pub context: &'a Context,
    pub queue: &'a CommandQueue,
}

impl Launcher for ClLauncher<'_> {
    type Buffer = Buffer<u8>;
    type Kernel = Kernel;

    fn alloc(&self, bytes: usize) -> Result<Buffer<u8>, RunError> {
        buffer(self.context, bytes)
    }

    fn write(&self, buffer: &mut Buffer<u8>, bytes: &[u8]) -> Result<f64, RunError> {
        write(self.queue, buffer, bytes)
    }

    fn read(&self, buffer: &Buffer<u8>, bytes: usize) -> Result<(Vec<u8>, f64), RunError> {
        read(self.queue, buffer, bytes)
    }

    fn launch(
        &self,
        kernel: &Kernel,
        input: &Buffer<u8>,
        output: &Buffer<u8>,
        n: usize,
        global: usize,
        local: usize,
    ) -> Result<f64, RunError> {
        launch(self.queue, kernel, input, output, n, global, local)
    }
}

/// Checks a problem's input against the problem and returns its bytes.
pub(crate) fn input_bytes<'a>(
    problem: &Problem,
    data: &ArrayRef<'a>,
) -> Result<&'a [u8], RunError> {
    problem
        .check_input(data)
        .map_err(|e| RunError::Device(e.to_string()))?;
    Ok(data.bytes())
}
