//! Graph-capture timing: many back-to-back reductions captured into one CUDA graph and
//! replayed, so the per-reduction time excludes launch overhead from the host. Only
//! one-launch variants qualify: the last group resets the ticket counter, which is what
//! makes replay correct without any host step in between.

use cudarc::driver::{result, sys};
use redlab_core::{Problem, Value};
use redlab_kernels::codec::Codec;
use redlab_kernels::driver::{ONE_LAUNCH_MAX_PARTIALS, ONE_LAUNCH_TAIL_BYTES};
use redlab_kernels::{PassStructure, RunError, Variant};

use crate::memory::{cu, DeviceBuffer, Timeline};
use crate::{CudaDevice, DeviceInput};

/// What a graph replay measured.
#[derive(Debug, Clone)]
pub struct GraphRun {
    /// Seconds per reduction: the replay's event time over the reductions in it.
    pub seconds_per_reduction: f64,
    /// Reductions in the graph.
    pub reductions: usize,
    /// The result of the last reduction (over the last input used).
    pub value: Value,
    /// Which input the last reduction read (index into the inputs given).
    pub last_input: usize,
}

impl CudaDevice {
    /// Captures `reductions` launches of a one-launch `variant` cycling over `inputs`
    /// (rotating inputs keep the L2 cold), replays the graph once to warm it, then
    /// times one replay.
    pub fn graph_run(
        &self,
        variant: &Variant,
        problem: &Problem,
        inputs: &[DeviceInput],
        reductions: usize,
        params: &[(&str, u32)],
    ) -> Result<GraphRun, RunError> {
        self.graph_run_with(variant, problem, None, inputs, reductions, params)
    }

    /// [`CudaDevice::graph_run`] with section 2 given (a user-defined map's
    /// declarations; the inputs are packed buffers).
    pub fn graph_run_with(
        &self,
        variant: &Variant,
        problem: &Problem,
        decls: Option<&str>,
        inputs: &[DeviceInput],
        reductions: usize,
        params: &[(&str, u32)],
    ) -> Result<GraphRun, RunError> {
        if variant.passes != PassStructure::LastBlockFinish {
            return Err(RunError::Skipped(
                "graph replay needs a one-launch variant (last-block finish)".into(),
            ));
        }
        let first = inputs
            .first()
            .ok_or_else(|| RunError::Device("no inputs".into()))?;
        let n = first.len;
        if inputs.iter().any(|i| i.len != n || i.buffer.is_none()) {
            return Err(RunError::Device(
                "graph inputs must be non-empty and of one size".into(),
            ));
        }
        let (params, global, local) = self.one_launch(variant, problem, params, n)?;
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        self.timeline.bind()?;
        let function = self.functions(variant, problem, decls, &params, true, &["reduce"])?[0];
        let codec = Codec::new(problem);
        let bytes = (1 + ONE_LAUNCH_MAX_PARTIALS) * codec.acc_bytes + ONE_LAUNCH_TAIL_BYTES;
        let out = DeviceBuffer::alloc(self.timeline.ctx, bytes)?;
        self.timeline.write(&out, &vec![0u8; bytes])?;

        let reductions = reductions.max(1);
        let seconds = timed_replay(&self.timeline, |stream| {
            for k in 0..reductions {
                let input = inputs[k % inputs.len()]
                    .buffer
                    .as_ref()
                    .map_or(0, |b| b.ptr);
                Timeline::enqueue(function, stream, input, out.ptr, n, global, local)?;
            }
            Ok(())
        })?;
        let (result_bytes, _) = self.timeline.read(&out, codec.acc_bytes)?;
        Ok(GraphRun {
            seconds_per_reduction: seconds / reductions as f64,
            reductions,
            value: codec.value(codec.decode(&result_bytes, 0)),
            last_input: (reductions - 1) % inputs.len(),
        })
    }
}

/// Captures what `enqueue` puts on the timeline's stream into one CUDA graph, replays it
/// once to warm it, times one replay and returns its seconds. The graph is destroyed
/// however this ends.
pub(crate) fn timed_replay(
    timeline: &Timeline,
    enqueue: impl FnOnce(sys::CUstream) -> Result<(), RunError>,
) -> Result<f64, RunError> {
    let stream = timeline.stream;
    // SAFETY: the stream belongs to the current context; capture ends before any other
    // use of the stream; the graph objects are destroyed below.
    let exec = unsafe {
        result::stream::begin_capture(
            stream,
            sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
        )
        .map_err(cu("cuStreamBeginCapture"))?;
        let enqueued = enqueue(stream);
        let graph = result::stream::end_capture(stream).map_err(cu("cuStreamEndCapture"))?;
        enqueued?;
        let exec = result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0))
            .map_err(cu("cuGraphInstantiate"));
        let _ = result::graph::destroy(graph);
        exec?
    };
    let replay = |s: sys::CUstream| {
        // SAFETY: `exec` is a live executable graph of this context.
        unsafe { result::graph::launch(exec, s) }.map_err(cu("cuGraphLaunch"))
    };
    let timed = timeline.time(replay).and_then(|_| timeline.time(replay));
    // SAFETY: destroyed once, after its last replay completed (`time` waits).
    unsafe {
        let _ = result::graph::exec_destroy(exec);
    }
    timed
}
