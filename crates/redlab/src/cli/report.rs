//! `redlab report RECORDS.jsonl… --out report.html`: the HTML report of `bench --report`,
//! rebuilt from JSON-lines records (those of `bench --json`, from one run or several:
//! a GPU run and a CPU run together give the CPU-against-GPU charts).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use redlab_bench::Record;

use super::size::parse_size;
use super::Verdict;

/// Arguments of `redlab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Files of JSON lines written by `redlab bench --json`.
    #[arg(required = true)]
    records: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long)]
    out: PathBuf,
    /// The size the per-size charts use (default: the largest).
    #[arg(long)]
    report_n: Option<String>,
    /// The page's title.
    #[arg(long, default_value = "redlab bench")]
    title: String,
    /// Replace --out if it exists.
    #[arg(long)]
    force: bool,
}

/// Runs `redlab report`.
pub fn run(args: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    let mut outputs = super::output::OutputPlan::new(args.force);
    for path in &args.records {
        outputs.input("record file", path);
    }
    outputs.replace("--out", &args.out)?;
    let mut records = Vec::new();
    for path in &args.records {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        for (k, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let record: Record = serde_json::from_str(line)
                .with_context(|| format!("{}:{}: not a bench record", path.display(), k + 1))?;
            records.push(record);
        }
    }
    if records.is_empty() {
        anyhow::bail!(
            "no records in {}",
            args.records
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let focus = match &args.report_n {
        Some(n) => Some(parse_size(n).map_err(anyhow::Error::msg)?),
        None => None,
    };
    std::fs::write(
        &args.out,
        redlab_bench::report::html(&records, focus, &args.title),
    )
    .with_context(|| format!("cannot write {}", args.out.display()))?;
    writeln!(
        out,
        "wrote {} ({} records)",
        args.out.display(),
        records.len()
    )?;
    Ok(Verdict::Success)
}
