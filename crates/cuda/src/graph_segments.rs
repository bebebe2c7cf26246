//! Axis and segment jobs timed in the steady state: many back-to-back calls of a job's
//! launches captured into one CUDA graph and replayed, so that a call's time is what a
//! pipeline that keeps the device busy sees, without the host's launch overhead and
//! without the idle device that timing one waited-for call at a time leaves between
//! calls. The segment kernels keep no counter between launches (each writes its
//! results, tile results and partials before anything reads them), so replaying a
//! job needs no host step in between.

use cudarc::driver::{result, sys};
use redlab_kernels::{ChainStep, Launcher, RunError};

use crate::memory::{cu, DeviceBuffer, Timeline};

/// A [`Launcher`] whose [`Launcher::launch_chain`] captures `calls` copies of the chain
/// in one graph, replays it once to warm it, then times one replay. Transfers go
/// through the timeline as usual.
pub(crate) struct Replayed<'a> {
    timeline: &'a Timeline,
    calls: usize,
}

impl<'a> Replayed<'a> {
    pub(crate) fn new(timeline: &'a Timeline, calls: usize) -> Replayed<'a> {
        Replayed {
            timeline,
            calls: calls.max(1),
        }
    }

    /// The executable graph of `calls` copies of `steps`, captured on the timeline's
    /// stream.
    fn capture(
        &self,
        steps: &[ChainStep<'_, sys::CUfunction>],
        input: &DeviceBuffer,
        output: &DeviceBuffer,
        n: usize,
    ) -> Result<sys::CUgraphExec, RunError> {
        let stream = self.timeline.stream;
        // SAFETY: the stream belongs to the current context; capture ends before any
        // other use of the stream; the graph is destroyed once instantiated.
        unsafe {
            result::stream::begin_capture(
                stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
            .map_err(cu("cuStreamBeginCapture"))?;
            let mut enqueued = Ok(());
            'calls: for _ in 0..self.calls {
                for s in steps {
                    enqueued = Timeline::enqueue(
                        *s.kernel, stream, input.ptr, output.ptr, n, s.global, s.local,
                    );
                    if enqueued.is_err() {
                        break 'calls;
                    }
                }
            }
            let graph = result::stream::end_capture(stream).map_err(cu("cuStreamEndCapture"))?;
            enqueued?;
            let exec = result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0))
                .map_err(cu("cuGraphInstantiate"));
            let _ = result::graph::destroy(graph);
            exec
        }
    }
}

impl Launcher for Replayed<'_> {
    type Buffer = DeviceBuffer;
    type Kernel = sys::CUfunction;

    fn alloc(&self, bytes: usize) -> Result<DeviceBuffer, RunError> {
        self.timeline.alloc(bytes)
    }

    fn write(&self, buffer: &mut DeviceBuffer, bytes: &[u8]) -> Result<f64, RunError> {
        Launcher::write(self.timeline, buffer, bytes)
    }

    fn read(&self, buffer: &DeviceBuffer, bytes: usize) -> Result<(Vec<u8>, f64), RunError> {
        Launcher::read(self.timeline, buffer, bytes)
    }

    fn launch(
        &self,
        kernel: &sys::CUfunction,
        input: &DeviceBuffer,
        output: &DeviceBuffer,
        n: usize,
        global: usize,
        local: usize,
    ) -> Result<f64, RunError> {
        let step = ChainStep {
            kernel,
            global,
            local,
        };
        Ok(self.launch_chain(&[step], input, output, n)?[0])
    }

    /// One entry: a call's share of a timed replay of `calls` calls (a graph has no
    /// events between the steps of one call).
    fn launch_chain(
        &self,
        steps: &[ChainStep<'_, sys::CUfunction>],
        input: &DeviceBuffer,
        output: &DeviceBuffer,
        n: usize,
    ) -> Result<Vec<f64>, RunError> {
        if steps.is_empty() {
            return Ok(Vec::new());
        }
        let exec = self.capture(steps, input, output, n)?;
        let replay = |s: sys::CUstream| {
            // SAFETY: `exec` is a live executable graph of this context.
            unsafe { result::graph::launch(exec, s) }.map_err(cu("cuGraphLaunch"))
        };
        let timed = self
            .timeline
            .time(replay)
            .and_then(|_| self.timeline.time(replay));
        // SAFETY: destroyed once, after its last replay completed (`time` waits).
        unsafe {
            let _ = result::graph::exec_destroy(exec);
        }
        Ok(vec![timed? / self.calls as f64])
    }
}
