//! `redlab analyze A B [C …]`: several variants or kernel files analyzed with the same
//! options, reported one after another (text), as `{"reports": […]}` (JSON), and side by
//! side on one `--html` page (`redlab_analyzer::html_compare`), the way the reduction
//! documents compare a kernel's versions.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context};
use redlab_analyzer::html_compare::{render_compare, Version};

use super::analyze::{analyze_target, drawn, launch_config, verdict_of, AnalyzeArgs};
use super::Verdict;

/// Runs every target of `a` and reports them together.
pub(super) fn run(a: &AnalyzeArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    if !a.dump.is_empty() || !a.show.is_empty() {
        bail!("--dump and --show take one target; leave them out when comparing");
    }
    let targets: Vec<&String> = std::iter::once(&a.target).chain(&a.others).collect();
    if targets.iter().any(|t| t.ends_with(".clamsee")) {
        bail!("a CLamsee session compares its own kernels: run it alone");
    }
    let mut outputs = super::output::OutputPlan::new(a.force);
    for t in &targets {
        if Path::new(t.as_str()).exists() {
            outputs.input("a kernel file", Path::new(t.as_str()));
        }
    }
    if let Some(path) = &a.html {
        outputs.replace("--html", path)?;
    }
    let mut results = Vec::new();
    for target in &targets {
        let mut one = a.clone();
        one.target = (*target).clone();
        one.others.clear();
        let analyzed =
            analyze_target(&one, launch_config(&one)?, &[]).with_context(|| target.to_string())?;
        results.push(((*target).clone(), analyzed));
    }
    if let Some(path) = &a.html {
        let versions: Vec<Version<'_>> = results
            .iter()
            .map(|(name, (report, traces))| Version {
                name: name.clone(),
                report,
                drawn: drawn(a, traces),
            })
            .collect();
        std::fs::write(path, render_compare(&versions))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if a.json {
        let reports: Vec<&redlab_analyzer::report::Report> =
            results.iter().map(|(_, (r, _))| r).collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "reports": reports }))?
        )?;
    } else {
        for (name, (report, _)) in &results {
            writeln!(out, "== {name}")?;
            super::analyze::print_text(report, out)?;
        }
        if let Some(path) = &a.html {
            writeln!(out, "side by side: {}", path.display())?;
        }
    }
    // The first version that fails decides the exit code, named.
    for (name, (report, _)) in &results {
        if let Verdict::Mismatch(why) = verdict_of(report) {
            return Ok(Verdict::Mismatch(format!("{name}: {why}")));
        }
    }
    Ok(Verdict::Success)
}
