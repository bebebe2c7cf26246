//! `redlab run --map …`: a user-defined reduction over one or more inputs (files, or
//! seeded generated arrays, one per input the map names), on any device, verified
//! against the scalar reference of the expression crate.

use std::io::Write;

use anyhow::{bail, Context};
use redlab::generate::generate;
use redlab::{Device, HostArray, Reduction, Value};
use redlab_bench::{gbps, Stats};
use redlab_expr::{oracle, parser};
use serde_json::{json, Map};

use super::run::RunArgs;
use super::{json as value_json, Verdict};

/// Inputs above this many elements are checked against the CPU's block evaluator
/// (itself held to the scalar reference by the tests) instead of the slower scalar one.
const SCALAR_REFERENCE_UPTO: usize = 1 << 24;

/// Builds the reduction a run's flags describe, for inputs of `dtypes`.
pub fn reduction_of(args: &RunArgs, dtypes: &[redlab::DType]) -> anyhow::Result<Reduction> {
    if let Some(stat) = &args.stat {
        let [dtype] = dtypes else {
            bail!("--stat {stat} reads one input, not {}", dtypes.len());
        };
        return Ok(redlab_expr::stats::reduction(stat, *dtype)?);
    }
    let map = args.map.as_deref().context("--map is required here")?;
    Ok(Reduction::builder(map, &args.combine)
        .with_options(args.identity.as_deref(), args.post.as_deref(), args.acc)
        .build(dtypes)?)
}

/// The inputs: each --input file, or one generated array per input the map names.
pub(super) fn inputs(args: &RunArgs, map: &str) -> anyhow::Result<(Vec<HostArray>, String)> {
    if !args.input.is_empty() {
        let mut arrays = Vec::new();
        let mut names = Vec::new();
        for path in &args.input {
            let loaded = redlab::input::load(path, args.dtype)?;
            names.push(format!("{} ({})", path.display(), loaded.format));
            arrays.push(loaded.array);
        }
        return Ok((arrays, names.join(", ")));
    }
    let count = parser::inputs_named(map)?;
    let dtype = args
        .dtype
        .context("generated inputs need --dtype to know what to generate")?;
    let n = match (args.n, &args.shape) {
        (Some(n), _) => n.0,
        (None, Some(shape)) => super::shaped::parse_shape(shape)?
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .context("--shape has too many elements")?,
        (None, None) => bail!("give --n SIZE or --input FILE"),
    };
    let arrays = (0..count)
        .map(|k| generate(dtype, n, args.dist, args.seed + k as u64))
        .collect::<Result<Vec<_>, _>>()?;
    let source = format!(
        "generated: {count} × {dtype}, {:?}, seeds {}…{}",
        args.dist,
        args.seed,
        args.seed + count as u64 - 1
    )
    .to_lowercase();
    Ok((arrays, source))
}

/// Runs a user-defined reduction.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<Verdict> {
    let map = args.map.as_deref().unwrap_or("x");
    let (arrays, source) = inputs(args, map)?;
    let dtypes: Vec<_> = arrays.iter().map(HostArray::dtype).collect();
    let reduction = reduction_of(args, &dtypes)?;
    let views: Vec<_> = arrays.iter().map(HostArray::view).collect();
    let n = redlab_expr::host::check_inputs(&reduction, &views)?;
    if args.shaped() {
        return run_shaped(args, &reduction, &views, out);
    }
    let device = args.host_device()?;
    let reduce_once = || Ok(device.reduce_mapped(&reduction, &views)?);
    let (value, times) = match super::run::repeat_agreeing(args.repeat, reduce_once)? {
        Ok(agreed) => agreed,
        Err(why) => return Ok(Verdict::Mismatch(why)),
    };
    let stats = Stats::of(&times).context("no timings")?;
    let (expected, reference_name) = if n <= SCALAR_REFERENCE_UPTO {
        (oracle::reduce(&reduction, &views)?, "the scalar reference")
    } else {
        let cpu = Device::open("cpu", None)?;
        (
            cpu.reduce_mapped(&reduction, &views)?.value,
            "the CPU's block evaluator",
        )
    };
    let device_math = redlab_expr::codegen::uses_device_math(&reduction.map);
    let bitwise = value.same_as(&expected);
    let verified = bitwise || (device_math && close(&value, &expected));
    let bytes: u64 = views.iter().map(|v| v.bytes().len() as u64).sum();
    let rate = gbps(bytes, stats.median);
    let info = device.info();
    if args.json {
        let mut fields = Map::new();
        fields.insert("map".into(), json!(reduction.map_text));
        fields.insert("combine".into(), json!(args.combine));
        fields.insert("post".into(), json!(args.post));
        fields.insert("inputs".into(), json!(dtypes));
        fields.insert("n".into(), json!(n));
        fields.insert("device".into(), json!(info.id));
        fields.insert("device_name".into(), json!(info.name));
        value_json::value_fields(&value, &mut fields);
        fields.insert("seconds".into(), json!(stats.median));
        fields.insert("repeat".into(), json!(args.repeat));
        fields.insert("gbps".into(), json!(rate));
        fields.insert("verified".into(), json!(verified));
        fields.insert("bitwise_reference".into(), json!(bitwise));
        fields.insert("input".into(), json!(source));
        writeln!(out, "{}", serde_json::Value::Object(fields))?;
    } else {
        writeln!(
            out,
            "{}, {} input{} of n = {n}, on {} ({})",
            reduction.describe(),
            dtypes.len(),
            if dtypes.len() == 1 { "" } else { "s" },
            info.id,
            info.name
        )?;
        writeln!(out, "  input     {source}")?;
        match value.scalar() {
            Some(s) => writeln!(out, "  value     {value}  [bits 0x{:x}]", s.bits())?,
            None => writeln!(out, "  value     {value}")?,
        }
        if bitwise {
            writeln!(out, "  verified  yes: bitwise equal to {reference_name}")?;
        } else if verified {
            writeln!(
                out,
                "  verified  yes: within 1e-5 relative of {reference_name} ({expected}); exp, log and pow are the device's own"
            )?;
        } else {
            writeln!(out, "  verified  NO: {reference_name} gives {expected}")?;
        }
        writeln!(
            out,
            "  time      {:.3} ms median of {} ({:.2} GB/s of input)",
            stats.median * 1e3,
            args.repeat,
            rate
        )?;
    }
    Ok(if verified {
        Verdict::Success
    } else {
        Verdict::Mismatch(format!(
            "{value} differs from {reference_name}'s {expected}"
        ))
    })
}

/// A map along axes or over segments, each output reduced in the canonical order of its
/// own mapped values: on OpenCL and CUDA devices a map of one input that does not read
/// `i` runs in the segment kernels, which map as they read
/// ([`Device::reduce_mapped_outputs`]); other maps are applied on the host once, then the
/// mapped values reduced on the device. The host's mapped values are the reference either
/// way. A custom combine runs through [`Device::reduce_mapped_outputs`] on every device
/// (in the segment kernels, or folded on the host), checked against the
/// element-by-element reference ([`redlab_expr::oracle::custom_outputs`]); its problem
/// is the stand-in the kernels store partials as (a sum over the accumulator type, also
/// the output file's type).
fn run_shaped(
    args: &RunArgs,
    reduction: &Reduction,
    views: &[redlab::ArrayRef<'_>],
    out: &mut dyn Write,
) -> anyhow::Result<Verdict> {
    let mapped = redlab_expr::host::map_all(reduction, views)?;
    let dims = args.dims_for(mapped.len())?;
    let request = args.shaped_request()?;
    let device = args.host_device()?;
    let (problem, on_device) = match reduction.problem() {
        Some(problem) => (*problem, device.maps_outputs_on_device(reduction)),
        None => (
            redlab_kernels::mapped::custom_problem(reduction).map_err(anyhow::Error::msg)?,
            true,
        ),
    };
    if args.graph_calls > 0 && !device.graphs_mapped_outputs(reduction) {
        bail!(
            "--graph-calls times reductions that a CUDA device compiles into its segment \
             kernels (a map that does not read `i`)"
        );
    }
    let post = super::shaped::Post {
        label: reduction.describe(),
        finish: &|v, count| reduction.finish(v, count),
    };
    super::shaped::run(
        &request,
        &super::shaped::Compute::Reduce {
            problem: &problem,
            post: Some(&post),
            on_device: on_device.then_some((reduction, views)),
        },
        &mapped,
        &dims,
        args.input.first().map(|p| p.as_path()),
        &device,
        args.repeat,
        args.json,
        args.explain,
        out,
    )
}

/// Whether two results agree to 1e-5 relative (maps with the device's own exp/log/pow).
fn close(a: &Value, b: &Value) -> bool {
    match (a.scalar(), b.scalar()) {
        (Some(x), Some(y)) => {
            let (x, y) = (x.to_f64(), y.to_f64());
            (x - y).abs() <= 1e-5 * x.abs().max(y.abs()) || (x.is_nan() && y.is_nan())
        }
        _ => a.same_as(b),
    }
}
