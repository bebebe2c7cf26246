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
    pub device: String,
    /// Strategies to compare on OpenCL and CUDA devices: `all`, or names/aliases,
    /// comma-separated (the CPU has one strategy per problem).
    #[arg(long, default_value = "all")]
    pub variants: String,
    /// Operators, comma-separated.
    #[arg(long, default_value = "sum,max", value_delimiter = ',')]
    pub ops: Vec<Op>,
    /// Element types, comma-separated.
    #[arg(long, default_value = "i32,f32,f64", value_delimiter = ',')]
    pub dtypes: Vec<DType>,
    /// Element counts, comma-separated (1e6, 2^20, 64Mi …).
    #[arg(long, default_value = "2^12,2^16,2^20,2^24,2^27")]
    pub sizes: String,
    /// Axis reductions instead of whole arrays: shapes in C order with the axes to reduce
    /// (`8192x8192:1,4096x32:0`, several axes joined by `+`, none: all axes); one row per
    /// shape × operator × type, each output checked against the reference
    #[arg(long)]
    pub shapes: Option<String>,
    /// A user-defined reduction instead of --ops: the map over inputs x, y, z, w (one
    /// generated input of each --dtypes type per name used), e.g. 'x * y'; with --shapes,
    /// along the shapes' axes (a custom --combine too).
    #[arg(long)]
    pub map: Option<String>,
    /// With --map: a built-in combine or an expression in a and b.
    #[arg(long, requires = "map", default_value = "sum")]
    pub combine: String,
    /// With a custom --combine: its identity.
    #[arg(long, requires = "map", allow_hyphen_values = true)]
    pub identity: Option<String>,
    /// With --map: an expression in r and n applied to the result.
    #[arg(long, requires = "map")]
    pub post: Option<String>,
    /// Accumulator for sum/prod where allowed (default: each type's default).
    #[arg(long)]
    pub acc: Option<DType>,
    /// Append one JSON line per row to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// CPU worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// cold: rotate over inputs 8× larger than the largest cache; warm: reuse one input.
    #[arg(long, default_value = "cold")]
    pub cache: CacheMode,
    /// Distribution of the generated inputs.
    #[arg(long, default_value = "uniform")]
    pub dist: Distribution,
    /// Seed of the generated inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Timed calls per row, at least.
    #[arg(long, default_value_t = 20)]
    pub min_reps: usize,
    /// Wall seconds after which a row stops repeating even below --min-reps (slow
    /// strategies such as one atomic per element); the record says how many calls ran.
    #[arg(long, default_value_t = 5.0)]
    pub max_row_time: f64,
    /// Seconds of timed calls per row, at least.
    #[arg(long, default_value_t = 0.2)]
    pub min_time: f64,
    /// Also time a comparator in the same run and print the ratio to the production
    /// kernel: `cub` (CUDA devices) runs the program named by --cub-bin.
    #[arg(long)]
    pub compare: Option<String>,
    /// A kernel parameter for every variant that declares it (`--param GROUPS_PER_CU=4`,
    /// repeatable); each record's `command` field carries it.
    #[arg(long = "param")]
    pub params: Vec<String>,
    /// The CUB comparator program (built from tools/cub/cub_reduce.cu).
    #[arg(long, default_value = "redlab-cub")]
    pub cub_bin: PathBuf,
    /// Back-to-back reductions captured in one CUDA graph for the per-reduction graph time
    /// of one-launch variants and of `--shapes` rows (0: no graph timing).
    #[arg(long, default_value_t = 200)]
    pub graph_calls: usize,
    /// Write a self-contained HTML report with charts of this run to this file.
    #[arg(long, value_name = "OUT.html")]
    pub report: Option<PathBuf>,
    /// The size the report's per-size charts use (default: the largest).
    #[arg(long, value_name = "N")]
    pub report_n: Option<String>,
    /// With --report on a GPU, do not also time the CPU on the same problems (the CPU
    /// against GPU chart needs those rows).
    #[arg(long)]
    pub no_cpu_rows: bool,
    /// No progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,
    /// Replace an existing --report file, and append to a --json file that does not
    /// hold records.
    #[arg(long)]
    pub force: bool,
}

/// Where rows go: the JSON-lines file if one was asked for, and memory for the report.
pub struct Sink {
    file: Option<BufWriter<File>>,
    /// Every row written, in order.
    pub kept: Vec<Record>,
}

impl Sink {
    /// Appends one JSON line, flushed so each row survives an interrupted run.
    pub fn push(&mut self, record: &Record) -> anyhow::Result<()> {
        if let Some(file) = self.file.as_mut() {
            writeln!(file, "{}", serde_json::to_string(record)?)?;
            file.flush()?;
        }
        self.kept.push(record.clone());
        Ok(())
    }
}

/// A progress bar over `rows` rows on stderr, hidden with `quiet` or off a terminal.
pub fn progress(rows: usize, quiet: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(rows as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} rows, {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// Runs `redlab bench`.
pub fn run(args: &BenchArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    let sizes = parse_size_list(&args.sizes).map_err(anyhow::Error::msg)?;
    let device = Device::open(&args.device, args.threads)?;
    let cache_bytes = redlab_cpu::last_level_cache_bytes().unwrap_or(DEFAULT_CACHE_BYTES);
    let mut plan = TimingPlan::new(args.cache, cache_bytes);
    plan.min_reps = args.min_reps.max(1);
    plan.min_seconds = args.min_time.max(0.0);
    let mut outputs = super::output::OutputPlan::new(args.force);
    if args.compare.is_some() {
        outputs.input("--cub-bin", &args.cub_bin);
    }
    if let Some(path) = &args.json {
        outputs.append_records("--json", path)?;
    }
    if let Some(path) = &args.report {
        outputs.replace("--report", path)?;
    }
    let file = match &args.json {
        Some(path) => Some(BufWriter::new(super::output::open_append(path)?)),
        None => None,
    };
    let mut sink = Sink {
        file,
        kept: Vec::new(),
    };
    let report_n = match &args.report_n {
        Some(text) => Some(super::size::parse_size(text).map_err(anyhow::Error::msg)?),
        None => None,
    };
    if let Some(text) = &args.shapes {
        if args.variants != "all" || args.compare.is_some() || !args.params.is_empty() {
            anyhow::bail!(
                "--shapes picks each shape's kernel itself (see redlab run --explain): leave out --variants, --compare and --param"
            );
        }
        let shapes = super::bench_shapes::parse_shapes(text)?;
        let verdict = super::bench_shapes::run(args, &shapes, &device, out, &mut sink)?;
        write_report(args, &device, report_n, &sink)?;
        return Ok(verdict);
    }
    if args.map.is_some() {
        let verdict = super::bench_mapped::run(args, &sizes, &device, out, &mut sink)?;
        write_report(args, &device, report_n, &sink)?;
        return Ok(verdict);
    }
    #[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(unused_mut))]
    let mut gpu_verdict = None;
    #[cfg(feature = "opencl")]
    if let Some(opencl) = device.opencl() {
        gpu_verdict = Some(super::bench_lab::run(
            args, &sizes, &device, opencl, out, &mut sink,
        )?);
    }
    #[cfg(feature = "cuda")]
    if let Some(cuda) = device.cuda() {
        gpu_verdict = Some(super::bench_lab::run(
            args, &sizes, &device, cuda, out, &mut sink,
        )?);
    }
    if let Some(verdict) = gpu_verdict {
        // The report's CPU-against-GPU chart needs CPU rows of the same problems.
        let cpu_verdict = if args.report.is_some() && !args.no_cpu_rows {
            let cpu = Device::open("cpu", args.threads)?;
            writeln!(out)?;
            cpu_rows(args, &sizes, &cpu, &plan, out, &mut sink)?
        } else {
            Verdict::Success
        };
        write_report(args, &device, report_n, &sink)?;
        return Ok(match (verdict, cpu_verdict) {
            (Verdict::Success, v) => v,
            (v, _) => v,
        });
    }
    if args.variants != "all" {
        anyhow::bail!("--variants applies to GPU devices; the CPU has one strategy per problem");
    }
    if args.compare.is_some() {
        anyhow::bail!("--compare applies to CUDA devices");
    }
    if !args.params.is_empty() {
        anyhow::bail!("--param applies to GPU variants; the CPU has no kernel parameters");
    }
    let verdict = cpu_rows(args, &sizes, &device, &plan, out, &mut sink)?;
    write_report(args, &device, report_n, &sink)?;
    Ok(verdict)
}

/// Writes the HTML report, if one was asked for.
fn write_report(
    args: &BenchArgs,
    device: &Device,
    focus: Option<usize>,
    sink: &Sink,
) -> anyhow::Result<()> {
    let Some(path) = &args.report else {
        return Ok(());
    };
    let title = format!(
        "redlab bench on {} ({})",
        device.info().id,
        device.info().name
    );
    std::fs::write(path, redlab_bench::report::html(&sink.kept, focus, &title))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Times the CPU backend over every problem and size (one strategy per problem).
fn cpu_rows(
    args: &BenchArgs,
    sizes: &[usize],
    device: &Device,
    plan: &TimingPlan,
    out: &mut dyn Write,
    sink: &mut Sink,
) -> anyhow::Result<Verdict> {
    let base = RecordBase::new(device, args);
    print_header(out, device, args)?;
    let bar = progress(args.dtypes.len() * args.ops.len() * sizes.len(), args.quiet);
    let mut failures = Vec::new();
    for &dtype in &args.dtypes {
        let pool_len = plan.pool_elements(sizes, dtype.size_bytes());
        let pool: HostArray = generate(dtype, pool_len, args.dist, args.seed)?;
        for &op in &args.ops {
            let problem = Problem::new(op, dtype, args.acc.filter(|_| op.is_arithmetic()));
            for &n in sizes {
                bar.set_message(format!("{op} {dtype} n={n}"));
                let (problem_name, acc_name, outcome) = match &problem {
                    Ok(p) => (
                        p.to_string(),
                        p.acc.to_string(),
                        time_row(device.backend(), p, pool.view(), n, plan),
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
                let mut record =
                    base.record(&variant_name(op, dtype), op, dtype, n, outcome.windows);
                record.acc = acc_name;
                record.status = outcome.status;
                record.reason = outcome.reason.clone();
                record.median_s = stats.map(|s| s.median);
                record.min_s = stats.map(|s| s.min);
                record.max_s = stats.map(|s| s.max);
                record.reps = stats.map_or(0, |s| s.count);
                record.passes = outcome.passes.clone();
                record.set_rates(rate, roof_gbps);
                record.value = outcome.value.map(|v| v.to_string()).unwrap_or_default();
                bar.suspend(|| print_row(out, &problem_name, &record))?;
                bar.inc(1);
                if record.status == Status::Wrong {
                    failures.push(format!(
                        "{problem_name} n={n}: {}",
                        record.reason.clone().unwrap_or_default()
                    ));
                }
                sink.push(&record)?;
            }
        }
    }
    bar.finish_and_clear();
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

/// The fields every row of one run shares.
pub struct RecordBase {
    device: String,
    device_name: String,
    threads: usize,
    cache: String,
    command: String,
}

impl RecordBase {
    /// The shared fields for rows on `device`.
    pub fn new(device: &Device, args: &BenchArgs) -> RecordBase {
        RecordBase::for_device(device, args.cache)
    }

    /// The shared fields for rows on `device` timed with `cache`.
    pub fn for_device(device: &Device, cache: CacheMode) -> RecordBase {
        let info = device.info();
        RecordBase {
            device: info.id.clone(),
            device_name: info.name.clone(),
            threads: info.compute_units,
            cache: format!("{cache:?}").to_lowercase(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
        }
    }

    /// A row not yet timed (status skipped until a timing fills it).
    pub fn record(&self, variant: &str, op: Op, dtype: DType, n: usize, windows: usize) -> Record {
        Record {
            device: self.device.clone(),
            device_name: self.device_name.clone(),
            variant: variant.to_string(),
            op: op.to_string(),
            dtype: dtype.to_string(),
            acc: String::new(),
            n,
            status: Status::Skipped,
            reason: None,
            median_s: None,
            min_s: None,
            max_s: None,
            reps: 0,
            passes: Vec::new(),
            gbps: None,
            roof_gbps: None,
            roof_fraction: None,
            warning: None,
            auto_choice: None,
            shape: None,
            axes: None,
            strategy: None,
            map: None,
            roof_config: None,
            datasheet_gbps: None,
            roof_peak_fraction: None,
            transfer_s: 0.0,
            cache: self.cache.clone(),
            windows,
            threads: self.threads,
            graph_s: None,
            speedup_per_call: None,
            speedup_graph: None,
            value: String::new(),
            canonical_order: canonical::VERSION,
            redlab_version: env!("CARGO_PKG_VERSION").to_string(),
            commit: env!("REDLAB_COMMIT").to_string(),
            command: self.command.clone(),
            unix_time: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }
}

/// The device line and the column titles.
pub fn print_header(out: &mut dyn Write, device: &Device, args: &BenchArgs) -> std::io::Result<()> {
    let info = device.info();
    writeln!(
        out,
        "device {} ({}), {} compute units; cache {:?}",
        info.id, info.name, info.compute_units, args.cache
    )?;
    writeln!(
        out,
        "{:<40} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>7}  status",
        "problem", "n", "median", "min", "max", "GB/s", "roof GB/s", "of roof"
    )
}

/// One row of the table.
pub fn print_row(out: &mut dyn Write, problem: &str, r: &Record) -> std::io::Result<()> {
    let time = |s: Option<f64>| s.map(seconds_text).unwrap_or_else(|| "-".into());
    let status = match r.status {
        Status::Ok => match &r.warning {
            Some(w) => format!("ok, timing doubtful: {w}"),
            None => "ok".to_string(),
        },
        Status::Wrong => format!("WRONG: {}", r.reason.as_deref().unwrap_or("")),
        Status::Skipped => format!("skipped: {}", r.reason.as_deref().unwrap_or("")),
    };
    writeln!(
        out,
        "{:<40} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9} {:>7}  {status}",
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
