//! User-defined reductions on an OpenCL device: the inputs packed into one buffer and
//! the production kernel built with the map as its `lift()` ([`redlab_kernels::mapped`]);
//! along axes and over segments, a one-input map built into the segment kernels; and a
//! whole array finished on the device, as the CUDA stream path runs it.

use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, DType, Error, Outcome, Value};
use redlab_expr::{host, Reduction};
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::driver::{
    self as kernel_driver, Plan, ONE_LAUNCH_MAX_PARTIALS, ONE_LAUNCH_TAIL_BYTES,
};
use redlab_kernels::mapped;
use redlab_kernels::segments::{prepare, SegmentJob, SegmentResults};
use redlab_kernels::RunError;

use crate::driver::{self, DeviceInput};
use crate::{backend_error, OpenClDevice};

impl OpenClDevice {
    /// Uploads the inputs of `reduction` into one buffer, as the mapped kernel reads them.
    pub fn upload_inputs(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<DeviceInput, Error> {
        let n = host::check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
        let packed = mapped::pack(reduction, inputs);
        if packed.is_empty() {
            return Ok(DeviceInput {
                buffer: None,
                len: 0,
                bytes: 0,
                upload_s: 0.0,
            });
        }
        let mut buffer = driver::buffer(&self.context, packed.len()).map_err(backend_error)?;
        let upload_s = driver::write(&self.queue, &mut buffer, &packed).map_err(backend_error)?;
        Ok(DeviceInput {
            buffer: Some(buffer),
            len: n,
            bytes: packed.len(),
            upload_s,
        })
    }

    /// Runs `reduction` over inputs uploaded by [`OpenClDevice::upload_inputs`]; `post`
    /// is applied to the result.
    pub fn run_mapped(&self, reduction: &Reduction, input: &DeviceInput) -> Result<Outcome, Error> {
        let (problem, decls) = mapped::decls(reduction).map_err(Error::Shape)?;
        let variant = mapped::variant().map_err(backend_error)?;
        let choice = self.auto(&problem, input.len);
        let tuned = choice.param_pairs();
        let params = mapped::params(&problem, &choice.variant, &tuned);
        let run = self
            .run_with(&variant, &problem, Some(&decls.source), input, &params)
            .map_err(backend_error)?;
        Ok(mapped::outcome(reduction, run, input.len))
    }

    /// Uploads and reduces: [`OpenClDevice::upload_inputs`] then
    /// [`OpenClDevice::run_mapped`].
    pub fn reduce_mapped(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<Outcome, Error> {
        let input = self.upload_inputs(reduction, inputs)?;
        self.run_mapped(reduction, &input)
    }

    /// One value per output of `selection` of a one-input `reduction` over `data`, before
    /// `post`: the segment kernels map each raw element as they load it, every output in
    /// its own canonical order ([`mapped::segments`]), with the seconds of each launch.
    pub fn compute_mapped_outputs(
        &self,
        reduction: &Reduction,
        data: ArrayRef<'_>,
        selection: Selection<'_>,
    ) -> Result<(Vec<Value>, Vec<f64>), Error> {
        mapped::check_raw_input(reduction, &data).map_err(Error::Shape)?;
        let (problem, assembled) =
            mapped::segments(reduction, Target::OpenCl).map_err(Error::Shape)?;
        let device = (self.caps.max_work_group, true);
        prepare(&problem, data, selection, device, |job, rows| {
            let input = self.upload(rows).map_err(backend_error)?;
            self.segments_built(&assembled, &problem, &input, job)
                .and_then(SegmentResults::values)
                .map_err(backend_error)
        })
    }

    /// What the mapped segment kernels of `job` wrote over an uploaded input of the raw
    /// elements, before `post`.
    pub fn mapped_segment_results(
        &self,
        reduction: &Reduction,
        input: &DeviceInput,
        job: &SegmentJob,
    ) -> Result<SegmentResults, RunError> {
        let (problem, assembled) =
            mapped::segments(reduction, Target::OpenCl).map_err(RunError::Device)?;
        self.segments_built(&assembled, &problem, input, job)
    }

    /// A one-input `reduction` of the whole of `data` finished on the device: the
    /// production kernel built as the CUDA stream path builds it
    /// ([`mapped::whole_to_result`]: `SEPARATE_RESULT`, and `post` applied by the last
    /// group over the element count), writing the result into a buffer of its own.
    /// Returns the result's type and bytes. The kernel text is CUDA's, so any OpenCL
    /// device (PoCL in CI) checks it against the host. [`RunError::Skipped`] where the
    /// path does not apply (no elements, a result that needs the host).
    pub fn reduce_whole_to_result(
        &self,
        reduction: &Reduction,
        data: ArrayRef<'_>,
    ) -> Result<(DType, Vec<u8>), RunError> {
        mapped::check_raw_input(reduction, &data).map_err(RunError::Device)?;
        let whole = mapped::whole_to_result(reduction).map_err(RunError::Skipped)?;
        let (problem, decls, dtype) = (whole.problem, whole.decls, whole.dtype);
        let n = data.len();
        let variant = mapped::variant().map_err(RunError::Device)?;
        let choice = self.auto(&problem, n);
        let tuned = choice.param_pairs();
        let pairs = match (whole.plain, choice.variant.name == variant.name) {
            (true, true) => tuned,
            (true, false) => Vec::new(),
            (false, _) => mapped::params(&problem, &choice.variant, &tuned),
        };
        let params = kernel_driver::launch_params(&variant, &problem, &self.caps, &pairs, n);
        let wg = match kernel_driver::plan(&variant, &problem, &self.caps, &params, n)? {
            Plan::Empty(_) => return Err(RunError::Skipped("no elements".into())),
            Plan::Launch { wg } => wg,
        };
        let mut assembled = assembly::assemble_with(
            &variant,
            &problem,
            &decls,
            &params,
            &[],
            Target::OpenCl,
            true,
        )
        .map_err(RunError::Device)?;
        assembled.options = format!("{} {}", assembled.options, mapped::OPENCL_OPTIONS);
        let program = self
            .programs
            .get(
                &self.context,
                &assembled.source,
                &assembled.options,
                &["reduce"],
            )
            .map_err(|e| RunError::Build(e.log))?;
        let kernel = program
            .kernel("reduce")
            .ok_or_else(|| RunError::Device("kernel reduce missing after build".into()))?;
        let (global, local, _) = kernel_driver::layout(
            variant.geometry,
            &problem,
            n,
            wg,
            &self.caps,
            &variant,
            &params,
        );
        let input = self.upload(data)?;
        let source = input
            .buffer
            .as_ref()
            .ok_or_else(|| RunError::Device("empty input reached the device".into()))?;
        // Result, roots and ticket, zeroed as the CUDA path zeroes its per-stream scratch.
        let acc_bytes = redlab_kernels::codec::Codec::new(&problem).acc_bytes;
        let scratch_bytes = (1 + ONE_LAUNCH_MAX_PARTIALS) * acc_bytes + ONE_LAUNCH_TAIL_BYTES;
        let mut scratch = driver::buffer(&self.context, scratch_bytes)?;
        driver::write(&self.queue, &mut scratch, &vec![0u8; scratch_bytes])?;
        let result = driver::buffer(&self.context, dtype.size_bytes())?;
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        driver::launch_to(
            &self.queue,
            kernel,
            (source, &scratch, Some(&result)),
            n,
            global,
            local,
        )?;
        let (bytes, _) = driver::read(&self.queue, &result, dtype.size_bytes())?;
        Ok((dtype, bytes))
    }
}
