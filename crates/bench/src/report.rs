//! The HTML report of a benchmark: one self-contained file (inline SVG charts, no
//! scripts, nothing fetched) built from records. Per problem: bandwidth against size per
//! variant with the measured roof, the variants ranked at one size, the time of each
//! pass at that size, transfer against kernel time; and, where the records hold both,
//! the CPU against the GPU for data that starts in host memory. Axis reductions get a
//! section per shape instead ([`crate::report_shapes`]).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::charts::{bars, lines, Bar, Line};
use crate::record::{Record, Status};

/// `s` with the characters HTML gives meaning to escaped.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:960px}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
td.l,th.l{text-align:left}th{background:#f3f3f3}h2{margin-top:36px}figure{margin:16px 0}\
figcaption{font-size:13px;color:#555}";

fn is_cpu(r: &Record) -> bool {
    r.device == "cpu"
}

fn ok(r: &Record) -> bool {
    r.status == Status::Ok && r.gbps.is_some() && r.median_s.is_some()
}

fn bytes(r: &Record) -> f64 {
    r.gbps.unwrap_or(0.0) * r.median_s.unwrap_or(0.0) * 1e9
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

fn micro(s: f64) -> f64 {
    s * 1e6
}

/// The report for `records`; `focus` is the size the per-size charts use (default: the
/// largest size measured for each problem).
pub fn html(records: &[Record], focus: Option<usize>, title: &str) -> String {
    let mut h = String::new();
    let _ = write!(h, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>", esc(title), esc(title));
    let mut devices: Vec<(String, String)> = records
        .iter()
        .map(|r| (r.device.clone(), r.device_name.clone()))
        .collect();
    devices.sort();
    devices.dedup();
    h.push_str("<p>");
    for (id, name) in &devices {
        let _ = write!(h, "{} ({})<br>", esc(id), esc(name));
    }
    if let Some(r) = records.first() {
        let _ = write!(
            h,
            "redlab {} (commit {}), canonical order v{}, {} cache<br><code>{}</code>",
            esc(&r.redlab_version),
            esc(&r.commit),
            r.canonical_order,
            esc(&r.cache),
            esc(&r.command)
        );
    }
    h.push_str("</p>");
    // Rows of axis reductions get a section per shape at the end; the per-size charts
    // take the whole-array rows only (shapes share n, so a line over n would mix them).
    let by_shape = crate::report_shapes::sections(records);
    let whole: Vec<Record> = records
        .iter()
        .filter(|r| r.shape.is_none())
        .cloned()
        .collect();
    let records = &whole[..];
    // Problems in record order.
    let mut problems: Vec<(String, String)> = Vec::new();
    for r in records {
        let key = (r.op.clone(), r.dtype.clone());
        if !problems.contains(&key) {
            problems.push(key);
        }
    }
    if !problems.is_empty() {
        h.push_str(&headline(records, &problems));
    }
    for (op, dtype) in &problems {
        let rows: Vec<&Record> = records
            .iter()
            .filter(|r| &r.op == op && &r.dtype == dtype)
            .collect();
        let gpu: Vec<&Record> = rows.iter().copied().filter(|r| !is_cpu(r)).collect();
        let main: Vec<&Record> = if gpu.is_empty() { rows.clone() } else { gpu };
        let _ = write!(h, "<h2>{op} {dtype}</h2>");
        h.push_str(&figure(bandwidth_chart(op, dtype, &main), "Median bandwidth of each variant against n; the dashed line is the read roof measured in the same run (a streaming read of the same bytes)."));
        let sizes: Vec<usize> = main.iter().filter(|r| ok(r)).map(|r| r.n).collect();
        let Some(n) = focus
            .filter(|f| sizes.contains(f))
            .or(sizes.iter().copied().max())
        else {
            continue;
        };
        let at: Vec<&Record> = main
            .iter()
            .copied()
            .filter(|r| r.n == n)
            .filter(|r| ok(r))
            .collect();
        h.push_str(&figure(
            ranking_chart(op, dtype, n, &at),
            "Variants at one size, fastest first (median GB/s).",
        ));
        h.push_str(&figure(
            pass_chart(op, dtype, n, &at),
            "Median kernel time of each launch of each variant at one size, stacked.",
        ));
        if main.iter().any(|r| r.transfer_s > 0.0) {
            h.push_str(&figure(transfer_chart(op, dtype, &main), "The fastest variant's kernel time against the host↔device transfers of the same data (upload and result readback)."));
        }
        let cpu: Vec<&Record> = rows
            .iter()
            .copied()
            .filter(|r| is_cpu(r))
            .filter(|r| ok(r))
            .collect();
        if !cpu.is_empty() && main.iter().any(|r| !is_cpu(r)) {
            h.push_str(&figure(cpu_gpu_chart(op, dtype, &cpu, &main), "For data in host memory: the CPU reducing it in place, the GPU's kernel alone (data already on the device), and the GPU end to end (upload + kernel + readback)."));
        }
    }
    h.push_str(&by_shape);
    h.push_str("</body></html>\n");
    h
}

/// A chart with its caption, or the reason it could not be drawn.
pub(crate) fn figure(chart: Result<String, String>, caption: &str) -> String {
    match chart {
        Ok(svg) => format!(
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(caption)
        ),
        Err(why) => format!("<p>({})</p>", esc(&why)),
    }
}

/// Best variant per problem and size, as a table.
fn headline(records: &[Record], problems: &[(String, String)]) -> String {
    let mut h = String::from("<h2>Fastest per problem and size</h2><table><tr><th class=\"l\">problem</th><th class=\"l\">device</th><th>n</th><th class=\"l\">fastest variant</th><th>GB/s</th><th>of roof</th></tr>");
    for (op, dtype) in problems {
        let mut best: BTreeMap<(String, usize), &Record> = BTreeMap::new();
        for r in records
            .iter()
            .filter(|r| &r.op == op && &r.dtype == dtype)
            .filter(|r| ok(r))
        {
            let e = best.entry((r.device.clone(), r.n)).or_insert(r);
            if r.gbps > e.gbps {
                *e = r;
            }
        }
        for ((device, n), r) in best {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{op} {dtype}</td><td class=\"l\">{}</td><td>{n}</td><td class=\"l\">{}</td><td>{:.1}</td><td>{}</td></tr>",
                esc(&device),
                esc(&r.variant),
                r.gbps.unwrap_or(0.0),
                r.roof_fraction.map_or("—".into(), |f| format!("{:.0}%", 100.0 * f))
            );
        }
    }
    h.push_str("</table>");
    h
}

fn bandwidth_chart(op: &str, dtype: &str, rows: &[&Record]) -> Result<String, String> {
    let mut by_variant: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut roofs: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| ok(r)) {
        by_variant
            .entry(r.variant.clone())
            .or_default()
            .push((r.n as f64, r.gbps.unwrap_or(0.0)));
        if let Some(roof) = r.roof_gbps {
            roofs.entry(r.n).or_default().push(roof);
        }
    }
    let mut series: Vec<Line> = by_variant
        .into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                name,
                points,
                reference: false,
            }
        })
        .collect();
    let roof: Vec<(f64, f64)> = roofs
        .into_iter()
        .filter_map(|(n, v)| median(v).map(|m| (n as f64, m)))
        .collect();
    if !roof.is_empty() {
        series.push(Line {
            name: "read roof".into(),
            points: roof,
            reference: true,
        });
    }
    lines(
        &format!("{op} {dtype}: bandwidth against size"),
        "n (elements)",
        "GB/s",
        &series,
        false,
    )
}

fn ranking_chart(op: &str, dtype: &str, n: usize, at: &[&Record]) -> Result<String, String> {
    let mut sorted: Vec<&&Record> = at.iter().collect();
    sorted.sort_by(|a, b| b.gbps.unwrap_or(0.0).total_cmp(&a.gbps.unwrap_or(0.0)));
    let rows: Vec<Bar> = sorted
        .iter()
        .map(|r| Bar {
            label: format!("{} ({:.0})", r.variant, r.gbps.unwrap_or(0.0)),
            segments: vec![("GB/s".into(), r.gbps.unwrap_or(0.0))],
        })
        .collect();
    bars(&format!("{op} {dtype}: variants at n = {n}"), "GB/s", &rows)
}

fn pass_chart(op: &str, dtype: &str, n: usize, at: &[&Record]) -> Result<String, String> {
    let rows: Vec<Bar> = at
        .iter()
        .filter(|r| !r.passes.is_empty())
        .map(|r| {
            let mut segments: Vec<(String, f64)> = r
                .passes
                .iter()
                .take(4)
                .enumerate()
                .map(|(k, p)| (format!("launch {}", k + 1), micro(*p)))
                .collect();
            let rest: f64 = r.passes.iter().skip(4).sum();
            if rest > 0.0 {
                segments.push(("launches 5+".into(), micro(rest)));
            }
            Bar {
                label: format!("{} ({} launches)", r.variant, r.passes.len()),
                segments,
            }
        })
        .collect();
    bars(
        &format!("{op} {dtype}: time per launch at n = {n}"),
        "µs",
        &rows,
    )
}

fn transfer_chart(op: &str, dtype: &str, rows: &[&Record]) -> Result<String, String> {
    let mut best: BTreeMap<usize, &Record> = BTreeMap::new();
    for r in rows.iter().filter(|r| ok(r)) {
        let e = best.entry(r.n).or_insert(r);
        if r.median_s < e.median_s {
            *e = r;
        }
    }
    let kernel: Vec<(f64, f64)> = best
        .values()
        .map(|r| (r.n as f64, micro(r.median_s.unwrap_or(0.0))))
        .collect();
    let transfer: Vec<(f64, f64)> = best
        .values()
        .filter(|r| r.transfer_s > 0.0)
        .map(|r| (r.n as f64, micro(r.transfer_s)))
        .collect();
    let mut series = vec![Line {
        name: "kernel (fastest variant)".into(),
        points: kernel,
        reference: false,
    }];
    if !transfer.is_empty() {
        series.push(Line {
            name: "transfers (upload + readback)".into(),
            points: transfer,
            reference: false,
        });
    }
    lines(
        &format!("{op} {dtype}: transfer against kernel time"),
        "n (elements)",
        "µs",
        &series,
        true,
    )
}

fn cpu_gpu_chart(
    op: &str,
    dtype: &str,
    cpu: &[&Record],
    gpu: &[&Record],
) -> Result<String, String> {
    let mut best: BTreeMap<usize, &Record> = BTreeMap::new();
    for r in gpu.iter().filter(|r| ok(r)) {
        let e = best.entry(r.n).or_insert(r);
        if r.median_s < e.median_s {
            *e = r;
        }
    }
    let kernel: Vec<(f64, f64)> = best
        .values()
        .map(|r| (r.n as f64, r.gbps.unwrap_or(0.0)))
        .collect();
    let end_to_end: Vec<(f64, f64)> = best
        .values()
        .map(|r| {
            (
                r.n as f64,
                bytes(r) / (r.median_s.unwrap_or(0.0) + r.transfer_s) / 1e9,
            )
        })
        .collect();
    let mut cpu_points: Vec<(f64, f64)> = cpu
        .iter()
        .map(|r| (r.n as f64, r.gbps.unwrap_or(0.0)))
        .collect();
    cpu_points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let series = vec![
        Line {
            name: "CPU".into(),
            points: cpu_points,
            reference: false,
        },
        Line {
            name: "GPU kernel (data on the device)".into(),
            points: kernel,
            reference: false,
        },
        Line {
            name: "GPU end to end (upload + kernel + readback)".into(),
            points: end_to_end,
            reference: false,
        },
    ];
    lines(
        &format!("{op} {dtype}: CPU against GPU"),
        "n (elements)",
        "GB/s of input",
        &series,
        true,
    )
}
