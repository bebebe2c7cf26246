//! User-defined reductions on an OpenCL device: the inputs packed into one buffer and
//! the production kernel built with the map as its `lift()` ([`redlab_kernels::mapped`]);
//! along axes and over segments, the map built into the segment kernels.

use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, Error, Outcome, Value};
use redlab_expr::{host, Reduction};
use redlab_kernels::assembly::Target;
use redlab_kernels::mapped;
use redlab_kernels::mapped_segments::prepare_mapped;
use redlab_kernels::segments::{SegmentJob, SegmentResults};
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

    /// One value per output of `selection` of `reduction` over `inputs`, before `post`:
    /// the segment kernels map each raw element as they load it, every output in its own
    /// canonical order (one input read raw, several packed into one buffer:
    /// [`prepare_mapped`]), with the seconds of each launch.
    pub fn compute_mapped_outputs(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
    ) -> Result<(Vec<Value>, Vec<f64>), Error> {
        let device = (self.caps.max_work_group, Target::OpenCl);
        prepare_mapped(
            reduction,
            inputs,
            selection,
            device,
            |problem, assembled, job, rows| {
                let input = self.upload(rows).map_err(backend_error)?;
                self.segments_built(assembled, problem, &input, job)
                    .and_then(SegmentResults::values)
                    .map_err(backend_error)
            },
        )
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
}
