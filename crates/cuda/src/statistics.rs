//! Statistics with several numbers per lane on the CUDA device: the tile states of
//! `statistics.cl` for a plan of tiles (`redlab_kernels::statistics`), over host data
//! (uploaded) or a device-resident input, timed one call at a time or in the steady
//! state of a CUDA graph.

use cudarc::driver::{result, sys};
use redlab_core::ArrayRef;
use redlab_core::DType;
use redlab_kernels::assembly::Target;
use redlab_kernels::nan_columns;
use redlab_kernels::statistics::{prefetches_rows, run_tiles, Program, StateKind, TilePlan};
use redlab_kernels::RunError;

use crate::graph_segments::Replayed;
use crate::{CudaDevice, DeviceInput};

/// What repeated calls over one upload saw: the first call's tile states, each call's
/// seconds, and whether every call gave the first one's bits.
pub type RepeatedStates = (Vec<[f64; 3]>, Vec<f64>, bool);

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

    /// [`CudaDevice::statistic_tiles`] timed in the steady state: `calls` back-to-back
    /// launches of the tile kernel captured in one CUDA graph and replayed; the seconds
    /// are one call's share of the replay (the states are the last call's, the same as
    /// every call's: the kernel writes each tile's state before anything reads it).
    pub fn statistic_tiles_graph(
        &self,
        kind: StateKind,
        data: ArrayRef<'_>,
        plan: &TilePlan,
        calls: usize,
    ) -> Result<(Vec<[f64; 3]>, f64), RunError> {
        if plan.tiles() == 0 {
            return Ok((Vec::new(), 0.0));
        }
        let rows = plan.rows(data)?;
        let input = self.upload(rows)?;
        self.statistic_tiles_on(kind, &input, plan, Some(calls))
    }

    /// [`CudaDevice::statistic_tiles`] `calls` times over one upload of the input, as a
    /// caller whose data stays on the device runs it: the first call's states, each
    /// call's seconds, and whether every call gave the first one's bits. (Timing each
    /// call right after its own upload times the upload's aftermath too:
    /// results/h200-resident-per-call.)
    pub fn statistic_tiles_repeated(
        &self,
        kind: StateKind,
        data: ArrayRef<'_>,
        plan: &TilePlan,
        calls: usize,
    ) -> Result<RepeatedStates, RunError> {
        if plan.tiles() == 0 {
            return Ok((Vec::new(), vec![0.0; calls.max(1)], true));
        }
        let input = self.upload(plan.rows(data)?)?;
        let (first, seconds) = self.statistic_tiles_on(kind, &input, plan, None)?;
        let mut all = vec![seconds];
        let mut agree = true;
        for _ in 1..calls.max(1) {
            let (states, seconds) = self.statistic_tiles_on(kind, &input, plan, None)?;
            all.push(seconds);
            agree &= states
                .iter()
                .flatten()
                .zip(first.iter().flatten())
                .all(|(a, b)| a.to_bits() == b.to_bits());
        }
        Ok((first, all, agree))
    }

    /// [`CudaDevice::statistic_tiles`] over an input already on the device (the plan
    /// must not gather).
    pub fn statistic_tiles_resident(
        &self,
        kind: StateKind,
        input: &DeviceInput,
        plan: &TilePlan,
    ) -> Result<(Vec<[f64; 3]>, f64), RunError> {
        self.statistic_tiles_on(kind, input, plan, None)
    }

    /// The tile states over a device input, the kernel timed once (`None`) or as
    /// `Some(calls)` launches replayed in a graph (nanmean over columns: two kernels, the
    /// second only where a tile has a NaN, `redlab_kernels::nan_columns`; their seconds
    /// add up).
    fn statistic_tiles_on(
        &self,
        kind: StateKind,
        input: &DeviceInput,
        plan: &TilePlan,
        graph_calls: Option<usize>,
    ) -> Result<(Vec<[f64; 3]>, f64), RunError> {
        if plan.tiles() == 0 {
            return Ok((Vec::new(), 0.0));
        }
        let widest = self.caps.max_work_group;
        nan_columns::tile_states(
            kind,
            input.dtype,
            Target::Cuda,
            plan,
            widest,
            |program, plan| self.run_program(program, input, plan, graph_calls),
        )
    }

    /// One statistics kernel's tile states over a device input, timed as
    /// [`CudaDevice::statistic_tiles_on`] says.
    fn run_program(
        &self,
        program: &Program,
        input: &DeviceInput,
        plan: &TilePlan,
        graph_calls: Option<usize>,
    ) -> Result<(Vec<[f64; 3]>, f64), RunError> {
        let buffer = input
            .buffer
            .as_ref()
            .ok_or_else(|| RunError::Device("empty input reached the device".into()))?;
        self.timeline.bind()?;
        let function = self.statistic_function(program, input.dtype)?;
        let _guard = self
            .running
            .lock()
            .map_err(|_| RunError::Device("device lock poisoned".into()))?;
        self.timeline.bind()?;
        match graph_calls {
            None => run_tiles(&*self.timeline, &function, program, buffer, plan),
            Some(calls) => {
                let replayed = Replayed::new(&self.timeline, calls);
                run_tiles(&replayed, &function, program, buffer, plan)
            }
        }
    }

    /// `program`'s kernel, compiled and loaded on first use: its bounded build, unless
    /// that spills to local memory and the unbounded build ([`Program::unbounded`])
    /// keeps less there. Only a spilling build pays for the second compilation; both
    /// are cached like any module, and the choice is remembered, so later calls look it
    /// up once instead of asking the driver again. Rows that [`prefetches_rows`] picks
    /// on this device (sm_90 and later, for the bulk prefetch) are built with
    /// `ST_ROW_PREFETCH`.
    fn statistic_function(
        &self,
        program: &Program,
        dtype: DType,
    ) -> Result<sys::CUfunction, RunError> {
        let arch = self.query.arch();
        let prefetch = self.query.compute_capability.0 >= 9
            && prefetches_rows(program, dtype, self.query.sms, self.query.l2_bytes);
        let prefix = if prefetch {
            "#define ST_ROW_PREFETCH 1\n"
        } else {
            ""
        };
        let key = format!("statistics\n{arch}\n{prefix}{}", program.source);
        let chosen = self.modules.memoized(&key, || {
            let build = |source: &str| {
                self.modules
                    .prefixed_functions(prefix, source, &arch, &[program.entry])
            };
            let bounded = build(&program.source)?;
            let spilled = local_bytes(bounded[0]);
            match &program.unbounded {
                Some(unbounded) if spilled > 0 => {
                    let free = build(unbounded)?;
                    Ok(if local_bytes(free[0]) < spilled {
                        free
                    } else {
                        bounded
                    })
                }
                _ => Ok(bounded),
            }
        })?;
        Ok(chosen[0])
    }
}

/// The local memory a work-item of `function` takes (its stack frame: spilled registers
/// and arrays indexed at run time); 0 where the driver does not say.
fn local_bytes(function: sys::CUfunction) -> i32 {
    // SAFETY: a function handle of a loaded module, with its context current.
    unsafe {
        result::function::get_function_attribute(
            function,
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        )
    }
    .unwrap_or(0)
}
