//! Several analyses on one page, side by side, as the reduction documents compare a
//! kernel's versions: one totals table with a row per version, then each view (the
//! errors, the source lines with their counters, the warp × step branching picture of
//! each traced launch, the bank maps of the watched arrays) in aligned columns, one per
//! version, so the same launch of each version sits on the same row. Self-contained like the single page (`crate::html`): inline CSS and the
//! same drawing script, nothing fetched.

use std::fmt::Write;

use crate::html::{bank_maps, branching, esc, footer, header, per_line, row, Drawn, STYLE};
use crate::report::Report;

/// One version: its name on the page, its report and its traced launches.
pub struct Version<'a> {
    /// What it is (a variant's name or a file's path).
    pub name: String,
    /// Its analysis.
    pub report: &'a Report,
    /// Its traced launches, in launch order.
    pub drawn: Vec<Drawn<'a>>,
}

const COLUMNS: &str = ".cols{display:flex;gap:24px;align-items:flex-start}\
.cols>div{flex:1;min-width:0;overflow-x:auto}.cols h2{font-size:16px}";

/// The comparison page of `versions` (two or more).
pub fn render_compare(versions: &[Version<'_>]) -> String {
    let mut h = String::new();
    let names: Vec<String> = versions.iter().map(|v| esc(&v.name)).collect();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>redlab analyze: {}</title><style>{STYLE}{COLUMNS}</style></head><body><h1>{}</h1>",
        names.join(" vs "),
        names.join(" · ")
    );
    h.push_str("<h2>Totals</h2><table><tr><th>version</th><th>kernel</th><th>errors</th>");
    h.push_str(&header());
    h.push_str("</tr>");
    for (v, name) in versions.iter().zip(&names) {
        let t = &v.report.total;
        let _ = write!(
            h,
            "<tr{}><td class=\"src\">{name}</td><td class=\"src\">{}</td><td>{}</td>{}</tr>",
            if t.errors.is_empty() {
                ""
            } else {
                " class=\"bad\""
            },
            esc(&t.kernel),
            t.errors.len(),
            row(&t.counts)
        );
    }
    h.push_str("</table>");
    // Errors, each version in its column.
    h.push_str("<div class=\"cols\">");
    for (v, name) in versions.iter().zip(&names) {
        let _ = write!(h, "<div><h2>Errors, {name}</h2>");
        if v.report.total.errors.is_empty() {
            h.push_str("<p>None found.</p>");
        }
        for e in &v.report.total.errors {
            let _ = write!(
                h,
                "<p class=\"bad\">{:?} at line {} ({} times): {}</p>",
                e.kind,
                e.line,
                e.count,
                esc(&e.message)
            );
        }
        h.push_str("</div>");
    }
    h.push_str("</div>");
    // Each version's source lines, click one for its counters.
    h.push_str("<div class=\"cols\">");
    for (v, name) in versions.iter().zip(&names) {
        let _ = write!(
            h,
            "<div><p><b>{name}</b></p>{}</div>",
            per_line(&v.report.total.lines)
        );
    }
    h.push_str("</div>");
    // The k-th traced launch of every version on one row.
    let launches = versions.iter().map(|v| v.drawn.len()).max().unwrap_or(0);
    for k in 0..launches {
        for view in [branching as fn(&Drawn<'_>) -> String, bank_maps] {
            h.push_str("<div class=\"cols\">");
            for (v, name) in versions.iter().zip(&names) {
                let _ = write!(h, "<div><p><b>{name}</b></p>");
                match v.drawn.get(k) {
                    Some(d) => h.push_str(&view(d)),
                    None => h.push_str("<p>(no such launch)</p>"),
                }
                h.push_str("</div>");
            }
            h.push_str("</div>");
        }
    }
    h.push_str(&footer());
    h.push_str("</body></html>\n");
    h
}
