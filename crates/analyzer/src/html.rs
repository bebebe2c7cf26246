//! One self-contained HTML page (inline CSS and script, nothing fetched) with the
//! totals, the errors, the per-line table (click a line for its counters), a warp × step
//! picture of the traced work-group (which lanes were active, and at each branch which
//! way each lane went), and bank maps of the watched local arrays (which lane hit which
//! bank, with banks that serve several words — conflicts — in red). The pictures travel
//! as compact JSON data blocks that the page's script (`page.js`) draws as SVG and makes
//! answer hovers, which keeps a 256-element run's page far below 100 KB.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::metrics::{Trace, TraceStep};
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
.lines .n{display:inline-block;width:3em;text-align:right;color:#777}\
#info{position:fixed;left:0;right:0;bottom:0;padding:6px 24px;background:#fffbe6;border-top:1px solid #ccc;font:13px monospace;white-space:pre-wrap}\
body{padding-bottom:48px}svg.warp,svg.bank{cursor:crosshair}";

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
    h.push_str(&footer());
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

/// Warp × step strips: one row per lane, one column per step of that warp. Written as a
/// data block that the page's script draws (see `page.js`): a palette of the distinct lane
/// patterns of a step, and per warp one (line, pattern) pair per step.
pub(crate) fn branching(d: &Drawn<'_>) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<h2>Active lanes, {}: work-group {}</h2><p class=\"legend\">Each strip is one warp, one row per lane, one column per step it ran.<span style=\"background:{ACTIVE}\"></span>active<span style=\"background:{INACTIVE}\"></span>inactive<span style=\"background:{TAKEN}\"></span>branch taken<span style=\"background:{NOT_TAKEN}\"></span>branch not taken; a red mark above a column: that branch diverged. Hover a strip for its lanes' pattern at that step (. inactive, a active, T taken, N not taken) and the lane's branches.</p>",
        esc(&d.label),
        d.trace.group
    );
    let mut palette: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let warps: Vec<Vec<u64>> = d
        .trace
        .warps
        .iter()
        .map(|steps| {
            let mut flat = Vec::with_capacity(2 * steps.len());
            for s in steps {
                let pattern = lane_pattern(s, d.warp);
                let next = palette.len();
                let k = *index.entry(pattern.clone()).or_insert(next);
                if k == next {
                    palette.push(pattern);
                }
                flat.push(u64::from(s.line));
                flat.push(k as u64);
            }
            flat
        })
        .collect();
    let data = serde_json::json!({ "lanes": d.warp, "palette": palette, "warps": warps });
    h.push_str(&data_block("warps", &data));
    if d.trace.truncated {
        h.push_str(
            "<p>(The recording stopped at its limit; later steps are counted but not drawn.)</p>",
        );
    }
    h
}

/// A step's lanes as letters: `.` inactive, `a` active, `T` took the branch, `N` did not.
fn lane_pattern(s: &TraceStep, lanes: usize) -> String {
    (0..lanes)
        .map(|lane| {
            let bit = 1u64 << lane;
            match (s.active & bit != 0, s.taken) {
                (false, _) => '.',
                (true, Some(t)) if t & bit != 0 => 'T',
                (true, Some(_)) => 'N',
                (true, None) => 'a',
            }
        })
        .collect()
}

/// A JSON data block for `page.js` to draw as `view`. `<` is written as `\u003c` so no
/// string in it (a user's array name, a label) can close the script element.
fn data_block(view: &str, data: &serde_json::Value) -> String {
    format!(
        "<script type=\"application/json\" data-view=\"{view}\">{}</script>",
        data.to_string().replace('<', "\\u003c")
    )
}

/// The info bar that hovers write into and the script that draws the data blocks; ends
/// every page.
pub(crate) fn footer() -> String {
    format!(
        "<noscript><p>The pictures are drawn by the page's inline script.</p></noscript><div id=\"info\" role=\"status\">Hover a picture for details.</div><script>{}</script>",
        include_str!("page.js")
    )
}

/// What makes two watched accesses draw the same: array, line, direction, lane → bank.
type PatternKey = (String, u32, bool, Vec<(usize, usize)>);

/// One grid per distinct access pattern: a column per bank, a box per lane stacked by
/// the distinct words of its bank (drawn by `page.js` from a data block).
pub(crate) fn bank_maps(d: &Drawn<'_>) -> String {
    if d.trace.bank_maps.is_empty() {
        return String::new();
    }
    let mut h = String::new();
    let _ = write!(
        h,
        "<h2>Bank maps, {}</h2><p>Watched local arrays: each access of a warp drawn as banks (columns) × wavefronts (rows); each box is a lane (its number inside). Red columns serve more than one word: those lanes wait for extra wavefronts. Hover a bank for its lanes and conflicts. Repeated patterns are drawn once.</p>",
        esc(&d.label)
    );
    let mut seen: HashSet<PatternKey> = HashSet::new();
    let mut maps = Vec::new();
    let mut more = false;
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
        if maps.len() == MAX_BANK_MAPS {
            more = true;
            break;
        }
        let x: Vec<u64> = a
            .lanes
            .iter()
            .flat_map(|(l, b, w)| [*l as u64, *b as u64, *w])
            .collect();
        maps.push(serde_json::json!({
            "a": a.array, "l": a.line, "w": a.warp, "s": a.store, "f": a.wavefronts, "x": x
        }));
    }
    let data = serde_json::json!({ "banks": d.banks, "maps": maps });
    h.push_str(&data_block("banks", &data));
    if more {
        h.push_str("<p>(More patterns were recorded than are drawn.)</p>");
    }
    h
}

/// Most distinct bank-map patterns drawn per launch.
const MAX_BANK_MAPS: usize = 64;
