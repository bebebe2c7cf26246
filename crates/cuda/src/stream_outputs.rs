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
//! small host-to-device copy (header and tables, into a scratch buffer kept per stream;
//! skipped when the buffer holds that header already, [`StreamScratch`]) and the job's
//! one or two launches, all in the caller's stream order, with no wait.
//!
//! Problems qualify whose kernels can store their results themselves
//! ([`Codec::in_place_result`]: the accumulator's first bytes for sums and bitwise
//! operators, the float an order key stands for for min/max, narrowed exactly for
//! f16/bf16, the index for argmin/argmax), and jobs in which every output has
//! elements; the others take the waiting path. User-defined maps of one input (the
//! statistics among them) qualify too: the kernels map each element as they read it and
//! store each output's result after `post` ([`CudaDevice::enqueue_mapped_outputs`],
//! prepared once as a [`StreamMapped`]).

use std::collections::HashMap;

use cudarc::driver::{result, sys};
use redlab_core::{DType, Packed, Problem};
use redlab_expr::codegen::InputLayout;
use redlab_expr::Reduction;
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::codec::Codec;
use redlab_kernels::mapped;
use redlab_kernels::segments::SegmentJob;
use redlab_kernels::RunError;

use crate::memory::{cu, DeviceBuffer, Timeline};
use crate::segment_modules;
use crate::CudaDevice;

/// Which `SEG_RESULT` build: a built-in operator's, or a mapped reduction's (keyed by
/// its description and input types, which fix its source).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum OutputKernels {
    Op(Problem),
    Mapped(String),
}

/// The `SEG_RESULT` builds' entry points (in the order of
/// [`redlab_kernels::segments::ENTRY_POINTS`]): without `column_words`, then with it
/// ([`segment_modules`]).
pub(crate) type OutputFunctions = HashMap<OutputKernels, [Option<Vec<sys::CUfunction>>; 2]>;

/// Header, tables and scratch of jobs enqueued on a stream, by stream handle. One
/// buffer per stream is enough: calls on one stream run in its order, and a call's
/// header is written in that order after the previous call's kernels.
pub(crate) type OutputScratch = HashMap<u64, StreamScratch>;

/// A stream's buffer and the header bytes last copied into it.
///
/// The kernels only read the header and tables (they write the scratch area after them
/// and the results), so a call whose header is the one already there skips its copy: a
/// host-to-device copy from pageable memory, several µs of a small call's host time.
/// Repeated calls over one tensor shape find the same header whenever the framework
/// hands back the same result address, as torch's caching allocator does in a loop.
pub(crate) struct StreamScratch {
    buffer: DeviceBuffer,
    header: Vec<u8>,
}

/// A user-defined reduction of one input prepared for
/// [`CudaDevice::enqueue_mapped_outputs`]: whether its results can be stored in place
/// and as what type, and the key of its kernels, worked out once, since a call on the
/// stream path must cost microseconds and the post's source is generated to find them.
#[derive(Debug, Clone)]
pub struct StreamMapped {
    reduction: Reduction,
    problem: Problem,
    dtype: DType,
    /// Names the kernels in the device's table: the description and the input types fix
    /// the source.
    key: OutputKernels,
    /// Whether the segment kernels may map it ([`mapped::guarded_on_cuda`]
    /// says why some may not), worked out once rather than per call.
    along_axes: bool,
    /// Where the kernels find the inputs: the one input itself, or a table of several
    /// inputs' addresses ([`StreamMapped::addressed`], whole arrays only).
    layout: InputLayout,
}

impl StreamMapped {
    /// `None` where the results need the host ([`mapped::in_place_result`]): a post over
    /// a min, max or index, a narrowing cast, several inputs, a map reading `i`.
    pub fn new(reduction: &Reduction) -> Option<Self> {
        let dtype = mapped::in_place_result(reduction)?.dtype;
        Some(StreamMapped {
            problem: *reduction.problem()?,
            dtype,
            key: OutputKernels::Mapped(format!(
                "{} over {:?}",
                reduction.describe(),
                reduction.inputs
            )),
            reduction: reduction.clone(),
            along_axes: !mapped::guarded_on_cuda(reduction),
            layout: InputLayout::Packed,
        })
    }

    /// A reduction of several inputs read by address, for
    /// [`CudaDevice::enqueue_addressed_whole`]: whole arrays only. `None` where the
    /// result needs the host or the reduction reads fewer than two inputs.
    pub fn addressed(reduction: &Reduction) -> Option<Self> {
        if reduction.inputs.len() < 2 {
            return None;
        }
        let whole = mapped::whole_to_result_for(reduction, InputLayout::Addressed).ok()?;
        Some(StreamMapped {
            problem: *reduction.problem()?,
            dtype: whole.dtype,
            key: OutputKernels::Mapped(format!(
                "addressed: {} over {:?}",
                reduction.describe(),
                reduction.inputs
            )),
            reduction: reduction.clone(),
            along_axes: mapped::maps_inputs_on_device(reduction),
            layout: InputLayout::Addressed,
        })
    }

    /// Where the kernels find the inputs.
    pub(crate) fn layout(&self) -> InputLayout {
        self.layout
    }

    /// The type of each output's result in the caller's array (after `post`).
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The problem over mapped values, which [`SegmentJob::for_mapped`] plans for.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// Whether the kernels map raw 16-byte words of the input
    /// ([`mapped::reads_words`]), the second argument of [`SegmentJob::for_mapped`].
    pub fn reads_words(&self) -> bool {
        mapped::reads_words(&self.reduction)
    }

    /// Whether the kernels load words of 4 elements along axes ([`mapped::loads_words`]),
    /// the second argument of [`SegmentJob::for_mapped`] for several inputs.
    pub fn loads_words(&self) -> bool {
        mapped::loads_words(&self.reduction)
    }

    /// The reduction itself.
    pub(crate) fn reduction(&self) -> &Reduction {
        &self.reduction
    }

    /// The key's text: the description and input types, which fix every kernel built
    /// for it.
    pub(crate) fn key_text(&self) -> &str {
        match &self.key {
            OutputKernels::Mapped(text) => text,
            // `new` makes every key Mapped.
            OutputKernels::Op(_) => "",
        }
    }
}

impl CudaDevice {
    /// The type of each output's result when [`CudaDevice::enqueue_outputs`] can run
    /// `problem` ([`Packed::result_dtype`]: i64 for argmin/argmax, else `problem.acc`),
    /// or `None`.
    pub fn enqueue_output_type(&self, problem: &Problem) -> Option<DType> {
        Codec::new(problem)
            .in_place_result()
            .map(|_| Packed::result_dtype(problem))
    }

    /// The `SEG_RESULT` kernels `key` names, built from `source` on first use: the
    /// build with `column_words` or the one without ([`segment_modules`]).
    fn output_functions(
        &self,
        key: &OutputKernels,
        column_words: bool,
        source: impl FnOnce() -> Result<String, String>,
    ) -> Result<Vec<sys::CUfunction>, RunError> {
        let lock = || {
            self.output_functions
                .lock()
                .map_err(|_| RunError::Device("function table poisoned".into()))
        };
        let build = usize::from(column_words);
        if let Some(functions) = lock()?.get(key).and_then(|builds| builds[build].as_ref()) {
            return Ok(functions.clone());
        }
        let source = source().map_err(RunError::Device)?;
        let functions = segment_modules::segment_functions(
            &self.modules,
            &source,
            &self.query.arch(),
            column_words,
        )?;
        // The key is cloned only here, once per build, not per call.
        lock()?.entry(key.clone()).or_default()[build] = Some(functions.clone());
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
        let bytes = Codec::new(problem)
            .in_place_result()
            .ok_or_else(|| {
                RunError::Skipped(format!("{problem}: the results need decoding on the host"))
            })?
            .bytes();
        let functions = || {
            self.output_functions(
                &OutputKernels::Op(*problem),
                job.launches_column_words(),
                || {
                    assembly::assemble_segments_to_result(problem, &[], Target::Cuda)
                        .map(|a| a.source)
                },
            )
        };
        // SAFETY: the caller's promises, passed on.
        unsafe {
            self.enqueue_built(
                problem,
                functions,
                bytes,
                (input, problem.dtype.size_bytes(), job),
                stream,
                (result, result_bytes),
            )
        }
    }

    /// [`CudaDevice::enqueue_outputs`] for a user-defined reduction of one input along
    /// axes or over segments, prepared once ([`StreamMapped`]): the segment kernels map
    /// each element as they read it and store every output's result after `post`
    /// ([`mapped::segments_to_result`]; the statistics' mean, norms, any/all …). `job`
    /// must be made for the problem over mapped values ([`SegmentJob::for_mapped`]).
    ///
    /// # Safety
    /// As [`CudaDevice::enqueue_outputs`].
    pub unsafe fn enqueue_mapped_outputs(
        &self,
        mapped: &StreamMapped,
        input: u64,
        job: &SegmentJob,
        stream: u64,
        result: u64,
        result_bytes: usize,
    ) -> Result<(), RunError> {
        if mapped.layout != InputLayout::Packed {
            return Err(RunError::Skipped(
                "several inputs by address enqueue through their address table".into(),
            ));
        }
        if !mapped.along_axes {
            // Guarded (`REDLAB_CUDA_MAP_GUARD=on`): the caller's waiting path maps these
            // on the host.
            return Err(RunError::Skipped(
                "integer maps of 2- or 4-byte integer words map on the host".into(),
            ));
        }
        // SAFETY: the caller's promises, passed on.
        unsafe {
            self.enqueue_built(
                &mapped.problem,
                || self.mapped_output_functions(mapped, job),
                mapped.dtype.size_bytes(),
                (input, mapped.reduction.inputs[0].size_bytes(), job),
                stream,
                (result, result_bytes),
            )
        }
    }

    /// [`CudaDevice::enqueue_mapped_outputs`] for several inputs read by address
    /// ([`StreamMapped::addressed`]): `inputs` holds the device address and type of each
    /// (where each view's first element lies, 16-byte aligned), and `job`'s element
    /// offsets apply to every input alike. [`RunError::Skipped`] where the map reads `i`,
    /// or the table cannot be kept on the device.
    ///
    /// # Safety
    /// As [`CudaDevice::enqueue_outputs`], for every input.
    pub unsafe fn enqueue_addressed_outputs(
        &self,
        mapped: &StreamMapped,
        inputs: &[(u64, DType)],
        job: &SegmentJob,
        stream: u64,
        (result, result_bytes): (u64, usize),
    ) -> Result<(), RunError> {
        if mapped.layout != InputLayout::Addressed || !mapped.along_axes {
            return Err(RunError::Skipped(
                "the segment kernels read several inputs by address without `i`".into(),
            ));
        }
        redlab_kernels::mapped_addressed::check(&mapped.reduction, inputs)
            .map_err(RunError::Skipped)?;
        let table = self.kept_address_table(inputs)?;
        // SAFETY: the caller's promises, passed on; kept tables live with the device.
        // The table is read as bytes: its alignment is the allocation's.
        unsafe {
            self.enqueue_built(
                &mapped.problem,
                || self.mapped_output_functions(mapped, job),
                mapped.dtype.size_bytes(),
                (table, 1, job),
                stream,
                (result, result_bytes),
            )
        }
    }

    /// The `SEG_RESULT` kernels of `mapped` in its input layout, for `job`.
    fn mapped_output_functions(
        &self,
        mapped: &StreamMapped,
        job: &SegmentJob,
    ) -> Result<Vec<sys::CUfunction>, RunError> {
        self.output_functions(&mapped.key, job.launches_column_words(), || {
            mapped::segments_to_result_for(&mapped.reduction, Target::Cuda, mapped.layout)
                .map(|(_, a, _)| a.source)
        })
    }

    /// Enqueues `job` over `input` (elements of `element_bytes`) with the `SEG_RESULT`
    /// kernels `functions` gives (built for `problem`, each result `bytes` wide) into the
    /// caller's `result` array.
    ///
    /// # Safety
    /// As [`CudaDevice::enqueue_outputs`].
    unsafe fn enqueue_built(
        &self,
        problem: &Problem,
        functions: impl FnOnce() -> Result<Vec<sys::CUfunction>, RunError>,
        bytes: usize,
        (input, element_bytes, job): (u64, usize, &SegmentJob),
        stream: u64,
        (result, result_bytes): (u64, usize),
    ) -> Result<(), RunError> {
        let codec = Codec::new(problem);
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
        // The segment kernels test a row's alignment before loading 16-byte words, so
        // views that start inside an allocation (`t[:, 1:]`) need only their elements'.
        if input % element_bytes as u64 != 0 || result % bytes as u64 != 0 {
            return Err(RunError::Device(format!(
                "inputs and results must be aligned to their types (input {input:#x} of \
                 {element_bytes}-byte elements, result {result:#x} of {bytes}-byte results)"
            )));
        }
        self.timeline.bind()?;
        let functions = functions()?;
        let (header, scratch_bytes) = job.result_layout(result, codec.acc_bytes);
        let needed = header.len() + scratch_bytes.max(8);
        let stream_handle = stream as sys::CUstream;
        // Held until every launch is enqueued: another thread's call on the same stream
        // must not write its header between this call's copy and its kernels.
        let mut scratch = self
            .output_scratch
            .lock()
            .map_err(|_| RunError::Device("scratch lock poisoned".into()))?;
        let held = scratch.get(&stream).map(|s| s.buffer.bytes);
        let entry = match held {
            Some(bytes) if bytes >= needed => scratch.get_mut(&stream),
            _ => {
                if held.is_some() {
                    // Earlier calls on the stream may still read the old buffer.
                    // SAFETY: the caller's stream of this context.
                    unsafe { result::stream::synchronize(stream_handle) }
                        .map_err(cu("cuStreamSynchronize"))?;
                }
                let grown = needed.max(held.map_or(0, |b| 2 * b)).max(4096);
                let buffer = DeviceBuffer::alloc(self.timeline.ctx, grown)?;
                scratch.insert(
                    stream,
                    StreamScratch {
                        buffer,
                        header: Vec::new(),
                    },
                );
                scratch.get_mut(&stream)
            }
        }
        .ok_or_else(|| RunError::Device("the stream's scratch buffer went missing".into()))?;
        let out = entry.buffer.ptr;
        // A stream being captured into a graph always gets its copy: a replay must not
        // depend on what an earlier call left in the buffer.
        // SAFETY: the caller's stream of this context.
        let capturing = unsafe { result::stream::is_capturing(stream_handle) }
            .map_err(cu("cuStreamIsCapturing"))?
            != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        if capturing || entry.header != header {
            // Forgotten first: should the copy fail, the next call copies again.
            entry.header.clear();
            // SAFETY: the scratch buffer holds `needed` bytes; the pageable source is
            // staged before the call returns, and stream order puts the copy before the
            // kernels.
            unsafe { result::memcpy_htod_async(out, &header, stream_handle) }
                .map_err(cu("cuMemcpyHtoDAsync"))?;
            if !capturing {
                entry.header = header;
            }
        }
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
