//! `redlab run`: reduce one input, verify it against the reference, report the value,
//! the time and the bandwidth.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use redlab::generate::{generate, Distribution};
use redlab::reference::{self, accuracy};
use redlab::{canonical, DType, Device, Op, Problem, Value};
use redlab_bench::{gbps, Stats};
use redlab_core::with_float_dtype;
use serde_json::{json, Map};

use super::size::Size;
use super::{json as value_json, Verdict};

/// Arguments of `redlab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Operator: sum, prod, min, max, and, or, xor, argmin, argmax.
    #[arg(long, required_unless_present_any = ["map", "stat"], conflicts_with_all = ["map", "stat"])]
    pub(super) op: Option<Op>,
    /// A statistic instead of --op: mean, sumsq, norm1, norm2, norminf, nansum, any, all,
    /// count_nonzero (docs/expressions.md; any device), or var, std, logsumexp, nanmin,
    /// nanmax, nanmean (one pass, on the CPU, OpenCL and CUDA); along axes too.
    #[arg(long, conflicts_with = "map")]
    pub(super) stat: Option<String>,
    /// Delta degrees of freedom of --stat var and std (the divisor is n − ddof).
    #[arg(long, default_value_t = 0.0)]
    pub(super) ddof: f64,
    /// A user-defined reduction: the expression applied to each element, in the inputs
    /// x, y, z, w and the index i (docs/expressions.md), e.g. 'x * y'.
    #[arg(long)]
    pub(super) map: Option<String>,
    /// With --map: a built-in combine (sum, prod, min, max, and, or, xor, argmin, argmax)
    /// or an associative expression in a and b.
    #[arg(long, requires = "map", default_value = "sum")]
    pub(super) combine: String,
    /// With a custom --combine: the value that leaves any partial unchanged.
    #[arg(long, requires = "map", allow_hyphen_values = true)]
    pub(super) identity: Option<String>,
    /// With --map: an expression in r (the result) and n (the element count) applied to
    /// the result, e.g. 'sqrt(r)'.
    #[arg(long, requires = "map")]
    pub(super) post: Option<String>,
    /// Element type (i8 … u64, f16, bf16, f32, f64); for .npy files it must match the file.
    #[arg(long)]
    pub(super) dtype: Option<DType>,
    /// Accumulator type for sum and prod (default: 64-bit for integers, f32 for f16/bf16).
    #[arg(long)]
    pub(super) acc: Option<DType>,
    /// Generate this many seeded random elements (1000003, 1e6, 2^20, 64Mi).
    #[arg(long, required_unless_present_any = ["input", "shape"], conflicts_with = "input")]
    pub(super) n: Option<Size>,
    /// Distribution of generated elements: uniform, normal, ints, or hashed (uniform,
    /// each element a function of the seed and its index: made in place by the device
    /// that reduces it, on each GPU of a group its own part, never on the host).
    #[arg(long, default_value = "normal")]
    pub(super) dist: Distribution,
    /// Seed of generated elements.
    #[arg(long, default_value_t = 1)]
    pub(super) seed: u64,
    /// Read elements from an .npy file or a raw little-endian file (raw needs --dtype).
    /// With --map, once per input, in the order x, y, z, w.
    #[arg(long)]
    pub(super) input: Vec<PathBuf>,
    /// Device to reduce on: cpu, opencl:N, cuda:N, or auto (the CPU or the CUDA GPU,
    /// whichever the measured bandwidths say is faster for this much host data; the GPU
    /// gets it through pinned staging buffers).
    #[arg(long, default_value = "cpu")]
    pub(super) device: String,
    /// On OpenCL and CUDA devices, the strategy to run (name or alias, e.g. reduce2), or
    /// `auto`: the tuning database's choice for this device, problem and size (the
    /// production kernel where there is no entry).
    #[arg(long, default_value = "auto")]
    variant: String,
    /// With a named --variant: a kernel parameter (`--param WARP_ROWS=2`, repeatable),
    /// as `bench --param` takes it.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Say which strategy `auto` chose and why.
    #[arg(long)]
    pub(super) explain: bool,
    /// On a CUDA device, send the host data through pinned staging buffers (chunks
    /// copied by all cores while the previous chunk is in flight) and time end to end.
    #[arg(long)]
    staged: bool,
    /// CPU worker threads (default: all cores).
    #[arg(long)]
    pub(super) threads: Option<usize>,
    /// Reduce this many times and report the median time.
    #[arg(long, default_value_t = 1)]
    pub(super) repeat: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(super) json: bool,
    /// With --axis, segments or --stat on a CUDA device: also time this many
    /// back-to-back calls captured in one CUDA graph and replayed (the steady state a
    /// pipeline sees), and report one call's share beside the per-call time.
    #[arg(long, default_value_t = 0)]
    pub(super) graph_calls: usize,
    /// The input's shape, C order (`4096x8192`): for generated data (with --n, or
    /// instead of it) and raw files; a .npy file has its own.
    #[arg(long)]
    pub(super) shape: Option<String>,
    /// Reduce along these axes (`1`, `0,2`, `-1`); the default is all axes.
    #[arg(long, allow_hyphen_values = true)]
    pub(super) axis: Option<String>,
    /// Keep the reduced axes in the result, with length 1.
    #[arg(long)]
    pub(super) keepdims: bool,
    /// Reduce each segment of the flat input given by CSR offsets (a 1-D int64 .npy:
    /// segment i is elements offsets[i]..offsets[i+1]).
    #[arg(long, conflicts_with = "segment_size")]
    pub(super) segments: Option<PathBuf>,
    /// Reduce consecutive segments of this many elements (the last may be shorter).
    #[arg(long)]
    pub(super) segment_size: Option<usize>,
    /// Write the result as .npy (axis and segment reductions).
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
    /// Replace --out if it exists.
    #[arg(long)]
    pub(super) force: bool,
    /// This process's rank in a multi-process reduction (0 … --world − 1); each rank
    /// reduces its part and the ranks exchange their partial results at --rendezvous.
    #[arg(long, requires_all = ["world", "rendezvous"])]
    rank: Option<usize>,
    /// The number of processes (ranks) of a multi-process reduction.
    #[arg(long, requires_all = ["rank", "rendezvous"])]
    world: Option<usize>,
    /// Where the ranks meet: tcp://HOST:PORT (rank 0 listens there) or file:FOLDER (a
    /// folder that must not exist yet, on a file system every rank shares).
    #[arg(long, requires_all = ["rank", "world"])]
    rendezvous: Option<String>,
    /// Seconds to wait for the other ranks.
    #[arg(long, default_value_t = 120.0)]
    rendezvous_timeout: f64,
    /// How the ranks exchange their partial results: NCCL when every rank has a GPU of
    /// its own with NCCL (auto), or always through the rendezvous.
    #[arg(long, value_enum, default_value = "auto")]
    exchange: super::exchange::Exchange,
}

impl RunArgs {
    /// The axes, segments and output file of a shaped reduction.
    pub(super) fn shaped_request(&self) -> anyhow::Result<super::shaped::ShapedRequest> {
        Ok(super::shaped::ShapedRequest {
            axes: self
                .axis
                .as_deref()
                .map(super::shaped::parse_axes)
                .transpose()?,
            keepdims: self.keepdims,
            segments: self.segments.clone(),
            segment_size: self.segment_size,
            out: self.out.clone(),
            force: self.force,
            graph_calls: self.graph_calls,
        })
    }

    /// The dimensions of the (first) input: `--shape`, the .npy's own shape, or flat
    /// `len` elements.
    pub(super) fn dims_for(&self, len: usize) -> anyhow::Result<Vec<usize>> {
        Ok(match (&self.shape, self.input.first()) {
            (Some(text), _) => super::shaped::parse_shape(text)?,
            (None, Some(path)) => redlab::input::load(path, self.dtype)?
                .shape
                .iter()
                .map(|&d| usize::try_from(d).context("shape does not fit in memory"))
                .collect::<anyhow::Result<_>>()?,
            (None, None) => vec![len],
        })
    }

    /// The device for host-side work: `--device`, with `auto` meaning the CPU.
    pub(super) fn host_device(&self) -> anyhow::Result<Device> {
        let name = if self.device == "auto" {
            "cpu"
        } else {
            &self.device
        };
        Ok(Device::open(name, self.threads)?)
    }

    /// Whether the request has a shape: axes, segments or an output file.
    pub(super) fn shaped(&self) -> bool {
        self.axis.is_some()
            || self.keepdims
            || self.segments.is_some()
            || self.segment_size.is_some()
            || self.out.is_some()
            || self.shape.is_some()
    }
}

/// `--stat var|std|logsumexp|nanmin|nanmax|nanmean`: one pass per output, on the device.
fn statistic(
    args: &RunArgs,
    stat: redlab::Statistic,
    out: &mut dyn Write,
) -> anyhow::Result<Verdict> {
    let (arrays, _) = super::mapped::inputs(args, "x")?;
    let [array] = arrays.as_slice() else {
        anyhow::bail!(
            "--stat {} reads one input, not {}",
            stat.name(),
            arrays.len()
        );
    };
    let dims = args.dims_for(array.len())?;
    let device = args.host_device()?;
    super::shaped::run(
        &args.shaped_request()?,
        &super::shaped::Compute::Statistic(stat),
        array,
        &dims,
        args.input.first().map(|p| p.as_path()),
        &device,
        args.repeat,
        args.json,
        args.explain,
        out,
    )
}

/// Calls `call` `repeat` times (at least once): the value all calls agreed on and each
/// call's seconds, or the message for the first call that disagreed.
pub(super) fn repeat_agreeing(
    repeat: usize,
    mut call: impl FnMut() -> anyhow::Result<redlab::Outcome>,
) -> anyhow::Result<Result<(Value, Vec<f64>), String>> {
    let mut times = Vec::with_capacity(repeat);
    let mut value: Option<Value> = None;
    for _ in 0..repeat.max(1) {
        let outcome = call()?;
        if let Some(first) = &value {
            if !first.same_as(&outcome.value) {
                return Ok(Err(format!(
                    "repeated runs disagree: {first} then {}",
                    outcome.value
                )));
            }
        }
        value.get_or_insert(outcome.value);
        times.push(outcome.seconds);
    }
    Ok(Ok((value.context("no run happened")?, times)))
}

/// Runs `redlab run`.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if args.graph_calls > 0 && !args.shaped() && args.stat.is_none() {
        bail!(
            "--graph-calls times operators (--op) and maps (--map) along axes or over \
             segments, and statistics (--stat); `redlab bench --graph-calls` times whole \
             arrays in a graph"
        );
    }
    if let (Some(rank), Some(world), Some(address)) = (args.rank, args.world, &args.rendezvous) {
        if !(args.rendezvous_timeout > 0.0 && args.rendezvous_timeout.is_finite()) {
            bail!("--rendezvous-timeout must be a positive number of seconds");
        }
        let ranks = super::ranks::Ranks {
            rank,
            world,
            address: address.parse()?,
            timeout: std::time::Duration::from_secs_f64(args.rendezvous_timeout),
            exchange: args.exchange,
        };
        return super::ranks::run(args, ranks, out);
    }
    if let Some(stat) = args
        .stat
        .as_deref()
        .and_then(|s| redlab::Statistic::parse(s, args.ddof))
    {
        return statistic(args, stat, out);
    }
    if args.map.is_some() || args.stat.is_some() {
        return super::mapped::run(args, out);
    }
    let op = args
        .op
        .context("give --op, or --map for a user-defined reduction")?;
    if args.input.len() > 1 {
        bail!(
            "--input is given {} times; several inputs are for --map",
            args.input.len()
        );
    }
    // A named strategy follows the canonical float order or its own; the result is
    // judged by the same rule as in the bench (accuracy::check_result).
    let params = super::params::parse_params(&args.params)?;
    if !params.is_empty() && args.variant == "auto" {
        bail!(
            "--param sets a named strategy's parameters: add --variant (e.g. --variant production)"
        );
    }
    let canonical = match args.variant.as_str() {
        "auto" => true,
        #[cfg(not(any(feature = "opencl", feature = "cuda")))]
        name => bail!("--variant {name}: named strategies run on OpenCL and CUDA devices, and this build has neither backend"),
        #[cfg(any(feature = "opencl", feature = "cuda"))]
        name => {
            let chosen = super::bench_lab::choose(name)?;
            match chosen.as_slice() {
                [one] => {
                    for (param, value) in &params {
                        one.check_param(param, *value)
                            .map_err(|why| anyhow::anyhow!("--param {param}={value}: {why}"))?;
                    }
                    one.canonical
                }
                _ => {
                    bail!("--variant {name}: run takes one variant (bench --variants runs several)")
                }
            }
        }
    };
    let opened = if args.device == "auto" {
        None
    } else {
        Some(Device::open(&args.device, args.threads)?)
    };
    let shape_arg = args
        .shape
        .as_deref()
        .map(super::shaped::parse_shape)
        .transpose()?;
    let n_arg = match (args.n, &shape_arg) {
        (Some(n), _) => Some(n),
        (None, Some(dims)) if args.input.is_empty() => Some(Size(
            dims.iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .context("--shape has too many elements")?,
        )),
        _ => None,
    };
    let mut dims: Option<Vec<usize>> = shape_arg.clone();
    let (array, source) = match (args.input.first(), n_arg) {
        (Some(path), _) => {
            let loaded = redlab::input::load(path, args.dtype)?;
            if loaded.format == "npy" {
                if shape_arg.is_some() {
                    bail!("--shape is for generated data and raw files; a .npy file has its own shape");
                }
                dims = Some(
                    loaded
                        .shape
                        .iter()
                        .map(|&d| usize::try_from(d).context("shape does not fit in memory"))
                        .collect::<anyhow::Result<_>>()?,
                );
            }
            let source = format!(
                "{} ({}, shape {:?}{})",
                path.display(),
                loaded.format,
                loaded.shape,
                if loaded.mapped {
                    ", memory-mapped"
                } else {
                    ", converted"
                }
            );
            (loaded.array, source)
        }
        (None, Some(Size(n))) => {
            let dtype = args
                .dtype
                .context("--n needs --dtype to know what to generate")?;
            let problem = Problem::new(op, dtype, args.acc)?; // reject bad requests before allocating
            if let (Some(device), true) = (&opened, in_place(args)) {
                return super::run_generated::run(args, device, &problem, n, out);
            }
            let array = generate(dtype, n, args.dist, args.seed)?;
            (
                array,
                format!("generated: {:?}, seed {}", args.dist, args.seed).to_lowercase(),
            )
        }
        (None, None) => bail!("give --n SIZE or --input FILE"),
    };
    let problem = Problem::new(op, array.dtype(), args.acc)?;
    if args.shaped() {
        if args.variant != "auto" || args.staged {
            bail!(
                "axis and segment reductions pick their kernel by shape (see --explain): leave out --variant and --staged"
            );
        }
        let request = args.shaped_request()?;
        let dims = dims.unwrap_or_else(|| vec![array.len()]);
        // `auto` places 1-D reductions by measured bandwidth; shaped ones stay on the CPU.
        let device = match opened {
            Some(device) => device,
            None => Device::open("cpu", args.threads)?,
        };
        return super::shaped::run(
            &request,
            &super::shaped::Compute::Reduce {
                problem: &problem,
                post: None,
                on_device: None,
            },
            &array,
            &dims,
            args.input.first().map(|p| p.as_path()),
            &device,
            args.repeat,
            args.json,
            args.explain,
            out,
        );
    }
    let data = array.view();
    let (device, staged) = match opened {
        Some(d) => {
            let staged = args.staged.then_some(STAGING_CHUNK);
            (d, staged)
        }
        None => place(args, data.bytes().len() as u64, out)?,
    };

    let reduce_once = || -> anyhow::Result<redlab::Outcome> {
        if let Some(chunk) = staged {
            return reduce_staged(&device, &problem, data, chunk);
        }
        match args.variant.as_str() {
            "auto" => Ok(device.reduce(&problem, data)?),
            name => run_variant(&device, name, &params, &problem, data),
        }
    };
    let explanation = if args.explain && args.variant == "auto" {
        Some(explain(&device, &problem, array.len()))
    } else {
        None
    };
    if let (Some(text), false) = (&explanation, args.json) {
        write!(out, "{text}")?;
    }
    let (value, times) = match repeat_agreeing(args.repeat, reduce_once)? {
        Ok(agreed) => agreed,
        Err(why) => return Ok(Verdict::Mismatch(why)),
    };
    let stats = Stats::of(&times).context("no timings")?;
    let expected = reference::reduce(&problem, data)?;
    let bitwise = value.same_as(&expected);
    let verdict = accuracy::check_result(&problem, data, &value, &expected, canonical);
    let verified = verdict.is_ok();
    let error_ulps = if problem.dtype.is_float() && problem.op.is_arithmetic() {
        let product = problem.op == Op::Prod;
        let exact = with_float_dtype!(problem.dtype, T => accuracy::exact_value(product, data.typed::<T>()?),
            else f64::NAN);
        accuracy::error_ulps(&value, exact)
    } else {
        None
    };
    let n = array.len();
    let rate = gbps(problem.bytes_read(n), stats.median);
    let info = device.info();

    if args.json {
        let mut fields = record_head(&problem, n, info, &value);
        fields.insert("threads".into(), json!(info.compute_units));
        fields.insert("seconds".into(), json!(stats.median));
        fields.insert("min_seconds".into(), json!(stats.min));
        fields.insert("max_seconds".into(), json!(stats.max));
        fields.insert("repeat".into(), json!(args.repeat));
        fields.insert("gbps".into(), json!(rate));
        fields.insert("verified".into(), json!(verified));
        fields.insert("bitwise_canonical".into(), json!(bitwise));
        fields.insert("error_ulps".into(), json!(error_ulps));
        fields.insert("canonical_order".into(), json!(canonical::VERSION));
        fields.insert("input".into(), json!(source));
        fields.insert("variant".into(), json!(args.variant));
        if let Some(text) = &explanation {
            fields.insert("explain".into(), json!(text.lines().collect::<Vec<_>>()));
        }
        writeln!(out, "{}", serde_json::Value::Object(fields))?;
    } else {
        report_head(out, &problem, n, info, &source, &value)?;
        let how = if !(problem.dtype.is_float() && problem.op.is_arithmetic()) {
            "equal to the exact host reference".to_string()
        } else if bitwise {
            format!(
                "bitwise equal to the canonical order v{} reference",
                canonical::VERSION
            )
        } else {
            "within the any-order error bound (this strategy sums in its own order)".to_string()
        };
        match &verdict {
            Ok(()) => writeln!(out, "  verified  yes: {how}")?,
            Err(why) => writeln!(out, "  verified  NO: {why}")?,
        }
        if let Some(ulps) = error_ulps {
            writeln!(
                out,
                "  error     {ulps:.2} ulp from the exactly rounded result"
            )?;
        }
        writeln!(
            out,
            "  time      {} median of {} (min {}, max {}), {rate:.2} GB/s",
            seconds_text(stats.median),
            stats.count,
            seconds_text(stats.min),
            seconds_text(stats.max)
        )?;
    }
    Ok(if verified {
        Verdict::Success
    } else {
        Verdict::Mismatch(format!(
            "{problem}: device gave {value}, reference gives {expected}"
        ))
    })
}

/// The fields every `run` record starts with: the problem, the device, the value.
pub(super) fn record_head(
    problem: &Problem,
    n: usize,
    info: &redlab::DeviceInfo,
    value: &Value,
) -> Map<String, serde_json::Value> {
    let mut fields = Map::new();
    fields.insert("op".into(), json!(problem.op));
    fields.insert("dtype".into(), json!(problem.dtype));
    fields.insert("acc".into(), json!(problem.acc));
    fields.insert("n".into(), json!(n));
    fields.insert("device".into(), json!(info.id));
    fields.insert("device_name".into(), json!(info.name));
    value_json::value_fields(value, &mut fields);
    fields
}

/// The lines every `run` report starts with: the problem, the device, the input, the
/// value and its bits.
pub(super) fn report_head(
    out: &mut dyn Write,
    problem: &Problem,
    n: usize,
    info: &redlab::DeviceInfo,
    source: &str,
    value: &Value,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{problem}, n = {n}, on {} ({}, {} compute units)",
        info.id, info.name, info.compute_units
    )?;
    writeln!(out, "  input     {source}")?;
    match value.scalar() {
        Some(s) => writeln!(out, "  value     {value}  [bits 0x{:x}]", s.bits()),
        None => writeln!(out, "  value     {value}"),
    }
}

/// Whether generated data is made on the device that reduces it: `hashed` data, for
/// the production path (`auto`) over the whole array, on a named device.
fn in_place(args: &RunArgs) -> bool {
    args.dist == Distribution::Hashed
        && args.variant == "auto"
        && !args.staged
        && !args.shaped()
        && args.device != "auto"
}

/// Chunk of the staged upload when `--device auto` picks the GPU.
const STAGING_CHUNK: usize = 32 << 20;

/// `--device auto`: the CPU or the CUDA GPU for `bytes` of host data, from measured
/// bandwidths (cached), with the reasons printed; `Some(chunk)` when the GPU gets the
/// data through staging buffers of that size.
fn place(
    args: &RunArgs,
    bytes: u64,
    out: &mut dyn Write,
) -> anyhow::Result<(Device, Option<usize>)> {
    let cpu = Device::open("cpu", args.threads)?;
    #[cfg(feature = "cuda")]
    {
        match Device::open("cuda:0", None) {
            Ok(gpu) => {
                let (m, cached) = match redlab::placement::measured(&gpu, &cpu, false) {
                    Ok(found) => found,
                    Err(e) => {
                        writeln!(
                            out,
                            "device auto: cpu (measuring {} failed: {e})",
                            gpu.info().id
                        )?;
                        return Ok((cpu, None));
                    }
                };
                let p = redlab::placement::decide(&m, bytes);
                writeln!(
                    out,
                    "device auto: {}{}",
                    p.device,
                    if cached {
                        " (bandwidths from the cache)"
                    } else {
                        " (bandwidths measured now, cached)"
                    }
                )?;
                for r in &p.reasons {
                    writeln!(out, "  - {r}")?;
                }
                return Ok(if p.device == "cpu" {
                    (cpu, None)
                } else {
                    (gpu, Some(STAGING_CHUNK))
                });
            }
            Err(e) => writeln!(out, "device auto: cpu (no CUDA GPU: {e})")?,
        }
    }
    #[cfg(not(feature = "cuda"))]
    writeln!(out, "device auto: cpu (this build has no CUDA backend)")?;
    let _ = bytes;
    Ok((cpu, None))
}

/// Host data to the GPU through pinned staging buffers, then `auto`'s kernel; the time is
/// end to end (staging, copies, kernel, readback), and the report compares it with the
/// pinned host→device bandwidth measured right after.
fn reduce_staged(
    device: &Device,
    problem: &Problem,
    data: redlab::ArrayRef<'_>,
    chunk: usize,
) -> anyhow::Result<redlab::Outcome> {
    #[cfg(feature = "cuda")]
    if let Some(cuda) = device.cuda() {
        let started = std::time::Instant::now();
        let staged = cuda
            .upload_staged(data, chunk)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let choice = cuda.auto(problem, data.len());
        let run = cuda
            .run(
                &choice.variant,
                problem,
                &staged.input,
                &choice.param_pairs(),
            )
            .map_err(|e| anyhow::anyhow!("{}: {e}", choice.variant.name))?;
        let seconds = started.elapsed().as_secs_f64();
        let bytes = data.bytes().len();
        let pinned = cuda
            .measure_transfers(bytes.clamp(1 << 20, 256 << 20))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let end_to_end = bytes as f64 / seconds / 1e9;
        eprintln!(
            "staged: {} chunks of {} MiB; end to end {end_to_end:.1} GB/s = {:.0}% of pinned host→device {:.1} GB/s measured now (copies {:.3} ms, kernel {:.3} ms)",
            staged.chunks,
            chunk >> 20,
            100.0 * end_to_end / pinned.pinned_gbps,
            pinned.pinned_gbps,
            staged.seconds * 1e3,
            run.passes.iter().sum::<f64>() * 1e3
        );
        return Ok(redlab::Outcome {
            value: run.value,
            seconds,
            passes: run.passes,
        });
    }
    let _ = (problem, data, chunk);
    bail!(
        "staged uploads need a CUDA device, not {}",
        device.info().id
    )
}

/// What `auto` chose on `device` and why (the CPU has one strategy per problem).
fn explain(device: &Device, problem: &Problem, n: usize) -> String {
    #[cfg(feature = "opencl")]
    if let Some(opencl) = device.opencl() {
        return opencl.auto(problem, n).explain();
    }
    #[cfg(feature = "cuda")]
    if let Some(cuda) = device.cuda() {
        return cuda.auto(problem, n).explain();
    }
    let _ = (problem, n);
    format!(
        "auto: {} runs one strategy per problem (vectorized multi-accumulator loops on all cores; float sums in the canonical order)\n",
        device.info().id
    )
}

/// Runs one named variant on an OpenCL or CUDA device (upload, passes, readback); the
/// outcome's time is the kernels' time from device events.
fn run_variant(
    device: &Device,
    name: &str,
    params: &[(String, u32)],
    problem: &Problem,
    data: redlab::ArrayRef<'_>,
) -> anyhow::Result<redlab::Outcome> {
    #[cfg(any(feature = "opencl", feature = "cuda"))]
    {
        let outcome = |run: Result<redlab_kernels::Run, redlab_kernels::RunError>,
                       variant: &str| {
            let run = run.map_err(|e| anyhow::anyhow!("{variant}: {e}"))?;
            Ok(redlab::Outcome {
                value: run.value,
                seconds: run.passes.iter().sum(),
                passes: run.passes,
            })
        };
        let variant = || -> anyhow::Result<redlab_kernels::Variant> {
            super::bench_lab::choose(name)?
                .into_iter()
                .next()
                .context("no variant named")
        };
        let params: Vec<(&str, u32)> = params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        #[cfg(feature = "opencl")]
        if let Some(opencl) = device.opencl() {
            let v = variant()?;
            let input = opencl.upload(data).map_err(|e| anyhow::anyhow!("{e}"))?;
            return outcome(opencl.run(&v, problem, &input, &params), v.name);
        }
        #[cfg(feature = "cuda")]
        if let Some(cuda) = device.cuda() {
            let v = variant()?;
            let input = cuda.upload(data).map_err(|e| anyhow::anyhow!("{e}"))?;
            return outcome(cuda.run(&v, problem, &input, &params), v.name);
        }
    }
    let _ = (params, problem, data);
    bail!(
        "--variant {name} needs an OpenCL or CUDA device; {} has one strategy per problem",
        device.info().id
    )
}

/// Seconds in the unit that reads best.
pub fn seconds_text(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.2} µs", s * 1e6)
    }
}
