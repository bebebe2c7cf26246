//! `hashed` inputs made on the OpenCL device itself (`generate.cl`, the kernel the CUDA
//! backend builds too), read back on request, and reductions of them.

use std::ops::Range;
use std::ptr;

use opencl3::memory::ClMem;
use opencl3::types::cl_ulong;
use redlab_core::{DType, Problem};
use redlab_kernels::assembly::Target;
use redlab_kernels::generate::{byte_len, grid, source, GeneratedParts, ENTRY_POINT, WORK_GROUP};
use redlab_kernels::RunError;

use crate::driver::{self, cl, event_seconds, DeviceInput};
use crate::OpenClDevice;

impl OpenClDevice {
    /// Elements `start .. start + len` of the `hashed` array of `seed`
    /// ([`redlab_core::hashed`]), written on the device, and the seconds it took.
    pub fn generate_hashed(
        &self,
        dtype: DType,
        start: usize,
        len: usize,
        seed: u64,
    ) -> Result<(DeviceInput, f64), RunError> {
        let bytes = byte_len(dtype, len)?;
        if len == 0 {
            return Ok((
                DeviceInput {
                    buffer: None,
                    len,
                    bytes: 0,
                    upload_s: 0.0,
                },
                0.0,
            ));
        }
        let buffer = driver::buffer(&self.context, bytes)?;
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        let program = self
            .programs
            .get(
                &self.context,
                &source(dtype, Target::OpenCl),
                "",
                &[ENTRY_POINT],
            )
            .map_err(|e| RunError::Build(e.log))?;
        let kernel = program
            .kernel(ENTRY_POINT)
            .ok_or_else(|| RunError::Device("missing generation kernel".into()))?;
        let (first, count, seed) = (start as cl_ulong, len as cl_ulong, seed as cl_ulong);
        let global = [grid(len, self.caps.compute_units)];
        let local = [WORK_GROUP];
        // SAFETY: generate_hashed(__global gen_t*, ulong, ulong, ulong) with a buffer of
        // `len` elements; the launch is waited for before the buffer can be dropped.
        let event = unsafe {
            kernel.set_arg(0, &buffer.get()).map_err(cl)?;
            kernel.set_arg(1, &first).map_err(cl)?;
            kernel.set_arg(2, &count).map_err(cl)?;
            kernel.set_arg(3, &seed).map_err(cl)?;
            self.queue.enqueue_nd_range_kernel(
                kernel.get(),
                1,
                ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(cl)?;
        let seconds = event_seconds(&event)?;
        Ok((
            DeviceInput {
                buffer: Some(buffer),
                len,
                bytes,
                upload_s: 0.0,
            },
            seconds,
        ))
    }

    /// The bytes of a device input, copied back.
    pub fn download(&self, input: &DeviceInput) -> Result<Vec<u8>, RunError> {
        match &input.buffer {
            None => Ok(Vec::new()),
            Some(buffer) => Ok(driver::read(&self.queue, buffer, input.bytes)?.0),
        }
    }

    /// Reduces each range of the `hashed` array of `seed` with what `auto` chooses, each
    /// generated on the device as an input of its own (one buffer at a time) and reduced
    /// `repeat` times in place (each repeat timed on its own).
    pub fn reduce_hashed(
        &self,
        problem: &Problem,
        ranges: &[Range<usize>],
        seed: u64,
        repeat: usize,
    ) -> Result<GeneratedParts, RunError> {
        let mut parts = GeneratedParts::default();
        for r in ranges {
            let (input, seconds) = self.generate_hashed(problem.dtype, r.start, r.len(), seed)?;
            parts.generate_s += seconds;
            let choice = self.auto(problem, r.len());
            for rep in 0..repeat.max(1) {
                let run = self.run(&choice.variant, problem, &input, &choice.param_pairs())?;
                parts.record(rep, run.passes.iter().sum::<f64>(), run.value)?;
            }
        }
        Ok(parts)
    }
}
