//! Reductions enqueued on the caller's stream, over the caller's device memory, into the
//! caller's result buffer, with no host wait: the path for frameworks that hand redlab a
//! tensor (DLPack) and expect an asynchronous result on their own stream, as their own
//! reductions do.
//!
//! Only the one-launch production kernel qualifies, and only problems whose last group
//! can store the result itself ([`Codec::in_place_result`]: the final partial's own
//! bytes, or for argmin/argmax the index and for float min/max the float its order key
//! stands for, `result_form.h`); inputs must start on a 16-byte boundary. The result
//! lands one of two ways (the first only where the final partial is the result's own
//! bytes):
//!
//! - [`Landing::Buffer`]: the caller's buffer is the kernel's whole output (result,
//!   subtree roots, ticket); its ticket is zeroed first. One memset and one launch:
//!   the cheapest on the host (a launch and a device copy cost about 3 µs each on an
//!   H200, a memset under 1 µs; `examples/stream_costs.rs`).
//! - [`Landing::Result`]: the caller has room for the result only; the kernel (built
//!   with `SEPARATE_RESULT`) writes its roots and ticket into a scratch buffer kept per
//!   stream (its last group resets the ticket, so one zeroing serves every later call
//!   in stream order) and the result straight to the caller's address: one launch, no
//!   zeroing, no copy.

use std::collections::HashMap;

use cudarc::driver::{result, sys};
use redlab_core::{Problem, Value};
use redlab_kernels::codec::Codec;
use redlab_kernels::driver::{
    self as kernel_driver, Plan, ONE_LAUNCH_MAX_PARTIALS, ONE_LAUNCH_TAIL_BYTES,
};
use redlab_kernels::{PassStructure, RunError, Variant};

use crate::memory::{cu, DeviceBuffer, Timeline};
use crate::CudaDevice;

/// Scratch buffers (result, subtree roots, ticket) by stream handle and partial width.
pub(crate) type StreamScratch = HashMap<(u64, usize), DeviceBuffer>;

/// What one call of the stream path launches, worked out once per problem and length:
/// the per-call path is then a table lookup and two driver calls (assembling and
/// hashing the kernel source, and the tuning lookup, cost more than a small reduction).
#[derive(Clone, Copy)]
pub(crate) struct StreamLaunch {
    /// The plain build, for a [`Landing::Buffer`]; `None` where the final partial is
    /// not the result's own bytes (an order key, an index).
    function: Option<sys::CUfunction>,
    /// The same kernel built with `SEPARATE_RESULT` (canonical_one.cl): the result goes
    /// to a fourth argument, the roots and ticket to a per-stream scratch buffer.
    separate: sys::CUfunction,
    global: usize,
    local: usize,
    /// Bytes per partial.
    acc_bytes: usize,
}

/// A planned launch: the parameters as the launch builds them, and the grid (`global`,
/// `local`).
pub(crate) type OneLaunch<'a> = (Vec<(&'a str, u32)>, usize, usize);

/// Launches of the stream path by problem and length.
pub(crate) type StreamLaunches = HashMap<(Problem, usize), StreamLaunch>;

/// Launch tables keep only this many entries; past it they start over (lengths vary
/// without bound in some programs).
const MAX_LAUNCHES: usize = 4096;

/// Where an enqueued reduction puts its result.
#[derive(Debug, Clone, Copy)]
pub enum Landing {
    /// Room for the result only, at this address.
    Result(u64),
    /// A buffer of `bytes` bytes (at least [`CudaDevice::landing_bytes`]) that the
    /// kernel uses whole; the result is at its start.
    Buffer {
        /// Device address.
        address: u64,
        /// Its size.
        bytes: usize,
    },
}

impl CudaDevice {
    /// The bytes a [`Landing::Buffer`] must hold for `problem`.
    pub fn landing_bytes(&self, problem: &Problem) -> usize {
        (1 + ONE_LAUNCH_MAX_PARTIALS) * Codec::new(problem).acc_bytes + ONE_LAUNCH_TAIL_BYTES
    }

    /// Whether [`CudaDevice::enqueue_reduce`] can run `problem` (one launch whose last
    /// group stores the result: the final partial's own bytes, or the float of an order
    /// key, or an index), and the result's width in bytes
    /// ([`CudaDevice::enqueue_output_type`]'s type). Only results that are the final
    /// partial's own bytes can also land as a [`Landing::Buffer`].
    pub fn enqueue_result_bytes(&self, problem: &Problem) -> Option<usize> {
        Codec::new(problem)
            .in_place_result()
            .map(|form| form.bytes())
    }

    /// The launch of `problem` over `n > 0` elements, planned on first use.
    fn stream_launch(&self, problem: &Problem, n: usize) -> Result<StreamLaunch, RunError> {
        let lock = || {
            self.stream_launches
                .lock()
                .map_err(|_| RunError::Device("launch table poisoned".into()))
        };
        if let Some(launch) = lock()?.get(&(*problem, n)) {
            return Ok(*launch);
        }
        let codec = Codec::new(problem);
        let separate_decls = codec.separate_result_decls().ok_or_else(|| {
            RunError::Skipped(format!("{problem}: the result needs decoding on the host"))
        })?;
        let choice = self.auto(problem, n);
        let variant = &choice.variant;
        let (params, global, local) =
            self.one_launch(variant, problem, &choice.param_pairs(), n)?;
        // The plain build serves a Landing::Buffer, whose first partial must then be the
        // result's own bytes.
        let function = match codec.raw_result_bytes() {
            Some(_) => Some(self.functions(variant, problem, None, &params, true, &["reduce"])?[0]),
            None => None,
        };
        let separate = self.functions(
            variant,
            problem,
            Some(&separate_decls),
            &params,
            true,
            &["reduce"],
        )?[0];
        let launch = StreamLaunch {
            function,
            separate,
            global,
            local,
            acc_bytes: codec.acc_bytes,
        };
        let mut table = lock()?;
        if table.len() >= MAX_LAUNCHES {
            table.clear();
        }
        table.insert((*problem, n), launch);
        Ok(launch)
    }

    /// Enqueues the production reduction of the `n` elements at `input` on `stream`,
    /// with its result (the accumulator type's bytes,
    /// [`CudaDevice::enqueue_result_bytes`]) landing as `landing` says, and returns
    /// without waiting. An empty input gets the identity.
    ///
    /// # Safety
    /// `input` must hold `n` elements of `problem.dtype` and the landing must have the
    /// room it claims, both device memory of this device's primary context, alive until
    /// the work on `stream` completes; `stream` must be a stream of that context (0 is
    /// the legacy default stream).
    pub unsafe fn enqueue_reduce(
        &self,
        problem: &Problem,
        input: u64,
        n: usize,
        stream: u64,
        landing: Landing,
    ) -> Result<(), RunError> {
        let result = match landing {
            Landing::Result(address) => address,
            Landing::Buffer { address, bytes } => {
                if bytes < self.landing_bytes(problem) {
                    return Err(RunError::Device(format!(
                        "the result buffer holds {bytes} bytes; {problem} needs {}",
                        self.landing_bytes(problem)
                    )));
                }
                address
            }
        };
        if n > 0 && input % 16 != 0 {
            return Err(RunError::Device(format!(
                "device-resident inputs must be 16-byte aligned (address {input:#x})"
            )));
        }
        let stream_handle = stream as sys::CUstream;
        self.timeline.bind()?;
        if n == 0 {
            let raw = Codec::new(problem).raw_result_bytes().ok_or_else(|| {
                RunError::Skipped(format!("{problem}: the result needs decoding on the host"))
            })?;
            let empty = redlab_core::with_dtype!(problem.dtype, T => redlab_core::ArrayRef::from_slice::<T>(&[]));
            let Ok(Value::Scalar(identity)) = redlab_core::reference::reduce(problem, empty) else {
                return Err(RunError::Device("empty input without an identity".into()));
            };
            let bytes = identity.bits().to_le_bytes();
            // SAFETY: `result` has room for `raw` bytes (the caller's promise); the
            // pageable source is staged before the call returns.
            return unsafe { result::memcpy_htod_async(result, &bytes[..raw], stream_handle) }
                .map_err(cu("cuMemcpyHtoDAsync"));
        }
        let launch = self.stream_launch(problem, n)?;
        if let Landing::Buffer { address, .. } = landing {
            let function = launch.function.ok_or_else(|| {
                RunError::Skipped(format!(
                    "{problem}: the result is stored converted; give room for the result only"
                ))
            })?;
            let ticket = address + ((1 + ONE_LAUNCH_MAX_PARTIALS) * launch.acc_bytes) as u64;
            // SAFETY: the buffer holds the ticket's and the accumulator's bytes (checked
            // above); stream order puts the zeroing before the launch.
            unsafe { result::memset_d8_async(ticket, 0, ONE_LAUNCH_TAIL_BYTES, stream_handle) }
                .map_err(cu("cuMemsetD8Async"))?;
            return Timeline::enqueue(
                function,
                stream_handle,
                input,
                address,
                n,
                launch.global,
                launch.local,
            );
        }
        let out = self.stream_scratch(stream, launch.acc_bytes)?;
        // The kernel writes the result straight to the caller's address: one launch.
        Timeline::enqueue_to(
            launch.separate,
            stream_handle,
            input,
            out,
            n,
            launch.global,
            launch.local,
            result,
        )
    }
}

impl CudaDevice {
    /// The parameters and grid (`global`, `local`) of one launch of `variant` for
    /// `problem` over `n > 0` elements, from the `pairs` given: what every stream path
    /// plans before it builds its kernel. [`RunError::Skipped`] where the variant takes
    /// several launches.
    pub(crate) fn one_launch<'a>(
        &self,
        variant: &Variant,
        problem: &Problem,
        pairs: &[(&'a str, u32)],
        n: usize,
    ) -> Result<OneLaunch<'a>, RunError> {
        if variant.passes != PassStructure::LastBlockFinish {
            return Err(RunError::Skipped(format!(
                "{} takes several launches; the stream path runs one",
                variant.name
            )));
        }
        let params = kernel_driver::launch_params(variant, problem, &self.caps, pairs, n);
        let wg = match kernel_driver::plan(variant, problem, &self.caps, &params, n)? {
            Plan::Empty(_) => return Err(RunError::Device("an empty input has no launch".into())),
            Plan::Launch { wg } => wg,
        };
        let (global, local, _) = kernel_driver::layout(
            variant.geometry,
            problem,
            n,
            wg,
            &self.caps,
            variant,
            &params,
        );
        Ok((params, global, local))
    }

    /// The scratch buffer (result, subtree roots, ticket) of one-launch kernels built
    /// with `SEPARATE_RESULT` on the caller's `stream`, for partials of `acc_bytes`
    /// bytes: allocated and zeroed in stream order on first use, then reused by every
    /// call on that stream (each launch's last group leaves the ticket at zero).
    pub(crate) fn stream_scratch(&self, stream: u64, acc_bytes: usize) -> Result<u64, RunError> {
        let mut scratch = self
            .stream_scratch
            .lock()
            .map_err(|_| RunError::Device("scratch lock poisoned".into()))?;
        Ok(match scratch.entry((stream, acc_bytes)) {
            std::collections::hash_map::Entry::Occupied(e) => e.get().ptr,
            std::collections::hash_map::Entry::Vacant(slot) => {
                let bytes = (1 + ONE_LAUNCH_MAX_PARTIALS) * acc_bytes + ONE_LAUNCH_TAIL_BYTES;
                let buffer = DeviceBuffer::alloc(self.timeline.ctx, bytes)?;
                // SAFETY: the buffer was just allocated with `bytes` bytes; zeroing it on
                // the caller's stream orders it before the first launch that uses it.
                unsafe { result::memset_d8_async(buffer.ptr, 0, bytes, stream as sys::CUstream) }
                    .map_err(cu("cuMemsetD8Async"))?;
                slot.insert(buffer).ptr
            }
        })
    }

    /// Waits until the work queued on the caller's `stream` is done, so that a
    /// reduction on redlab's own stream sees what it wrote.
    ///
    /// # Safety
    /// `stream` must be a stream of this device's primary context (0: the legacy
    /// default stream).
    pub unsafe fn synchronize_stream(&self, stream: u64) -> Result<(), RunError> {
        self.timeline.bind()?;
        // SAFETY: the caller's promise.
        unsafe { result::stream::synchronize(stream as sys::CUstream) }
            .map_err(cu("cuStreamSynchronize"))
    }

    /// Copies a device input's bytes to the host.
    pub fn download(&self, input: &crate::DeviceInput) -> Result<Vec<u8>, RunError> {
        match input.buffer.as_ref() {
            None => Ok(Vec::new()),
            Some(buffer) => Ok(self.timeline.read(buffer, buffer.bytes)?.0),
        }
    }
}
