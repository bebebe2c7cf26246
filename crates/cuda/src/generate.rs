//! `hashed` inputs made on the GPU itself (`generate.cl`), and reductions of them: a
//! device writes its own part of an array in place (no host copy, no transfer), so a
//! group of GPUs holds and reduces an array larger than any one of them, or than the
//! host, can hold.

use std::ffi::c_void;
use std::ops::Range;

use cudarc::driver::{result, sys};
use redlab_core::{DType, Problem};
use redlab_kernels::assembly::Target;
use redlab_kernels::generate::{byte_len, grid, source, GeneratedParts, ENTRY_POINT, WORK_GROUP};
use redlab_kernels::RunError;

use crate::memory::{cu, DeviceBuffer};
use crate::{CudaDevice, DeviceInput};

impl CudaDevice {
    /// Elements `start .. start + len` of the `hashed` array of `seed`
    /// ([`redlab_core::hashed`]), written on the device, and the seconds it took. A
    /// length beyond the free device memory is refused with both sizes.
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
                    dtype,
                    upload_s: 0.0,
                },
                0.0,
            ));
        }
        self.check_fits(bytes)?;
        let buffer = DeviceBuffer::alloc(self.timeline.ctx, bytes)?;
        let function = self.modules.functions(
            &source(dtype, Target::Cuda),
            &self.query.arch(),
            &[ENTRY_POINT],
        )?[0];
        let items = grid(len, self.caps.compute_units);
        let blocks = u32::try_from(items / WORK_GROUP)
            .map_err(|_| RunError::Device("generation grid too large".into()))?;
        let (mut out, mut first, mut count, mut seed) =
            (buffer.ptr, start as u64, len as u64, seed);
        let mut params: [*mut c_void; 4] = [
            (&mut out as *mut sys::CUdeviceptr).cast(),
            (&mut first as *mut u64).cast(),
            (&mut count as *mut u64).cast(),
            (&mut seed as *mut u64).cast(),
        ];
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        let seconds = self.timeline.time(|stream| {
            // SAFETY: generate_hashed(gen_t* out, ulong start, ulong n, ulong seed) with
            // `out` holding `len` elements; the values live until the launch has copied
            // them, and the launch is waited for before `buffer` can be dropped.
            unsafe {
                result::launch_kernel(
                    function,
                    (blocks, 1, 1),
                    (WORK_GROUP as u32, 1, 1),
                    0,
                    stream,
                    &mut params,
                )
            }
            .map_err(cu("cuLaunchKernel"))
        })?;
        Ok((
            DeviceInput {
                buffer: Some(buffer),
                len,
                dtype,
                upload_s: 0.0,
            },
            seconds,
        ))
    }

    /// Generates the elements from the first range's start to the last range's end (one
    /// contiguous part of the `hashed` array of `seed`) on the device, then reduces each
    /// range with what `auto` chooses, as an input of its own, in place, `repeat` times
    /// (each repeat timed on its own; the data is made once). The ranges must be ordered
    /// and adjacent.
    pub fn reduce_hashed(
        &self,
        problem: &Problem,
        ranges: &[Range<usize>],
        seed: u64,
        repeat: usize,
    ) -> Result<GeneratedParts, RunError> {
        let (Some(first), Some(last)) = (ranges.first(), ranges.last()) else {
            return Ok(GeneratedParts::default());
        };
        if ranges.windows(2).any(|w| w[0].end != w[1].start) || last.end < first.start {
            return Err(RunError::Device(
                "ranges must be ordered and adjacent".into(),
            ));
        }
        let (part, generate_s) =
            self.generate_hashed(problem.dtype, first.start, last.end - first.start, seed)?;
        let size = problem.dtype.size_bytes();
        let mut parts = GeneratedParts {
            generate_s,
            ..GeneratedParts::default()
        };
        let base = part.device_ptr().unwrap_or(0);
        for r in ranges {
            let ptr = base + ((r.start - first.start) * size) as u64;
            // SAFETY: the range lies inside `part`, which lives until after the run. Its
            // start is a multiple of a canonical subtree (whole tiles), so 16-byte aligned.
            let view = unsafe { self.device_resident(ptr, r.len(), problem.dtype)? };
            let choice = self.auto(problem, r.len());
            for rep in 0..repeat.max(1) {
                let run = self.run(&choice.variant, problem, &view, &choice.param_pairs())?;
                parts.record(rep, run.passes.iter().sum::<f64>(), run.value)?;
            }
        }
        Ok(parts)
    }

    /// Refuses `bytes` that do not fit in the free device memory, with both sizes.
    pub(crate) fn check_fits(&self, bytes: usize) -> Result<(), RunError> {
        let (free, total) = self.memory()?;
        // Headroom for partials and the driver's own needs.
        let headroom = 64 << 20;
        if bytes + headroom > free {
            return Err(RunError::Device(format!(
                "the input needs {:.2} GiB on the device, which has {:.2} GiB free of {:.2} GiB",
                bytes as f64 / (1u64 << 30) as f64,
                free as f64 / (1u64 << 30) as f64,
                total as f64 / (1u64 << 30) as f64
            )));
        }
        Ok(())
    }
}
