//! User-defined reductions on a CUDA device: the inputs packed into one buffer and the
//! production kernel built through NVRTC with the map as its `lift()`
//! ([`redlab_kernels::mapped`]); the module cache keys on the source, so each expression
//! builds once per device. Along axes and over segments, a one-input map is compiled
//! into the segment kernels the same way ([`redlab_kernels::mapped::segments`]).

use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, DType, Error, Outcome, Value};
use redlab_expr::codegen::InputLayout;
use redlab_expr::{host, Reduction};
use redlab_kernels::assembly::Target;
use redlab_kernels::mapped;
use redlab_kernels::mapped_segments::prepare_mapped;
use redlab_kernels::segments::{SegmentJob, SegmentResults};
use redlab_kernels::{RunError, Variant};

use crate::graph::GraphRun;
use crate::{backend_error, CudaDevice, DeviceInput};

/// What a mapped launch needs: the kernel, the problem over mapped values, section 2,
/// and the parameters.
pub(crate) struct MappedLaunch {
    pub(crate) variant: Variant,
    pub(crate) problem: redlab_core::Problem,
    pub(crate) decls: String,
    pub(crate) params: Vec<(&'static str, u32)>,
}

impl CudaDevice {
    /// Uploads the inputs of `reduction` into one buffer, as the mapped kernel reads them.
    pub fn upload_inputs(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<DeviceInput, Error> {
        let n = host::check_inputs(reduction, inputs).map_err(|e| Error::Shape(e.to_string()))?;
        let packed = mapped::pack(reduction, inputs);
        let mut input = self
            .upload(ArrayRef::from_slice::<u8>(&packed))
            .map_err(backend_error)?;
        input.len = n;
        input.dtype = DType::U8;
        Ok(input)
    }

    /// The production kernel, its parameters and declarations for `reduction` over `n`.
    /// `overrides` replace parameters by name (`bench --map --param`).
    /// `layout` says where the kernel finds the inputs.
    pub(crate) fn mapped_launch(
        &self,
        reduction: &Reduction,
        n: usize,
        overrides: &[(&str, u32)],
        layout: InputLayout,
    ) -> Result<MappedLaunch, Error> {
        let (problem, decls) = mapped::decls_for(reduction, layout).map_err(Error::Shape)?;
        let variant = mapped::variant().map_err(backend_error)?;
        let choice = self.auto(&problem, n);
        let mut pairs = mapped::params(&problem, &choice.variant, &choice.param_pairs());
        pairs.retain(|(name, _)| !overrides.iter().any(|(o, _)| o == name));
        pairs.extend_from_slice(overrides);
        for (name, value) in overrides {
            if variant.default_param(name).is_some() {
                variant.check_param(name, *value).map_err(backend_error)?;
            } else {
                return Err(backend_error(format!(
                    "the production kernel has no parameter {name}"
                )));
            }
        }
        let params = pairs
            .into_iter()
            .filter_map(|(name, v)| {
                variant
                    .params
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| (p.name, v))
            })
            .collect();
        Ok(MappedLaunch {
            variant,
            problem,
            decls: decls.source,
            params,
        })
    }

    /// Runs `reduction` over inputs uploaded by [`CudaDevice::upload_inputs`]; `post` is
    /// applied to the result.
    pub fn run_mapped(&self, reduction: &Reduction, input: &DeviceInput) -> Result<Outcome, Error> {
        self.run_mapped_with(reduction, input, &[])
    }

    /// [`CudaDevice::run_mapped`] with parameters overridden.
    pub fn run_mapped_with(
        &self,
        reduction: &Reduction,
        input: &DeviceInput,
        overrides: &[(&str, u32)],
    ) -> Result<Outcome, Error> {
        self.run_mapped_in(reduction, input, overrides, InputLayout::Packed)
    }

    /// [`CudaDevice::run_mapped_with`] over inputs laid out as `layout` says (the packed
    /// buffer, or a table of addresses).
    pub(crate) fn run_mapped_in(
        &self,
        reduction: &Reduction,
        input: &DeviceInput,
        overrides: &[(&str, u32)],
        layout: InputLayout,
    ) -> Result<Outcome, Error> {
        let launch = self.mapped_launch(reduction, input.len, overrides, layout)?;
        let run = self
            .run_with(
                &launch.variant,
                &launch.problem,
                Some(&launch.decls),
                input,
                &launch.params,
            )
            .map_err(backend_error)?;
        Ok(mapped::outcome(reduction, run, input.len))
    }

    /// Uploads and reduces.
    pub fn reduce_mapped(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
    ) -> Result<Outcome, Error> {
        let input = self.upload_inputs(reduction, inputs)?;
        self.run_mapped(reduction, &input)
    }

    /// [`CudaDevice::graph_run`] for a user-defined reduction over packed inputs (the
    /// value is before `post`).
    pub fn graph_run_mapped(
        &self,
        reduction: &Reduction,
        inputs: &[DeviceInput],
        reductions: usize,
        overrides: &[(&str, u32)],
    ) -> Result<GraphRun, RunError> {
        let n = inputs.first().map_or(0, |i| i.len);
        let launch = self
            .mapped_launch(reduction, n, overrides, InputLayout::Packed)
            .map_err(|e| RunError::Device(e.to_string()))?;
        self.graph_run_with(
            &launch.variant,
            &launch.problem,
            Some(&launch.decls),
            inputs,
            reductions,
            &launch.params,
        )
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
        self.mapped_outputs_timed(reduction, inputs, selection, None)
    }

    /// [`CudaDevice::compute_mapped_outputs`] timed in the steady state: `calls`
    /// back-to-back calls of the segment kernels captured in one CUDA graph and
    /// replayed, with one call's share of the replay's seconds.
    pub fn compute_mapped_outputs_graph(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
        calls: usize,
    ) -> Result<(Vec<Value>, f64), Error> {
        let (values, seconds) =
            self.mapped_outputs_timed(reduction, inputs, selection, Some(calls))?;
        Ok((values, seconds.iter().sum()))
    }

    fn mapped_outputs_timed(
        &self,
        reduction: &Reduction,
        inputs: &[ArrayRef<'_>],
        selection: Selection<'_>,
        graph_calls: Option<usize>,
    ) -> Result<(Vec<Value>, Vec<f64>), Error> {
        let device = (self.caps.max_work_group, Target::Cuda);
        prepare_mapped(
            reduction,
            inputs,
            selection,
            device,
            |problem, assembled, job, rows| {
                let input = self.upload(rows).map_err(backend_error)?;
                self.segments_built(&assembled.source, problem, &input, job, graph_calls)
                    .and_then(SegmentResults::values)
                    .map_err(backend_error)
            },
        )
    }

    /// What the mapped segment kernels of `job` wrote over a device input of the raw
    /// elements (uploaded, or the caller's device memory), before `post`.
    pub fn mapped_segment_results(
        &self,
        reduction: &Reduction,
        input: &DeviceInput,
        job: &SegmentJob,
    ) -> Result<SegmentResults, RunError> {
        let (problem, assembled) =
            mapped::segments(reduction, Target::Cuda).map_err(RunError::Device)?;
        self.segments_built(&assembled.source, &problem, input, job, None)
    }
}
