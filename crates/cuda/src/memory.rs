//! Device memory, transfers and launches on one stream, each timed with a pair of CUDA
//! events, and the [`Launcher`] through which the shared pass driver of
//! `redlab_kernels` runs variants here.

use std::ffi::c_void;

use cudarc::driver::{result, sys};
use redlab_kernels::{ChainStep, Launcher, RunError};

pub(crate) fn cu(what: &str) -> impl Fn(result::DriverError) -> RunError + '_ {
    move |e| {
        let name = e
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{e:?}"));
        RunError::Device(format!("{what}: {name}"))
    }
}

/// Device memory: owned (freed on drop) or borrowed from the caller.
pub struct DeviceBuffer {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) bytes: usize,
    ctx: sys::CUcontext,
    owned: bool,
}

// SAFETY: a device pointer is a plain address; the context is made current before use.
unsafe impl Send for DeviceBuffer {}
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    /// Allocates `bytes` (at least one) in `ctx`.
    pub(crate) fn alloc(ctx: sys::CUcontext, bytes: usize) -> Result<DeviceBuffer, RunError> {
        // SAFETY: the context is valid for the device's lifetime; the allocation is
        // freed once, on drop.
        let ptr = unsafe {
            result::ctx::set_current(ctx).map_err(cu("cuCtxSetCurrent"))?;
            result::malloc_sync(bytes.max(1)).map_err(cu("cuMemAlloc"))?
        };
        Ok(DeviceBuffer {
            ptr,
            bytes,
            ctx,
            owned: true,
        })
    }

    /// Wraps memory the caller owns; it is never freed here.
    ///
    /// # Safety
    /// `ptr` must point to at least `bytes` bytes of device memory in `ctx`, alive and
    /// unchanged for as long as the returned buffer is used.
    pub(crate) unsafe fn borrowed(
        ctx: sys::CUcontext,
        ptr: sys::CUdeviceptr,
        bytes: usize,
    ) -> DeviceBuffer {
        DeviceBuffer {
            ptr,
            bytes,
            ctx,
            owned: false,
        }
    }

    /// The device address.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: owned memory allocated by cuMemAlloc in this context, freed once.
            unsafe {
                let _ = result::ctx::set_current(self.ctx);
                let _ = result::free_sync(self.ptr);
            }
        }
    }
}

/// A stream with a pair of events for timing what is put on it.
pub(crate) struct Timeline {
    pub ctx: sys::CUcontext,
    pub stream: sys::CUstream,
    start: sys::CUevent,
    end: sys::CUevent,
    /// One timed operation at a time: the two events are shared, and an upload from
    /// one thread must not record between another thread's pair.
    timing: std::sync::Mutex<()>,
    /// The last output buffer a launch chain gave back ([`Launcher::recycle`]), reused by
    /// the next [`Launcher::alloc`] it fits.
    spare: std::sync::Mutex<Option<DeviceBuffer>>,
}

impl Timeline {
    pub(crate) fn new(ctx: sys::CUcontext) -> Result<Timeline, RunError> {
        // SAFETY: the context is valid; the stream and events are destroyed on drop.
        unsafe {
            result::ctx::set_current(ctx).map_err(cu("cuCtxSetCurrent"))?;
        }
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(cu("cuStreamCreate"))?;
        let start = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .map_err(cu("cuEventCreate"))?;
        let end = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .map_err(cu("cuEventCreate"))?;
        Ok(Timeline {
            ctx,
            stream,
            start,
            end,
            timing: std::sync::Mutex::new(()),
            spare: std::sync::Mutex::new(None),
        })
    }

    /// Makes the context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<(), RunError> {
        // SAFETY: the context outlives the timeline.
        unsafe { result::ctx::set_current(self.ctx) }.map_err(cu("cuCtxSetCurrent"))
    }

    /// Runs `work` (which enqueues on the stream) between the two events, waits, and
    /// returns the seconds between them.
    pub(crate) fn time(
        &self,
        work: impl FnOnce(sys::CUstream) -> Result<(), RunError>,
    ) -> Result<f64, RunError> {
        let _one_at_a_time = self
            .timing
            .lock()
            .map_err(|_| RunError::Device("timing lock poisoned".into()))?;
        self.bind()?;
        // SAFETY: the events and stream belong to the current context.
        unsafe {
            result::event::record(self.start, self.stream).map_err(cu("cuEventRecord"))?;
            work(self.stream)?;
            result::event::record(self.end, self.stream).map_err(cu("cuEventRecord"))?;
            result::event::synchronize(self.end).map_err(cu("kernel or copy failed"))?;
            let ms =
                result::event::elapsed(self.start, self.end).map_err(cu("cuEventElapsedTime"))?;
            Ok(f64::from(ms) * 1e-3)
        }
    }

    /// Enqueues `count` operations (`work(stream, k)` for k in order) back to back with
    /// an event before the first and after each, waits once, and returns each
    /// operation's seconds: what a library call runs, timed without a host round trip
    /// between the steps (each step's time then also holds any gap before it starts).
    pub(crate) fn time_chain(
        &self,
        count: usize,
        mut work: impl FnMut(sys::CUstream, usize) -> Result<(), RunError>,
    ) -> Result<Vec<f64>, RunError> {
        let _one_at_a_time = self
            .timing
            .lock()
            .map_err(|_| RunError::Device("timing lock poisoned".into()))?;
        self.bind()?;
        let events = ChainEvents::new(count + 1)?;
        // SAFETY: the events and stream belong to the current context; the events are
        // destroyed only after the wait on the last one.
        unsafe {
            result::event::record(events.0[0], self.stream).map_err(cu("cuEventRecord"))?;
            for k in 0..count {
                work(self.stream, k)?;
                result::event::record(events.0[k + 1], self.stream).map_err(cu("cuEventRecord"))?;
            }
            result::event::synchronize(events.0[count]).map_err(cu("kernel or copy failed"))?;
            events
                .0
                .windows(2)
                .map(|pair| {
                    result::event::elapsed(pair[0], pair[1])
                        .map(|ms| f64::from(ms) * 1e-3)
                        .map_err(cu("cuEventElapsedTime"))
                })
                .collect()
        }
    }

    /// Copies `bytes` into `buffer`, timed.
    pub(crate) fn write(&self, buffer: &DeviceBuffer, bytes: &[u8]) -> Result<f64, RunError> {
        if bytes.len() > buffer.bytes.max(1) {
            return Err(RunError::Device(
                "write past the end of a device buffer".into(),
            ));
        }
        if bytes.is_empty() {
            return Ok(0.0);
        }
        // SAFETY: the destination holds at least `bytes.len()` bytes; the copy is waited
        // for before `bytes` can go away.
        self.time(|stream| unsafe {
            result::memcpy_htod_async(buffer.ptr, bytes, stream).map_err(cu("cuMemcpyHtoDAsync"))
        })
    }

    /// Copies the first `bytes` of `buffer` back, timed.
    pub(crate) fn read(
        &self,
        buffer: &DeviceBuffer,
        bytes: usize,
    ) -> Result<(Vec<u8>, f64), RunError> {
        let mut out = vec![0u8; bytes];
        if bytes > buffer.bytes.max(1) {
            return Err(RunError::Device(
                "read past the end of a device buffer".into(),
            ));
        }
        // SAFETY: the source holds at least `bytes`; the copy is waited for before `out`
        // is used or dropped.
        let seconds = self.time(|stream| unsafe {
            result::memcpy_dtoh_async(&mut out, buffer.ptr, stream).map_err(cu("cuMemcpyDtoHAsync"))
        })?;
        Ok((out, seconds))
    }

    /// Enqueues `function(input, output, n)` on `stream` (no timing, no wait).
    pub(crate) fn enqueue(
        function: sys::CUfunction,
        stream: sys::CUstream,
        input: sys::CUdeviceptr,
        output: sys::CUdeviceptr,
        n: usize,
        global: usize,
        local: usize,
    ) -> Result<(), RunError> {
        Self::enqueue_args(function, stream, input, output, n, None, global, local)
    }

    /// [`Timeline::enqueue`] of a kernel built with `SEPARATE_RESULT`, whose fourth
    /// argument is where the result goes (`canonical_one.cl`).
    #[allow(clippy::too_many_arguments)] // the kernel's arguments and its launch shape
    pub(crate) fn enqueue_to(
        function: sys::CUfunction,
        stream: sys::CUstream,
        input: sys::CUdeviceptr,
        output: sys::CUdeviceptr,
        n: usize,
        global: usize,
        local: usize,
        result: sys::CUdeviceptr,
    ) -> Result<(), RunError> {
        Self::enqueue_args(
            function,
            stream,
            input,
            output,
            n,
            Some(result),
            global,
            local,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn enqueue_args(
        function: sys::CUfunction,
        stream: sys::CUstream,
        input: sys::CUdeviceptr,
        output: sys::CUdeviceptr,
        n: usize,
        result: Option<sys::CUdeviceptr>,
        global: usize,
        local: usize,
    ) -> Result<(), RunError> {
        let local = local.max(1);
        let grid = global.div_ceil(local);
        let grid = u32::try_from(grid)
            .map_err(|_| RunError::Skipped(format!("{grid} blocks exceed CUDA's grid limit")))?;
        let (mut input, mut output, mut n) = (input, output, n as u64);
        let mut result = result.unwrap_or(0);
        let mut all: [*mut c_void; 4] = [
            (&mut input as *mut sys::CUdeviceptr).cast(),
            (&mut output as *mut sys::CUdeviceptr).cast(),
            (&mut n as *mut u64).cast(),
            (&mut result as *mut sys::CUdeviceptr).cast(),
        ];
        let params = if result == 0 {
            &mut all[..3]
        } else {
            &mut all[..]
        };
        // SAFETY: every kernel file shares the signature (const T*, acc_t*, ulong), and a
        // SEPARATE_RESULT build adds the result's address; the parameter values live
        // until cuLaunchKernel has copied them.
        unsafe {
            result::launch_kernel(
                function,
                (grid, 1, 1),
                (local as u32, 1, 1),
                crate::dynamic_shared::bytes_for(function, n),
                stream,
                params,
            )
        }
        .map_err(cu("cuLaunchKernel"))
    }
}

/// Events of one [`Timeline::time_chain`], destroyed however the chain ends.
struct ChainEvents(Vec<sys::CUevent>);

impl ChainEvents {
    fn new(count: usize) -> Result<ChainEvents, RunError> {
        let mut events = ChainEvents(Vec::with_capacity(count));
        for _ in 0..count {
            events.0.push(
                result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                    .map_err(cu("cuEventCreate"))?,
            );
        }
        Ok(events)
    }
}

impl Drop for ChainEvents {
    fn drop(&mut self) {
        for &event in &self.0 {
            // SAFETY: created in `new` in the current context, destroyed once.
            unsafe {
                let _ = result::event::destroy(event);
            }
        }
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once.
        unsafe {
            let _ = result::ctx::set_current(self.ctx);
            let _ = result::event::destroy(self.start);
            let _ = result::event::destroy(self.end);
            let _ = result::stream::destroy(self.stream);
        }
    }
}

impl Launcher for Timeline {
    type Buffer = DeviceBuffer;
    type Kernel = sys::CUfunction;

    fn alloc(&self, bytes: usize) -> Result<DeviceBuffer, RunError> {
        if let Ok(mut spare) = self.spare.lock() {
            if spare.as_ref().is_some_and(|b| b.bytes >= bytes) {
                if let Some(buffer) = spare.take() {
                    return Ok(buffer);
                }
            }
        }
        DeviceBuffer::alloc(self.ctx, bytes)
    }

    fn recycle(&self, buffer: DeviceBuffer) {
        if let Ok(mut spare) = self.spare.lock() {
            if spare.as_ref().is_none_or(|b| b.bytes < buffer.bytes) {
                *spare = Some(buffer);
            }
        }
    }

    fn write(&self, buffer: &mut DeviceBuffer, bytes: &[u8]) -> Result<f64, RunError> {
        Timeline::write(self, buffer, bytes)
    }

    fn read(&self, buffer: &DeviceBuffer, bytes: usize) -> Result<(Vec<u8>, f64), RunError> {
        Timeline::read(self, buffer, bytes)
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
        self.time(|stream| Self::enqueue(*kernel, stream, input.ptr, output.ptr, n, global, local))
    }

    fn launch_chain(
        &self,
        steps: &[ChainStep<'_, sys::CUfunction>],
        input: &DeviceBuffer,
        output: &DeviceBuffer,
        n: usize,
    ) -> Result<Vec<f64>, RunError> {
        self.time_chain(steps.len(), |stream, k| {
            let s = &steps[k];
            Self::enqueue(
                *s.kernel, stream, input.ptr, output.ptr, n, s.global, s.local,
            )
        })
    }
}
