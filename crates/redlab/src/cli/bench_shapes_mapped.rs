//! `redlab bench --shapes 8192x8192:1 --map 'x * y'`: a user-defined reduction along the
//! shapes' axes, timed on any device as `redlab run --map … --axis` runs it
//! ([`Device::reduce_mapped_outputs_timed`]: on OpenCL and CUDA devices the map compiled
//! into the segment kernels, several inputs packed), one row per shape × type, every
//! output checked against the host's (the map per element, then each output's
//! canonical order; for a custom combine, `--combine 'a + b' --identity=-0.0`, the
//! element-by-element fold of each output). GB/s count the raw inputs the device reads; `post` is not applied
//! (it runs per output on the host, after the timed kernels).

use std::io::Write;

use anyhow::Context;
use redlab::generate::generate;
use redlab::segmented::{self, Selection};
use redlab::{Device, HostArray, Op, Value};
use redlab_expr::parser;

use super::bench::{print_row, BenchArgs, RecordBase, Sink};
use super::bench_shapes::{graphs, heading, print_graph, record_graph, time_outputs, ShapeSpec};
use super::Verdict;

/// Runs the mapped shapes bench.
pub fn run(
    args: &BenchArgs,
    shapes: &[ShapeSpec],
    device: &Device,
    out: &mut dyn Write,
    sink: &mut Sink,
) -> anyhow::Result<Verdict> {
    let map = args.map.as_deref().context("--map")?;
    let count = parser::inputs_named(map)?;
    let base = RecordBase::new(device, args);
    let what = format!("map '{map}', combine {} along axes", args.combine);
    writeln!(out, "{}", heading(device, &what))?;
    let mut failures = Vec::new();
    for spec in shapes {
        let (n, plan) = spec.plan()?;
        let selection = Selection::Axes(&plan);
        let label = spec.label();
        for &dtype in &args.dtypes {
            let dtypes = vec![dtype; count];
            let reduction = match super::bench_mapped::reduction_of(args, map, &dtypes) {
                Ok(r) => r,
                Err(e) => {
                    writeln!(out, "  {dtype} {label}: skipped: {e}")?;
                    continue;
                }
            };
            let arrays = (0..count)
                .map(|k| generate(dtype, n, args.dist, args.seed + k as u64))
                .collect::<Result<Vec<_>, _>>()?;
            let views: Vec<_> = arrays.iter().map(HostArray::view).collect();
            // A custom combine's problem stands in for its partials' layout; its
            // reference is the element-by-element fold of each output.
            let (problem, expected) = match reduction.problem() {
                Some(problem) => {
                    let mapped = redlab_expr::host::map_all(&reduction, &views)?;
                    let expected = segmented::reference(problem, mapped.view(), selection)?;
                    (*problem, expected)
                }
                None => (
                    redlab_kernels::mapped::custom_problem(&reduction)
                        .map_err(anyhow::Error::msg)?,
                    redlab_expr::oracle::custom_outputs(&reduction, &views, selection)?,
                ),
            };
            let mut record = base.record("axis (mapped)", Op::Sum, dtype, n, 1);
            record.op = args.combine.clone();
            record.dtype = dtypes
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",");
            record.acc = problem.acc.to_string();
            record.map = Some(reduction.describe());
            record.cache = "warm".into();
            record.shape = Some(spec.dims.clone());
            record.axes = spec.axes.clone();
            record.strategy = Some(device.explain_mapped_outputs(&reduction, selection));
            let bytes: u64 = views.iter().map(|v| v.bytes().len() as u64).sum();
            let row = format!("{} {label}", reduction.describe());
            if let Some(why) = time_outputs(args, &mut record, &expected, bytes, || {
                device.reduce_mapped_outputs_timed(&reduction, &views, selection)
            })? {
                failures.push(format!("{row}: {why}"));
            }
            if graphs(args, device, &record) && device.graphs_mapped_outputs(&reduction) {
                let timed = device
                    .reduce_mapped_outputs_graph(&reduction, &views, selection, args.graph_calls)
                    .map(|(got, seconds)| (Value::all_same(&got, &expected), seconds));
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
    Ok(if failures.is_empty() {
        Verdict::Success
    } else {
        Verdict::Mismatch(failures.join("; "))
    })
}
