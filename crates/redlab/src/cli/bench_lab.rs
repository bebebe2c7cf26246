//! `redlab bench --device opencl:N [--variants …]`: every chosen variant side by side on
//! one device, one row per (variant, op, dtype, n). Inputs are uploaded once per size
//! as cold windows; every call is verified; every pass is timed with profiling events;
//! the transfers are reported beside the kernel time; the read roof is a streaming-read
//! kernel timed over an equally cold window after each call.

use std::io::Write;

use anyhow::Context;
use redlab::generate::generate;
use redlab::reference::{self, accuracy};
use redlab::{Device, Problem, Value};
use redlab_bench::{gbps, Record, Stats, Status, TimingPlan};
use redlab_kernels::{registry, Variant};
use redlab_opencl::{DeviceInput, OpenClDevice, RunError};

use super::bench::{print_header, print_row, BenchArgs, RecordBase};
use super::Verdict;

/// Picks variants by name or alias; `all` for every one.
pub fn choose(names: &str) -> anyhow::Result<Vec<Variant>> {
    if names.trim() == "all" {
        return Ok(registry::all());
    }
    names
        .split(',')
        .map(|name| {
            registry::find(name).with_context(|| {
                let known: Vec<&str> = registry::all().iter().map(|v| v.name).collect();
                format!(
                    "unknown variant '{name}' (known: all, {})",
                    known.join(", ")
                )
            })
        })
        .collect()
}

/// Runs the lab bench on an OpenCL device.
pub fn run(
    args: &BenchArgs,
    sizes: &[usize],
    device: &Device,
    opencl: &OpenClDevice,
    out: &mut dyn Write,
    sink: &mut Option<std::io::BufWriter<std::fs::File>>,
) -> anyhow::Result<Verdict> {
    let variants = choose(&args.variants)?;
    let caps = opencl.capabilities();
    let mut plan = TimingPlan::new(args.cache, caps.cache_bytes.max(1 << 20));
    plan.min_reps = args.min_reps.max(1);
    plan.min_seconds = args.min_time.max(0.0);
    let base = RecordBase::new(device, args);
    let mut failures = Vec::new();
    print_header(out, device, args)?;
    for &dtype in &args.dtypes {
        for &n in sizes {
            let windows = plan.windows(n, dtype.size_bytes());
            let pool = generate(dtype, n * windows, args.dist, args.seed)?;
            let uploads: Vec<DeviceInput> = (0..windows)
                .map(|w| opencl.upload(pool.view().slice(w * n, w * n + n)))
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let upload_s = uploads.first().map_or(0.0, |u| u.upload_s);
            for &op in &args.ops {
                let problem = Problem::new(op, dtype, args.acc.filter(|_| op.is_arithmetic()));
                // Shared by every variant of this problem: the references and error bounds
                // of large windows take seconds to compute, more than many rows' budget.
                let mut judge = Judge::new(windows);
                for variant in &variants {
                    let mut record = base.record(variant.name, op, dtype, n, windows);
                    match &problem {
                        Err(e) => skip(&mut record, e.to_string()),
                        Ok(problem) => {
                            record.acc = problem.acc.to_string();
                            time_variant(
                                opencl,
                                variant,
                                problem,
                                &pool,
                                n,
                                &uploads,
                                &mut judge,
                                &plan,
                                upload_s,
                                args.max_row_time,
                                &mut record,
                            );
                        }
                    }
                    print_row(
                        out,
                        &format!(
                            "{} {}",
                            record.variant,
                            problem
                                .as_ref()
                                .map_or(format!("{op} {dtype}"), |p| p.to_string())
                        ),
                        &record,
                    )?;
                    if record.status == Status::Wrong {
                        failures.push(format!(
                            "{} {op} {dtype} n={n}: {}",
                            variant.name,
                            record.reason.clone().unwrap_or_default()
                        ));
                    }
                    if let Some(sink) = sink.as_mut() {
                        writeln!(sink, "{}", serde_json::to_string(&record)?)?;
                        // Each row is kept even if the run is interrupted later.
                        sink.flush()?;
                    }
                }
            }
        }
    }
    Ok(if failures.is_empty() {
        Verdict::Success
    } else {
        Verdict::Mismatch(failures.join("; "))
    })
}

fn skip(record: &mut Record, reason: String) {
    record.status = Status::Skipped;
    record.reason = Some(reason);
}

#[allow(clippy::too_many_arguments)]
fn time_variant(
    opencl: &OpenClDevice,
    variant: &Variant,
    problem: &Problem,
    pool: &redlab::HostArray,
    n: usize,
    uploads: &[DeviceInput],
    judge: &mut Judge,
    plan: &TimingPlan,
    upload_s: f64,
    max_row_seconds: f64,
    record: &mut Record,
) {
    let windows = uploads.len();
    // A result already judged for a window is not judged again in this row (the
    // exact-sum check of non-canonical float results costs far more than the kernel).
    let mut judged: Vec<Vec<Value>> = vec![Vec::new(); windows];
    let started = std::time::Instant::now();
    let (mut times, mut roofs, mut pass_samples) = (Vec::new(), Vec::new(), Vec::<Vec<f64>>::new());
    let mut download_s = 0.0;
    let mut call = 0usize;
    let mut total = 0.0;
    // Time spent judging results is not the strategy's and does not count against the row.
    let mut judging = std::time::Duration::ZERO;
    loop {
        let w = call % windows;
        let run = match opencl.run(variant, problem, &uploads[w], &[]) {
            Ok(run) => run,
            Err(RunError::Skipped(why)) => return skip(record, why),
            Err(e) => {
                record.status = Status::Wrong;
                record.reason = Some(e.to_string());
                return;
            }
        };
        if !judged[w].iter().any(|v| v.same_as(&run.value)) {
            let judge_started = std::time::Instant::now();
            let window = pool.view().slice(w * n, w * n + n);
            let exact_order =
                variant.canonical || !(problem.dtype.is_float() && problem.op.is_arithmetic());
            let verdict = judge.check(problem, w, window, exact_order, &run.value);
            if let (Err(why), false) = (verdict, record.status == Status::Wrong) {
                record.status = Status::Wrong;
                record.reason = Some(format!("window {w}: {why}"));
            }
            judged[w].push(run.value);
            judging += judge_started.elapsed();
        }
        if record.value.is_empty() {
            record.value = run.value.to_string();
        }
        if call >= plan.warmup {
            let seconds: f64 = run.passes.iter().sum();
            times.push(seconds);
            total += seconds;
            download_s = run.download_s;
            for (k, &p) in run.passes.iter().enumerate() {
                if pass_samples.len() <= k {
                    pass_samples.push(Vec::new());
                }
                pass_samples[k].push(p);
            }
            if let Ok(r) = opencl.stream_read(&uploads[(w + windows / 2) % windows]) {
                roofs.push(r);
            }
        }
        call += 1;
        let out_of_time =
            (started.elapsed() - judging).as_secs_f64() >= max_row_seconds && !times.is_empty();
        if out_of_time
            || times.len() >= plan.max_reps
            || (times.len() >= plan.min_reps && total >= plan.min_seconds)
        {
            break;
        }
    }
    let stats = Stats::of(&times);
    let bytes = problem.bytes_read(n);
    let rate = stats.map(|s| gbps(bytes, s.median));
    // The roof reads whole 16-byte words only.
    let roof = Stats::of(&roofs).map(|r| gbps(bytes / 16 * 16, r.median));
    record.median_s = stats.map(|s| s.median);
    record.min_s = stats.map(|s| s.min);
    record.max_s = stats.map(|s| s.max);
    record.reps = stats.map_or(0, |s| s.count);
    record.passes = pass_samples
        .iter()
        .filter_map(|p| Stats::of(p).map(|s| s.median))
        .collect();
    record.gbps = rate;
    record.roof_gbps = roof;
    record.roof_fraction = rate.zip(roof).filter(|(_, r)| *r > 0.0).map(|(g, r)| g / r);
    record.transfer_s = upload_s + download_s;
    if record.status != Status::Wrong {
        record.status = Status::Ok;
        if !(variant.canonical || !(problem.dtype.is_float() && problem.op.is_arithmetic())) {
            record.reason = Some("float order is the strategy's own: checked against the any-order error bound, not bit for bit".into());
        }
    }
}

/// The references and any-order error bounds of one problem's windows, computed once
/// and shared by every variant's row.
struct Judge {
    expected: Vec<Option<Value>>,
    bounds: Vec<Option<accuracy::AnyOrderBound>>,
}

impl Judge {
    fn new(windows: usize) -> Self {
        Judge {
            expected: vec![None; windows],
            bounds: vec![None; windows],
        }
    }

    /// Accepts `got` when it equals the reference (canonical order for floats), or, for
    /// strategies with their own float order, when it lies within the any-order bound.
    fn check(
        &mut self,
        problem: &Problem,
        w: usize,
        window: redlab::ArrayRef<'_>,
        exact_order: bool,
        got: &Value,
    ) -> Result<(), String> {
        let want = *self.expected[w]
            .get_or_insert_with(|| reference::reduce(problem, window).unwrap_or(Value::Empty));
        if got.same_as(&want) {
            return Ok(());
        }
        if exact_order {
            return Err(format!("got {got}, reference {want}"));
        }
        match &self.bounds[w] {
            Some(bound) => bound.check(got),
            None => accuracy::AnyOrderBound::new(problem, window).and_then(|bound| {
                let verdict = bound.check(got);
                self.bounds[w] = Some(bound);
                verdict
            }),
        }
    }
}
