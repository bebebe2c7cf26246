//! Axis and segmented reductions enqueued on the caller's stream, over the caller's
//! device memory, with every output's result written into the caller's array: the
//! many-output counterpart of `stream_call.rs`, for frameworks that hand redlab a
//! tensor and expect a tensor back on their own stream.
//!
//! The waiting path (`CudaDevice::segment_results`) waits for the caller's stream,
//! allocates and writes the job's buffer, reads every accumulator back and decodes it
//! on the host; a framework then copies the array to the device again. Here the kernels
//! are built with `SEG_RESULT` (`segments.cl`) and store each result straight into the
//! caller's array, whose address the job's header carries. Per call that leaves one
//! small host-to-device copy (header and tables, into a scratch buffer kept per stream)
//! and the job's one or two launches, all in the caller's stream order, with no wait.
//!
//! Problems qualify whose kernels can store their results themselves
//! ([`Codec::in_place_result`]: the accumulator's first bytes for sums and bitwise
//! operators, the float an order key stands for for min/max, narrowed exactly for
//! f16/bf16, the index for argmin/argmax), and jobs in which every output has
//! elements; the others take the waiting path.

use std::collections::HashMap;

use cudarc::driver::{result, sys};
use redlab_core::{DType, Packed, Problem};
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::codec::Codec;
use redlab_kernels::segments::{SegmentJob, ENTRY_POINTS};
use redlab_kernels::RunError;

use crate::memory::{cu, DeviceBuffer, Timeline};
use crate::CudaDevice;

/// The `SEG_RESULT` build's entry points ([`ENTRY_POINTS`]' order) by problem.
pub(crate) type OutputFunctions = HashMap<Problem, Vec<sys::CUfunction>>;

/// Header, tables and scratch of jobs enqueued on a stream, by stream handle. One
/// buffer per stream is enough: calls on one stream run in its order, and a call's
/// header is written in that order after the previous call's kernels.
pub(crate) type OutputScratch = HashMap<u64, DeviceBuffer>;

impl CudaDevice {
    /// The type of each output's result when [`CudaDevice::enqueue_outputs`] can run
    /// `problem` ([`Packed::result_dtype`]: i64 for argmin/argmax, else `problem.acc`),
    /// or `None`.
    pub fn enqueue_output_type(&self, problem: &Problem) -> Option<DType> {
        Codec::new(problem)
            .in_place_result()
            .map(|_| Packed::result_dtype(problem))
    }

    /// The `SEG_RESULT` kernels of `problem`, built on first use.
    fn output_functions(&self, problem: &Problem) -> Result<Vec<sys::CUfunction>, RunError> {
        let lock = || {
            self.output_functions
                .lock()
                .map_err(|_| RunError::Device("function table poisoned".into()))
        };
        if let Some(functions) = lock()?.get(problem) {
            return Ok(functions.clone());
        }
        let assembled = assembly::assemble_segments_to_result(problem, &[], Target::Cuda)
            .map_err(RunError::Device)?;
        let functions =
            self.modules
                .functions(&assembled.source, &self.query.arch(), &ENTRY_POINTS)?;
        lock()?.insert(*problem, functions.clone());
        Ok(functions)
    }

    /// Enqueues `job` over the device memory at `input` on `stream`, writing output k's
    /// result to element k of the `result_bytes` bytes at `result`, and returns without
    /// waiting. [`RunError::Skipped`] when the job does not qualify (see the module
    /// documentation): the caller then takes the waiting path.
    ///
    /// # Safety
    /// `input` must hold every element the job reads and `result` must have room for
    /// `result_bytes` bytes, both device memory of this device's primary context, alive
    /// until the work on `stream` completes; `stream` must be a stream of that context
    /// (0 is the legacy default stream).
    pub unsafe fn enqueue_outputs(
        &self,
        problem: &Problem,
        input: u64,
        job: &SegmentJob,
        stream: u64,
        result: u64,
        result_bytes: usize,
    ) -> Result<(), RunError> {
        let codec = Codec::new(problem);
        let bytes = codec
            .in_place_result()
            .ok_or_else(|| {
                RunError::Skipped(format!("{problem}: the results need decoding on the host"))
            })?
            .bytes();
        if result_bytes != job.outputs() * bytes {
            return Err(RunError::Device(format!(
                "the result array holds {result_bytes} bytes; {} outputs of {problem} need {}",
                job.outputs(),
                job.outputs() * bytes
            )));
        }
        if job.outputs() == 0 {
            return Ok(());
        }
        if !job.every_output_has_elements() {
            return Err(RunError::Skipped(
                "outputs with no elements take their value on the host".into(),
            ));
        }
        if input % 16 != 0 || result % bytes as u64 != 0 {
            return Err(RunError::Device(format!(
                "device-resident inputs must be 16-byte aligned and results aligned to their \
                 type (input {input:#x}, result {result:#x})"
            )));
        }
        self.timeline.bind()?;
        let functions = self.output_functions(problem)?;
        let (header, scratch_bytes) = job.result_layout(result, codec.acc_bytes);
        let needed = header.len() + scratch_bytes.max(8);
        let stream_handle = stream as sys::CUstream;
        // Held until every launch is enqueued: another thread's call on the same stream
        // must not write its header between this call's copy and its kernels.
        let mut scratch = self
            .output_scratch
            .lock()
            .map_err(|_| RunError::Device("scratch lock poisoned".into()))?;
        let held = scratch.get(&stream).map(|b| (b.ptr, b.bytes));
        let out = match held {
            Some((ptr, bytes)) if bytes >= needed => ptr,
            _ => {
                if held.is_some() {
                    // Earlier calls on the stream may still read the old buffer.
                    // SAFETY: the caller's stream of this context.
                    unsafe { result::stream::synchronize(stream_handle) }
                        .map_err(cu("cuStreamSynchronize"))?;
                }
                let grown = needed.max(held.map_or(0, |(_, b)| 2 * b)).max(4096);
                let buffer = DeviceBuffer::alloc(self.timeline.ctx, grown)?;
                let ptr = buffer.ptr;
                scratch.insert(stream, buffer);
                ptr
            }
        };
        // SAFETY: the scratch buffer holds `needed` bytes; the pageable source is staged
        // before the call returns, and stream order puts the copy before the kernels.
        unsafe { result::memcpy_htod_async(out, &header, stream_handle) }
            .map_err(cu("cuMemcpyHtoDAsync"))?;
        for launch in job.launches() {
            Timeline::enqueue(
                functions[launch.entry],
                stream_handle,
                input,
                out,
                job.outputs(),
                launch.global,
                launch.local,
            )?;
        }
        Ok(())
    }
}
