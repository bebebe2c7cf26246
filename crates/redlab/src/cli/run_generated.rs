//! `redlab run --dist hashed --n N --device D`: the array is made on the device that
//! reduces it — each GPU of a group writes its own part in its own memory — so it can be
//! larger than one GPU or the host can hold ([`redlab::generated`]). The result is
//! checked against the host's canonical result, computed a subtree at a time; the time
//! is split into generation (once), kernels (the slowest device's, per `--repeat`, each
//! reducing the same data in place) and the host's combine.

use std::io::Write;

use anyhow::Context;
use redlab::generated::{reduce_hashed, reference_hashed};
use redlab::{canonical, Device, Problem};
use redlab_bench::{gbps, Stats};
use serde_json::json;

use super::run::{record_head, report_head, seconds_text, RunArgs};
use super::Verdict;

/// Runs the generated-in-place reduction of `n` elements of `problem` on `device`.
pub(super) fn run(
    args: &RunArgs,
    device: &Device,
    problem: &Problem,
    n: usize,
    out: &mut dyn Write,
) -> anyhow::Result<Verdict> {
    // Made once, reduced `--repeat` times in place: each repeat times the kernels alone
    // (a fresh allocation per repeat would time the allocator's page placement too).
    let outcome = reduce_hashed(device, problem, n, args.seed, args.repeat)?;
    let runs = outcome.kernel_runs();
    let kernel = Stats::of(&runs).context("no timings")?;
    let value = outcome.value;
    let expected = reference_hashed(problem, n, args.seed)?;
    let verified = value.same_as(&expected);
    let rate = gbps(problem.bytes_read(n), kernel.median);
    let info = device.info();
    let source = format!(
        "generated in place by each device: hashed, seed {}",
        args.seed
    );

    if args.json {
        let mut fields = record_head(problem, n, info, &value);
        fields.insert("seconds".into(), json!(kernel.median));
        fields.insert("min_seconds".into(), json!(kernel.min));
        fields.insert("max_seconds".into(), json!(kernel.max));
        fields.insert("kernel_runs_seconds".into(), json!(runs));
        fields.insert("wall_seconds".into(), json!(outcome.wall_s));
        fields.insert("generate_seconds".into(), json!(outcome.generate_s()));
        fields.insert("combine_seconds".into(), json!(outcome.combine_s));
        fields.insert("members".into(), json!(outcome.devices));
        fields.insert("repeat".into(), json!(args.repeat));
        fields.insert("gbps".into(), json!(rate));
        fields.insert("verified".into(), json!(verified));
        fields.insert("bitwise_canonical".into(), json!(verified));
        fields.insert("canonical_order".into(), json!(canonical::VERSION));
        fields.insert("input".into(), json!(source));
        fields.insert("variant".into(), json!("auto"));
        writeln!(out, "{}", serde_json::Value::Object(fields))?;
    } else {
        report_head(out, problem, n, info, &source, &value)?;
        if verified {
            writeln!(
                out,
                "  verified  yes: bitwise equal to the host's canonical order v{} result",
                canonical::VERSION
            )?;
        } else {
            writeln!(out, "  verified  NO: the host's result is {expected}")?;
        }
        writeln!(
            out,
            "  time      kernels {} median of {} (slowest device; min {}, max {}), {rate:.2} GB/s",
            seconds_text(kernel.median),
            kernel.count,
            seconds_text(kernel.min),
            seconds_text(kernel.max)
        )?;
        writeln!(
            out,
            "  split     generate {} (once), kernels {} (median), combine {}, wall {} (the whole call)",
            seconds_text(outcome.generate_s()),
            seconds_text(kernel.median),
            seconds_text(outcome.combine_s),
            seconds_text(outcome.wall_s)
        )?;
        for d in &outcome.devices {
            let runs = Stats::of(&d.kernel_runs_s).context("no timings")?;
            writeln!(
                out,
                "  {:<9} {} elements: generate {}, kernels {} (median of {})",
                d.device,
                d.elements,
                seconds_text(d.generate_s),
                seconds_text(runs.median),
                runs.count
            )?;
        }
    }
    Ok(if verified {
        Verdict::Success
    } else {
        Verdict::Mismatch(format!(
            "{problem}: device gave {value}, the host gives {expected}"
        ))
    })
}
