//! `redlab bench`: a table over sizes × operators × types with median/min/max time,
//! GB/s and the fraction of a read roof measured on the same device in the same run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Args;
use redlab::generate::{generate, Distribution};
use redlab::{canonical, DType, Device, HostArray, Op, Problem};
use redlab_bench::{gbps, time_row, CacheMode, Record, RowOutcome, Status, TimingPlan};

use super::run::seconds_text;
use super::size::parse_size_list;
use super::Verdict;

/// Fallback largest-cache size when the OS does not report one.
const DEFAULT_CACHE_BYTES: u64 = 32 << 20;

/// Arguments of `redlab bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Device to measure.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Operators, comma-separated.
    #[arg(long, default_value = "sum,max", value_delimiter = ',')]
    ops: Vec<Op>,
    /// Element types, comma-separated.
    #[arg(long, default_value = "i32,f32,f64", value_delimiter = ',')]
    dtypes: Vec<DType>,
    /// Element counts, comma-separated (1e6, 2^20, 64Mi …).
    #[arg(long, default_value = "2^12,2^16,2^20,2^24,2^27")]
    sizes: String,
    /// Accumulator for sum/prod where allowed (default: each type's default).
    #[arg(long)]
    acc: Option<DType>,
    /// Append one JSON line per row to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// CPU worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// cold: rotate over inputs 8× larger than the largest cache; warm: reuse one input.
    #[arg(long, default_value = "cold")]
    cache: CacheMode,
    /// Distribution of the generated inputs.
    #[arg(long, default_value = "uniform")]
    dist: Distribution,
    /// Seed of the generated inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed calls per row, at least.
    #[arg(long, default_value_t = 20)]
    min_reps: usize,
    /// Seconds of timed calls per row, at least.
    #[arg(long, default_value_t = 0.2)]
    min_time: f64,
}

/// Runs `redlab bench`.
pub fn run(args: &BenchArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    let sizes = parse_size_list(&args.sizes).map_err(anyhow::Error::msg)?;
    let device = Device::open(&args.device, args.threads)?;
    let cache_bytes = redlab_cpu::last_level_cache_bytes().unwrap_or(DEFAULT_CACHE_BYTES);
    let mut plan = TimingPlan::new(args.cache, cache_bytes);
    plan.min_reps = args.min_reps.max(1);
    plan.min_seconds = args.min_time.max(0.0);
    let mut sink = match &args.json {
        Some(path) => Some(BufWriter::new(
            File::options()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open {} for writing", path.display()))?,
        )),
        None => None,
    };
    let info = device.info().clone();
    let command = std::env::args().collect::<Vec<_>>().join(" ");

    writeln!(
        out,
        "device {} ({}), {} threads; cache {:?}",
        info.id, info.name, info.compute_units, args.cache
    )?;

    let mut failures = Vec::new();
    for &dtype in &args.dtypes {
        let pool_len = plan.pool_elements(&sizes, dtype.size_bytes());
        let pool: HostArray = generate(dtype, pool_len, args.dist, args.seed)?;
        writeln!(
            out,
            "{:<22} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>7}  status",
            "problem", "n", "median", "min", "max", "GB/s", "roof GB/s", "of roof"
        )?;
        for &op in &args.ops {
            let problem = Problem::new(op, dtype, args.acc.filter(|_| op.is_arithmetic()));
            for &n in &sizes {
                let (problem_name, acc_name, outcome) = match &problem {
                    Ok(p) => (
                        p.to_string(),
                        p.acc.to_string(),
                        time_row(device.backend(), p, pool.view(), n, &plan),
                    ),
                    Err(e) => (
                        format!("{op} {dtype}"),
                        String::new(),
                        RowOutcome::skipped(e.to_string()),
                    ),
                };
                let stats = outcome.stats;
                let bytes = n as u64 * dtype.size_bytes() as u64;
                let rate = stats.map(|s| gbps(bytes, s.median));
                let roof_gbps = outcome.roof.map(|r| gbps(bytes, r.median));
                let record = Record {
                    device: info.id.clone(),
                    device_name: info.name.clone(),
                    variant: variant_name(op, dtype),
                    op: op.to_string(),
                    dtype: dtype.to_string(),
                    acc: acc_name,
                    n,
                    status: outcome.status,
                    reason: outcome.reason.clone(),
                    median_s: stats.map(|s| s.median),
                    min_s: stats.map(|s| s.min),
                    max_s: stats.map(|s| s.max),
                    reps: stats.map_or(0, |s| s.count),
                    passes: outcome.passes.clone(),
                    gbps: rate,
                    roof_gbps,
                    roof_fraction: rate
                        .zip(roof_gbps)
                        .filter(|(_, roof)| *roof > 0.0)
                        .map(|(r, roof)| r / roof),
                    transfer_s: 0.0,
                    cache: format!("{:?}", args.cache).to_lowercase(),
                    windows: outcome.windows,
                    threads: info.compute_units,
                    value: outcome.value.map(|v| v.to_string()).unwrap_or_default(),
                    canonical_order: canonical::VERSION,
                    redlab_version: env!("CARGO_PKG_VERSION").to_string(),
                    commit: env!("REDLAB_COMMIT").to_string(),
                    command: command.clone(),
                    unix_time: SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs()),
                };
                print_row(out, &problem_name, &record)?;
                if record.status == Status::Wrong {
                    failures.push(format!(
                        "{problem_name} n={n}: {}",
                        record.reason.clone().unwrap_or_default()
                    ));
                }
                if let Some(sink) = sink.as_mut() {
                    writeln!(sink, "{}", serde_json::to_string(&record)?)?;
                }
            }
        }
    }
    if let Some(mut sink) = sink {
        sink.flush()?;
    }
    Ok(if failures.is_empty() {
        Verdict::Success
    } else {
        Verdict::Mismatch(failures.join("; "))
    })
}

/// The CPU strategy that serves a problem, for the record's `variant` field.
fn variant_name(op: Op, dtype: DType) -> String {
    let name = if dtype.is_float() && op.is_arithmetic() {
        "cpu-canonical-v1"
    } else if op.is_arithmetic() || op.is_bitwise() {
        "cpu-lanes"
    } else {
        "cpu-select"
    };
    name.to_string()
}

fn print_row(out: &mut dyn Write, problem: &str, r: &Record) -> std::io::Result<()> {
    let time = |s: Option<f64>| s.map(seconds_text).unwrap_or_else(|| "-".into());
    let status = match r.status {
        Status::Ok => "ok".to_string(),
        Status::Wrong => format!("WRONG: {}", r.reason.as_deref().unwrap_or("")),
        Status::Skipped => format!("skipped: {}", r.reason.as_deref().unwrap_or("")),
    };
    writeln!(
        out,
        "{:<22} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>7}  {status}",
        problem,
        r.n,
        time(r.median_s),
        time(r.min_s),
        time(r.max_s),
        r.gbps
            .map(|g| format!("{g:.2}"))
            .unwrap_or_else(|| "-".into()),
        r.roof_gbps
            .map(|g| format!("{g:.2}"))
            .unwrap_or_else(|| "-".into()),
        r.roof_fraction
            .map(|f| format!("{:.1}%", f * 100.0))
            .unwrap_or_else(|| "-".into()),
    )
}
