//! Statistics with several numbers per lane on the OpenCL device: the tile states of
//! `statistics.cl` for a plan of tiles (`redlab_kernels::statistics`).

use redlab_core::{ArrayRef, DType};
use redlab_kernels::assembly::Target;
use redlab_kernels::nan_columns;
use redlab_kernels::statistics::{run_tiles, Program, StateKind, TilePlan};
use redlab_kernels::{Feature, RunError};

use crate::driver::ClLauncher;
use crate::OpenClDevice;

impl OpenClDevice {
    /// The state of every tile of `plan` over `data` (or over the plan's gathered rows),
    /// and the kernel's seconds.
    pub fn statistic_tiles(
        &self,
        kind: StateKind,
        data: ArrayRef<'_>,
        plan: &TilePlan,
    ) -> Result<(Vec<[f64; 3]>, f64), RunError> {
        if plan.tiles() == 0 {
            return Ok((Vec::new(), 0.0));
        }
        if !self.caps.has(Feature::Fp64) {
            return Err(RunError::Device(
                "statistics are computed in double precision, which this device lacks (cl_khr_fp64)"
                    .into(),
            ));
        }
        let dtype: DType = data.dtype();
        let rows = plan.rows(data)?;
        let input = self.upload(rows)?;
        let buffer = input
            .buffer
            .as_ref()
            .ok_or_else(|| RunError::Device("empty input reached the device".into()))?;
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        // nanmean over columns: the moments' columns kernel first, then the tiles holding
        // a NaN compacted, as many to a work-group as the device's allow
        // (`redlab_kernels::nan_columns`).
        let widest = self.caps.max_work_group;
        nan_columns::tile_states(
            kind,
            dtype,
            Target::OpenCl,
            plan,
            widest,
            |program, plan| self.run_program(program, buffer, plan),
        )
    }

    /// One statistics kernel's tile states over an uploaded input, and its seconds.
    fn run_program(
        &self,
        program: &Program,
        buffer: &opencl3::memory::Buffer<u8>,
        plan: &TilePlan,
    ) -> Result<(Vec<[f64; 3]>, f64), RunError> {
        let built = self
            .programs
            .get(&self.context, &program.source, "", &[program.entry])
            .map_err(|e| RunError::Build(e.log))?;
        let kernel = built
            .kernel(program.entry)
            .ok_or_else(|| RunError::Device("missing statistics kernel".into()))?;
        let launcher = ClLauncher {
            context: &self.context,
            queue: &self.queue,
        };
        run_tiles(&launcher, kernel, program, buffer, plan)
    }
}
