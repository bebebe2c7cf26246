//! Built-in variants in the simulator: the variant's source is assembled for OpenCL as
//! for a device, and its passes run through the same pass driver the GPU backends use
//! (`redlab_kernels::driver`), with the simulator as the device. Every launch is
//! analyzed, and the result is checked against the host reference.

use std::cell::RefCell;
use std::rc::Rc;

use redlab_core::generate::{generate, Distribution};
use redlab_core::reference::{self, accuracy};
use redlab_core::{Problem, Value as HostValue};
use redlab_kernels::assembly::{self, Target};
use redlab_kernels::driver::{self, Launcher, Plan, RunError};
use redlab_kernels::{Capabilities, Feature, Variant};

use crate::memory::{Buffer, Memory};
use crate::sim::{self, Arg, LaunchConfig, LaunchReport};
use crate::types::Scalar;
use crate::value::Value;
use crate::{compile, project_headers, AnalyzeError, Compiled};

/// What the simulated device offers: every feature the kernels use, and few compute
/// units so grid-stride variants keep small grids.
pub fn capabilities(compute_units: usize) -> Capabilities {
    Capabilities {
        features: vec![
            Feature::Fp64,
            Feature::Int64Atomics,
            Feature::WorkGroupCollectives,
            Feature::Subgroups,
            Feature::IntelSubgroups,
        ],
        compute_units: compute_units.max(1),
        max_work_group: 1024,
        local_memory: 64 * 1024,
        cache_bytes: 0,
    }
}

/// How to run a variant.
#[derive(Debug, Clone)]
pub struct VariantOptions {
    /// Warp size, banks, watched arrays, traced group, step limit (sizes are the
    /// driver's).
    pub config: LaunchConfig,
    /// Parameter overrides (`WG` …).
    pub params: Vec<(String, u32)>,
    /// Extra `-D` definitions.
    pub defines: Vec<String>,
    /// Compute units of the simulated device.
    pub compute_units: usize,
    /// Seed of the random input.
    pub seed: u64,
}

/// One analyzed launch and the source it ran.
#[derive(Debug, Clone)]
pub struct Pass {
    /// The program (for source lines).
    pub compiled: Rc<Compiled>,
    /// What the launch measured.
    pub report: LaunchReport,
}

/// A variant's run in the simulator.
#[derive(Debug, Clone)]
pub struct VariantRun {
    /// Every launch, in order.
    pub passes: Vec<Pass>,
    /// The result the kernels produced.
    pub value: HostValue,
    /// The host reference's result.
    pub expected: HostValue,
    /// `Ok` when the result is acceptable (bit-exact where the order is canonical or
    /// the type is an integer; within the any-order bound otherwise).
    pub verdict: Result<(), String>,
}

/// A built kernel of the simulated device.
pub struct SimKernel {
    pub(crate) compiled: Rc<Compiled>,
    pub(crate) name: &'static str,
}

/// The simulated device behind the pass driver: global buffers in one [`Memory`], each
/// launch analyzed and kept as a [`Pass`].
pub(crate) struct SimLauncher {
    pub(crate) mem: RefCell<Memory>,
    pub(crate) config: LaunchConfig,
    pub(crate) passes: RefCell<Vec<Pass>>,
    pub(crate) failure: RefCell<Option<AnalyzeError>>,
}

impl SimLauncher {
    /// A simulated device with empty memory, launching under `config`.
    pub(crate) fn new(config: LaunchConfig) -> SimLauncher {
        SimLauncher {
            mem: RefCell::new(Memory::default()),
            config,
            passes: RefCell::new(Vec::new()),
            failure: RefCell::new(None),
        }
    }

    /// A global buffer holding `bytes` (at least `min_bytes` long).
    pub(crate) fn upload(&self, bytes: &[u8], min_bytes: usize) -> Result<u32, AnalyzeError> {
        let usage = |e: RunError| AnalyzeError::Usage(e.to_string());
        let mut buffer = self.alloc(bytes.len().max(min_bytes)).map_err(usage)?;
        self.write(&mut buffer, bytes).map_err(usage)?;
        Ok(buffer)
    }
}

impl Launcher for SimLauncher {
    type Buffer = u32;
    type Kernel = SimKernel;

    fn alloc(&self, bytes: usize) -> Result<u32, RunError> {
        let mut mem = self.mem.borrow_mut();
        mem.limit = Some(self.config.max_memory);
        mem.check_budget(bytes as u64, || format!("a buffer of {bytes} bytes"))
            .map_err(RunError::Device)?;
        mem.global.push(Buffer::new("buffer", vec![0; bytes]));
        Ok((mem.global.len() - 1) as u32)
    }

    fn write(&self, buffer: &mut u32, bytes: &[u8]) -> Result<f64, RunError> {
        let mut mem = self.mem.borrow_mut();
        let b = mem
            .global
            .get_mut(*buffer as usize)
            .ok_or_else(|| RunError::Device("no such buffer".into()))?;
        b.bytes[..bytes.len()].copy_from_slice(bytes);
        Ok(0.0)
    }

    fn read(&self, buffer: &u32, bytes: usize) -> Result<(Vec<u8>, f64), RunError> {
        let mem = self.mem.borrow();
        let b = mem
            .global
            .get(*buffer as usize)
            .ok_or_else(|| RunError::Device("no such buffer".into()))?;
        Ok((b.bytes[..bytes].to_vec(), 0.0))
    }

    fn launch(
        &self,
        kernel: &SimKernel,
        input: &u32,
        output: &u32,
        n: usize,
        global: usize,
        local: usize,
    ) -> Result<f64, RunError> {
        let mut cfg = self.config.clone();
        cfg.global = [global, 1, 1];
        cfg.local = [local, 1, 1];
        let mut mem = self.mem.borrow_mut();
        if let Some(f) = kernel.compiled.program.function(kernel.name) {
            for (k, b) in [*input, *output].into_iter().enumerate() {
                if let (Some(p), Some(buf)) = (f.params.get(k), mem.global.get_mut(b as usize)) {
                    buf.name = p.name.to_string();
                }
            }
        }
        let args = [
            Arg::Global(*input),
            Arg::Global(*output),
            Arg::Scalar(Value::Int(Scalar::ULong, n as u64)),
        ];
        match sim::launch(
            &kernel.compiled.program,
            &kernel.compiled.files,
            kernel.name,
            &args,
            &mut mem,
            &cfg,
        ) {
            Ok(report) => {
                self.passes.borrow_mut().push(Pass {
                    compiled: kernel.compiled.clone(),
                    report,
                });
                Ok(0.0)
            }
            Err(e) => {
                let message = e.to_string();
                *self.failure.borrow_mut() = Some(e);
                Err(RunError::Device(message))
            }
        }
    }
}

/// The source the simulator runs for `variant` (the OpenCL assembly).
pub fn source(
    variant: &Variant,
    problem: &Problem,
    params: &[(&str, u32)],
    first_pass: bool,
) -> Result<String, AnalyzeError> {
    assembly::assemble(variant, problem, params, &[], Target::OpenCl, first_pass)
        .map(|a| a.source)
        .map_err(AnalyzeError::Usage)
}

/// Runs `variant` over `n` seeded random elements in the simulator.
pub fn run(
    variant: &Variant,
    problem: &Problem,
    n: usize,
    opts: &VariantOptions,
) -> Result<VariantRun, AnalyzeError> {
    let usage = AnalyzeError::Usage;
    let params: Vec<(&str, u32)> = opts.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let caps = capabilities(opts.compute_units);
    // The input, its host copy and its simulated copy: refuse before generating it.
    let input_bytes = (n as u64).saturating_mul(problem.dtype.size_bytes() as u64);
    if input_bytes.saturating_mul(2) > opts.config.max_memory {
        return Err(usage(format!(
            "{n} elements of {} need {} MiB, more than the simulator's memory limit of {} MiB (raise --max-memory)",
            problem.dtype,
            input_bytes.saturating_mul(2) >> 20,
            opts.config.max_memory >> 20
        )));
    }
    let data = generate(problem.dtype, n, Distribution::Uniform, opts.seed)
        .map_err(|e| usage(e.to_string()))?;
    let expected = reference::reduce(problem, data.view()).map_err(|e| usage(e.to_string()))?;
    let wg = match driver::plan(variant, problem, &caps, &params, n) {
        Ok(Plan::Launch { wg }) => wg,
        Ok(Plan::Empty(run)) => {
            return Ok(VariantRun {
                passes: Vec::new(),
                verdict: accuracy::check_result(
                    problem,
                    data.view(),
                    &run.value,
                    &expected,
                    variant.canonical,
                ),
                value: run.value,
                expected,
            })
        }
        Err(e) => return Err(usage(format!("{}: {e}", variant.name))),
    };
    let (run, passes) = simulate(
        variant,
        problem,
        None,
        data.view().bytes(),
        n,
        wg,
        &params,
        opts,
    )?;
    Ok(VariantRun {
        passes,
        verdict: accuracy::check_result(
            problem,
            data.view(),
            &run.value,
            &expected,
            variant.canonical,
        ),
        value: run.value,
        expected,
    })
}

/// Builds `variant` (section 2 from `decls` where given) and runs its passes over the
/// input `bytes` of `n` elements in the simulator: the result and every launch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate(
    variant: &Variant,
    problem: &Problem,
    decls: Option<&str>,
    bytes: &[u8],
    n: usize,
    wg: usize,
    params: &[(&str, u32)],
    opts: &VariantOptions,
) -> Result<(redlab_kernels::Run, Vec<Pass>), AnalyzeError> {
    let usage = AnalyzeError::Usage;
    let caps = capabilities(opts.compute_units);
    let entries = driver::entry_points(variant);
    let build = |first_pass: bool| -> Result<Rc<Compiled>, AnalyzeError> {
        let text = match decls {
            None => source(variant, problem, params, first_pass)?,
            Some(d) => assembly::assemble_with(
                variant,
                problem,
                d,
                params,
                &[],
                Target::OpenCl,
                first_pass,
            )
            .map(|a| a.source)
            .map_err(AnalyzeError::Usage)?,
        };
        let name = format!(
            "{} ({problem}{})",
            variant.name,
            if first_pass { "" } else { ", later passes" }
        );
        compile(&name, &text, &opts.defines, &project_headers).map(Rc::new)
    };
    let first_program = build(true)?;
    let later_program = if entries.later_rebuilt {
        Some(build(false)?)
    } else {
        None
    };
    let mut config = opts.config.clone();
    config.watch.extend(first_program.watches.iter().cloned());
    let launcher = SimLauncher::new(config);
    let input = launcher.upload(bytes, 0)?;
    if let Some(b) = launcher.mem.borrow_mut().global.get_mut(input as usize) {
        b.name = "input".into();
    }
    let first = SimKernel {
        compiled: first_program.clone(),
        name: entries.first,
    };
    let later = entries.later.map(|name| SimKernel {
        compiled: later_program
            .clone()
            .unwrap_or_else(|| first_program.clone()),
        name,
    });
    let result = driver::run_passes(
        &launcher,
        &caps,
        variant,
        problem,
        &first,
        later.as_ref(),
        &input,
        n,
        wg,
        params,
    );
    if let Some(e) = launcher.failure.borrow_mut().take() {
        return Err(e);
    }
    let run = result.map_err(|e| usage(format!("{}: {e}", variant.name)))?;
    Ok((run, launcher.passes.into_inner()))
}
