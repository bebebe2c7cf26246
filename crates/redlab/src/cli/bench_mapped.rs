//! `redlab bench --map …`: a user-defined reduction timed over sizes × input types on
//! one device, each row verified against the CPU (the scalar reference up to 2^20).
//! GPUs report kernel time per call from device events; CUDA also reports the time per
//! reduction inside a CUDA graph, over rotating copies of the inputs so the L2 stays
//! cold. GB/s counts the bytes of every input read.

use std::io::Write;
use std::time::Instant;

use redlab::generate::generate;
use redlab::{ArrayRef, DType, Device, HostArray, Op, Reduction, Value};
use redlab_bench::{gbps, Stats, Status};
use redlab_expr::{oracle, parser};

use super::bench::{BenchArgs, RecordBase, Sink};
use super::Verdict;

/// Inputs up to this many elements are checked against the scalar reference; above, the
/// CPU's block evaluator (tested against it) is the reference.
const SCALAR_UPTO: usize = 1 << 20;

/// Bytes the rotating GPU inputs cover at least, so each call reads from DRAM.
#[cfg(feature = "cuda")]
const COLD_BYTES: usize = 512 << 20;

/// Runs the mapped bench.
pub fn run(
    args: &BenchArgs,
    sizes: &[usize],
    device: &Device,
    out: &mut dyn Write,
    sink: &mut Sink,
) -> anyhow::Result<Verdict> {
    let map = args.map.as_deref().unwrap_or("x");
    let count = parser::inputs_named(map)?;
    let base = RecordBase::new(device, args);
    writeln!(
        out,
        "device {} ({}): map '{map}', combine {}{}; {}",
        device.info().id,
        device.info().name,
        args.combine,
        args.post
            .as_deref()
            .map_or(String::new(), |p| format!(", post '{p}'")),
        if device.info().backend == "cpu" {
            "wall time per call"
        } else {
            "kernel time per call from device events; cuda: also per reduction in a CUDA graph"
        }
    )?;
    writeln!(
        out,
        "{:<24} {:>11} {:>11} {:>9} {:>11} {:>9}  status",
        "inputs", "n", "per call", "GB/s", "graph", "GB/s"
    )?;
    let cpu = Device::open("cpu", args.threads)?;
    let mut failures = Vec::new();
    for &dtype in &args.dtypes {
        let dtypes = vec![dtype; count];
        let reduction = match reduction_of(args, map, &dtypes) {
            Ok(r) => r,
            Err(e) => {
                writeln!(out, "  {dtype}: skipped: {e}")?;
                continue;
            }
        };
        for &n in sizes {
            let arrays = (0..count)
                .map(|k| generate(dtype, n, args.dist, args.seed + k as u64))
                .collect::<Result<Vec<_>, _>>()?;
            let views: Vec<_> = arrays.iter().map(HostArray::view).collect();
            let expected = if n <= SCALAR_UPTO {
                oracle::reduce(&reduction, &views)?
            } else {
                cpu.reduce_mapped(&reduction, &views)?.value
            };
            let label = format!("{count} × {dtype}");
            let mut record = base.record("production (mapped)", Op::Sum, dtype, n, 1);
            record.op = args.combine.clone();
            record.dtype = dtypes
                .iter()
                .map(DType::to_string)
                .collect::<Vec<_>>()
                .join(",");
            record.acc = reduction
                .problem()
                .map_or(String::new(), |p| p.acc.to_string());
            record.map = Some(reduction.describe());
            let timed = time_rows(args, device, &reduction, &views)?;
            let bytes: u64 = views.iter().map(|v| v.bytes().len() as u64).sum();
            let wrong = timed
                .values
                .iter()
                .find(|v| !v.same_as(&expected))
                .map(|v| format!("{v} against the reference {expected}"));
            let stats = Stats::of(&timed.per_call);
            record.reps = timed.per_call.len();
            record.median_s = stats.as_ref().map(|s| s.median);
            record.min_s = stats.as_ref().map(|s| s.min);
            record.max_s = stats.as_ref().map(|s| s.max);
            record.gbps = stats.as_ref().map(|s| gbps(bytes, s.median));
            record.graph_s = timed.graph_s;
            record.value = expected.to_string();
            record.status = if wrong.is_some() {
                Status::Wrong
            } else {
                Status::Ok
            };
            record.reason = wrong.clone();
            let time = |s: Option<f64>| {
                s.map(super::run::seconds_text)
                    .unwrap_or_else(|| "-".into())
            };
            let rate = |s: Option<f64>| s.map_or("-".into(), |s| format!("{:.1}", gbps(bytes, s)));
            writeln!(
                out,
                "{:<24} {:>11} {:>11} {:>9} {:>11} {:>9}  {}",
                label,
                n,
                time(record.median_s),
                rate(record.median_s),
                time(timed.graph_s),
                rate(timed.graph_s),
                wrong
                    .as_deref()
                    .map_or("ok".into(), |w| format!("WRONG: {w}"))
            )?;
            if let Some(w) = wrong {
                failures.push(format!("{label} n={n}: {w}"));
            }
            sink.push(&record)?;
        }
    }
    Ok(if failures.is_empty() {
        Verdict::Success
    } else {
        Verdict::Mismatch(failures.join("; "))
    })
}

/// The reduction `--map`, `--combine`, `--identity`, `--post` and `--acc` describe, over
/// inputs of `dtypes`.
pub(super) fn reduction_of(
    args: &BenchArgs,
    map: &str,
    dtypes: &[DType],
) -> Result<Reduction, redlab::ExprError> {
    Reduction::builder(map, &args.combine)
        .with_options(args.identity.as_deref(), args.post.as_deref(), args.acc)
        .build(dtypes)
}

/// Timings of one row and every value seen.
struct Timed {
    per_call: Vec<f64>,
    graph_s: Option<f64>,
    values: Vec<Value>,
}

fn time_rows(
    args: &BenchArgs,
    device: &Device,
    reduction: &Reduction,
    views: &[ArrayRef<'_>],
) -> anyhow::Result<Timed> {
    let mut timed = Timed {
        per_call: Vec::new(),
        graph_s: None,
        values: Vec::new(),
    };
    let enough = |timed: &Timed, started: &Instant| {
        let elapsed = started.elapsed().as_secs_f64();
        (timed.per_call.len() >= args.min_reps.max(1) && elapsed >= args.min_time)
            || elapsed >= args.max_row_time
    };
    let params = super::params::parse_params(&args.params)?;
    let overrides: Vec<(&str, u32)> = params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    #[cfg(feature = "cuda")]
    if let Some(cuda) = device.cuda() {
        let n = views.first().map_or(0, |v| v.len());
        let bytes: usize = views.iter().map(|v| v.bytes().len()).sum();
        let copies = COLD_BYTES.div_ceil(bytes.max(1)).clamp(1, 64);
        let inputs = (0..copies)
            .map(|_| cuda.upload_inputs(reduction, views))
            .collect::<Result<Vec<_>, _>>()?;
        let started = Instant::now();
        let mut k = 0;
        while !enough(&timed, &started) {
            let outcome = cuda.run_mapped_with(reduction, &inputs[k % copies], &overrides)?;
            timed.per_call.push(outcome.seconds);
            timed.values.push(outcome.value);
            k += 1;
        }
        if n > 0 {
            let calls = args.min_reps.max(copies).max(20);
            let graph = cuda.graph_run_mapped(reduction, &inputs, calls, &overrides)?;
            timed.graph_s = Some(graph.seconds_per_reduction);
            timed.values.push(reduction.finish(graph.value, n));
        }
        return Ok(timed);
    }
    if !overrides.is_empty() {
        anyhow::bail!("--param with --map applies to CUDA devices");
    }
    #[cfg(feature = "opencl")]
    if let Some(opencl) = device.opencl() {
        let input = opencl.upload_inputs(reduction, views)?;
        let started = Instant::now();
        while !enough(&timed, &started) {
            let outcome = opencl.run_mapped(reduction, &input)?;
            timed.per_call.push(outcome.seconds);
            timed.values.push(outcome.value);
        }
        return Ok(timed);
    }
    let started = Instant::now();
    while !enough(&timed, &started) {
        let outcome = device.reduce_mapped(reduction, views)?;
        timed.per_call.push(outcome.seconds);
        timed.values.push(outcome.value);
    }
    Ok(timed)
}
