//! User-defined reductions in the simulator: the same OpenCL C the GPUs build — the
//! production kernel with the map as its `lift()` ([`redlab_kernels::mapped`]) — run
//! over seeded inputs packed as the devices pack them, and checked bit for bit against
//! the expression crate's scalar reference.

use redlab_core::generate::{generate, Distribution};
use redlab_core::HostArray;
use redlab_expr::{oracle, Reduction};
use redlab_kernels::driver::{self, Plan};
use redlab_kernels::mapped;

use crate::variant::{capabilities, simulate, VariantOptions, VariantRun};
use crate::AnalyzeError;

/// Runs `reduction` over `n` seeded elements per input in the simulator.
pub fn run(
    reduction: &Reduction,
    n: usize,
    opts: &VariantOptions,
) -> Result<VariantRun, AnalyzeError> {
    let usage = AnalyzeError::Usage;
    let bytes: u64 = reduction
        .inputs
        .iter()
        .map(|d| (n as u64).saturating_mul(d.size_bytes() as u64))
        .sum();
    if bytes.saturating_mul(2) > opts.config.max_memory {
        return Err(usage(format!(
            "{n} elements of each input need {} MiB, more than the simulator's memory limit of {} MiB (raise --max-memory)",
            bytes.saturating_mul(2) >> 20,
            opts.config.max_memory >> 20
        )));
    }
    let arrays = reduction
        .inputs
        .iter()
        .enumerate()
        .map(|(k, &d)| generate(d, n, Distribution::Uniform, opts.seed + k as u64))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| usage(e.to_string()))?;
    let views: Vec<_> = arrays.iter().map(HostArray::view).collect();
    let expected = oracle::reduce(reduction, &views).map_err(|e| usage(e.to_string()))?;
    let (problem, decls) = mapped::decls(reduction).map_err(usage)?;
    let variant = mapped::variant().map_err(usage)?;
    let tuned: Vec<(&str, u32)> = opts.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let params = mapped::params(&problem, &variant, &tuned);
    let caps = capabilities(opts.compute_units);
    let wg = match driver::plan(&variant, &problem, &caps, &params, n) {
        Ok(Plan::Launch { wg }) => wg,
        Ok(Plan::Empty(run)) => {
            let value = reduction.finish(run.value, 0);
            return Ok(VariantRun {
                passes: Vec::new(),
                verdict: verdict(&value, &expected),
                value,
                expected,
            });
        }
        Err(e) => return Err(usage(format!("{}: {e}", variant.name))),
    };
    let packed = mapped::pack(reduction, &views);
    let (run, passes) = simulate(
        &variant,
        &problem,
        Some(&decls.source),
        &packed,
        n,
        wg,
        &params,
        opts,
    )?;
    let value = reduction.finish(run.value, n);
    Ok(VariantRun {
        passes,
        verdict: verdict(&value, &expected),
        value,
        expected,
    })
}

fn verdict(value: &redlab_core::Value, expected: &redlab_core::Value) -> Result<(), String> {
    if value.same_as(expected) {
        Ok(())
    } else {
        Err(format!("{value} differs from the reference {expected}"))
    }
}
