//! `redlab run` with a shape: reductions along axes (`--axis`, `--keepdims`) and over
//! segments (`--segments offsets.npy`, `--segment-size K`), one result per output
//! element, each verified against the host reference bit for bit, written to `--out`
//! as .npy and printed when small.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use redlab::segmented::{self, Selection};
use redlab::shape::{AxisPlan, Layout, Segments};
use redlab::Device;
use redlab::{ArrayRef, DType, HostArray, Op, Packed, Problem, Reduction, Statistic, Value};
use redlab_bench::{gbps, Stats};
use redlab_core::value_bytes::scalar_at;
use serde_json::json;

use super::output::OutputPlan;
use super::Verdict;

/// What `redlab run` asked for beyond a whole-array reduction.
#[derive(Debug, Clone)]
pub struct ShapedRequest {
    /// Axes to reduce (`None`: all).
    pub axes: Option<Vec<isize>>,
    /// Keep reduced axes as length 1.
    pub keepdims: bool,
    /// A .npy of int64 CSR offsets.
    pub segments: Option<PathBuf>,
    /// Fixed segment length.
    pub segment_size: Option<usize>,
    /// Where to write the result.
    pub out: Option<PathBuf>,
    /// Replace `out` if it exists.
    pub force: bool,
    /// Back-to-back calls to time in a CUDA graph (0: none).
    pub graph_calls: usize,
}

/// Values after `post`, one scalar type for all, as little-endian bytes.
fn pack_finished(values: &[Value]) -> anyhow::Result<(DType, Vec<u8>)> {
    let dtype = values
        .iter()
        .find_map(|v| v.scalar())
        .map_or(DType::F64, |s| s.dtype());
    let size = dtype.size_bytes();
    let mut bytes = Vec::with_capacity(values.len() * size);
    for (k, v) in values.iter().enumerate() {
        let s = v
            .scalar()
            .with_context(|| format!("output {k} has no value: it has no elements"))?;
        bytes.extend_from_slice(&s.bits().to_le_bytes()[..size]);
    }
    Ok((dtype, bytes))
}

/// Parses `--axis 1` or `--axis 0,-1`.
pub fn parse_axes(text: &str) -> anyhow::Result<Vec<isize>> {
    text.split(',')
        .map(|a| {
            a.trim()
                .parse::<isize>()
                .with_context(|| format!("--axis: '{a}' is not an axis number"))
        })
        .collect()
}

/// Parses `--shape 4096x8192`.
pub fn parse_shape(text: &str) -> anyhow::Result<Vec<usize>> {
    let dims: Vec<usize> = text
        .split(['x', 'X', ','])
        .map(|d| super::size::parse_size(d.trim()).map_err(|why| anyhow::anyhow!("--shape: {why}")))
        .collect::<anyhow::Result<_>>()?;
    if dims.len() > redlab::shape::MAX_DIMS {
        bail!(
            "--shape has {} dimensions; at most {} are supported",
            dims.len(),
            redlab::shape::MAX_DIMS
        );
    }
    Ok(dims)
}

/// Loads CSR offsets: a 1-D .npy of int64 (or uint64) values, none negative.
fn load_offsets(path: &Path) -> anyhow::Result<Vec<u64>> {
    let loaded = redlab::input::load(path, None)?;
    let view = loaded.array.view();
    let offsets: Vec<u64> = match view.dtype() {
        DType::I64 => view
            .typed::<i64>()?
            .iter()
            .enumerate()
            .map(|(i, &o)| {
                u64::try_from(o).map_err(|_| {
                    anyhow::anyhow!("{}: offset {i} is negative ({o})", path.display())
                })
            })
            .collect::<anyhow::Result<_>>()?,
        DType::U64 => view.typed::<u64>()?.to_vec(),
        other => bail!(
            "{}: segment offsets must be int64 (found {other})",
            path.display()
        ),
    };
    if loaded.shape.len() != 1 {
        bail!(
            "{}: segment offsets must be 1-D (shape {:?})",
            path.display(),
            loaded.shape
        );
    }
    Ok(offsets)
}

/// A user-defined reduction's last step: its description for the report, and `post`
/// applied to each output's value given the output's element count.
pub struct Post<'a> {
    /// What is reduced (`map 'x * x', combine sum f32, post 'sqrt(r)'`).
    pub label: String,
    /// The step.
    pub finish: &'a dyn Fn(Value, usize) -> Value,
}

/// What a shaped run computes.
pub enum Compute<'a> {
    /// A built-in operator over the (mapped) elements, then `post` per output; checked
    /// bit for bit against the host reference.
    Reduce {
        /// The operator, input and accumulator types.
        problem: &'a Problem,
        /// A user-defined reduction's last step.
        post: Option<&'a Post<'a>>,
        /// A user-defined map the device applies as it reads, and the raw inputs it reads
        /// ([`Device::maps_outputs_on_device`]), or a custom combine on any device (then
        /// `problem` stands in for its partials' layout, and the reference is
        /// [`redlab_expr::oracle::custom_outputs`] over the raw inputs); the array given
        /// to [`run`] then holds the mapped values, which only a built-in combine's host
        /// reference reads.
        on_device: Option<(&'a Reduction, &'a [ArrayRef<'a>])>,
    },
    /// A several-number statistic (on the CPU); checked within a tolerance against
    /// plain two-pass methods.
    Statistic(Statistic),
}

/// Relative distance a statistic may have from its two-pass reference: the one-pass
/// merges round differently, and f32 results round once more.
fn tolerance(dtype: DType) -> f64 {
    if dtype == DType::F64 {
        1e-9
    } else {
        1e-5
    }
}

fn close(a: &Value, b: &Value) -> bool {
    match (a.scalar(), b.scalar()) {
        (Some(x), Some(y)) => {
            let (x64, y64) = (x.to_f64(), y.to_f64());
            (x64.is_nan() && y64.is_nan())
                || x64 == y64
                || (x64 - y64).abs() <= tolerance(x.dtype()) * x64.abs().max(y64.abs())
        }
        _ => a.same_as(b),
    }
}

/// The outputs a shaped request makes of an input of `dims` (`n` elements): its axis
/// plan or its segments, and the result's shape.
pub struct ShapedPlan {
    /// The segments (empty for an axis reduction).
    pub ranges: Vec<std::ops::Range<usize>>,
    /// The axis plan (`None` for segments).
    pub plan: Option<AxisPlan>,
    /// The shape of the result.
    pub out_dims: Vec<usize>,
}

impl ShapedPlan {
    /// Checks `request` against the input and plans its outputs.
    pub fn new(request: &ShapedRequest, dims: &[usize], n: usize) -> anyhow::Result<ShapedPlan> {
        let segmented_by = request.segments.is_some() || request.segment_size.is_some();
        if segmented_by && (request.axes.is_some() || request.keepdims) {
            bail!(
                "--segments and --segment-size reduce a flat array; they take no --axis or --keepdims"
            );
        }
        if segmented_by {
            let segments = match (&request.segments, request.segment_size) {
                (Some(path), None) => Segments::Offsets(load_offsets(path)?),
                (None, Some(k)) => Segments::Fixed(k),
                _ => bail!("give --segments or --segment-size, not both"),
            };
            let ranges = segments.ranges(n)?;
            let out_dims = vec![ranges.len()];
            return Ok(ShapedPlan {
                ranges,
                plan: None,
                out_dims,
            });
        }
        let layout = Layout::c_order(dims);
        if layout.count()? != n {
            bail!(
                "--shape {:?} holds {} elements but the input has {n}",
                dims,
                layout.count()?
            );
        }
        let plan = AxisPlan::new(layout, request.axes.as_deref(), request.keepdims)?;
        Ok(ShapedPlan {
            ranges: Vec::new(),
            out_dims: plan.out_dims(),
            plan: Some(plan),
        })
    }

    /// The outputs as a selection of the input.
    pub fn selection(&self) -> Selection<'_> {
        match &self.plan {
            Some(p) => Selection::Axes(p),
            None => Selection::Ranges(&self.ranges),
        }
    }
}

/// Each output's host reference and the outputs that differ from it: bit for bit for a
/// reduction, within [`tolerance`] of a two-pass method for a statistic.
pub fn check_outputs(
    compute: &Compute<'_>,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    values: &[Value],
) -> anyhow::Result<(Vec<Value>, Vec<usize>)> {
    Ok(match compute {
        Compute::Statistic(stat) => {
            let mut scratch = Vec::new();
            let expected = (0..values.len())
                .map(|k| {
                    redlab_cpu::statistics::reference(*stat, selection.view(data, k, &mut scratch)?)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let wrong = (0..values.len())
                .filter(|&k| !close(&values[k], &expected[k]))
                .collect();
            (expected, wrong)
        }
        // A custom combine: the element-by-element reference over the raw inputs.
        Compute::Reduce {
            on_device: Some((reduction, raw)),
            ..
        } if reduction.problem().is_none() => {
            let expected = redlab_expr::oracle::custom_outputs(reduction, raw, selection)?;
            let wrong = (0..values.len())
                .filter(|&k| !values[k].same_as(&expected[k]))
                .collect();
            (expected, wrong)
        }
        Compute::Reduce { problem, .. } => {
            let expected = segmented::reference(problem, data, selection)?;
            let wrong = (0..values.len())
                .filter(|&k| !values[k].same_as(&expected[k]))
                .collect();
            (expected, wrong)
        }
    })
}

/// The outputs as users keep them, with each pass's seconds: the typed array (what the
/// Python package returns) is what is timed wherever every output has a result,
/// then read back as values to verify and print: argmin and argmax take the element at
/// each index from the input, after the timing. Min, max, argmin and argmax of a
/// selection with an empty output keep a value per output (`Value::Empty` there).
pub fn kept_outputs(
    device: &Device,
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Result<(Vec<Value>, Vec<f64>), redlab::Error> {
    let every_output_has_elements = match selection {
        Selection::Axes(plan) => plan.segment_len() > 0,
        Selection::Ranges(ranges) => ranges.iter().all(|r| !r.is_empty()),
    };
    if problem.op.needs_elements() && !every_output_has_elements {
        return device.reduce_outputs(problem, data, selection);
    }
    let (packed, passes) = device.reduce_outputs_packed(problem, data, selection)?;
    if !matches!(problem.op, Op::ArgMin | Op::ArgMax) {
        return Ok((packed.scalar_values(), passes));
    }
    let mut scratch = Vec::new();
    let values = (0..packed.len())
        .map(|k| {
            let index = packed.scalar(k).map_or(0, |s| s.bits());
            let elements = selection.view(data, k, &mut scratch)?;
            let at = usize::try_from(index).unwrap_or(usize::MAX);
            let value = scalar_at(elements.dtype(), elements.bytes(), at).ok_or_else(|| {
                redlab_core::Error::Shape(format!(
                    "{} of output {k} is {index}, past its {} elements",
                    problem.op,
                    elements.len()
                ))
            })?;
            Ok::<_, redlab_core::Error>(Value::Indexed { value, index })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((values, passes))
}

/// Writes the outputs (after any `post`) to `path` as a .npy of `out_dims`.
pub fn write_out(
    path: &Path,
    compute: &Compute<'_>,
    values: &[Value],
    out_dims: &[usize],
) -> anyhow::Result<()> {
    let (dtype, bytes) = match compute {
        Compute::Reduce {
            problem,
            post: None,
            ..
        } => {
            let packed = Packed::of_values(problem, values)?;
            (packed.dtype, packed.bytes.into_vec())
        }
        _ => pack_finished(values)?,
    };
    let file = redlab::npy_out::encode(dtype, out_dims, &bytes)?;
    std::fs::write(path, file).with_context(|| format!("cannot write {}", path.display()))
}

/// Runs a shaped reduction of `array` (`dims` in C order) on `device`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    request: &ShapedRequest,
    compute: &Compute<'_>,
    array: &HostArray,
    dims: &[usize],
    input: Option<&Path>,
    device: &Device,
    repeat: usize,
    json_out: bool,
    explain: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Verdict> {
    let (problem, post) = match compute {
        Compute::Reduce { problem, post, .. } => (Some(*problem), *post),
        Compute::Statistic(_) => (None, None),
    };
    // A custom combine's problem stands in for its partials' layout only.
    let custom = matches!(
        compute,
        Compute::Reduce { on_device: Some((reduction, _)), .. } if reduction.problem().is_none()
    );
    // Check every output file before any work.
    if let Some(path) = &request.out {
        let mut plan = OutputPlan::new(request.force);
        if let Some(i) = input {
            plan.input("--input", i);
        }
        if let Some(s) = &request.segments {
            plan.input("--segments", s);
        }
        plan.replace("--out", path)?;
    }
    let data = array.view();
    let n = data.len();
    let shaped = ShapedPlan::new(request, dims, n)?;
    let selection = shaped.selection();
    let (plan, ranges, out_dims) = (&shaped.plan, &shaped.ranges, &shaped.out_dims);

    let on_cpu = device.info().backend == "cpu";
    let strategy = match (compute, problem) {
        (Compute::Statistic(stat), _) if on_cpu => cpu_statistic_strategy(*stat).to_string(),
        (Compute::Statistic(stat), _) => match redlab::state_kind(*stat) {
            Some(kind) => redlab_kernels::statistics::explain(kind, data.dtype(), selection),
            None => format!("{} runs on the CPU", stat.name()),
        },
        (_, None) => "a reduction without its problem".to_string(),
        (
            Compute::Reduce {
                on_device: Some((reduction, _)),
                ..
            },
            _,
        ) => device.explain_mapped_outputs(reduction, selection),
        (_, Some(problem)) => device.explain_outputs(problem, selection),
    };
    if explain && !json_out {
        writeln!(out, "strategy: {strategy}")?;
    }
    let mut times = Vec::with_capacity(repeat);
    let mut values: Option<Vec<Value>> = None;
    // On CUDA, the calls of a built-in operator or a statistic read one upload, as the
    // comparators' inputs already on the device are read.
    let resident = match (compute, problem) {
        (
            Compute::Reduce {
                on_device: None, ..
            },
            Some(problem),
        ) => device.reduce_outputs_repeated(problem, data, selection, repeat)?,
        (Compute::Statistic(stat), _) => {
            device.statistic_repeated(*stat, data, selection, repeat)?
        }
        _ => None,
    };
    if let Some(resident) = resident {
        if !resident.agree {
            return Ok(Verdict::Mismatch("repeated runs disagree".into()));
        }
        // No launch (empty outputs) sums to -0.0, which would print as "-0.000 ms".
        times.extend(resident.seconds.iter().map(|s| s + 0.0));
        values = Some(resident.values);
    }
    let calls_left = if values.is_some() { 0 } else { repeat.max(1) };
    for _ in 0..calls_left {
        let (got, seconds) = match (compute, problem) {
            (
                Compute::Reduce {
                    on_device: Some((reduction, raw)),
                    ..
                },
                _,
            ) => {
                let (got, passes) =
                    device.reduce_mapped_outputs_timed(reduction, raw, selection)?;
                (got, passes.iter().sum::<f64>())
            }
            (Compute::Reduce { .. }, Some(problem)) => {
                let (got, passes) = kept_outputs(device, problem, data, selection)?;
                (got, passes.iter().sum::<f64>())
            }
            (Compute::Statistic(stat), _) => device.statistic_timed(*stat, data, selection)?,
            (Compute::Reduce { .. }, None) => bail!("a reduction without its problem"),
        };
        // No launch (empty outputs) sums to -0.0, which would print as "-0.000 ms".
        times.push(seconds + 0.0);
        if let Some(first) = &values {
            if first.iter().zip(&got).any(|(a, b)| !a.same_as(b)) {
                return Ok(Verdict::Mismatch("repeated runs disagree".into()));
            }
        }
        values.get_or_insert(got);
    }
    let values = values.context("no run happened")?;
    // Bytes the device reads per call: the raw input where it maps as it reads.
    let read_bytes = match compute {
        Compute::Reduce {
            on_device: Some((_, raw)),
            ..
        } => raw.iter().map(|r| r.bytes().len()).sum(),
        _ => n * data.dtype().size_bytes(),
    } as u64;
    let graph_seconds = match (request.graph_calls, compute, problem) {
        (0, _, _) => None,
        // A map on the device: the graph replays its segment kernels over the raw inputs.
        (
            calls,
            Compute::Reduce {
                on_device: Some((reduction, raw)),
                ..
            },
            _,
        ) => {
            let (got, seconds) =
                device.reduce_mapped_outputs_graph(reduction, raw, selection, calls)?;
            if !Value::all_same(&got, &values) {
                return Ok(Verdict::Mismatch(
                    "the graph's calls disagree with the timed calls".into(),
                ));
            }
            Some(seconds)
        }
        (calls, Compute::Reduce { .. }, Some(problem)) => {
            let (packed, seconds) =
                device.reduce_outputs_packed_graph(problem, data, selection, calls)?;
            // Compared as the typed arrays (bit for bit, indices for argmin/argmax).
            if packed != Packed::of_values(problem, &values)? {
                return Ok(Verdict::Mismatch(
                    "the graph's calls disagree with the timed calls".into(),
                ));
            }
            Some(seconds)
        }
        (calls, Compute::Statistic(stat), _) => {
            let (got, seconds) = device.statistic_graph(*stat, data, selection, calls)?;
            if !Value::all_same(&got, &values) {
                return Ok(Verdict::Mismatch(
                    "the graph's calls disagree with the timed calls".into(),
                ));
            }
            Some(seconds)
        }
        (_, Compute::Reduce { .. }, None) => bail!("a reduction without its problem"),
    };
    let (expected, wrong) = check_outputs(compute, data, selection, &values)?;
    let stats = Stats::of(&times).context("no timings")?;
    let rate = gbps(read_bytes, stats.median);
    // Checked before `post`: the reference reduces the same elements.
    let values: Vec<Value> = match post {
        None => values,
        Some(p) => values
            .into_iter()
            .enumerate()
            .map(|(k, v)| {
                let count = match plan {
                    Some(p) => p.segment_len(),
                    None => ranges[k].len(),
                };
                (p.finish)(v, count)
            })
            .collect(),
    };
    if let Some(path) = &request.out {
        write_out(path, compute, &values, out_dims)?;
    }
    const SHOWN: usize = 16;
    let shown: Vec<String> = values.iter().take(SHOWN).map(|v| v.to_string()).collect();
    if json_out {
        let mut j = json!({
            "op": if custom { json!("custom") } else { json!(problem.map(|p| p.op)) },
            "dtype": data.dtype(), "acc": problem.map(|p| p.acc),
            "stat": match compute { Compute::Statistic(s) => Some(s.name()), _ => None },
            "shape": dims, "out_shape": out_dims, "outputs": values.len(),
            "seconds": stats.median, "gbps": rate, "repeat": repeat,
            "verified": wrong.is_empty(), "values": shown,
            "reduction": post.map(|p| p.label.clone()),
            "device": device.info().id, "strategy": strategy,
        });
        if let Some(path) = &request.out {
            j["out"] = json!(path.display().to_string());
        }
        if let Some(seconds) = graph_seconds {
            let rate = gbps(read_bytes, seconds);
            j["graph_seconds"] = json!(seconds);
            j["graph_gbps"] = json!(rate);
            j["graph_calls"] = json!(request.graph_calls);
        }
        writeln!(out, "{j}")?;
    } else {
        let what = match (compute, post, problem) {
            (Compute::Statistic(stat), _, _) => format!("{} {}", stat.name(), data.dtype()),
            (_, Some(p), _) => p.label.clone(),
            (_, None, Some(problem)) => problem.to_string(),
            (_, None, None) => String::new(),
        };
        writeln!(
            out,
            "{what}, shape {dims:?} → {out_dims:?} ({} outputs), on {} ({})",
            values.len(),
            device.info().id,
            device.info().name
        )?;
        for (k, v) in shown.iter().enumerate() {
            writeln!(out, "  [{k}] {v}")?;
        }
        if values.len() > SHOWN {
            writeln!(out, "  … {} more", values.len() - SHOWN)?;
        }
        match (wrong.first(), compute) {
            (None, Compute::Statistic(_)) => writeln!(
                out,
                "  verified  yes: every output within {:e} relative of a two-pass reference",
                values
                    .first()
                    .and_then(Value::scalar)
                    .map_or(1e-9, |s| tolerance(s.dtype()))
            )?,
            (None, _) => writeln!(
                out,
                "  verified  yes: every output bitwise equal to the host reference of its own elements"
            )?,
            (Some(&k), _) => writeln!(
                out,
                "  verified  NO: {} outputs differ, first [{k}]: {} against {}",
                wrong.len(),
                values[k],
                expected[k]
            )?,
        }
        if let Some(path) = &request.out {
            writeln!(out, "  written   {}", path.display())?;
        }
        writeln!(
            out,
            "  time      {:.3} ms median of {}, {rate:.2} GB/s{}",
            stats.median * 1e3,
            stats.count,
            if device.info().backend == "cpu" {
                ""
            } else {
                " (kernels only, from device events; transfers not included)"
            }
        )?;
        if let Some(seconds) = graph_seconds {
            let rate = gbps(read_bytes, seconds);
            writeln!(
                out,
                "  graph     {:.3} ms per call of {} back to back in a CUDA graph, {rate:.2} GB/s",
                seconds * 1e3,
                request.graph_calls
            )?;
        }
    }
    Ok(if wrong.is_empty() {
        Verdict::Success
    } else {
        Verdict::Mismatch(format!("{} outputs differ from the reference", wrong.len()))
    })
}

/// How the CPU computes `stat`, in words (for `--explain` and the records).
fn cpu_statistic_strategy(stat: Statistic) -> &'static str {
    match stat {
        Statistic::Var { .. } | Statistic::Std { .. } => {
            "one pass per output on the CPU: Welford updates per lane, Chan merges in the \
             canonical order's shape"
        }
        Statistic::LogSumExp => {
            "one pass per output on the CPU: an online maximum and a sum of canonical \
             exponentials per lane, scaled merges in the canonical order's shape, ln on the host"
        }
        Statistic::NanMin | Statistic::NanMax => {
            "one pass per output on the CPU: the extreme of the values that are not NaN \
             (order-free, -0.0 below +0.0)"
        }
        Statistic::NanMean => {
            "one pass per output on the CPU: Welford updates over each tile's values that \
             are not NaN, Chan merges in the canonical order's shape"
        }
    }
}
