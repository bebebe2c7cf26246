//! `redlab run --rank R --world W --rendezvous ADDRESS`: one process of a multi-process
//! reduction. Every rank plans the same split (`redlab_core::shard::plan_for`: aligned
//! subtrees of the canonical tile tree, one contiguous run per rank), takes its own run,
//! generates just that part of the seeded input (on its GPU, in place, for `--dist
//! hashed`; or reads it from a file every rank can see), reduces it on its device — each
//! subtree as an input of its own for float sums and products, the whole run in one
//! launch for everything else, whose result cannot depend on the cut — and sends the
//! roots to every other rank (through NCCL or the rendezvous, `super::exchange`); each
//! rank then joins all roots in tree order. The result has the bits of the one-process
//! run, on any number of ranks. Axis and segment reductions and statistics split by
//! outputs instead (`super::ranks_shaped`); user-defined reductions of whole arrays
//! join their own roots (`super::ranks_mapped`).

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use redlab::rendezvous::{Address, Group};
use redlab::{Device, Problem, Value};
use redlab_core::generate::{generate_range, Distribution};
use redlab_core::shard::{self, ShardPlan};
use serde_json::json;

use super::exchange::exchange_roots;
use super::run::RunArgs;
use super::size::Size;
use super::Verdict;

/// The rank options of `run`, checked.
pub(super) struct Ranks {
    pub rank: usize,
    pub world: usize,
    pub address: Address,
    pub timeout: Duration,
    pub exchange: super::exchange::Exchange,
}

impl Ranks {
    /// The record's fields naming this rank, its device and its share of `plan`.
    pub(super) fn shard_fields(
        &self,
        device: &Device,
        plan: &ShardPlan,
        fields: &mut serde_json::Map<String, serde_json::Value>,
    ) {
        let mine = plan.shard(self.rank);
        fields.insert("device".into(), json!(device.info().id));
        fields.insert("rank".into(), json!(self.rank));
        fields.insert("world".into(), json!(self.world));
        fields.insert("shard".into(), json!([mine.start, mine.end]));
        fields.insert("subtrees".into(), json!(plan.subtrees_of(self.rank).len()));
    }

    /// The report's first line: this rank, its device and its share of `plan`.
    pub(super) fn header(
        &self,
        device: &Device,
        plan: &ShardPlan,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        let mine = plan.shard(self.rank);
        writeln!(
            out,
            "rank {} of {} ({}): elements {}..{} in {} subtrees of {} tiles",
            self.rank,
            self.world,
            device.info().id,
            mine.start,
            mine.end,
            plan.subtrees_of(self.rank).len(),
            plan.span_tiles
        )
    }
}

/// Runs this rank's part and prints the joined result.
pub(super) fn run(args: &RunArgs, ranks: Ranks, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    if args.shaped() || args.stat.is_some() || args.map.is_some() {
        if args.repeat != 1 {
            bail!("a multi-process shaped or user-defined run reduces once: leave out --repeat");
        }
        if args.map.is_some() && !args.shaped() && args.stat.is_none() {
            return super::ranks_mapped::run(args, ranks, out);
        }
        return super::ranks_shaped::run(args, ranks, out);
    }
    // Checked before joining, so a bad flag never leaves the other ranks waiting.
    if args.repeat != 1 && !(args.input.is_empty() && args.dist == Distribution::Hashed) {
        bail!("--repeat in a multi-process run times arrays made on the devices: give --dist hashed and --n, or leave out --repeat");
    }
    let op = args
        .op
        .context("a multi-process run takes --op or --stat")?;
    let started = Instant::now();
    let group = Group::join(&ranks.address, ranks.rank, ranks.world, ranks.timeout)?;
    let joined = started.elapsed().as_secs_f64();

    let device = Device::open(&args.device, args.threads)?;
    // Every rank's part of the input: generated from the seed for its range only, or
    // the rank's range of a file (memory-mapped where the file allows).
    let (loaded, n) = match (args.input.as_slice(), args.n) {
        ([path], _) => {
            let loaded = redlab::input::load(path, args.dtype)?;
            let n = loaded.array.len();
            (Some(loaded.array), n)
        }
        ([], Some(Size(n))) => (None, n),
        ([], None) => bail!("give --n SIZE (with --dtype) or --input FILE"),
        _ => bail!("a multi-process run reads one --input"),
    };
    let dtype = match &loaded {
        Some(array) => array.dtype(),
        None => args
            .dtype
            .context("--n needs --dtype to know what to generate")?,
    };
    let problem = Problem::new(op, dtype, args.acc)?;
    // Float sums and products keep the subtrees the canonical tree joins; every other
    // problem reduces the rank's whole run in one launch, as a one-process group does.
    let plan = shard::plan_for(&problem, n, ranks.world);
    let mine = plan.shard(ranks.rank);
    // `hashed` data is made by the rank's device in its own memory (never on the host),
    // then reduced --repeat times in place to time the kernels.
    let in_place = loaded.is_none() && args.dist == Distribution::Hashed && n > 0;
    // Otherwise this rank's elements, and the element index its view starts at: a file
    // is read whole and sliced, generated data is made for the rank's range only.
    let generated = match (&loaded, in_place) {
        (None, false) => Some(generate_range(
            dtype,
            mine.start,
            mine.len(),
            args.dist,
            args.seed,
        )?),
        _ => None,
    };
    let (local, offset) = match (&loaded, &generated) {
        (Some(array), _) => (Some(array.view()), 0),
        (None, Some(g)) => (Some(g.view()), mine.start),
        (None, None) => (None, mine.start),
    };

    let reduce_started = Instant::now();
    let mut roots: Vec<Value> = Vec::new();
    let mut generate_s = None;
    // Device-event seconds of the reduction kernels alone, one per repeat
    // (generated-in-place data).
    let mut kernel_runs = None;
    match local {
        Some(local) => {
            for subtree in plan.subtrees_of(ranks.rank) {
                let part = local.slice(subtree.start - offset, subtree.end - offset);
                roots.push(device.reduce(&problem, part)?.value);
            }
        }
        None => {
            let parts = redlab::generated::reduce_parts(
                &device,
                &problem,
                &plan.subtrees_of(ranks.rank),
                args.seed,
                args.repeat,
            )?;
            generate_s = Some(parts.generate_s);
            kernel_runs = Some(parts.kernel_runs);
            roots = parts.values;
        }
    }
    let reduced = reduce_started.elapsed().as_secs_f64();

    let (all, exchanged) = exchange_roots(group, &device, &ranks, &plan, &roots)?;
    let value = if let (0, Some(local)) = (n, local) {
        // No subtrees anywhere: the device's own empty result (+0.0, 1, or nothing).
        device.reduce(&problem, local)?.value
    } else {
        shard::combine(&problem, &plan, &all).unwrap_or(Value::Empty)
    };

    let kernel_median = kernel_runs
        .as_deref()
        .and_then(redlab_bench::Stats::of)
        .map(|s| s.median);
    if args.json {
        let mut fields = serde_json::Map::new();
        fields.insert("op".into(), json!(op.to_string()));
        fields.insert("dtype".into(), json!(dtype.to_string()));
        fields.insert("acc".into(), json!(problem.acc.to_string()));
        fields.insert("n".into(), json!(n));
        ranks.shard_fields(&device, &plan, &mut fields);
        fields.insert("rendezvous".into(), json!(ranks.address.to_string()));
        fields.insert("generate_on_device_s".into(), json!(generate_s));
        fields.insert("kernel_s".into(), json!(kernel_median));
        fields.insert("kernel_runs_s".into(), json!(kernel_runs));
        exchanged.time_fields(joined, reduced, &mut fields);
        fields.insert("exchange_setup_s".into(), json!(exchanged.setup_seconds));
        super::json::value_fields(&value, &mut fields);
        writeln!(out, "{}", serde_json::Value::Object(fields))?;
    } else {
        ranks.header(&device, &plan, out)?;
        writeln!(out, "  {problem} over n = {n}: {value}")?;
        if let Some(s) = value.scalar() {
            writeln!(out, "  bits      0x{:x}", s.bits())?;
        }
        exchanged.time_line(joined, reduced, out)?;
        if let (Some(median), Some(runs)) = (kernel_median, &kernel_runs) {
            writeln!(
                out,
                "            kernels {} (median of {})",
                super::run::seconds_text(median),
                runs.len()
            )?;
        }
        if let Some(setup) = exchanged.setup_seconds {
            writeln!(
                out,
                "            (after a first all-gather of the same size, {}: waiting for the other ranks and NCCL's connections)",
                super::run::seconds_text(setup)
            )?;
        }
    }
    Ok(Verdict::Success)
}
