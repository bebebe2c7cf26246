//! Whole arrays reduced by the production kernel built as the CUDA stream path builds
//! it (`SEPARATE_RESULT`, canonical_one.cl): the last group stores the finished result
//! in a buffer of its own, in its in-place form (an index, the float an order key stands
//! for; result_form.h) or after a statistic's `post`. The kernel text is CUDA's, so any
//! OpenCL device (PoCL in CI) checks those stores against the host.

use redlab_core::{ArrayRef, DType, Packed, Problem};
use redlab_expr::Reduction;
use redlab_kernels::assembly;
use redlab_kernels::codec::Codec;
use redlab_kernels::driver::{
    self as kernel_driver, Plan, ONE_LAUNCH_MAX_PARTIALS, ONE_LAUNCH_TAIL_BYTES,
};
use redlab_kernels::{mapped, RunError};

use crate::driver;
use crate::OpenClDevice;

impl OpenClDevice {
    /// Built-in `problem` over the whole of `data`, its result stored by the kernel
    /// ([`Codec::separate_result_decls`]). Returns the result's type and bytes;
    /// [`RunError::Skipped`] where the result needs the host or there are no elements.
    pub fn reduce_to_result(
        &self,
        problem: &Problem,
        data: ArrayRef<'_>,
    ) -> Result<(DType, Vec<u8>), RunError> {
        problem
            .check_input(&data)
            .map_err(|e| RunError::Device(e.to_string()))?;
        let decls = Codec::new(problem)
            .separate_result_decls()
            .ok_or_else(|| RunError::Skipped(format!("{problem}: the result needs the host")))?;
        let dtype = Packed::result_dtype(problem);
        let variant = mapped::variant().map_err(RunError::Device)?;
        let choice = self.auto(problem, data.len());
        let pairs = if choice.variant.name == variant.name {
            choice.param_pairs()
        } else {
            Vec::new()
        };
        let bytes = self.separate_launch(problem, &decls, &pairs, data, dtype.size_bytes())?;
        Ok((dtype, bytes))
    }

    /// A one-input `reduction` of the whole of `data` finished on the device
    /// ([`mapped::whole_to_result`]: `post` applied by the last group over the element
    /// count; a map that is the input itself runs the plain kernel). Returns the
    /// result's type and bytes; [`RunError::Skipped`] where the path does not apply (no
    /// elements, a result that needs the host).
    pub fn reduce_whole_to_result(
        &self,
        reduction: &Reduction,
        data: ArrayRef<'_>,
    ) -> Result<(DType, Vec<u8>), RunError> {
        mapped::check_raw_input(reduction, &data).map_err(RunError::Device)?;
        let whole = mapped::whole_to_result(reduction).map_err(RunError::Skipped)?;
        let choice = self.auto(&whole.problem, data.len());
        let tuned = choice.param_pairs();
        let pairs = whole.params(&choice.variant, &tuned);
        let bytes = self.separate_launch(
            &whole.problem,
            &whole.decls,
            &pairs,
            data,
            whole.dtype.size_bytes(),
        )?;
        Ok((whole.dtype, bytes))
    }

    /// One launch of the production kernel for `problem` with section 2 `decls` (built
    /// with `SEPARATE_RESULT`) over `data`: a zeroed scratch buffer for its roots and
    /// ticket, as the CUDA path keeps per stream, and the `result_bytes` it stores.
    fn separate_launch(
        &self,
        problem: &Problem,
        decls: &str,
        pairs: &[(&str, u32)],
        data: ArrayRef<'_>,
        result_bytes: usize,
    ) -> Result<Vec<u8>, RunError> {
        let n = data.len();
        let variant = mapped::variant().map_err(RunError::Device)?;
        let params = kernel_driver::launch_params(&variant, problem, &self.caps, pairs, n);
        let wg = match kernel_driver::plan(&variant, problem, &self.caps, &params, n)? {
            Plan::Empty(_) => return Err(RunError::Skipped("no elements".into())),
            Plan::Launch { wg } => wg,
        };
        let mut assembled = assembly::assemble_with(
            &variant,
            problem,
            decls,
            &params,
            &[],
            assembly::Target::OpenCl,
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
            problem,
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
        let acc_bytes = Codec::new(problem).acc_bytes;
        let scratch_bytes = (1 + ONE_LAUNCH_MAX_PARTIALS) * acc_bytes + ONE_LAUNCH_TAIL_BYTES;
        let mut scratch = driver::buffer(&self.context, scratch_bytes)?;
        driver::write(&self.queue, &mut scratch, &vec![0u8; scratch_bytes])?;
        let result = driver::buffer(&self.context, result_bytes)?;
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
        Ok(driver::read(&self.queue, &result, result_bytes)?.0)
    }
}
