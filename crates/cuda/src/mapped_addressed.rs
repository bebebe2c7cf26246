//! User-defined reductions over several inputs already in this device's memory (CUDA
//! tensors from DLPack), read where they lie: a table of their addresses stands in for
//! the packed buffer ([`redlab_kernels::mapped_addressed`]), so the map, the kernels
//! and the bits are those of [`CudaDevice::reduce_mapped`] without a copy of any input.
//! Tables are kept by their bytes, so the calls of a loop over the same tensors upload
//! none after the first.

use std::collections::HashMap;

use redlab_core::{ArrayRef, DType, Error, Outcome};
use redlab_expr::codegen::InputLayout;
use redlab_expr::Reduction;
use redlab_kernels::assembly::Target;
use redlab_kernels::mapped_addressed;
use redlab_kernels::segments::{SegmentJob, SegmentResults};
use redlab_kernels::RunError;

use crate::memory::DeviceBuffer;
use crate::{backend_error, CudaDevice, DeviceInput};

/// Address tables on the device, by their bytes.
pub(crate) type AddressTables = HashMap<Vec<u8>, DeviceBuffer>;

/// Tables kept before further ones are uploaded per call instead. None is ever freed
/// while the device is open: a kept table may be read by work still queued.
const MAX_TABLES: usize = 1024;

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
        let mut input = match self.kept_address_table(inputs) {
            // SAFETY: kept tables live as long as the device.
            Ok(address) => DeviceInput {
                buffer: Some(unsafe {
                    DeviceBuffer::borrowed(self.timeline.ctx, address, 8 * inputs.len())
                }),
                len: 0,
                dtype: DType::U8,
                upload_s: 0.0,
            },
            // Past the kept tables' limit: this call's own, freed after it.
            Err(RunError::Skipped(_)) => self
                .upload(ArrayRef::from_slice::<u8>(&mapped_addressed::table(inputs)))
                .map_err(backend_error)?,
            Err(e) => return Err(backend_error(e)),
        };
        input.len = n;
        input.dtype = DType::U8;
        Ok(input)
    }

    /// The device address of the table of `inputs`, uploaded on first use and kept
    /// while the device is open, so work queued on any stream may still read it.
    /// [`RunError::Skipped`] once [`MAX_TABLES`] are kept and this one is not among them.
    pub(crate) fn kept_address_table(&self, inputs: &[(u64, DType)]) -> Result<u64, RunError> {
        let table = mapped_addressed::table(inputs);
        let mut tables = self
            .address_tables
            .lock()
            .map_err(|_| RunError::Device("address tables poisoned".into()))?;
        if let Some(kept) = tables.get(&table) {
            return Ok(kept.ptr);
        }
        if tables.len() >= MAX_TABLES {
            return Err(RunError::Skipped(format!(
                "{MAX_TABLES} address tables are kept already"
            )));
        }
        self.timeline.bind()?;
        let buffer = DeviceBuffer::alloc(self.timeline.ctx, table.len())?;
        self.timeline.write(&buffer, &table)?;
        let address = buffer.ptr;
        tables.insert(table, buffer);
        Ok(address)
    }

    /// Runs `reduction` over the inputs of a table from [`CudaDevice::address_inputs`]
    /// with the production kernel; `post` is applied to the result.
    pub fn run_mapped_addressed(
        &self,
        reduction: &Reduction,
        table: &DeviceInput,
    ) -> Result<Outcome, Error> {
        self.run_mapped_in(reduction, table, &[], InputLayout::Addressed)
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
