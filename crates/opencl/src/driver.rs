//! Running a variant: layout of each pass, the pass loop for each pass structure (with
//! double buffering), profiling events around every launch and transfer, and the host
//! finish where the strategy ends on the host.

use std::ptr;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_ulong, CL_BLOCKING};
use redlab_core::canonical::TILE;
use redlab_core::{ArrayRef, Problem, Value};
use redlab_kernels::{Capabilities, Geometry, PassStructure, Variant};

use crate::codec::Codec;

/// Why a run did not produce a value.
#[derive(Debug, Clone)]
pub enum RunError {
    /// The variant cannot run this problem here (the reason in words).
    Skipped(String),
    /// The kernel did not build; the compiler's log.
    Build(String),
    /// An OpenCL call failed.
    Device(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Skipped(why) => write!(f, "skipped: {why}"),
            RunError::Build(log) => write!(f, "kernel build failed: {}", log.trim()),
            RunError::Device(what) => write!(f, "OpenCL error: {what}"),
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Run {
    /// The result.
    pub value: Value,
    /// Kernel seconds of each launch, from profiling events.
    pub passes: Vec<f64>,
    /// Device→host seconds of the result readback.
    pub download_s: f64,
}

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

fn read(
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
    let n = n as cl_ulong;
    // SAFETY: the arguments match the kernel signature every kernel file shares
    // (`__global const T*`, `__global acc_t*`, `ulong`), buffers are live for the call,
    // and the launch is waited for before the buffers can be dropped.
    let event = unsafe {
        kernel.set_arg(0, &input.get()).map_err(cl)?;
        kernel.set_arg(1, &output.get()).map_err(cl)?;
        kernel.set_arg(2, &n).map_err(cl)?;
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

/// Work-items, work-group size and partials of one pass over `count` items.
pub(crate) fn layout(
    geometry: Geometry,
    count: usize,
    wg: usize,
    caps: &Capabilities,
    variant: &Variant,
) -> (usize, usize, usize) {
    let groups_of = |items: usize| items.div_ceil(wg).max(1);
    match geometry {
        Geometry::OnePerElement => {
            let g = groups_of(count);
            (g * wg, wg, g)
        }
        Geometry::TwoPerItem => {
            let g = count.div_ceil(2 * wg).max(1);
            (g * wg, wg, g)
        }
        Geometry::GridStride => {
            let per_cu = variant.default_param("GROUPS_PER_CU").unwrap_or(8) as usize;
            let g = groups_of(count).min(caps.compute_units * per_cu).max(1);
            (g * wg, wg, g)
        }
        Geometry::ItemsPerComputeUnit => {
            let per_cu = variant.default_param("ITEMS_PER_CU").unwrap_or(1) as usize;
            let items = (caps.compute_units * per_cu).max(1);
            (items, 1, items)
        }
        Geometry::CanonicalTiles => {
            let g = count.div_ceil(TILE).max(1);
            (g * 256, 256, g)
        }
    }
}

/// The programs a run needs, already built.
pub(crate) struct Programs<'a> {
    /// Reads input elements (`FIRST_PASS`).
    pub first: &'a Kernel,
    /// Reads partials (later passes), where the structure has them.
    pub later: Option<&'a Kernel>,
}

/// Runs the passes of `variant` over the device input and returns the result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_passes(
    context: &Context,
    queue: &CommandQueue,
    caps: &Capabilities,
    variant: &Variant,
    problem: &Problem,
    programs: Programs<'_>,
    input: &DeviceInput,
    wg: usize,
) -> Result<Run, RunError> {
    let codec = Codec::new(problem);
    let n = input.len;
    let Some(source) = input.buffer.as_ref() else {
        return Err(RunError::Device("empty input reached the device".into()));
    };
    let (g0, l0, outs0) = layout(variant.geometry, n, wg, caps, variant);
    let mut ping = buffer(context, outs0 * codec.acc_bytes)?;
    let mut pong = buffer(context, outs0 * codec.acc_bytes)?;
    let mut passes = Vec::new();
    let later = || {
        programs
            .later
            .ok_or_else(|| RunError::Device(format!("{} has no later-pass kernel", variant.name)))
    };

    let finish = |buffer: &Buffer<u8>, count: usize, passes: Vec<f64>| -> Result<Run, RunError> {
        let (bytes, download_s) = read(queue, buffer, count * codec.acc_bytes)?;
        Ok(Run {
            value: codec.value(codec.fold(&bytes, count)),
            passes,
            download_s,
        })
    };

    match variant.passes {
        PassStructure::SingleLaunch => {
            write(queue, &mut ping, &codec.identity_bytes())?;
            passes.push(launch(queue, programs.first, source, &ping, n, g0, l0)?);
            finish(&ping, 1, passes)
        }
        PassStructure::HostFinish => {
            passes.push(launch(queue, programs.first, source, &ping, n, g0, l0)?);
            finish(&ping, outs0, passes)
        }
        PassStructure::TwoStage => {
            passes.push(launch(queue, programs.first, source, &ping, n, g0, l0)?);
            passes.push(launch(queue, later()?, &ping, &pong, outs0, wg, wg)?);
            finish(&pong, 1, passes)
        }
        PassStructure::MultiPass | PassStructure::MultiPassHostFinish => {
            let host_threshold = if variant.passes == PassStructure::MultiPassHostFinish {
                wg
            } else {
                1
            };
            passes.push(launch(queue, programs.first, source, &ping, n, g0, l0)?);
            let mut count = outs0;
            while count > host_threshold {
                let (g, l, outs) = layout(variant.geometry, count, wg, caps, variant);
                passes.push(launch(queue, later()?, &ping, &pong, count, g, l)?);
                std::mem::swap(&mut ping, &mut pong);
                count = outs;
            }
            finish(&ping, count, passes)
        }
        PassStructure::Canonical => {
            passes.push(launch(queue, programs.first, source, &ping, n, g0, l0)?);
            let tree = later()?;
            let mut count = outs0;
            while count > 1 {
                let groups = count.div_ceil(256);
                passes.push(launch(queue, tree, &ping, &pong, count, groups * 256, 256)?);
                std::mem::swap(&mut ping, &mut pong);
                count = groups;
            }
            finish(&ping, 1, passes)
        }
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
