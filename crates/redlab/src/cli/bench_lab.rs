//! `redlab bench --device opencl:N|cuda:N [--variants …] [--compare cub]`: every chosen
//! variant side by side on one device, one row per (variant, op, dtype, n). Inputs are uploaded once per size
//! as cold windows; every call is verified; every pass is timed with profiling events;
//! the transfers are reported beside the kernel time; the read roof is a streaming-read
//! kernel timed over an equally cold window after each call.

use std::io::Write;

use anyhow::Context;
use redlab::generate::generate;
use redlab::reference::{self, accuracy};
use redlab::{Device, Problem, Value};
use redlab_bench::{gbps, Record, Stats, Status, TimingPlan, MIN_ROOF_SAMPLES};
#[cfg(feature = "cuda")]
use redlab_kernels::PassStructure;
use redlab_kernels::{registry, Capabilities, Run, RunError, Variant};

use super::bench::{print_header, print_row, BenchArgs, RecordBase};
use super::Verdict;

/// What the lab bench needs from a GPU backend.
pub trait Lab {
    /// An input on the device.
    type Input;
    /// What the device can do.
    fn caps(&self) -> &Capabilities;
    /// Copies an input to the device.
    fn upload(&self, data: redlab::ArrayRef<'_>) -> Result<Self::Input, RunError>;
    /// Host→device seconds of an upload.
    fn upload_seconds(input: &Self::Input) -> f64;
    /// Runs one variant once; `params` overrides parameter defaults.
    fn run(
        &self,
        variant: &Variant,
        problem: &Problem,
        input: &Self::Input,
        params: &[(&str, u32)],
    ) -> Result<Run, RunError>;
    /// Seconds of one streaming read of the input.
    fn stream_read(&self, input: &Self::Input) -> Result<f64, RunError>;
    /// Seconds per reduction in a captured graph, the last value and the input it read
    /// (None where the backend has no graphs).
    fn graph(
        &self,
        _variant: &Variant,
        _problem: &Problem,
        _inputs: &[Self::Input],
        _calls: usize,
        _params: &[(&str, u32)],
    ) -> Option<Result<(f64, Value, usize), RunError>> {
        None
    }
    /// What the library runs for `problem` over `n` elements (`auto`).
    fn auto(&self, problem: &Problem, n: usize) -> redlab_tune::Choice;
    /// The comparator to run beside the production kernel, if one was asked for.
    fn comparator(&self) -> Option<&'static str> {
        None
    }
    /// How the roof reads, where it is tuned on the device.
    fn roof_config(&self) -> Option<String> {
        None
    }
    /// The device's datasheet memory bandwidth, GB/s, where it is known.
    fn datasheet_gbps(&self) -> Option<f64> {
        None
    }
}

#[cfg(feature = "opencl")]
impl Lab for redlab_opencl::OpenClDevice {
    type Input = redlab_opencl::DeviceInput;
    fn caps(&self) -> &Capabilities {
        self.capabilities()
    }
    fn upload(&self, data: redlab::ArrayRef<'_>) -> Result<Self::Input, RunError> {
        redlab_opencl::OpenClDevice::upload(self, data)
    }
    fn upload_seconds(input: &Self::Input) -> f64 {
        input.upload_s
    }
    fn run(
        &self,
        v: &Variant,
        p: &Problem,
        input: &Self::Input,
        params: &[(&str, u32)],
    ) -> Result<Run, RunError> {
        redlab_opencl::OpenClDevice::run(self, v, p, input, params)
    }
    fn stream_read(&self, input: &Self::Input) -> Result<f64, RunError> {
        redlab_opencl::OpenClDevice::stream_read(self, input)
    }
    fn auto(&self, problem: &Problem, n: usize) -> redlab_tune::Choice {
        redlab_opencl::OpenClDevice::auto(self, problem, n)
    }
}

#[cfg(feature = "cuda")]
impl Lab for redlab_cuda::CudaDevice {
    type Input = redlab_cuda::DeviceInput;
    fn caps(&self) -> &Capabilities {
        self.capabilities()
    }
    fn upload(&self, data: redlab::ArrayRef<'_>) -> Result<Self::Input, RunError> {
        redlab_cuda::CudaDevice::upload(self, data)
    }
    fn upload_seconds(input: &Self::Input) -> f64 {
        input.upload_s
    }
    fn run(
        &self,
        v: &Variant,
        p: &Problem,
        input: &Self::Input,
        params: &[(&str, u32)],
    ) -> Result<Run, RunError> {
        redlab_cuda::CudaDevice::run(self, v, p, input, params)
    }
    fn stream_read(&self, input: &Self::Input) -> Result<f64, RunError> {
        redlab_cuda::CudaDevice::stream_read(self, input)
    }
    fn auto(&self, problem: &Problem, n: usize) -> redlab_tune::Choice {
        redlab_cuda::CudaDevice::auto(self, problem, n)
    }
    fn graph(
        &self,
        variant: &Variant,
        problem: &Problem,
        inputs: &[Self::Input],
        calls: usize,
        params: &[(&str, u32)],
    ) -> Option<Result<(f64, Value, usize), RunError>> {
        if variant.passes != PassStructure::LastBlockFinish || calls == 0 {
            return None;
        }
        Some(
            self.graph_run(variant, problem, inputs, calls, params)
                .map(|g| (g.seconds_per_reduction, g.value, g.last_input)),
        )
    }
    fn roof_config(&self) -> Option<String> {
        self.roof_choice().map(|c| c.describe())
    }
    fn datasheet_gbps(&self) -> Option<f64> {
        redlab_cuda::CudaDevice::datasheet_gbps(self)
    }
    fn comparator(&self) -> Option<&'static str> {
        Some("cub")
    }
}

/// One row per problem of the lab bench: a fixed variant, or what the library runs.
#[derive(Debug, Clone)]
pub enum Pick {
    /// A variant by name, at its defaults and the `--param` overrides.
    Fixed(Variant),
    /// `auto`: the tuning database's choice for each problem and size, exactly as
    /// `Backend::reduce` and `redlab run` make it (`--param` does not apply).
    Auto,
}

impl Pick {
    /// The name rows carry.
    fn name(&self) -> &'static str {
        match self {
            Pick::Fixed(v) => v.name,
            Pick::Auto => "auto",
        }
    }
}

/// Picks variants by name or alias, and `auto`; `all` for every variant.
pub fn choose_picks(names: &str) -> anyhow::Result<Vec<Pick>> {
    let mut picks = Vec::new();
    let mut fixed = Vec::new();
    for name in names.split(',') {
        if name.trim() == "auto" {
            if !picks.iter().any(|p| matches!(p, Pick::Auto)) {
                picks.push(Pick::Auto);
            }
        } else {
            fixed.push(name);
        }
    }
    if !fixed.is_empty() {
        picks.extend(choose(&fixed.join(","))?.into_iter().map(Pick::Fixed));
    }
    Ok(picks)
}

/// Picks variants by name or alias; `all` for every one.
pub fn choose(names: &str) -> anyhow::Result<Vec<Variant>> {
    if names.trim() == "all" {
        return Ok(registry::all());
    }
    let mut chosen: Vec<Variant> = Vec::new();
    for name in names.split(',') {
        let v = registry::find(name).with_context(|| {
            let known: Vec<&str> = registry::all().iter().map(|v| v.name).collect();
            format!(
                "unknown variant '{name}' (known: all, auto, {})",
                known.join(", ")
            )
        })?;
        // An alias of a variant already chosen (reduce6 = many-per-thread) adds nothing.
        if !chosen.iter().any(|c| c.name == v.name) {
            chosen.push(v);
        }
    }
    Ok(chosen)
}

/// Runs the lab bench on a GPU device.
pub fn run<L: Lab>(
    args: &BenchArgs,
    sizes: &[usize],
    device: &Device,
    lab: &L,
    out: &mut dyn Write,
    sink: &mut super::bench::Sink,
) -> anyhow::Result<Verdict> {
    let picks = choose_picks(&args.variants)?;
    let variants: Vec<Variant> = picks
        .iter()
        .filter_map(|p| match p {
            Pick::Fixed(v) => Some(v.clone()),
            Pick::Auto => None,
        })
        .collect();
    // The comparator is set against what the library runs when auto is benched, else
    // against the production kernel.
    let compared = if picks.iter().any(|p| matches!(p, Pick::Auto)) {
        "auto"
    } else {
        "production"
    };
    if let Some(wanted) = &args.compare {
        if lab.comparator() != Some(wanted.as_str()) {
            anyhow::bail!(
                "--compare {wanted} is not available on {} (CUDA devices compare with cub)",
                device.info().id
            );
        }
    }
    let caps = lab.caps();
    let params = super::params::parse_params(&args.params)?;
    if !params.is_empty() && variants.is_empty() {
        anyhow::bail!("--param does not apply to auto, which runs the tuned parameters");
    }
    check_params(&variants, &params)?;
    let params: Vec<(&str, u32)> = params.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let mut plan = TimingPlan::new(args.cache, caps.cache_bytes.max(1 << 20));
    plan.min_reps = args.min_reps.max(1);
    plan.min_seconds = args.min_time.max(0.0);
    let base = RecordBase::new(device, args);
    let mut failures = Vec::new();
    print_header(out, device, args)?;
    let bar = super::bench::progress(
        args.dtypes.len() * sizes.len() * args.ops.len() * picks.len(),
        args.quiet,
    );
    for &dtype in &args.dtypes {
        for &n in sizes {
            let windows = plan.windows(n, dtype.size_bytes());
            let pool = generate(dtype, n * windows, args.dist, args.seed)?;
            let uploads: Vec<L::Input> = (0..windows)
                .map(|w| lab.upload(pool.view().slice(w * n, w * n + n)))
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let upload_s = uploads.first().map_or(0.0, L::upload_seconds);
            for &op in &args.ops {
                let problem = Problem::new(op, dtype, args.acc.filter(|_| op.is_arithmetic()));
                // Shared by every variant of this problem: the references and error bounds
                // of large windows take seconds to compute, more than many rows' budget.
                let mut judge = Judge::new(windows);
                let mut production_row: Option<Record> = None;
                for pick in &picks {
                    let mut record = base.record(pick.name(), op, dtype, n, windows);
                    match &problem {
                        Err(e) => skip(&mut record, e.to_string()),
                        Ok(problem) => {
                            record.acc = problem.acc.to_string();
                            // Auto's choice is made here, per problem and size; its
                            // parameters borrow from it for the rest of the row.
                            let choice = match pick {
                                Pick::Fixed(v) => Err(v),
                                Pick::Auto => Ok(lab.auto(problem, n)),
                            };
                            let (variant, params) = match &choice {
                                Ok(choice) => {
                                    record.auto_choice = Some(format!(
                                        "{} ({})",
                                        choice.variant.name,
                                        redlab_tune::space::describe(&choice.params)
                                    ));
                                    (choice.variant.clone(), choice.param_pairs())
                                }
                                Err(v) => ((*v).clone(), params.clone()),
                            };
                            let variant = &variant;
                            time_variant(
                                lab,
                                variant,
                                problem,
                                &pool,
                                n,
                                &uploads,
                                &mut judge,
                                &params,
                                &plan,
                                upload_s,
                                args.max_row_time,
                                &mut record,
                            );
                            if record.status == Status::Ok {
                                if let Some(graph) =
                                    lab.graph(variant, problem, &uploads, args.graph_calls, &params)
                                {
                                    match graph {
                                        Ok((seconds, value, w)) => {
                                            let window = pool.view().slice(w * n, w * n + n);
                                            let exact = variant.canonical
                                                || !(dtype.is_float() && op.is_arithmetic());
                                            match judge.check(problem, w, window, exact, &value) {
                                                Ok(()) => record.graph_s = Some(seconds),
                                                Err(why) => {
                                                    record.status = Status::Wrong;
                                                    record.reason =
                                                        Some(format!("graph replay: {why}"));
                                                }
                                            }
                                        }
                                        Err(e) => {
                                            record.reason = Some(format!("graph replay: {e}"))
                                        }
                                    }
                                }
                            }
                        }
                    }
                    bar.inc(1);
                    bar.set_message(format!("{} {op} {dtype} n={n}", pick.name()));
                    bar.suspend(|| {
                        print_row(
                            out,
                            &format!(
                                "{} {}",
                                record
                                    .auto_choice
                                    .as_ref()
                                    .map_or(record.variant.clone(), |c| {
                                        format!("auto→{}", c.split(' ').next().unwrap_or(c))
                                    }),
                                problem
                                    .as_ref()
                                    .map_or(format!("{op} {dtype}"), |p| p.to_string())
                            ),
                            &record,
                        )
                    })?;
                    if record.status == Status::Wrong {
                        failures.push(format!(
                            "{} {op} {dtype} n={n}: {}",
                            pick.name(),
                            record.reason.clone().unwrap_or_default()
                        ));
                    }
                    let is_compared = match pick {
                        Pick::Auto => compared == "auto",
                        Pick::Fixed(v) => compared == "production" && v.is_called("production"),
                    };
                    if is_compared && args.compare.is_some() {
                        production_row = Some(record);
                    } else {
                        sink.push(&record)?;
                    }
                }
                #[cfg(feature = "cuda")]
                if let (Some(_), Ok(problem)) = (&args.compare, &problem) {
                    super::compare::cub_rows(
                        args,
                        &base,
                        problem,
                        n,
                        production_row.as_mut(),
                        out,
                        sink,
                    )?;
                }
                if let Some(row) = production_row.take() {
                    sink.push(&row)?;
                }
            }
        }
    }
    bar.finish_and_clear();
    if let Some(config) = lab.roof_config() {
        let peak = lab.datasheet_gbps().map_or(String::new(), |p| {
            format!("; datasheet bandwidth {p:.0} GB/s")
        });
        writeln!(out, "roof: {config}{peak}")?;
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

/// Refuses a `--param` that no chosen variant has, or a value one of them cannot build.
fn check_params(variants: &[Variant], params: &[(String, u32)]) -> anyhow::Result<()> {
    for (name, value) in params {
        let having: Vec<&Variant> = variants
            .iter()
            .filter(|v| v.default_param(name).is_some())
            .collect();
        if having.is_empty() {
            let names: Vec<&str> = variants.iter().map(|v| v.name).collect();
            anyhow::bail!(
                "--param {name}: none of the chosen variants ({}) has a parameter {name}",
                names.join(", ")
            );
        }
        for v in having {
            v.check_param(name, *value)
                .map_err(|why| anyhow::anyhow!("--param {why}"))?;
        }
    }
    Ok(())
}

/// Times `variant` on `uploads` (cold windows of `pool`), verifying every new result,
/// into `record`.
#[allow(clippy::too_many_arguments)]
pub(super) fn time_variant<L: Lab>(
    lab: &L,
    variant: &Variant,
    problem: &Problem,
    pool: &redlab::HostArray,
    n: usize,
    uploads: &[L::Input],
    judge: &mut Judge,
    params: &[(&str, u32)],
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
        let run = match lab.run(variant, problem, &uploads[w], params) {
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
            if let Ok(r) = lab.stream_read(&uploads[(w + windows / 2) % windows]) {
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
    // The roof is a comparator: however few calls the row took (--min-time 0, a slow
    // strategy), its median comes from several samples.
    while !roofs.is_empty() && roofs.len() < MIN_ROOF_SAMPLES {
        match lab.stream_read(&uploads[windows / 2]) {
            Ok(r) => roofs.push(r),
            Err(_) => break,
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
    record.set_rates(rate, roof);
    record.set_roof_context(lab.roof_config(), lab.datasheet_gbps());
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
pub(super) struct Judge {
    expected: Vec<Option<Value>>,
    bounds: Vec<Option<accuracy::AnyOrderBound>>,
}

impl Judge {
    pub(super) fn new(windows: usize) -> Self {
        Judge {
            expected: vec![None; windows],
            bounds: vec![None; windows],
        }
    }

    /// Accepts `got` when it equals the reference (canonical order for floats), or, for
    /// strategies with their own float order, when it lies within the any-order bound.
    pub(super) fn check(
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
