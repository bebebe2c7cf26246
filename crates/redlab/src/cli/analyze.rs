//! `redlab analyze (VARIANT | FILE.cl | segments)`: runs a kernel in the SIMT simulator and reports
//! branch divergence, bank conflicts, coalescing, barriers and errors, as text, JSON
//! (`--json`) or an HTML page with pictures (`--html`). A built-in variant runs all its
//! passes through the pass driver and its result is checked against the reference.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context};
use clap::Args;
use redlab_analyzer::html::{self, Drawn};
use redlab_analyzer::memory::Memory;
use redlab_analyzer::report::{self, CheckJson, Launched, Report};
use redlab_analyzer::sim::{self, LaunchConfig};
use redlab_analyzer::variant::{self, VariantOptions};
use redlab_analyzer::{args as kernel_args, compile, project_headers, Compiled};
use redlab_core::{DType, Op, Problem};
use redlab_kernels::registry;

use super::size::parse_size;
use super::Verdict;

/// Arguments of `redlab analyze`.
#[derive(Debug, Clone, Args)]
pub struct AnalyzeArgs {
    /// A built-in variant (`reduce0`, `sequential-addressing`, `production` …) or an
    /// OpenCL C file.
    pub(super) target: String,
    /// More variants or files, analyzed with the same options and put side by side on
    /// the --html page (`redlab analyze reduce1 reduce2 --html compare.html`).
    #[arg(value_name = "MORE")]
    pub(super) others: Vec<String>,
    /// The kernel to run (a file with one kernel needs none).
    #[arg(long)]
    pub(super) kernel: Option<String>,
    /// Global size (`1024`, `2^20`, `64x64`). For a variant: the number of input
    /// elements (the first pass's global size for one-element-per-work-item kernels).
    #[arg(long)]
    pub(super) global: Option<String>,
    /// Work-group size (`256`, `16x16`). For a variant: its WG parameter.
    #[arg(long)]
    pub(super) local: Option<String>,
    /// Lanes per warp (and per sub-group).
    #[arg(long, default_value_t = 32)]
    pub(super) warp: usize,
    /// Local-memory banks of 4 bytes.
    #[arg(long, default_value_t = 32)]
    pub(super) banks: usize,
    /// A preprocessor definition, NAME or NAME=VALUE (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub(super) define: Vec<String>,
    /// A kernel argument, NAME=SPEC: buffer:TYPE:COUNT:random|zeros|ones|iota|uninit
    /// with an optional :ro, :wo or :rw (the access the host declares, checked),
    /// local:TYPE:COUNT, or a value (repeatable).
    #[arg(long = "arg", value_name = "NAME=SPEC")]
    pub(super) args: Vec<String>,
    /// A local array whose accesses get a bank map (repeatable; `// @watch NAME` in the
    /// source does the same).
    #[arg(long)]
    watch: Vec<String>,
    /// Operator, for a variant.
    #[arg(long, default_value = "sum")]
    pub(super) op: Op,
    /// Element type, for a variant.
    #[arg(long, default_value = "f32")]
    pub(super) dtype: DType,
    /// A variant parameter, NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Seed of random inputs.
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
    /// The work-group whose steps are drawn (linear index).
    #[arg(long, default_value_t = 0)]
    trace_group: usize,
    /// Compute units of the simulated device (sizes grid-stride variants' grids).
    #[arg(long, default_value_t = 2)]
    pub(super) compute_units: usize,
    /// Stop after this many lane-steps.
    #[arg(long, default_value_t = redlab_analyzer::sim::DEFAULT_MAX_STEPS)]
    max_steps: u64,
    /// Stop when one warp has run this many steps in one work-group: an endless loop
    /// stops within seconds
    #[arg(long, default_value_t = redlab_analyzer::sim::DEFAULT_MAX_WARP_STEPS)]
    max_warp_steps: u64,
    /// Stop after this many seconds of simulation (0: no limit).
    #[arg(long, default_value_t = 30.0)]
    max_seconds: f64,
    /// The most memory the simulation may hold, bookkeeping included (e.g. 2Gi).
    #[arg(long, default_value = "2Gi", value_parser = parse_bytes)]
    max_memory: u64,
    /// For the target `segments` (the axis and segment kernels): the input's shape, C
    /// order (`300x70`).
    #[arg(long)]
    pub(super) shape: Option<String>,
    /// For `segments`: the axes to reduce (`1`, `0,2`; default all).
    #[arg(long)]
    pub(super) axis: Option<String>,
    /// For `segments`: a statistic instead of --op (var, std, logsumexp, nanmin,
    /// nanmax, nanmean), run by the statistics kernels.
    #[arg(long)]
    pub(super) stat: Option<String>,
    /// For `segments`: the share of the seeded input's elements set to NaN (0 to 1, a
    /// float --dtype), so that the NaN-skipping statistics compact their tiles.
    #[arg(long, value_name = "SHARE")]
    pub(super) nan_share: Option<f64>,
    /// With --stat var or std: the delta degrees of freedom.
    #[arg(long, default_value_t = 0.0)]
    pub(super) ddof: f64,
    /// For a kernel file: print this buffer argument's final contents, element by
    /// element (repeatable; `buffers` in the JSON).
    #[arg(long, value_name = "NAME")]
    pub(super) show: Vec<String>,
    /// Write a buffer argument's (or a session array's) final contents to
    /// `--out-dir/NAME.npy` (repeatable; an existing file needs --force).
    #[arg(long, value_name = "NAME")]
    pub(super) dump: Vec<String>,
    /// Where --dump writes.
    #[arg(long, value_name = "DIR", default_value = ".")]
    out_dir: std::path::PathBuf,
    /// With the production kernel: a user-defined map over inputs x, y, z, w (each of
    /// --dtype), run as the GPUs run it (docs/expressions.md). With `segments`: a map of
    /// the one input x, compiled into the axis kernels.
    #[arg(long)]
    pub(super) map: Option<String>,
    /// With --map: a built-in combine (sum, prod, min, max, and, or, xor, argmin,
    /// argmax) or an associative expression in a and b.
    #[arg(long, requires = "map", default_value = "sum")]
    pub(super) combine: String,
    /// With a custom --combine: the value that leaves any partial unchanged.
    #[arg(long, requires = "map", allow_hyphen_values = true)]
    pub(super) identity: Option<String>,
    /// With --map: an expression in r and n applied to the result.
    #[arg(long, requires = "map")]
    pub(super) post: Option<String>,
    /// Accumulator type for sum and prod (default: 64-bit for integers, f32 for f16/bf16),
    /// of --op's problem or of the --map's reduction.
    #[arg(long)]
    pub(super) acc: Option<DType>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub(super) json: bool,
    /// Write an HTML page with the pictures.
    #[arg(long, value_name = "OUT.html")]
    pub(super) html: Option<std::path::PathBuf>,
    /// Replace --html if it exists.
    #[arg(long)]
    pub(super) force: bool,
}

impl AnalyzeArgs {
    /// The reduction --map, --combine, --identity and --acc describe, over inputs of
    /// --dtype (as many as the map names), with `post` applied to the result.
    pub(super) fn reduction(
        &self,
        map: &str,
        post: Option<&str>,
    ) -> anyhow::Result<redlab::Reduction> {
        let count = redlab_expr::parser::inputs_named(map)?;
        Ok(redlab::Reduction::builder(map, &self.combine)
            .with_options(self.identity.as_deref(), post, self.acc)
            .build(&vec![self.dtype; count])?)
    }
}

/// The most work-items one analyzed launch may have (the simulator runs each of them).
const MAX_WORK_ITEMS: u64 = 1 << 32;

/// Sizes like `1024`, `2^10` or `64x64x2`: every dimension at least 1, and the product at
/// most [`MAX_WORK_ITEMS`], computed without overflow.
fn dims(option: &str, text: &str) -> anyhow::Result<[usize; 3]> {
    let mut out = [1usize; 3];
    let parts: Vec<&str> = text.split(['x', 'X', ',']).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("'{text}' is not a size (1024, 2^10, 64x64)");
    }
    let mut total = 1u64;
    for (k, p) in parts.iter().enumerate() {
        out[k] = parse_size(p.trim()).map_err(|e| anyhow::anyhow!(e))?;
        if out[k] == 0 {
            bail!("{option} {text}: every dimension must be at least 1");
        }
        total = total
            .checked_mul(out[k] as u64)
            .filter(|&t| t <= MAX_WORK_ITEMS)
            .with_context(|| {
                format!("{option} {text} is more than the 2^32 work-items the analyzer simulates")
            })?;
    }
    Ok(out)
}

/// A byte count like `2Gi` or `512Mi`.
fn parse_bytes(text: &str) -> Result<u64, String> {
    parse_size(text).map(|b| b as u64)
}

/// Writes `bytes`, elements of `elem`, as a 1-D .npy at `path` (already checked by the
/// output plan).
pub(super) fn write_npy(
    name: &str,
    elem: &redlab_analyzer::types::Type,
    bytes: &[u8],
    path: &Path,
) -> anyhow::Result<()> {
    let redlab_analyzer::types::Type::Scalar(s) = elem else {
        bail!(
            "--dump {name}: elements of type {} have no .npy type (numbers only)",
            elem.name()
        );
    };
    let dtype = kernel_args::dtype_of(*s)
        .with_context(|| format!("--dump {name}: {} has no .npy type", elem.name()))?;
    let count = bytes.len() / dtype.size_bytes();
    let file = redlab::npy_out::encode(dtype, &[count], &bytes[..count * dtype.size_bytes()])?;
    std::fs::write(path, file).with_context(|| format!("cannot write {}", path.display()))
}

/// Runs `redlab analyze`.
pub fn run(a: &AnalyzeArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    if !a.others.is_empty() {
        return super::analyze_compare::run(a, out);
    }
    let config = launch_config(a)?;
    let mut outputs = super::output::OutputPlan::new(a.force);
    if Path::new(&a.target).exists() {
        outputs.input("the kernel file", Path::new(&a.target));
    }
    if let Some(path) = &a.html {
        outputs.replace("--html", path)?;
    }
    let dump_paths: Vec<std::path::PathBuf> = a
        .dump
        .iter()
        .map(|name| a.out_dir.join(format!("{name}.npy")))
        .collect();
    for path in &dump_paths {
        outputs.replace("--dump", path)?;
    }
    let (report, drawn_traces) = analyze_target(a, config, &dump_paths)?;
    let verdict = verdict_of(&report);
    if let Some(path) = &a.html {
        std::fs::write(path, html::render(&report, &drawn(a, &drawn_traces)))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        print_text(&report, out)?;
        if let Some(path) = &a.html {
            writeln!(out, "pictures: {}", path.display())?;
        }
    }
    Ok(verdict)
}

/// The traced launches to draw, with the options' warp and bank counts.
pub(super) fn drawn<'t>(a: &AnalyzeArgs, traces: &'t Traces) -> Vec<Drawn<'t>> {
    traces
        .iter()
        .map(|(label, trace)| Drawn {
            label: label.clone(),
            trace,
            warp: a.warp,
            banks: a.banks,
        })
        .collect()
}

/// The simulator's settings from the options.
pub(super) fn launch_config(a: &AnalyzeArgs) -> anyhow::Result<LaunchConfig> {
    let mut config = LaunchConfig::linear(1, 1);
    config.warp = a.warp;
    config.banks = a.banks;
    config.trace_group = a.trace_group;
    config.max_steps = a.max_steps;
    config.max_warp_steps = a.max_warp_steps;
    config.max_memory = a.max_memory;
    if !(a.max_seconds >= 0.0 && a.max_seconds <= 1e6) {
        bail!(
            "--max-seconds {} is not a number of seconds from 0 to 10^6",
            a.max_seconds
        );
    }
    if a.max_seconds > 0.0 {
        config.deadline =
            Some(std::time::Instant::now() + std::time::Duration::from_secs_f64(a.max_seconds));
    }
    if !(1..=65536).contains(&a.compute_units) {
        bail!("--compute-units {} is not in 1..=65536", a.compute_units);
    }
    config.watch = a.watch.clone();
    Ok(config)
}

/// Runs the analysis `a.target` names: a session, the segment kernels, a variant or a
/// file.
pub(super) fn analyze_target(
    a: &AnalyzeArgs,
    config: LaunchConfig,
    dump_paths: &[std::path::PathBuf],
) -> anyhow::Result<(Report, Traces)> {
    let is_file = Path::new(&a.target).is_file();
    Ok(match (is_file, registry::find(&a.target)) {
        (true, _) if a.target.ends_with(".clamsee") => {
            if a.kernel.is_some() || !a.args.is_empty() || a.global.is_some() || a.local.is_some() {
                bail!("a session sets its own kernels, arguments and work sizes: leave out --kernel, --arg, --global and --local");
            }
            super::analyze_session::run(Path::new(&a.target), &a.show, &a.define, config, &a.dump, dump_paths)?
        }
        (false, _) if a.target == "segments" => super::analyze_segments::run(a, config)?,
        (false, Some(v)) => analyze_variant(a, &v, config)?,
        (true, _) => analyze_file(a, config)?,
        (false, None) => bail!(
            "'{}' is neither a file nor a variant ('redlab bench --help' lists variants; 'segments' runs the axis kernels)",
            a.target
        ),
    })
}

/// A wrong result, or any error the simulator found (race, out-of-bounds, barrier
/// divergence …), fails the run (exit code 1) after the report is written.
pub(super) fn verdict_of(report: &Report) -> Verdict {
    let errors = &report.total.errors;
    match &report.check {
        Some(c) if !c.ok => Verdict::Mismatch(format!(
            "{}: got {}, the reference gives {}",
            c.problem, c.value, c.expected
        )),
        _ if !errors.is_empty() => Verdict::Mismatch(format!(
            "the kernel has {} error{}; first: {:?} at {}:{}: {}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            errors[0].kind,
            errors[0].file,
            errors[0].line,
            errors[0].message
        )),
        _ => Verdict::Success,
    }
}

pub(super) type Traces = Vec<(String, redlab_analyzer::metrics::Trace)>;

fn analyze_variant(
    a: &AnalyzeArgs,
    v: &redlab_kernels::Variant,
    config: LaunchConfig,
) -> anyhow::Result<(Report, Traces)> {
    if a.kernel.is_some() || !a.args.is_empty() || !a.show.is_empty() {
        bail!(
            "--kernel, --arg and --show are for files; a variant chooses its kernels and arguments"
        );
    }
    let problem = Problem::new(a.op, a.dtype, a.acc)?;
    let mut params = Vec::new();
    for (k, val) in super::params::parse_params(&a.params)? {
        v.check_param(&k, val).map_err(anyhow::Error::msg)?;
        params.push((k, val));
    }
    if let Some(local) = &a.local {
        let l = dims("--local", local)?;
        if l[1] != 1 || l[2] != 1 {
            bail!("variants run one-dimensional work-groups");
        }
        if v.default_param("WG").is_none() {
            bail!("variant {} chooses its own work-group size (it has no WG parameter); leave out --local", v.name);
        }
        if !params.iter().any(|(k, _)| k == "WG") {
            let wg = u32::try_from(l[0])
                .ok()
                .filter(|&wg| v.check_param("WG", wg).is_ok())
                .with_context(|| {
                    format!(
                        "--local {}: variant {} runs work-groups of a power of two from 2 to 1024",
                        l[0], v.name
                    )
                })?;
            params.push(("WG".into(), wg));
        }
    }
    let n = match &a.global {
        Some(g) => {
            let d = dims("--global", g)?;
            d[0] * d[1] * d[2]
        }
        None => 4096,
    };
    let opts = VariantOptions {
        config,
        params,
        defines: a.define.clone(),
        compute_units: a.compute_units,
        seed: a.seed,
    };
    let (run, source, problem) = match &a.map {
        Some(map) => {
            if !v.aliases.contains(&"production") {
                bail!("--map runs in the production kernel only (not {})", v.name);
            }
            let reduction = a.reduction(map, a.post.as_deref())?;
            let run = redlab_analyzer::mapped::run(&reduction, n, &opts)?;
            let source = format!("{} with {}", v.name, reduction.describe());
            (run, source, reduction.describe())
        }
        None => (
            variant::run(v, &problem, n, &opts)?,
            format!("{} ({}), {problem}", v.name, v.aliases.join(", ")),
            problem.to_string(),
        ),
    };
    let (total, passes, traces) =
        summarize_passes(&run.passes, "the variant launched nothing (empty input)")?;
    let report = Report {
        source,
        total,
        passes,
        check: Some(CheckJson {
            problem,
            n,
            value: run.value.to_string(),
            expected: run.expected.to_string(),
            ok: run.verdict.is_ok(),
            message: run.verdict.err(),
        }),
        buffers: Default::default(),
    };
    Ok((report, traces))
}

/// Totals over every analyzed launch, each launch on its own when there are several,
/// and each launch's trace for the pictures; `nothing` is the error when none ran.
pub(super) fn summarize_passes(
    runs: &[variant::Pass],
    nothing: &str,
) -> anyhow::Result<(report::LaunchJson, Vec<report::LaunchJson>, Traces)> {
    let launched: Vec<Launched<'_>> = runs
        .iter()
        .map(|p| Launched {
            files: &p.compiled.files,
            report: &p.report,
        })
        .collect();
    let total = report::summarize(&launched).context(nothing.to_string())?;
    let passes = if launched.len() > 1 {
        launched
            .iter()
            .filter_map(|l| report::summarize(std::slice::from_ref(l)))
            .collect()
    } else {
        Vec::new()
    };
    let traces = runs
        .iter()
        .enumerate()
        .map(|(k, p)| {
            (
                format!("pass {}: {}", k + 1, p.report.kernel),
                p.report.trace.clone(),
            )
        })
        .collect();
    Ok((total, passes, traces))
}

/// The final contents of the buffer arguments named in `names`, typed by the kernel's
/// parameters.
fn shown_buffers(
    names: &[String],
    kernel: &redlab_analyzer::ast::Function,
    mem: &Memory,
) -> anyhow::Result<std::collections::BTreeMap<String, Vec<String>>> {
    let mut shown = std::collections::BTreeMap::new();
    for name in names {
        let (elem, bytes) = kernel_buffer("--show", name, kernel, mem)?;
        shown.insert(name.clone(), element_texts(elem, bytes)?);
    }
    Ok(shown)
}

/// The element type and final bytes of the buffer argument `name` (`option` names the
/// flag in errors).
fn kernel_buffer<'m>(
    option: &str,
    name: &str,
    kernel: &'m redlab_analyzer::ast::Function,
    mem: &'m Memory,
) -> anyhow::Result<(&'m redlab_analyzer::types::Type, &'m [u8])> {
    let param = kernel
        .params
        .iter()
        .find(|p| *p.name == *name)
        .with_context(|| format!("{option} {name}: the kernel has no parameter {name}"))?;
    let redlab_analyzer::types::Type::Pointer(elem, _) = &param.ty else {
        bail!("{option} {name}: {name} is not a buffer");
    };
    let buffer = mem
        .global
        .iter()
        .find(|b| b.name == *name)
        .with_context(|| format!("{option} {name}: {name} is not a global buffer"))?;
    Ok((elem, &buffer.bytes))
}

/// Each element of `bytes` (of type `elem`) as text: integers in decimal, floats as
/// Rust prints them, vectors in parentheses.
pub(super) fn element_texts(
    elem: &redlab_analyzer::types::Type,
    bytes: &[u8],
) -> anyhow::Result<Vec<String>> {
    use redlab_analyzer::value::{from_bytes, Value};
    let text = |v: &Value| match v {
        Value::Int(s, b) if s.is_signed() => (*b as i64).to_string(),
        Value::Int(_, b) => b.to_string(),
        Value::Float(_, x) => x.to_string(),
        other => other.describe(),
    };
    bytes
        .chunks_exact(elem.size().max(1))
        .map(|c| {
            from_bytes(elem, c).map(|v| match &v {
                Value::Vector(_, items) => format!(
                    "({})",
                    items.iter().map(text).collect::<Vec<_>>().join(", ")
                ),
                other => text(other),
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(anyhow::Error::msg)
}

/// The longest kernel source or included file read (real kernels are a few hundred KB at
/// most; this stops `/dev/zero`-like inputs and accidental data files).
const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// Reads a kernel source file: a regular file of at most [`MAX_SOURCE_BYTES`], in UTF-8.
fn read_source(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(format!(
            "{} bytes is more than the {} MiB a kernel source may have",
            meta.len(),
            MAX_SOURCE_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

fn analyze_file(a: &AnalyzeArgs, mut config: LaunchConfig) -> anyhow::Result<(Report, Traces)> {
    let path = Path::new(&a.target);
    let text = read_source(path)
        .map_err(|why| anyhow::anyhow!("cannot read {}: {why}", path.display()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    // Includes: next to the file first, then the project's own headers.
    let resolve = |name: &str, _from: &str| {
        let local = dir.join(name);
        if std::fs::symlink_metadata(&local).is_ok() {
            // An included file is an input too: --html may not replace it.
            if a.html
                .as_deref()
                .is_some_and(|html| super::output::same_file(&local, html))
            {
                return Err("it is the --html output file; choose another output".into());
            }
            return read_source(&local).map(|t| Some((local.display().to_string(), t)));
        }
        project_headers(name, "")
    };
    let compiled: Compiled = compile(&path.display().to_string(), &text, &a.define, &resolve)?;
    let kernels: Vec<&str> = compiled.program.kernels().map(|k| &*k.name).collect();
    let kernel = match (&a.kernel, kernels.as_slice()) {
        (Some(k), _) => k.clone(),
        (None, [one]) => one.to_string(),
        (None, []) => bail!("{} has no __kernel function", path.display()),
        (None, many) => bail!(
            "{} has several kernels ({}); choose one with --kernel",
            path.display(),
            many.join(", ")
        ),
    };
    let f = compiled
        .program
        .kernels()
        .find(|k| *k.name == *kernel)
        .with_context(|| {
            format!(
                "no kernel {kernel} in {} (kernels: {})",
                path.display(),
                kernels.join(", ")
            )
        })?
        .clone();
    let global = dims(
        "--global",
        a.global
            .as_deref()
            .context("--global is needed for a kernel file")?,
    )?;
    let local = match (&a.local, f.reqd_work_group_size) {
        (Some(l), _) => dims("--local", l)?,
        (None, Some(req)) => req,
        (None, None) => {
            bail!("--local is needed: kernel {kernel} does not require a work-group size")
        }
    };
    config.global = global;
    config.local = local;
    config.watch.extend(compiled.watches.iter().cloned());
    let mut given = Vec::new();
    for spec in &a.args {
        let (k, v) = spec
            .split_once('=')
            .with_context(|| format!("--arg wants NAME=SPEC, not '{spec}'"))?;
        given.push((k.to_string(), v.to_string()));
    }
    let mut mem = Memory::default();
    let bound = kernel_args::bind(&f, &given, &mut mem, a.seed)?;
    let launch = sim::launch(
        &compiled.program,
        &compiled.files,
        &kernel,
        &bound,
        &mut mem,
        &config,
    )?;
    let total = report::summarize(&[Launched {
        files: &compiled.files,
        report: &launch,
    }])
    .context("nothing ran")?;
    let report = Report {
        source: path.display().to_string(),
        total,
        passes: Vec::new(),
        check: None,
        buffers: shown_buffers(&a.show, &f, &mem)?,
    };
    for name in &a.dump {
        let (elem, bytes) = kernel_buffer("--dump", name, &f, &mem)?;
        write_npy(name, elem, bytes, &a.out_dir.join(format!("{name}.npy")))?;
    }
    Ok((report, vec![(kernel, launch.trace)]))
}

pub(super) fn print_text(r: &Report, out: &mut dyn Write) -> anyhow::Result<()> {
    let t = &r.total;
    let c = &t.counts;
    writeln!(out, "{}", r.source)?;
    if let Some(check) = &r.check {
        writeln!(
            out,
            "  result over {} elements: {} (reference {}) — {}",
            check.n,
            check.value,
            check.expected,
            if check.ok { "correct" } else { "WRONG" }
        )?;
    }
    writeln!(
        out,
        "  kernel {}: global {}, local {}, warps of {}, {} banks{}",
        t.kernel,
        t.global_size,
        t.local_size,
        t.warp_size,
        t.banks,
        if r.passes.is_empty() {
            String::new()
        } else {
            format!(", {} launches (sums below)", r.passes.len())
        }
    )?;
    if t.partial_work_groups > 0 {
        writeln!(
            out,
            "  {} work-group{} at the edge smaller than the work-group size (non-uniform work-groups: OpenCL 2.0 and later)",
            t.partial_work_groups,
            if t.partial_work_groups == 1 { "" } else { "s" }
        )?;
    }
    writeln!(
        out,
        "  branches {}, divergent {}, active lanes {:.1}%",
        c.branches,
        c.divergent_branches,
        100.0 * c.active_lane_ratio
    )?;
    writeln!(
        out,
        "  local loads: {} requests, {} wavefronts, {} bank conflicts; stores: {} requests, {} wavefronts, {} bank conflicts",
        c.local_requests.local_load,
        c.wavefronts.local_load,
        c.bank_conflicts.local_load,
        c.local_requests.local_store,
        c.wavefronts.local_store,
        c.bank_conflicts.local_store
    )?;
    writeln!(
        out,
        "  global loads: {} requests, {} sectors; stores: {} requests, {} sectors; atomics {}; barriers {}",
        c.global.load_requests,
        c.global.load_sectors,
        c.global.store_requests,
        c.global.store_sectors,
        c.atomics,
        c.barriers
    )?;
    if t.errors.is_empty() {
        writeln!(out, "  errors: none")?;
    }
    for e in &t.errors {
        writeln!(
            out,
            "  ERROR {:?} at {}:{} ({} times), work-item {:?} of group {:?}: {}",
            e.kind, e.file, e.line, e.count, e.work_item, e.work_group, e.message
        )?;
    }
    let hot: Vec<_> = t
        .lines
        .iter()
        .filter(|l| {
            l.counts.divergent_branches > 0
                || l.counts.bank_conflicts.local_load + l.counts.bank_conflicts.local_store > 0
        })
        .collect();
    if !hot.is_empty() {
        writeln!(out, "  lines with divergence or bank conflicts:")?;
    }
    for l in hot {
        writeln!(
            out,
            "    {:>4}  {:<60}  divergent {}/{} branches, conflicts {} load / {} store",
            l.line,
            l.text.chars().take(60).collect::<String>(),
            l.counts.divergent_branches,
            l.counts.branches,
            l.counts.bank_conflicts.local_load,
            l.counts.bank_conflicts.local_store
        )?;
    }
    for (name, values) in &r.buffers {
        const SHOWN: usize = 64;
        let head: Vec<&str> = values.iter().take(SHOWN).map(String::as_str).collect();
        let more = if values.len() > SHOWN {
            format!(", … {} more", values.len() - SHOWN)
        } else {
            String::new()
        };
        writeln!(out, "  {name} after the run: [{}{more}]", head.join(", "))?;
    }
    Ok(())
}
