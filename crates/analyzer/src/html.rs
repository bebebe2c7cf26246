//! One self-contained HTML page (inline SVG and CSS, no scripts, no network) with the
//! totals, the errors, the per-line table, a warp × step picture of the traced
//! work-group (which lanes were active, and at each branch which way each lane went),
//! and bank maps of the watched local arrays (which lane hit which bank, with banks
//! that serve several words — conflicts — in red).

use std::collections::HashSet;
use std::fmt::Write;

use crate::metrics::{BankAccess, Trace};
use crate::report::{Counts, Report};

/// A traced launch to draw: a label, its trace, its warp size and banks.
pub struct Drawn<'a> {
    /// What it is (`pass 1: reduce`).
    pub label: String,
    /// Recorded steps and accesses.
    pub trace: &'a Trace,
    /// Lanes per warp.
    pub warp: usize,
    /// Banks.
    pub banks: usize,
}

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(crate) const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
td.src{text-align:left;font-family:monospace;white-space:pre}th{background:#f3f3f3}\
.bad{background:#fde2e2}.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}\
h2{margin-top:32px}figure{margin:12px 0}figcaption{font-size:13px;color:#555}\
.lines details{font-size:13px}.lines summary{cursor:pointer;white-space:pre;font-family:monospace}\
.lines .n{display:inline-block;width:3em;text-align:right;color:#777}";

const INACTIVE: &str = "#e8e8e8";
const ACTIVE: &str = "#4a7fc1";
const TAKEN: &str = "#3aa55d";
const NOT_TAKEN: &str = "#f0a030";

/// Renders the page.
pub fn render(report: &Report, drawn: &[Drawn<'_>]) -> String {
    let mut h = String::new();
    let t = &report.total;
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>redlab analyze: {}</title><style>{STYLE}</style></head><body>",
        esc(&report.source)
    );
    let _ = write!(
        h,
        "<h1>{}</h1><p>kernel <b>{}</b>, global {:?}, local {:?}, warps of {}, {} banks of 4 bytes, {} bytes of local memory per group</p>",
        esc(&report.source),
        esc(&t.kernel),
        t.global_dims,
        t.local_dims,
        t.warp_size,
        t.banks,
        t.local_memory_bytes
    );
    if let Some(c) = &report.check {
        let _ = write!(
            h,
            "<p class=\"{}\">{} over {} elements: got {}, reference {} — {}</p>",
            if c.ok { "" } else { "bad" },
            esc(&c.problem),
            c.n,
            esc(&c.value),
            esc(&c.expected),
            if c.ok {
                "correct".to_string()
            } else {
                esc(c.message.as_deref().unwrap_or("wrong"))
            }
        );
    }
    h.push_str("<h2>Totals</h2><table><tr><th></th>");
    h.push_str(&header());
    h.push_str("</tr><tr><td>all launches</td>");
    h.push_str(&row(&t.counts));
    h.push_str("</tr>");
    for (k, p) in report.passes.iter().enumerate() {
        let _ = write!(
            h,
            "<tr><td>pass {}: {} over {}</td>{}</tr>",
            k + 1,
            esc(&p.kernel),
            p.global_size,
            row(&p.counts)
        );
    }
    h.push_str("</table>");
    h.push_str("<h2>Errors</h2>");
    if t.errors.is_empty() {
        h.push_str("<p>None found.</p>");
    } else {
        h.push_str("<table><tr><th>kind</th><th>line</th><th>work-item</th><th>group</th><th>count</th><th>first occurrence</th></tr>");
        for e in &t.errors {
            let _ = write!(
                h,
                "<tr class=\"bad\"><td class=\"src\">{:?}</td><td>{}</td><td>{:?}</td><td>{:?}</td><td>{}</td><td class=\"src\">{}</td></tr>",
                e.kind,
                e.line,
                e.work_item,
                e.work_group,
                e.count,
                esc(&e.message)
            );
        }
        h.push_str("</table>");
    }
    h.push_str(&per_line(&t.lines));
    for d in drawn {
        h.push_str(&branching(d));
        h.push_str(&bank_maps(d));
    }
    h.push_str("</body></html>\n");
    h
}

/// The source, a line each: clicking a line opens its counters (a `details` element,
/// so the page needs no script); lines with divergence or bank conflicts are marked.
pub(crate) fn per_line(lines: &[crate::report::LineJson]) -> String {
    let mut h = String::from(
        "<h2>Per source line</h2><p>Click a line for its counters.</p><div class=\"lines\">",
    );
    for l in lines {
        let conflicts = l.counts.bank_conflicts.local_load + l.counts.bank_conflicts.local_store;
        let bad = l.counts.divergent_branches > 0 || conflicts > 0;
        let _ = write!(
            h,
            "<details{}><summary><span class=\"n\">{}</span> <code>{}</code>{}</summary><table><tr>{}</tr><tr>{}</tr></table></details>",
            if bad { " class=\"bad\"" } else { "" },
            l.line,
            esc(&l.text),
            if bad {
                format!(
                    " <i>divergent {}, conflicts {conflicts}</i>",
                    l.counts.divergent_branches
                )
            } else {
                String::new()
            },
            header(),
            row(&l.counts)
        );
    }
    h.push_str("</div>");
    h
}

pub(crate) fn header() -> String {
    [
        "branches",
        "divergent",
        "active lanes",
        "local load wavefronts",
        "load conflicts",
        "local store wavefronts",
        "store conflicts",
        "global load req.",
        "load sectors",
        "global store req.",
        "store sectors",
        "barriers",
    ]
    .iter()
    .map(|s| format!("<th>{s}</th>"))
    .collect()
}

pub(crate) fn row(c: &Counts) -> String {
    format!(
        "<td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        c.branches,
        c.divergent_branches,
        100.0 * c.active_lane_ratio,
        c.wavefronts.local_load,
        c.bank_conflicts.local_load,
        c.wavefronts.local_store,
        c.bank_conflicts.local_store,
        c.global.load_requests,
        c.global.load_sectors,
        c.global.store_requests,
        c.global.store_sectors,
        c.barriers
    )
}

/// Warp × step strips: one row per lane, one column per step of that warp.
pub(crate) fn branching(d: &Drawn<'_>) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<h2>Active lanes, {}: work-group {}</h2><p class=\"legend\">Each strip is one warp, one row per lane, one column per step it ran.<span style=\"background:{ACTIVE}\"></span>active<span style=\"background:{INACTIVE}\"></span>inactive<span style=\"background:{TAKEN}\"></span>branch taken<span style=\"background:{NOT_TAKEN}\"></span>branch not taken; a red mark above a column: that branch diverged.</p>",
        esc(&d.label),
        d.trace.group
    );
    let (cell_w, cell_h) = (4usize, 4usize);
    for (w, steps) in d.trace.warps.iter().enumerate() {
        if steps.is_empty() {
            continue;
        }
        let width = steps.len() * cell_w;
        let height = d.warp * cell_h + 8;
        let _ = write!(
            h,
            "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" preserveAspectRatio=\"none\">",
            width.min(1400)
        );
        // Runs of equal colour become one stroke, each colour one path, over an "active"
        // background: a rectangle element per run had made a 256-element page half a
        // megabyte.
        let colours = [INACTIVE, ACTIVE, TAKEN, NOT_TAKEN];
        let mut paths = vec![String::new(); colours.len()];
        let mut rows = String::new();
        for lane in 0..d.warp {
            let bit = 1u64 << lane;
            let colour = |s: &crate::metrics::TraceStep| match (s.active & bit != 0, s.taken) {
                (false, _) => 0,
                (true, Some(t)) if t & bit != 0 => 2,
                (true, Some(_)) => 3,
                (true, None) => 1,
            };
            let y = 8 + lane * cell_h;
            let mut start = 0;
            for k in 1..=steps.len() {
                if k == steps.len() || colour(&steps[k]) != colour(&steps[start]) {
                    // Active is the background; a run is a stroke along its row's middle.
                    let c = colour(&steps[start]);
                    if c != 1 {
                        let _ = write!(
                            paths[c],
                            "M{} {}h{}",
                            start * cell_w,
                            y + cell_h / 2,
                            (k - start) * cell_w
                        );
                    }
                    start = k;
                }
            }
            // Hovering a lane's row tells its branch pattern.
            let active = steps.iter().filter(|s| s.active & bit != 0).count();
            let taken = steps
                .iter()
                .filter(|s| s.active & bit != 0 && s.taken.is_some_and(|t| t & bit != 0))
                .count();
            let not_taken = steps
                .iter()
                .filter(|s| s.active & bit != 0 && s.taken.is_some_and(|t| t & bit == 0))
                .count();
            let _ = write!(
                rows,
                "<rect y=\"{y}\" width=\"{width}\" height=\"{cell_h}\" fill-opacity=\"0\"><title>warp {w}, lane {lane}: active {active} of {} steps; branches taken {taken}, not taken {not_taken}</title></rect>",
                steps.len()
            );
        }
        let _ = write!(
            h,
            "<rect y=\"8\" width=\"{width}\" height=\"{}\" fill=\"{ACTIVE}\"/>",
            d.warp * cell_h
        );
        for (colour, d) in colours.iter().zip(&paths) {
            if !d.is_empty() {
                let _ = write!(
                    h,
                    "<path stroke=\"{colour}\" stroke-width=\"{cell_h}\" d=\"{d}\"/>"
                );
            }
        }
        h.push_str(&rows);
        for (k, s) in steps.iter().enumerate() {
            if let Some(t) = s.taken {
                if t != 0 && t != s.active {
                    let _ = write!(
                        h,
                        "<rect x=\"{}\" y=\"0\" width=\"{cell_w}\" height=\"6\" fill=\"#d33\"><title>line {}: divergent</title></rect>",
                        k * cell_w,
                        s.line
                    );
                }
            }
        }
        let _ = write!(
            h,
            "</svg><figcaption>warp {w}: {} steps</figcaption></figure>",
            steps.len()
        );
    }
    if d.trace.truncated {
        h.push_str(
            "<p>(The recording stopped at its limit; later steps are counted but not drawn.)</p>",
        );
    }
    h
}

/// What makes two watched accesses draw the same: array, line, direction, lane → bank.
type PatternKey = (String, u32, bool, Vec<(usize, usize)>);

/// One grid per distinct access pattern: a column per bank, a box per lane stacked by
/// the distinct words of its bank.
pub(crate) fn bank_maps(d: &Drawn<'_>) -> String {
    if d.trace.bank_maps.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    let _ = write!(
        h,
        "<h2>Bank maps, {}</h2><p>Watched local arrays: each access of a warp drawn as banks (columns) × wavefronts (rows); each box is a lane (its number inside). Red columns serve more than one word: those lanes wait for extra wavefronts. Repeated patterns are drawn once.</p>",
        esc(&d.label)
    );
    let mut seen: HashSet<PatternKey> = HashSet::new();
    let mut drawn = 0;
    for a in &d.trace.bank_maps {
        let key = (
            a.array.clone(),
            a.line,
            a.store,
            a.lanes.iter().map(|(l, b, _)| (*l, *b)).collect::<Vec<_>>(),
        );
        if !seen.insert(key) {
            continue;
        }
        if drawn == 64 {
            h.push_str("<p>(More patterns were recorded than are drawn.)</p>");
            break;
        }
        drawn += 1;
        h.push_str(&bank_map(a, d.banks));
    }
    h
}

fn bank_map(a: &BankAccess, banks: usize) -> String {
    let (cw, ch) = (26usize, 16usize);
    // Row of each lane: the index of its word among the distinct words of its bank.
    let mut words_per_bank: Vec<Vec<u64>> = vec![Vec::new(); banks];
    for (_, b, w) in &a.lanes {
        if !words_per_bank[*b].contains(w) {
            words_per_bank[*b].push(*w);
        }
    }
    let rows = words_per_bank
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(1)
        .max(1);
    let mut stacked = vec![0usize; banks * rows];
    let width = banks * cw;
    let height = 14 + rows * ch * 2;
    let mut h = format!(
        "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-size=\"8\" font-family=\"monospace\">"
    );
    for (b, words) in words_per_bank.iter().enumerate() {
        let fill = if words.len() > 1 {
            "#fbd0d0"
        } else {
            "#f4f4f4"
        };
        // Hovering a bank tells which lanes hit it here and what it cost.
        let lanes: Vec<String> = a
            .lanes
            .iter()
            .filter(|(_, bank, _)| bank == &b)
            .map(|(l, _, _)| l.to_string())
            .collect();
        let title = if lanes.is_empty() {
            format!("bank {b}: no lane")
        } else {
            format!(
                "bank {b}: lanes {}; {} word{}, {} conflict{}",
                lanes.join(", "),
                words.len(),
                if words.len() == 1 { "" } else { "s" },
                words.len().saturating_sub(1),
                if words.len() == 2 { "" } else { "s" }
            )
        };
        let _ = write!(
            h,
            "<rect x=\"{}\" y=\"12\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#ddd\"><title>{title}</title></rect>",
            b * cw,
            cw - 1,
            rows * ch * 2
        );
        let _ = write!(h, "<text x=\"{}\" y=\"9\">{b}</text>", b * cw + 2);
    }
    for (lane, b, w) in &a.lanes {
        let row = words_per_bank[*b].iter().position(|x| x == w).unwrap_or(0);
        // Lanes on the same word (broadcast) share the row; offset them a little.
        let k = &mut stacked[b * rows + row];
        let y = 12 + row * ch * 2 + (*k % 2) * ch;
        *k += 1;
        let colour = if words_per_bank[*b].len() > 1 {
            "#d33"
        } else {
            "#4a7fc1"
        };
        let _ = write!(
            h,
            "<rect x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{colour}\"><title>lane {lane}: bank {b}, word {w}</title></rect><text x=\"{}\" y=\"{}\" fill=\"white\">{lane}</text>",
            b * cw + 1,
            cw - 3,
            ch - 2,
            b * cw + 3,
            y + 10
        );
    }
    let _ = write!(
        h,
        "</svg><figcaption>{} line {}, warp {}, {}: {} wavefront{}</figcaption></figure>",
        esc(&a.array),
        a.line,
        a.warp,
        if a.store { "store" } else { "load" },
        a.wavefronts,
        if a.wavefronts == 1 { "" } else { "s" }
    );
    h
}
