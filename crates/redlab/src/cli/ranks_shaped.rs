//! `redlab run --rank R --world W --rendezvous ADDRESS` with a shape: an axis or segment
//! reduction (or a statistic) spread over processes. Every rank plans the same outputs
//! and cuts them the way one process cuts them over its devices
//! ([`redlab::sharded_outputs::output_shares`]: blocks of the outermost kept axis, or
//! runs of whole segments); each rank reads or generates only the elements of its own
//! block, reduces its outputs whole on its device, checks them against the host
//! reference, and sends them to every rank. No output is cut across ranks, so every
//! output has the bits of the one-process run. Rank 0 writes `--out`.

use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Context};
use redlab::rendezvous::Group;
use redlab::sharded_outputs::output_shares;
use redlab::{Device, Problem, Statistic, Value};
use redlab_core::generate::generate_range;
use redlab_core::value_bytes::{self, VALUE_BYTES};
use serde_json::json;

use super::output::OutputPlan;
use super::ranks::Ranks;
use super::run::RunArgs;
use super::shaped::{check_outputs, write_out, Compute, ShapedPlan};
use super::size::Size;
use super::Verdict;

/// What each rank sends: how many of its outputs failed the check, then its outputs.
const HEADER_BYTES: usize = 8;

/// Outputs shown in the report.
const SHOWN: usize = 16;

/// Runs this rank's outputs and prints the whole result.
pub(super) fn run(args: &RunArgs, ranks: Ranks, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    let stat = args
        .stat
        .as_deref()
        .map(|name| {
            Statistic::parse(name, args.ddof).with_context(|| {
                format!("--stat {name} runs in one process (a multi-process shaped run takes --op or --stat var, std, logsumexp, nanmin, nanmax, nanmean)")
            })
        })
        .transpose()?;
    if args.map.is_some() {
        bail!("user-defined reductions along axes or over segments run in one process: leave out --rank, --world and --rendezvous");
    }
    let request = args.shaped_request()?;
    // Only rank 0 writes, so only rank 0 checks the file (the others may not see it).
    if let (0, Some(path)) = (ranks.rank, &request.out) {
        let mut plan = OutputPlan::new(request.force);
        if let Some(input) = args.input.first() {
            plan.input("--input", input);
        }
        if let Some(s) = &request.segments {
            plan.input("--segments", s);
        }
        plan.replace("--out", path)?;
    }

    // The whole input's type, shape and, for a file, its elements (memory-mapped where
    // the file allows); generated data is made later, for this rank's block only.
    let loaded = match args.input.as_slice() {
        [] => None,
        [path] => Some(redlab::input::load(path, args.dtype)?),
        _ => bail!("a multi-process run reads one --input"),
    };
    let (dtype, dims) = match &loaded {
        Some(file) => (file.array.dtype(), args.dims_for(file.array.len())?),
        None => {
            let dtype = args
                .dtype
                .context("generated data needs --dtype to know what to make")?;
            let dims = match (&args.shape, args.n) {
                (Some(text), _) => super::shaped::parse_shape(text)?,
                (None, Some(Size(n))) => vec![n],
                (None, None) => bail!("give --shape (or --n) with --dtype, or --input FILE"),
            };
            (dtype, dims)
        }
    };
    let n = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .context("the shape has too many elements")?;
    let problem = match stat {
        Some(_) => None,
        None => Some(Problem::new(
            args.op
                .context("give --op or --stat for a multi-process run")?,
            dtype,
            args.acc,
        )?),
    };
    let compute = match (&problem, stat) {
        (_, Some(stat)) => Compute::Statistic(stat),
        (Some(problem), None) => Compute::Reduce {
            problem,
            post: None,
            on_device: None,
        },
        (None, None) => bail!("give --op or --stat for a multi-process run"),
    };
    let shaped = ShapedPlan::new(&request, &dims, n)?;
    let selection = shaped.selection();
    let total = selection.outputs();
    // The same cut on every rank; where the outputs cannot be cut, rank 0 has them all.
    let shares = output_shares(selection, ranks.world);
    let mine = match &shares {
        Some(shares) => shares.get(ranks.rank),
        None => None,
    };
    let (elements, my_selection) = match (mine, &shares, ranks.rank) {
        (Some(share), _, _) => (share.elements(n), Some(share.selection())),
        (None, None, 0) => (0..n, Some(selection)),
        _ => (0..0, None),
    };

    let started = Instant::now();
    let mut group = Group::join(&ranks.address, ranks.rank, ranks.world, ranks.timeout)?;
    let joined = started.elapsed().as_secs_f64();
    let device = Device::open(&args.device, args.threads)?;

    let generated = match (&loaded, &my_selection) {
        (None, Some(_)) => Some(generate_range(
            dtype,
            elements.start,
            elements.len(),
            args.dist,
            args.seed,
        )?),
        _ => None,
    };
    let reduce_started = Instant::now();
    let (values, wrong) = match my_selection {
        None => (Vec::new(), 0),
        Some(part) => {
            let local = match (&loaded, &generated) {
                (Some(file), _) => file.array.view().slice(elements.start, elements.end),
                (None, Some(g)) => g.view(),
                (None, None) => bail!("no elements for this rank"),
            };
            let values = match &compute {
                Compute::Reduce { problem, .. } => device.reduce_outputs(problem, local, part)?.0,
                Compute::Statistic(stat) => device.statistic_timed(*stat, local, part)?.0,
            };
            let (_, wrong) = check_outputs(&compute, local, part, &values)?;
            (values, wrong.len())
        }
    };
    let reduced = reduce_started.elapsed().as_secs_f64();

    let mut sent = (wrong as u64).to_le_bytes().to_vec();
    for v in &values {
        sent.extend_from_slice(&value_bytes::encode(v));
    }
    let most = shares
        .as_ref()
        .map_or(total, |s| s.iter().map(|s| s.outputs()).max().unwrap_or(0));
    let slot = HEADER_BYTES + most * VALUE_BYTES;
    let exchanged = super::exchange::exchange(&mut group, &device, ranks.exchange, &sent, slot)?;
    group.finish()?;
    let mut all = Vec::with_capacity(total);
    let mut wrong_anywhere = 0u64;
    for part in &exchanged.parts {
        let (head, body) = part
            .split_at_checked(HEADER_BYTES)
            .context("a rank sent no outputs header")?;
        wrong_anywhere += u64::from_le_bytes(head.try_into().expect("8 bytes"));
        for bytes in body.chunks(VALUE_BYTES) {
            all.push(value_bytes::decode(bytes)?);
        }
    }
    if all.len() != total {
        bail!(
            "the ranks sent {} outputs for {total}: were they all started with the same input, shape, axes and --world?",
            all.len()
        );
    }
    if let (0, Some(path)) = (ranks.rank, &request.out) {
        write_out(path, &compute, &all, &shaped.out_dims)?;
    }

    let shown: Vec<String> = all.iter().take(SHOWN).map(Value::to_string).collect();
    let what = match (&compute, &problem) {
        (Compute::Statistic(stat), _) => format!("{} {dtype}", stat.name()),
        (_, Some(problem)) => problem.to_string(),
        (_, None) => String::new(),
    };
    if args.json {
        let j = json!({
            "op": problem.map(|p| p.op.to_string()),
            "stat": stat.map(|s| s.name()),
            "dtype": dtype.to_string(),
            "shape": dims,
            "out_shape": shaped.out_dims,
            "outputs": total,
            "rank_outputs": values.len(),
            "shard": [elements.start, elements.end],
            "device": device.info().id,
            "rank": ranks.rank,
            "world": ranks.world,
            "values": shown,
            "value_bits": all.iter().take(SHOWN).map(bits_of).collect::<Vec<_>>(),
            "outputs_digest": digest(&all),
            "verified": wrong_anywhere == 0,
            "out": if ranks.rank == 0 { request.out.as_ref().map(|p| p.display().to_string()) } else { None },
            "join_s": joined,
            "reduce_s": reduced,
            "exchange": exchanged.transport,
            "exchange_why": exchanged.why,
            "exchange_s": exchanged.seconds,
        });
        writeln!(out, "{j}")?;
    } else {
        writeln!(
            out,
            "rank {} of {} ({}): {} of {total} outputs, elements {}..{}",
            ranks.rank,
            ranks.world,
            device.info().id,
            values.len(),
            elements.start,
            elements.end
        )?;
        writeln!(out, "  {what}, shape {dims:?} → {:?}", shaped.out_dims)?;
        for (k, v) in shown.iter().enumerate() {
            writeln!(out, "  [{k}] {v}")?;
        }
        if total > SHOWN {
            writeln!(out, "  … {} more", total - SHOWN)?;
        }
        writeln!(
            out,
            "  verified  {}",
            if wrong_anywhere == 0 {
                "yes: every rank's outputs match the host reference of their own elements"
                    .to_string()
            } else {
                format!("NO: {wrong_anywhere} outputs differ")
            }
        )?;
        if let (0, Some(path)) = (ranks.rank, &request.out) {
            writeln!(out, "  written   {}", path.display())?;
        }
        exchanged.time_line(joined, reduced, out)?;
    }
    Ok(if wrong_anywhere == 0 {
        Verdict::Success
    } else {
        Verdict::Mismatch(format!(
            "{wrong_anywhere} outputs differ from the reference"
        ))
    })
}

/// A digest of every output's bits, so that ranks (of one build) compare all of their
/// outputs without printing them: std's `DefaultHasher` is fixed within a build, not
/// across Rust releases.
fn digest(values: &[Value]) -> String {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    for v in values {
        hasher.write(&value_bytes::encode(v));
    }
    format!("{:016x}", hasher.finish())
}

/// An output's bits (`null` where it has no value), for comparing runs exactly.
fn bits_of(value: &Value) -> Option<String> {
    value.scalar().map(|s| format!("{:#x}", s.bits()))
}
