//! The analyzer's JSON: one object per run with the totals (`branches`,
//! `divergent_branches`, `active_lane_ratio`, `bank_conflicts.local_load` …,
//! `global.load_sectors` …, `barriers`), the errors, the same counters per source line
//! and per warp, and for a built-in variant each pass and the check of its result.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::metrics::{Counters, Finding};
use crate::sim::LaunchReport;
use crate::source::Files;

/// A load/store pair of numbers.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LoadStore {
    /// Loads.
    pub local_load: u64,
    /// Stores.
    pub local_store: u64,
}

/// Global-memory numbers.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct GlobalJson {
    /// Warp-wide loads.
    pub load_requests: u64,
    /// 32-byte sectors loaded.
    pub load_sectors: u64,
    /// Warp-wide stores.
    pub store_requests: u64,
    /// 32-byte sectors stored.
    pub store_sectors: u64,
    /// Bytes loaded by active lanes.
    pub load_bytes: u64,
    /// Bytes stored by active lanes.
    pub store_bytes: u64,
}

/// The counters of a run, a line or a warp.
#[derive(Debug, Clone, Serialize)]
pub struct Counts {
    /// Branch instances per warp.
    pub branches: u64,
    /// Divergent ones.
    pub divergent_branches: u64,
    /// Active lanes over lane slots.
    pub active_lane_ratio: f64,
    /// Bank conflicts (wavefronts − 1 per access).
    pub bank_conflicts: LoadStore,
    /// Wavefronts.
    pub wavefronts: LoadStore,
    /// Warp-wide local accesses.
    pub local_requests: LoadStore,
    /// Global requests and sectors.
    pub global: GlobalJson,
    /// Warp-wide atomics.
    pub atomics: u64,
    /// Barriers (group instances; per warp: the warp's arrivals).
    pub barriers: u64,
}

impl From<&Counters> for Counts {
    fn from(c: &Counters) -> Counts {
        Counts {
            branches: c.branches,
            divergent_branches: c.divergent_branches,
            active_lane_ratio: (c.active_lane_ratio() * 1e6).round() / 1e6,
            bank_conflicts: LoadStore {
                local_load: c.local_load.bank_conflicts,
                local_store: c.local_store.bank_conflicts,
            },
            wavefronts: LoadStore {
                local_load: c.local_load.wavefronts,
                local_store: c.local_store.wavefronts,
            },
            local_requests: LoadStore {
                local_load: c.local_load.requests,
                local_store: c.local_store.requests,
            },
            global: GlobalJson {
                load_requests: c.global_load.requests,
                load_sectors: c.global_load.sectors,
                store_requests: c.global_store.requests,
                store_sectors: c.global_store.sectors,
                load_bytes: c.global_load.bytes,
                store_bytes: c.global_store.bytes,
            },
            atomics: c.atomics,
            barriers: c.barriers,
        }
    }
}

/// Counters of one source line.
#[derive(Debug, Clone, Serialize)]
pub struct LineJson {
    /// File name.
    pub file: String,
    /// Line number.
    pub line: u32,
    /// The line's text.
    pub text: String,
    /// Its counters.
    #[serde(flatten)]
    pub counts: Counts,
}

/// Counters of one warp (by index in the work-group, over all groups).
#[derive(Debug, Clone, Serialize)]
pub struct WarpJson {
    /// Warp index.
    pub warp: usize,
    /// Its counters.
    #[serde(flatten)]
    pub counts: Counts,
}

/// One launch, or several summed.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchJson {
    /// Kernel name.
    pub kernel: String,
    /// Work-items in all (of the first launch, when summed).
    pub global_size: usize,
    /// Work-items per group.
    pub local_size: usize,
    /// Global size per dimension.
    pub global_dims: [usize; 3],
    /// Work-group size per dimension.
    pub local_dims: [usize; 3],
    /// Lanes per warp.
    pub warp_size: usize,
    /// Local-memory banks.
    pub banks: usize,
    /// Local memory per work-group, bytes.
    pub local_memory_bytes: u64,
    /// Work-groups smaller than the work-group size (a global size that is not a
    /// multiple of it: OpenCL 2.0's non-uniform work-groups); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub partial_work_groups: usize,
    /// Totals.
    #[serde(flatten)]
    pub counts: Counts,
    /// Errors found.
    pub errors: Vec<Finding>,
    /// Per source line (lines where something ran).
    pub lines: Vec<LineJson>,
    /// Per warp.
    pub warps: Vec<WarpJson>,
}

/// A launch with the files its lines refer to.
pub struct Launched<'a> {
    /// The files of the program.
    pub files: &'a Files,
    /// The launch.
    pub report: &'a LaunchReport,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Sums launches into one object (sizes of the first).
pub fn summarize(launches: &[Launched<'_>]) -> Option<LaunchJson> {
    let first = launches.first()?;
    let mut total = Counters::default();
    let mut lines: BTreeMap<(String, u32), (String, Counters)> = BTreeMap::new();
    let mut warps: Vec<Counters> = Vec::new();
    let mut errors = Vec::new();
    let mut local_bytes = 0;
    for l in launches {
        let m = &l.report.metrics;
        total.add(&m.total);
        for ((file, line), c) in &m.lines {
            let key = (l.files.name(*file).to_string(), *line);
            let entry = lines.entry(key).or_insert_with(|| {
                (
                    l.files.line_text(*file, *line).trim().to_string(),
                    Counters::default(),
                )
            });
            entry.1.add(c);
        }
        if warps.len() < m.warps.len() {
            warps.resize(m.warps.len(), Counters::default());
        }
        for (w, c) in m.warps.iter().enumerate() {
            warps[w].add(c);
        }
        errors.extend(m.findings.values().cloned());
        local_bytes = local_bytes.max(l.report.local_bytes);
    }
    let cfg = &first.report.config;
    Some(LaunchJson {
        kernel: first.report.kernel.clone(),
        global_size: cfg.global.iter().product(),
        local_size: cfg.local.iter().product(),
        global_dims: cfg.global,
        local_dims: cfg.local,
        warp_size: cfg.warp,
        banks: cfg.banks,
        local_memory_bytes: local_bytes,
        partial_work_groups: launches
            .iter()
            .map(|l| l.report.config.partial_groups())
            .sum(),
        counts: Counts::from(&total),
        errors,
        lines: lines
            .into_iter()
            .map(|((file, line), (text, c))| LineJson {
                file,
                line,
                text,
                counts: Counts::from(&c),
            })
            .collect(),
        warps: warps
            .iter()
            .enumerate()
            .map(|(warp, c)| WarpJson {
                warp,
                counts: Counts::from(c),
            })
            .collect(),
    })
}

/// The check of a built-in variant's result.
#[derive(Debug, Clone, Serialize)]
pub struct CheckJson {
    /// The problem (`sum f32`).
    pub problem: String,
    /// Elements reduced.
    pub n: usize,
    /// What the kernels produced.
    pub value: String,
    /// What the host reference gives.
    pub expected: String,
    /// Whether it is acceptable.
    pub ok: bool,
    /// Why not, if not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// What ran (file name or variant and problem).
    pub source: String,
    /// Totals over every launch.
    #[serde(flatten)]
    pub total: LaunchJson,
    /// Each launch of a multi-pass variant.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<LaunchJson>,
    /// The result check of a built-in variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckJson>,
    /// Final contents of the buffers asked for (`--show NAME`), element by element.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub buffers: std::collections::BTreeMap<String, Vec<String>>,
}
