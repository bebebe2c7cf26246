//! `redlab run --map … --rank R --world W --rendezvous ADDRESS`: a user-defined reduction
//! of whole arrays spread over processes. Every rank plans the split a one-process group
//! uses (`redlab::sharded::mapped_plan`), reads or generates only its run of every input,
//! maps and reduces each of its subtrees (the map's index `i` shifted to the subtree's
//! start), and sends the roots to every rank (through NCCL or the rendezvous); each rank
//! joins all roots in tree order — by the built-in combine or by the combine expression
//! itself — and applies `post` once. The result has the one-process bits on any number
//! of ranks. Along axes and over segments user-defined reductions run in one process.

use std::io::Write;
use std::time::Instant;

use anyhow::Context;
use redlab::rendezvous::Group;
use redlab::sharded::{join_mapped, mapped_plan, mapped_roots};
use redlab::{Device, HostArray};
use redlab_core::generate::generate_range;
use redlab_expr::parser;
use serde_json::json;

use super::exchange::exchange_roots;
use super::ranks::Ranks;
use super::run::RunArgs;
use super::Verdict;

/// Runs this rank's part of a user-defined reduction and prints the joined result.
pub(super) fn run(args: &RunArgs, ranks: Ranks, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    let map = args.map.as_deref().context("--map is required here")?;
    // Files are opened (memory-mapped where they allow) before joining, so that a bad
    // input never leaves the other ranks waiting; generated inputs are made later, for
    // this rank's run only, one seed per input as in one process.
    let files = args
        .input
        .iter()
        .map(|path| redlab::input::load(path, args.dtype))
        .collect::<Result<Vec<_>, _>>()?;
    let (dtypes, n) = if files.is_empty() {
        let dtype = args
            .dtype
            .context("generated inputs need --dtype to know what to generate")?;
        let n = args.n.context("give --n SIZE or --input FILE")?.0;
        (vec![dtype; parser::inputs_named(map)?], n)
    } else {
        (
            files.iter().map(|f| f.array.dtype()).collect(),
            files[0].array.len(),
        )
    };
    let reduction = super::mapped::reduction_of(args, &dtypes)?;
    if !files.is_empty() {
        let whole: Vec<_> = files.iter().map(|f| f.array.view()).collect();
        redlab_expr::host::check_inputs(&reduction, &whole)?;
    }
    let plan = mapped_plan(&reduction, n, ranks.world);
    let mine = plan.shard(ranks.rank);

    let started = Instant::now();
    let group = Group::join(&ranks.address, ranks.rank, ranks.world, ranks.timeout)?;
    let joined = started.elapsed().as_secs_f64();
    let device = Device::open(&args.device, args.threads)?;
    let generated: Vec<HostArray> = if files.is_empty() {
        dtypes
            .iter()
            .enumerate()
            .map(|(k, &dtype)| {
                generate_range(
                    dtype,
                    mine.start,
                    mine.len(),
                    args.dist,
                    args.seed + k as u64,
                )
            })
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let views: Vec<_> = if files.is_empty() {
        generated.iter().map(HostArray::view).collect()
    } else {
        files
            .iter()
            .map(|f| f.array.view().slice(mine.start, mine.end))
            .collect()
    };

    let reduce_started = Instant::now();
    let (roots, kernel_s) = mapped_roots(
        &device,
        &reduction,
        &views,
        mine.start,
        &plan.subtrees_of(ranks.rank),
    )?;
    let reduced = reduce_started.elapsed().as_secs_f64();
    let (all, exchanged) = exchange_roots(group, &device, &ranks, &plan, &roots)?;
    let value = if plan.subtrees.is_empty() {
        // Empty inputs: the device's own empty result, with `post`.
        device.reduce_mapped(&reduction, &views)?.value
    } else {
        join_mapped(&reduction, &plan, &all, n)?
    };

    if args.json {
        let mut fields = serde_json::Map::new();
        fields.insert("map".into(), json!(reduction.map_text));
        fields.insert("combine".into(), json!(args.combine));
        fields.insert("post".into(), json!(args.post));
        fields.insert("inputs".into(), json!(dtypes));
        fields.insert("n".into(), json!(n));
        ranks.shard_fields(&device, &plan, &mut fields);
        fields.insert("kernel_s".into(), json!(kernel_s));
        exchanged.time_fields(joined, reduced, &mut fields);
        super::json::value_fields(&value, &mut fields);
        writeln!(out, "{}", serde_json::Value::Object(fields))?;
    } else {
        ranks.header(&device, &plan, out)?;
        writeln!(out, "  {} over n = {n}: {value}", reduction.describe())?;
        if let Some(s) = value.scalar() {
            writeln!(out, "  bits      0x{:x}", s.bits())?;
        }
        exchanged.time_line(joined, reduced, out)?;
    }
    Ok(Verdict::Success)
}
