//! Axis and segment jobs timed in the steady state: many back-to-back calls of a job's
//! launches captured into one CUDA graph and replayed, so that a call's time is what a
//! pipeline that keeps the device busy sees, without the host's launch overhead and
//! without the idle device that timing one waited-for call at a time leaves between
//! calls. The segment kernels keep no counter between launches (each writes its
//! results, tile results and partials before anything reads them), so replaying a
//! job needs no host step in between.

use cudarc::driver::sys;
use redlab_kernels::{ChainStep, Launcher, RunError};

use crate::graph::timed_replay;
use crate::memory::{DeviceBuffer, Timeline};

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
        let seconds = timed_replay(self.timeline, |stream| {
            for _ in 0..self.calls {
                for s in steps {
                    Timeline::enqueue(
                        *s.kernel, stream, input.ptr, output.ptr, n, s.global, s.local,
                    )?;
                }
            }
            Ok(())
        })?;
        Ok(vec![seconds / self.calls as f64])
    }
}
