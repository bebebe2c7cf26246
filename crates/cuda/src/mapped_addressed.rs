//! User-defined reductions over several inputs already in this device's memory (CUDA
//! tensors from DLPack), read where they lie: a table of their addresses stands in for
//! the packed buffer ([`redlab_kernels::mapped_addressed`]), so the map, the kernels
//! and the bits are those of [`CudaDevice::reduce_mapped`] without a copy of any input.

use redlab_core::{ArrayRef, DType, Error, Outcome};
use redlab_expr::codegen::InputLayout;
use redlab_expr::Reduction;
use redlab_kernels::assembly::Target;
use redlab_kernels::mapped;
use redlab_kernels::mapped_addressed;
use redlab_kernels::segments::{SegmentJob, SegmentResults};
use redlab_kernels::RunError;

use crate::{backend_error, CudaDevice, DeviceInput};

impl CudaDevice {
    /// The table of `inputs` (the device address and element type of each input of
    /// `reduction`, `n` elements apiece) that the addressed kernels read. Only the
    /// addresses travel; the data stays where it is.
    ///
    /// # Safety
    ///
    /// Each address must point to at least `n` elements of its type in this device's
    /// memory, alive and unchanged until the kernels that read the table have finished.
    pub unsafe fn address_inputs(
        &self,
        reduction: &Reduction,
        inputs: &[(u64, DType)],
        n: usize,
    ) -> Result<DeviceInput, Error> {
        mapped_addressed::check(reduction, inputs).map_err(Error::Shape)?;
        let table = mapped_addressed::table(inputs);
        let mut input = self
            .upload(ArrayRef::from_slice::<u8>(&table))
            .map_err(backend_error)?;
        input.len = n;
        input.dtype = DType::U8;
        Ok(input)
    }

    /// Runs `reduction` over the inputs of a table from [`CudaDevice::address_inputs`]
    /// with the production kernel; `post` is applied to the result.
    pub fn run_mapped_addressed(
        &self,
        reduction: &Reduction,
        table: &DeviceInput,
    ) -> Result<Outcome, Error> {
        let launch = self.mapped_launch(reduction, table.len, &[], InputLayout::Addressed)?;
        let run = self
            .run_with(
                &launch.variant,
                &launch.problem,
                Some(&launch.decls),
                table,
                &launch.params,
            )
            .map_err(backend_error)?;
        Ok(mapped::outcome(reduction, run, table.len))
    }

    /// What the segment kernels of `job` wrote for `reduction` over the inputs of a
    /// table from [`CudaDevice::address_inputs`], before `post`. The job's element
    /// offsets apply to every input alike (they share one shape and layout).
    pub fn mapped_segment_results_addressed(
        &self,
        reduction: &Reduction,
        table: &DeviceInput,
        job: &SegmentJob,
    ) -> Result<SegmentResults, RunError> {
        let (problem, assembled) =
            mapped_addressed::segments(reduction, Target::Cuda).map_err(RunError::Device)?;
        self.segments_built(&assembled.source, &problem, table, job, None)
    }
}
