//! Statistics with several numbers per lane on the CUDA device: the tile states of
//! `statistics.cl` for a plan of tiles (`redlab_kernels::statistics`), over host data
//! (uploaded) or a device-resident input.

use redlab_core::ArrayRef;
use redlab_kernels::assembly::Target;
use redlab_kernels::statistics::{program, run_tiles, StateKind, TilePlan};
use redlab_kernels::RunError;

use crate::{CudaDevice, DeviceInput};

impl CudaDevice {
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
        let rows = plan.rows(data)?;
        let input = self.upload(rows)?;
        self.statistic_tiles_resident(kind, &input, plan)
    }

    /// [`CudaDevice::statistic_tiles`] over an input already on the device (the plan
    /// must not gather).
    pub fn statistic_tiles_resident(
        &self,
        kind: StateKind,
        input: &DeviceInput,
        plan: &TilePlan,
    ) -> Result<(Vec<[f64; 3]>, f64), RunError> {
        if plan.tiles() == 0 {
            return Ok((Vec::new(), 0.0));
        }
        let buffer = input
            .buffer
            .as_ref()
            .ok_or_else(|| RunError::Device("empty input reached the device".into()))?;
        self.timeline.bind()?;
        let program = program(kind, input.dtype, Target::Cuda, plan);
        let function =
            self.modules
                .functions(&program.source, &self.query.arch(), &[program.entry])?[0];
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        self.timeline.bind()?;
        run_tiles(&*self.timeline, &function, program.groups, buffer, plan)
    }
}
