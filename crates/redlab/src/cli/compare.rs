//! `redlab bench --device cuda:N --compare cub`: runs the CUB comparator program on the
//! same operator, type and size right after redlab's own rows, records it as a `cub`
//! row, and prints the production kernel's speed-up over it (per call and in a graph).

use std::io::Write;
use std::process::Command;

use anyhow::Context;
use redlab::{DType, Op, Problem};
use redlab_bench::{gbps, Record, Status};

use super::bench::{print_row, BenchArgs, RecordBase};

/// What the comparator covers: sum, min and max over i32 (sum into i64), f32 and f64, and
/// f16/bf16 sums into f32 (CUB's transform-reduce, which widens each element first).
fn covered(problem: &Problem) -> bool {
    let default_acc = problem.acc == redlab::acc::default_acc(problem.op, problem.dtype);
    match problem.dtype {
        DType::I32 | DType::F32 | DType::F64 => {
            matches!(problem.op, Op::Sum | Op::Min | Op::Max)
                && (problem.op != Op::Sum || default_acc)
        }
        DType::F16 | DType::BF16 => problem.op == Op::Sum && default_acc,
        _ => false,
    }
}

/// Times CUB for `problem` at `n`, records and prints its row, and fills the speed-ups
/// of the production row when there is one.
pub fn cub_rows(
    args: &BenchArgs,
    base: &RecordBase,
    problem: &Problem,
    n: usize,
    production: Option<&mut Record>,
    out: &mut dyn Write,
    sink: &mut super::bench::Sink,
) -> anyhow::Result<()> {
    if !covered(problem) || n == 0 {
        writeln!(
            out,
            "  (cub comparator: covers sum, min and max over i32, f32, f64 and f16/bf16 sums with n > 0; not {problem})"
        )?;
        return Ok(());
    }
    let reps = args.min_reps.max(50);
    let output = Command::new(&args.cub_bin)
        .args([
            problem.op.to_string(),
            problem.dtype.to_string(),
            n.to_string(),
            reps.to_string(),
            args.graph_calls.max(1).to_string(),
        ])
        .output()
        .with_context(|| {
            format!(
                "cannot run the CUB comparator {} (build it with nvcc from tools/cub/cub_reduce.cu, or name it with --cub-bin)",
                args.cub_bin.display()
            )
        })?;
    if !output.status.success() {
        anyhow::bail!(
            "the CUB comparator failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let json: serde_json::Value = serde_json::from_str(text.trim())
        .with_context(|| format!("the CUB comparator printed no JSON object: {}", text.trim()))?;
    let number = |key: &str| json.get(key).and_then(serde_json::Value::as_f64);
    let mut record = base.record("cub", problem.op, problem.dtype, n, 0);
    record.acc = problem.acc.to_string();
    record.status = Status::Ok;
    record.reason = Some(format!(
        "comparator: cub::DeviceReduce{} (CUB {}), own seeded data, {} rotated buffers",
        if matches!(problem.dtype, DType::F16 | DType::BF16) {
            "::TransformReduce into f32"
        } else {
            ""
        },
        json.get("cub_version")
            .map_or("?".into(), |v| v.to_string()),
        json.get("windows").map_or("?".into(), |v| v.to_string())
    ));
    record.median_s = number("median_s");
    record.min_s = number("min_s");
    record.max_s = number("max_s");
    record.graph_s = number("graph_s");
    record.reps = reps;
    record.windows = number("windows").unwrap_or(0.0) as usize;
    // CUB against the roof measured beside the production row of the same run: the roof
    // must read at least as fast as CUB, or "% of roof" flatters every row.
    let roof = production.as_ref().and_then(|ours| ours.roof_gbps);
    record.set_rates(
        record.median_s.map(|s| gbps(problem.bytes_read(n), s)),
        roof,
    );
    if let Some(ours) = production.as_ref() {
        record.set_roof_context(ours.roof_config.clone(), ours.datasheet_gbps);
    }
    record.value = json
        .get("value")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    print_row(out, &format!("cub {problem}"), &record)?;
    if let Some(ours) = production {
        ours.speedup_per_call = ours.median_s.zip(record.median_s).map(|(o, c)| c / o);
        ours.speedup_graph = ours.graph_s.zip(record.graph_s).map(|(o, c)| c / o);
        let ratio = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.3}×"));
        writeln!(
            out,
            "  {} vs cub, {problem} n={n}: per call {} (ours {}, cub {}); in a graph {} (ours {}, cub {})",
            if ours.variant == "auto" { "auto" } else { "production" },
            ratio(ours.speedup_per_call),
            secs(ours.median_s),
            secs(record.median_s),
            ratio(ours.speedup_graph),
            secs(ours.graph_s),
            secs(record.graph_s),
        )?;
    }
    sink.push(&record)
}

fn secs(s: Option<f64>) -> String {
    s.map_or("-".into(), super::run::seconds_text)
}
