//! `redlab devices`: what can run here, and why the rest cannot.

use std::io::Write;

use clap::Args;

/// Arguments of `redlab devices`.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `redlab devices`.
pub fn run(args: &DevicesArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let report = redlab::list_devices()?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
        return Ok(());
    }
    writeln!(out, "Devices:")?;
    for device in &report.devices {
        writeln!(
            out,
            "  {:<10} {} ({} compute units)",
            device.id, device.name, device.compute_units
        )?;
        for (key, value) in &device.details {
            writeln!(out, "  {:<10}   {key}: {value}", "")?;
        }
    }
    if let Some(nccl) = &report.nccl {
        writeln!(
            out,
            "Multi-process exchange between CUDA GPUs: {nccl} (run --rank/--world)"
        )?;
    }
    if !report.unavailable.is_empty() {
        writeln!(out, "Not available:")?;
        for missing in &report.unavailable {
            writeln!(out, "  {:<10} {}", missing.backend, missing.reason)?;
        }
    }
    Ok(())
}
