//! `redlab check-kernels --backend cuda`: compiles every variant for every operator ×
//! type through NVRTC (no GPU needed) and reports each failure with its log.

use std::io::Write;

use clap::Args;

use super::Verdict;

/// Arguments of `redlab check-kernels`.
#[derive(Debug, Args)]
pub struct CheckKernelsArgs {
    /// Which compiler to check against (only `cuda`: OpenCL builds need a device and are
    /// checked by running them).
    #[arg(long, default_value = "cuda")]
    backend: String,
    /// Target architecture.
    #[arg(long, default_value = "sm_90")]
    arch: String,
    /// Print one line per build, not only failures.
    #[arg(long)]
    verbose: bool,
}

/// Runs `redlab check-kernels`.
pub fn run(args: &CheckKernelsArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    if args.backend != "cuda" {
        anyhow::bail!(
            "check-kernels knows the backend 'cuda' (got '{}'); OpenCL kernels are checked by running them on a device",
            args.backend
        );
    }
    if !args.arch.starts_with("sm_") && !args.arch.starts_with("compute_") {
        anyhow::bail!("--arch wants sm_XY or compute_XY (got '{}')", args.arch);
    }
    if !redlab_cuda::compile::nvrtc_present() {
        anyhow::bail!(
            "libnvrtc could not be loaded: install the CUDA toolkit or the nvidia-cuda-nvrtc wheel and put its lib folder on LD_LIBRARY_PATH"
        );
    }
    let started = std::time::Instant::now();
    let (mut built, mut skipped, mut failed) = (0usize, 0usize, Vec::new());
    for c in redlab_cuda::check::check_all(&args.arch) {
        let pass = if c.first_pass { "first" } else { "later" };
        let line = match (&c.skipped, &c.outcome) {
            (Some(why), _) => {
                skipped += 1;
                format!("skip  {} {} ({pass} pass): {why}", c.variant, c.problem)
            }
            (None, Ok(())) => {
                built += 1;
                format!("ok    {} {} ({pass} pass)", c.variant, c.problem)
            }
            (None, Err(log)) => {
                failed.push(format!("{} {} ({pass} pass)", c.variant, c.problem));
                format!(
                    "FAIL  {} {} ({pass} pass):\n{}",
                    c.variant,
                    c.problem,
                    log.trim_end()
                )
            }
        };
        if args.verbose || line.starts_with("FAIL") {
            writeln!(out, "{line}")?;
        }
    }
    writeln!(
        out,
        "check-kernels cuda {}: {built} built, {skipped} not applicable, {} failed ({:.1} s)",
        args.arch,
        failed.len(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(if failed.is_empty() {
        Verdict::Success
    } else {
        Verdict::Mismatch(format!(
            "{} kernel builds failed: {}",
            failed.len(),
            failed.join(", ")
        ))
    })
}
