//! The statistics kernels (`statistics.cl`: variance and standard deviation, log-sum-exp,
//! the NaN-skipping minimum, maximum and mean) in the simulator, through the same tile
//! plan, program choice and launch as the GPU backends
//! ([`redlab_kernels::statistics`]): the launch is analyzed like any pass, and the tile
//! states come back for the host to join and finish, as the devices' do.

use std::rc::Rc;

use redlab_core::segmented::Selection;
use redlab_core::ArrayRef;
use redlab_kernels::assembly::Target;
use redlab_kernels::driver::Launcher;
use redlab_kernels::nan_columns;
use redlab_kernels::statistics::{explain, run_tiles, Program, StateKind, TilePlan};

use crate::variant::{Pass, SimKernel, SimLauncher, VariantOptions};
use crate::{compile, project_headers, AnalyzeError};

/// What one analyzed run of a statistics kernel gives.
#[derive(Debug, Clone)]
pub struct StatisticsRun {
    /// Which kernel the plan chose, and why.
    pub strategy: String,
    /// The tile plan: which tiles make each output.
    pub plan: TilePlan,
    /// Each tile's state (three numbers, as the devices return them).
    pub states: Vec<[f64; 3]>,
    /// The launch, analyzed (none for an input without elements).
    pub passes: Vec<Pass>,
}

/// Runs the tiles of `selection` over `data` for the state `kind` in the simulator.
pub fn run(
    kind: StateKind,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    opts: &VariantOptions,
) -> Result<StatisticsRun, AnalyzeError> {
    let usage = AnalyzeError::Usage;
    let plan = TilePlan::new(data, selection).map_err(|e| usage(e.to_string()))?;
    let launcher = SimLauncher::new(opts.config.clone());
    let rows = plan.rows(data).map_err(|e| usage(e.to_string()))?;
    let input = launcher.upload(rows.bytes(), 16)?;
    // nanmean over columns runs as on the devices: the moments' columns kernel first,
    // the tiles whose mean came out NaN again, compacted (`nan_columns`).
    let (states, _) = nan_columns::tile_states(
        kind,
        data.dtype(),
        Target::OpenCl,
        &plan,
        crate::segments::MAX_WORK_GROUP,
        |program, plan| run_program(&launcher, &input, kind, program, plan, opts).map(|s| (s, 0.0)),
    )?;
    Ok(StatisticsRun {
        strategy: explain(kind, data.dtype(), selection),
        plan,
        states,
        passes: launcher.passes.into_inner(),
    })
}

/// One statistics program's tile states over `plan`, its launch analyzed on `launcher`.
fn run_program(
    launcher: &SimLauncher,
    input: &<SimLauncher as Launcher>::Buffer,
    kind: StateKind,
    program: &Program,
    plan: &TilePlan,
    opts: &VariantOptions,
) -> Result<Vec<[f64; 3]>, AnalyzeError> {
    let compiled = Rc::new(compile(
        &format!("statistics ({kind:?}, {})", program.entry),
        &program.source,
        &opts.defines,
        &project_headers,
    )?);
    let kernel = SimKernel {
        compiled,
        name: program.entry,
    };
    let result = run_tiles(launcher, &kernel, program, input, plan);
    if let Some(e) = launcher.failure.borrow_mut().take() {
        return Err(e);
    }
    let (states, _) = result.map_err(|e| AnalyzeError::Usage(format!("statistics: {e}")))?;
    Ok(states)
}
