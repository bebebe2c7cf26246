//! `redlab bench --shapes 8192x8192:1,4096x32:0`: axis reductions timed on any device,
//! one row per shape × operator × type, each result checked output by output against
//! the host reference, with the kernel or CPU path that ran (`strategy` in the record).

use std::io::Write;
use std::time::Instant;

use anyhow::Context;
use redlab::generate::generate;
use redlab::segmented::{self, Selection};
use redlab::shape::{AxisPlan, Layout};
use redlab::{Device, Packed, Problem, Repeated, Value};
use redlab_bench::{gbps, Record, Stats, Status};

use super::bench::{print_row, BenchArgs, RecordBase, Sink};
use super::shaped::kept_outputs;
use super::Verdict;

/// One `--shapes` entry: C-order dimensions and the reduced axes (`None`: all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeSpec {
    /// Dimensions, C order.
    pub dims: Vec<usize>,
    /// Reduced axes.
    pub axes: Option<Vec<isize>>,
}

/// The bench's first line: the device, `what` is timed, and how.
pub(super) fn heading(device: &Device, what: &str) -> String {
    format!(
        "device {} ({}): {what}, warm inputs, {}",
        device.info().id,
        device.info().name,
        if device.info().backend == "cpu" {
            "wall time per call"
        } else {
            "kernel time per call from device events (uploads not counted)"
        }
    )
}

impl ShapeSpec {
    /// The element count and the plan of the C-order array the entry names.
    pub fn plan(&self) -> anyhow::Result<(usize, AxisPlan)> {
        let layout = Layout::c_order(&self.dims);
        let n = layout.count()?;
        Ok((n, AxisPlan::new(layout, self.axes.as_deref(), false)?))
    }

    /// The entry as `--shapes` writes it (`8192x8192:1`, `64x64x64:0+2`, `10x3:all`).
    pub fn label(&self) -> String {
        let join = |items: Vec<String>, by: &str| items.join(by);
        format!(
            "{}:{}",
            join(self.dims.iter().map(usize::to_string).collect(), "x"),
            self.axes.as_ref().map_or("all".to_string(), |a| join(
                a.iter().map(isize::to_string).collect(),
                "+"
            ))
        )
    }
}

/// Parses `8192x8192:1`, `64x64x64:0+2` (axes joined by `+`) or `1000x3` (all axes).
pub fn parse_shapes(text: &str) -> anyhow::Result<Vec<ShapeSpec>> {
    text.split(',')
        .map(|item| {
            let (dims, axes) = match item.split_once(':') {
                Some((d, a)) => (d, Some(a)),
                None => (item, None),
            };
            let dims = super::shaped::parse_shape(dims.trim())?;
            let axes = axes
                .map(|a| super::shaped::parse_axes(&a.replace('+', ",")))
                .transpose()?;
            Ok(ShapeSpec { dims, axes })
        })
        .collect()
}

/// Times every shape × operator × type of `args` on `device`.
pub fn run(
    args: &BenchArgs,
    shapes: &[ShapeSpec],
    device: &Device,
    out: &mut dyn Write,
    sink: &mut Sink,
) -> anyhow::Result<Verdict> {
    if args.map.is_some() {
        return super::bench_shapes_mapped::run(args, shapes, device, out, sink);
    }
    let base = RecordBase::new(device, args);
    writeln!(out, "{}", heading(device, "axis reductions"))?;
    let mut failures = Vec::new();
    for spec in shapes {
        let (n, plan) = spec.plan()?;
        let selection = Selection::Axes(&plan);
        let label = spec.label();
        for &dtype in &args.dtypes {
            let data = generate(dtype, n, args.dist, args.seed)?;
            for &op in &args.ops {
                let problem = match Problem::new(op, dtype, args.acc.filter(|_| op.is_arithmetic()))
                {
                    Ok(p) => p,
                    Err(e) => {
                        writeln!(out, "  {op} {dtype} {label}: skipped: {e}")?;
                        continue;
                    }
                };
                let mut record = base.record("axis", op, dtype, n, 1);
                record.acc = problem.acc.to_string();
                // The same input every call (an axis reduction reads it all each time).
                record.cache = "warm".into();
                record.shape = Some(spec.dims.clone());
                record.axes = spec.axes.clone();
                record.strategy = Some(device.explain_outputs(&problem, selection));
                let expected = segmented::reference(&problem, data.view(), selection)?;
                let row = format!("{problem} {label}");
                let bytes = problem.bytes_read(n);
                // On CUDA the row's calls read one upload, as `redlab run`'s repeats do
                // and as the comparators' inputs already on the device are read; the
                // upload before each call had left the L2 full of lines to write back.
                let resident = device.reduce_outputs_repeated(
                    &problem,
                    data.view(),
                    selection,
                    args.min_reps.max(1),
                )?;
                let wrong = match resident {
                    Some(resident) => time_resident(&mut record, &expected, bytes, resident)?,
                    None => time_outputs(args, &mut record, &expected, bytes, || {
                        kept_outputs(device, &problem, data.view(), selection)
                    })?,
                };
                if let Some(why) = wrong {
                    failures.push(format!("{row}: {why}"));
                }
                // Compared as the typed arrays (bit for bit, indices for argmin/argmax);
                // outputs with no value (min of an empty axis) have no typed array.
                let want = graphs(args, device, &record)
                    .then(|| Packed::of_values(&problem, &expected).ok())
                    .flatten();
                if let Some(want) = want {
                    let timed = device
                        .reduce_outputs_packed_graph(
                            &problem,
                            data.view(),
                            selection,
                            args.graph_calls,
                        )
                        .map(|(got, seconds)| (got == want, seconds));
                    if let Some(why) = record_graph(out, &mut record, timed)? {
                        failures.push(format!("{row}: {why}"));
                    }
                }
                print_row(out, &row, &record)?;
                print_graph(out, &record, bytes, args.graph_calls)?;
                if let Some(strategy) = &record.strategy {
                    writeln!(out, "    {strategy}")?;
                }
                sink.push(&record)?;
            }
        }
    }
    Ok(if failures.is_empty() {
        Verdict::Success
    } else {
        Verdict::Mismatch(failures.join("; "))
    })
}

/// Whether a row is also timed in a CUDA graph (`--graph-calls` > 0, a CUDA device, and
/// the row's per-call results right).
pub(super) fn graphs(args: &BenchArgs, device: &Device, record: &Record) -> bool {
    args.graph_calls > 0 && device.info().backend == "cuda" && record.status == Status::Ok
}

/// Records a graph timing (whether its results agree with the reference, and one call's
/// seconds): its seconds where they agree, else the row marked wrong, and why returned.
/// A graph that could not run is said under the row, which keeps its per-call time.
pub(super) fn record_graph(
    out: &mut dyn Write,
    record: &mut Record,
    timed: Result<(bool, f64), redlab::Error>,
) -> std::io::Result<Option<String>> {
    match timed {
        Ok((true, seconds)) => {
            record.graph_s = Some(seconds);
            Ok(None)
        }
        Ok((false, _)) => {
            let why = "the calls in the CUDA graph disagree with the reference".to_string();
            record.status = Status::Wrong;
            record.reason = Some(why.clone());
            Ok(Some(why))
        }
        Err(e) => {
            writeln!(out, "    not timed in a CUDA graph: {e}")?;
            Ok(None)
        }
    }
}

/// The row's graph timing, under the row, where it has one.
pub(super) fn print_graph(
    out: &mut dyn Write,
    record: &Record,
    bytes: u64,
    calls: usize,
) -> std::io::Result<()> {
    match record.graph_s {
        Some(seconds) => writeln!(
            out,
            "    in a CUDA graph of {calls} calls: {} per call, {:.2} GB/s",
            super::run::seconds_text(seconds),
            gbps(bytes, seconds)
        ),
        None => Ok(()),
    }
}

/// Times one row: calls `call` (the outputs, and its launches' seconds) at least
/// `--min-reps` times and for `--min-time` (at most `--max-row-time`), fills `record`'s
/// timings, rates over `bytes`, first value and status, and returns the first output
/// that differs from `expected`, if any.
pub(super) fn time_outputs(
    args: &BenchArgs,
    record: &mut Record,
    expected: &[Value],
    bytes: u64,
    mut call: impl FnMut() -> Result<(Vec<Value>, Vec<f64>), redlab::Error>,
) -> anyhow::Result<Option<String>> {
    let mut times = Vec::new();
    let started = Instant::now();
    let mut wrong = None;
    while times.len() < args.min_reps.max(1)
        || (started.elapsed().as_secs_f64() < args.min_time
            && started.elapsed().as_secs_f64() < args.max_row_time)
    {
        let (values, passes) = call()?;
        times.push(passes.iter().sum::<f64>());
        if wrong.is_none() {
            wrong = first_wrong(&values, expected);
            record.value = values.first().map(|v| v.to_string()).unwrap_or_default();
        }
        if started.elapsed().as_secs_f64() > args.max_row_time {
            break;
        }
    }
    fill_record(record, &times, bytes, wrong)
}

/// Times one row from calls over one upload (`--min-reps` of them, on CUDA): fills
/// `record` as [`time_outputs`] does from `resident`'s seconds, and returns the first
/// output that differs from `expected`, or that later calls disagreed, if either.
fn time_resident(
    record: &mut Record,
    expected: &[Value],
    bytes: u64,
    resident: Repeated,
) -> anyhow::Result<Option<String>> {
    record.value = resident
        .values
        .first()
        .map(|v| v.to_string())
        .unwrap_or_default();
    let wrong = first_wrong(&resident.values, expected).or_else(|| {
        (!resident.agree).then(|| "later calls gave other bits than the first".to_string())
    });
    fill_record(record, &resident.seconds, bytes, wrong)
}

/// The first of `values` that differs from `expected`, in words.
fn first_wrong(values: &[Value], expected: &[Value]) -> Option<String> {
    if values.len() != expected.len() {
        return Some(format!(
            "{} outputs against {}",
            values.len(),
            expected.len()
        ));
    }
    values
        .iter()
        .zip(expected)
        .position(|(got, want)| !got.same_as(want))
        .map(|k| format!("output {k}: {} against {}", values[k], expected[k]))
}

/// `record`'s timings and rates from each call's seconds over `bytes`, and its status
/// from `wrong`, which it returns.
fn fill_record(
    record: &mut Record,
    times: &[f64],
    bytes: u64,
    wrong: Option<String>,
) -> anyhow::Result<Option<String>> {
    // No launch (empty outputs) sums to -0.0.
    let times: Vec<f64> = times.iter().map(|t| t + 0.0).collect();
    let stats = Stats::of(&times).context("no timings")?;
    record.reps = stats.count;
    record.median_s = Some(stats.median);
    record.min_s = Some(stats.min);
    record.max_s = Some(stats.max);
    record.set_rates(Some(gbps(bytes, stats.median)), None);
    record.status = if wrong.is_some() {
        Status::Wrong
    } else {
        Status::Ok
    };
    record.reason = wrong.clone();
    Ok(wrong)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_lists_name_dimensions_and_axes() {
        let specs = parse_shapes("8192x8192:1,64x64x64:0+2,10x3").expect("specs");
        assert_eq!(specs[0].dims, vec![8192, 8192]);
        assert_eq!(specs[0].axes, Some(vec![1]));
        assert_eq!(specs[1].axes, Some(vec![0, 2]));
        assert_eq!(specs[2].axes, None);
        assert!(parse_shapes("8x8:z").is_err());
    }
}
