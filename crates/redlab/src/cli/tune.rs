//! `redlab tune --device D`: searches, for each operator × type × size, the fastest
//! configuration `auto` may use, and writes the tuning database. Per cell it first times
//! every eligible variant at its defaults, then samples the parameter spaces of the two
//! fastest (defaults first, the rest in a seeded random order) until the cell's share
//! of `--budget` is spent. Every configuration is verified against the reference before
//! it is timed; one that does not build, run or verify is recorded as invalid.
//!
//! With `--merge-from`, a cell that already has an entry there also times that entry's
//! configuration, so the entry is replaced only by one measured faster, and its samples
//! start with the configurations one parameter away from that entry.
//!
//! What "fastest" means is `--objective`: the median single call (timed by events), or
//! the per-reduction time inside a captured CUDA graph of back-to-back calls, the
//! steady state of a pipeline. The two disagree (a configuration that hides launch
//! latency per call can lose in a graph), so a database says in its command which one
//! it was tuned for.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use redlab::generate::{generate, Distribution};
use redlab::{DType, Device, Op, Problem};
use redlab_bench::{CacheMode, Status, TimingPlan};
use redlab_kernels::Variant;
use redlab_tune::db::{self, Database, Entry, Invalid, FORMAT};
use redlab_tune::space::{configs, describe, eligible, neighbours_first, Config};
use redlab_tune::DeviceKey;

use super::bench::RecordBase;
use super::bench_lab::{choose as choose_variants, time_variant, Judge, Lab};
use super::size::parse_size_list;
use super::Verdict;

/// Variants the tuner times by default: the production kernel and the strategies that
/// were fastest somewhere in the lab's measurements (results/h100-opencl); the slow
/// teaching variants (one atomic per element, one work-item per compute unit …) never
/// win and would eat the budget.
const CANDIDATES: &str = "production,canonical,two-stage,many-per-thread,blocked-slm-tree,blocked-atomic,reduce6,khronos-vanilla";

/// Arguments of `redlab tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The OpenCL or CUDA device to tune.
    #[arg(long)]
    device: String,
    /// Operators, comma-separated.
    #[arg(long, default_value = "sum,max", value_delimiter = ',')]
    ops: Vec<Op>,
    /// Element types, comma-separated.
    #[arg(long, default_value = "i32,f32,f64", value_delimiter = ',')]
    dtypes: Vec<DType>,
    /// Sizes to tune at; each entry serves sizes up to the geometric middle between
    /// neighbours.
    #[arg(long, default_value = "2^14,2^18,2^22,2^26")]
    sizes: String,
    /// Seconds for the whole search (shared equally by the cells).
    #[arg(long, default_value_t = 120.0)]
    budget: f64,
    /// Candidate variants (`all`, or names, comma-separated).
    #[arg(long, default_value = CANDIDATES)]
    variants: String,
    /// Where to write the database (default: your tuning folder, which `auto` reads
    /// first).
    #[arg(long, conflicts_with = "out_dir")]
    out: Option<PathBuf>,
    /// Write the database into this folder as `<backend>/<family>.json` (the layout of
    /// `tuning/` and of your tuning folder).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Keep this database's entries for every cell not tuned now (same device family):
    /// the new cells replace the ones at the same operator, type and size, and each
    /// problem's size ranges are drawn again over all of its sizes.
    #[arg(long, value_name = "DATABASE.json")]
    merge_from: Option<PathBuf>,
    /// Replace --out even if it is not a tuning database.
    #[arg(long)]
    force: bool,
    /// Seed of inputs and of the sampling order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// What to make fastest: one call (`per-call`) or a reduction inside a CUDA graph
    /// (`graph`; backends without graphs fall back to per call).
    #[arg(long, value_enum, default_value_t = Objective::PerCall)]
    objective: Objective,
    /// Back-to-back reductions in the captured graph (`--objective graph`).
    #[arg(long, default_value_t = 50)]
    graph_calls: usize,
}

/// What the tuner makes fastest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Objective {
    /// The median single call.
    PerCall,
    /// The per-reduction time inside a captured CUDA graph.
    Graph,
}

/// Runs `redlab tune`.
pub fn run(args: &TuneArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    // A tuning replaces the database at --out: refuse, before tuning, to replace a file
    // that is not one (a tuning database is replaced, which is what re-tuning is for).
    if let Some(path) = &args.out {
        if path.exists() && !args.force && db::Database::load(path).is_err() {
            anyhow::bail!(
                "--out {} exists and is not a tuning database; give --force to replace it",
                path.display()
            );
        }
    }
    let device = Device::open(&args.device, None)?;
    #[cfg(feature = "opencl")]
    if let Some(opencl) = device.opencl() {
        return tune(args, &device, opencl, out);
    }
    #[cfg(feature = "cuda")]
    if let Some(cuda) = device.cuda() {
        return tune(args, &device, cuda, out);
    }
    bail!(
        "{} runs one strategy per problem; tune an OpenCL or CUDA device",
        device.info().id
    )
}

struct Timed {
    variant: Variant,
    config: Config,
    gbps: f64,
}

fn tune<L: Lab>(
    args: &TuneArgs,
    device: &Device,
    lab: &L,
    out: &mut dyn Write,
) -> anyhow::Result<Verdict> {
    let sizes = parse_size_list(&args.sizes).map_err(anyhow::Error::msg)?;
    if args.budget <= 0.0 {
        bail!("--budget must be positive");
    }
    let candidates = choose_variants(&args.variants)?;
    let key = DeviceKey::of(device.info());
    // The database to merge into is read and checked before the search, so a bad file
    // or another device's database fails at once.
    let merge_base = match &args.merge_from {
        Some(path) => {
            let base = db::Database::load(path).map_err(anyhow::Error::msg)?;
            if base.device.backend != key.backend || base.device.family != key.family {
                bail!(
                    "--merge-from {} holds {}/{}, but this device is {}/{}",
                    path.display(),
                    base.device.backend,
                    base.device.family,
                    key.backend,
                    key.family
                );
            }
            Some(base)
        }
        None => None,
    };
    let caps = lab.caps().clone();
    let mut plan = TimingPlan::new(CacheMode::Cold, caps.cache_bytes.max(1 << 20));
    plan.min_reps = 3;
    plan.min_seconds = 0.005;
    let cells = (args.ops.len() * args.dtypes.len() * sizes.len()).max(1);
    let per_cell = args.budget / cells as f64;
    let base = RecordBase::for_device(device, CacheMode::Cold);
    let mut entries = Vec::new();
    let mut invalid = Vec::new();
    let started = Instant::now();
    writeln!(
        out,
        "tuning {} ({}; family {}, {}) — {cells} cells, {per_cell:.1} s each",
        device.info().id,
        key.name,
        key.family,
        key.architecture
    )?;
    let ranges = db::ranges(&sizes);
    for &dtype in &args.dtypes {
        for (k, &n) in sizes.iter().enumerate() {
            let windows = plan.windows(n, dtype.size_bytes());
            let pool = generate(dtype, n * windows, Distribution::Uniform, args.seed)?;
            let uploads: Vec<L::Input> = (0..windows)
                .map(|w| lab.upload(pool.view().slice(w * n, w * n + n)))
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for &op in &args.ops {
                let Ok(problem) = Problem::new(op, dtype, None) else {
                    continue;
                };
                let deadline = Instant::now() + std::time::Duration::from_secs_f64(per_cell);
                let mut judge = Judge::new(windows);
                let mut tried = 0usize;
                let mut timed: Vec<Timed> = Vec::new();
                let mut default_gbps = None;
                let time = |variant: &Variant,
                            config: &Config,
                            row_budget: f64,
                            judge: &mut Judge|
                 -> Result<f64, String> {
                    let params: Vec<(&str, u32)> =
                        config.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                    let mut record = base.record(variant.name, op, dtype, n, windows);
                    time_variant(
                        lab,
                        variant,
                        &problem,
                        &pool,
                        n,
                        &uploads,
                        judge,
                        &params,
                        &plan,
                        0.0,
                        row_budget,
                        &mut record,
                    );
                    let per_call = match (record.status, record.gbps) {
                        (Status::Ok, Some(g)) => g,
                        _ => {
                            return Err(record
                                .reason
                                .unwrap_or_else(|| format!("{:?}", record.status)))
                        }
                    };
                    if args.objective == Objective::PerCall {
                        return Ok(per_call);
                    }
                    match lab.graph(variant, &problem, &uploads, args.graph_calls, &params) {
                        None => Ok(per_call),
                        Some(Err(e)) => Err(format!("graph replay: {e}")),
                        Some(Ok((seconds, value, w))) => {
                            let window = pool.view().slice(w * n, w * n + n);
                            let exact =
                                variant.canonical || !(dtype.is_float() && op.is_arithmetic());
                            judge
                                .check(&problem, w, window, exact, &value)
                                .map_err(|why| format!("graph replay: {why}"))?;
                            Ok((n * dtype.size_bytes()) as f64 / seconds / 1e9)
                        }
                    }
                };
                let eligible_now: Vec<&Variant> = candidates
                    .iter()
                    .filter(|v| eligible(v, &problem) && v.check(&problem, &caps).is_ok())
                    .collect();
                // Phase 1: every eligible variant at its defaults.
                let row_budget =
                    (per_cell / (2.0 * eligible_now.len().max(1) as f64)).clamp(0.05, 1.0);
                for v in &eligible_now {
                    tried += 1;
                    match time(v, &Config::new(), row_budget, &mut judge) {
                        Ok(g) => {
                            if v.is_called("production") {
                                default_gbps = Some(g);
                            }
                            timed.push(Timed {
                                variant: (*v).clone(),
                                config: Config::new(),
                                gbps: g,
                            });
                        }
                        Err(reason) => {
                            invalid.push(invalid_of(op, dtype, n, v, &Config::new(), reason))
                        }
                    }
                }
                // A cell that has an entry in --merge-from runs that configuration too, so
                // a search that samples less of a grown space cannot replace the entry
                // with a slower one.
                let previous = merge_base.as_ref().and_then(|base| {
                    base.entries
                        .iter()
                        .find(|e| e.op == op.name() && e.dtype == dtype.name() && e.n == n)
                });
                if let Some(previous) = previous {
                    if let Some(v) = eligible_now.iter().find(|v| v.name == previous.variant) {
                        tried += 1;
                        match time(v, &previous.params, row_budget, &mut judge) {
                            Ok(g) => timed.push(Timed {
                                variant: (*v).clone(),
                                config: previous.params.clone(),
                                gbps: g,
                            }),
                            Err(reason) => {
                                invalid.push(invalid_of(op, dtype, n, v, &previous.params, reason))
                            }
                        }
                    }
                }
                // Phase 2: the parameter spaces of the two fastest, while the cell's time lasts.
                let mut ranked: Vec<Variant> = {
                    let mut t: Vec<&Timed> = timed.iter().collect();
                    t.sort_by(|a, b| b.gbps.total_cmp(&a.gbps));
                    t.iter().map(|t| t.variant.clone()).collect()
                };
                ranked.dedup_by(|a, b| a.name == b.name);
                for v in ranked.iter().take(2) {
                    let mut space: Vec<Config> =
                        configs(v, &problem, &caps).into_iter().skip(1).collect();
                    // The sampling order, reproducible from --seed; a re-tune steps one
                    // parameter away from the previous entry first, so a grown space's
                    // new values are tried beside what already won.
                    space.shuffle(&mut ChaCha8Rng::seed_from_u64(args.seed ^ n as u64));
                    if let Some(previous) = previous.filter(|p| p.variant == v.name) {
                        neighbours_first(v, &previous.params, &mut space);
                    }
                    for config in space {
                        if Instant::now() >= deadline {
                            break;
                        }
                        tried += 1;
                        match time(v, &config, row_budget, &mut judge) {
                            Ok(g) => timed.push(Timed {
                                variant: v.clone(),
                                config,
                                gbps: g,
                            }),
                            Err(reason) => {
                                invalid.push(invalid_of(op, dtype, n, v, &config, reason))
                            }
                        }
                    }
                }
                let Some(best) = timed.iter().max_by(|a, b| a.gbps.total_cmp(&b.gbps)) else {
                    writeln!(out, "  {op} {dtype} n={n}: nothing verified")?;
                    continue;
                };
                writeln!(
                    out,
                    "  {op:<4} {dtype:<4} n={n:<10} {} ({}) {:.1} GB/s{}  [{tried} timed]",
                    best.variant.name,
                    describe(&best.config),
                    best.gbps,
                    default_gbps
                        .map(|d| format!(", {:.2}× production defaults", best.gbps / d))
                        .unwrap_or_default()
                )?;
                entries.push(Entry {
                    op: op.name().to_string(),
                    dtype: dtype.name().to_string(),
                    n,
                    n_min: ranges[k].0,
                    n_max: ranges[k].1,
                    variant: best.variant.name.to_string(),
                    params: best.config.clone(),
                    gbps: (best.gbps * 10.0).round() / 10.0,
                    default_gbps: default_gbps.map(|d| (d * 10.0).round() / 10.0),
                    tried,
                });
            }
        }
    }
    let database = Database {
        format: FORMAT,
        device: key.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        budget_s: args.budget,
        entries,
        invalid,
    };
    let database = match &merge_base {
        Some(base) => base.merged(&database).map_err(anyhow::Error::msg)?,
        None => database,
    };
    let path = match (&args.out, &args.out_dir) {
        (Some(p), _) => p.clone(),
        (None, Some(dir)) => dir.join(&key.backend).join(format!("{}.json", key.family)),
        (None, None) => {
            db::user_path(&key).context("no cache folder for the tuning database; give --out")?
        }
    };
    database.save(&path).map_err(anyhow::Error::msg)?;
    writeln!(
        out,
        "wrote {} ({} entries, {} invalid configurations) in {:.0} s",
        path.display(),
        database.entries.len(),
        database.invalid.len(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(Verdict::Success)
}

fn invalid_of(
    op: Op,
    dtype: DType,
    n: usize,
    v: &Variant,
    config: &Config,
    reason: String,
) -> Invalid {
    Invalid {
        op: op.name().to_string(),
        dtype: dtype.name().to_string(),
        n,
        variant: v.name.to_string(),
        params: config
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect::<BTreeMap<_, _>>(),
        reason,
    }
}
