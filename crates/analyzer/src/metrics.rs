//! What the simulator counts, and how one warp-wide access becomes numbers:
//!
//! - a branch instance on a warp is divergent when its active lanes split two ways;
//! - a local-memory access takes as many wavefronts as the busiest bank has distinct
//!   4-byte words among the active lanes (lanes on one word are a broadcast), and
//!   wavefronts − 1 bank conflicts;
//! - a global-memory access is one request and as many 32-byte sectors as it touches.
//!
//! Counters are kept for the whole run, per source line and per warp (by warp index in
//! its work-group, summed over groups), and errors are grouped by kind and line.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::source::Pos;

/// Bytes of a global-memory sector.
pub const SECTOR_BYTES: u64 = 32;

/// Counters for local-memory accesses of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LocalCounters {
    /// Warp-wide accesses.
    pub requests: u64,
    /// Wavefronts they took.
    pub wavefronts: u64,
    /// Wavefronts beyond one per access.
    pub bank_conflicts: u64,
}

/// Counters for global-memory accesses of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GlobalCounters {
    /// Warp-wide accesses.
    pub requests: u64,
    /// 32-byte sectors they touched.
    pub sectors: u64,
    /// Bytes the active lanes asked for.
    pub bytes: u64,
}

/// Everything counted for one scope (the run, a line, a warp).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Branch instances (per warp).
    pub branches: u64,
    /// Of those, divergent.
    pub divergent_branches: u64,
    /// Active lanes summed over warp steps.
    pub active_lanes: u64,
    /// Warp steps × warp size.
    pub lane_slots: u64,
    /// Local loads.
    pub local_load: LocalCounters,
    /// Local stores.
    pub local_store: LocalCounters,
    /// Global loads.
    pub global_load: GlobalCounters,
    /// Global stores.
    pub global_store: GlobalCounters,
    /// Warp-wide atomic operations.
    pub atomics: u64,
    /// Barriers: work-group instances in run and line totals, warp arrivals per warp.
    pub barriers: u64,
}

impl Counters {
    /// Active lanes over lane slots (1 when nothing ran).
    pub fn active_lane_ratio(&self) -> f64 {
        if self.lane_slots == 0 {
            1.0
        } else {
            self.active_lanes as f64 / self.lane_slots as f64
        }
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Counters) {
        self.branches += other.branches;
        self.divergent_branches += other.divergent_branches;
        self.active_lanes += other.active_lanes;
        self.lane_slots += other.lane_slots;
        for (a, b) in [
            (&mut self.local_load, &other.local_load),
            (&mut self.local_store, &other.local_store),
        ] {
            a.requests += b.requests;
            a.wavefronts += b.wavefronts;
            a.bank_conflicts += b.bank_conflicts;
        }
        for (a, b) in [
            (&mut self.global_load, &other.global_load),
            (&mut self.global_store, &other.global_store),
        ] {
            a.requests += b.requests;
            a.sectors += b.sectors;
            a.bytes += b.bytes;
        }
        self.atomics += other.atomics;
        self.barriers += other.barriers;
    }
}

/// Wavefronts of one warp-wide local access: `(lane, byte address, bytes)` for each
/// active lane, `banks` banks of 4 bytes.
pub fn wavefronts(accesses: &[(usize, u64, usize)], banks: usize) -> u64 {
    let mut words: HashSet<u64> = HashSet::new();
    for (_, addr, bytes) in accesses {
        let first = addr / 4;
        // Saturating: an out-of-bounds pointer can sit anywhere in the address space.
        let last = addr.saturating_add((*bytes as u64).max(1) - 1) / 4;
        words.extend(first..=last);
    }
    let mut per_bank = vec![0u64; banks.max(1)];
    for w in words {
        per_bank[(w % banks.max(1) as u64) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap_or(0)
}

/// Sectors of one warp-wide global access: `(buffer, byte offset, bytes)` per lane.
pub fn sectors(accesses: &[(u32, u64, usize)]) -> u64 {
    let mut set: HashSet<(u32, u64)> = HashSet::new();
    for (buffer, offset, bytes) in accesses {
        let first = offset / SECTOR_BYTES;
        // Saturating: an out-of-bounds pointer can sit anywhere in the address space.
        let last = offset.saturating_add((*bytes as u64).max(1) - 1) / SECTOR_BYTES;
        for s in first..=last {
            set.insert((*buffer, s));
        }
    }
    set.len() as u64
}

/// The kinds of error the simulator finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Only some work-items of a group reached a barrier or collective.
    BarrierDivergence,
    /// Two work-items touched a local word between barriers, at least one writing.
    LocalRace,
    /// Two work-items (of one group, between global barriers, or of two groups not
    /// ordered by atomics) touched a global byte, at least one writing, not both
    /// atomically.
    GlobalRace,
    /// An access outside its buffer.
    OutOfBounds,
    /// A read of local memory nothing had written.
    UninitializedLocalRead,
    /// A read of a private variable (or part of one) before anything wrote it.
    UninitializedPrivateRead,
    /// An integer division by zero.
    DivisionByZero,
    /// An async copy started with different arguments across the group, its bytes
    /// touched before `wait_group_events`, or never waited for.
    AsyncCopyMisuse,
    /// A write to a buffer the host declared read-only, or a read of one it declared
    /// write-only.
    AccessViolation,
    /// A read of global memory the host left uninitialized, before the kernel wrote it.
    UninitializedGlobalRead,
}

impl FindingKind {
    /// Every kind, in declaration order (the corpus test checks it covers each).
    pub const ALL: [FindingKind; 10] = [
        FindingKind::BarrierDivergence,
        FindingKind::LocalRace,
        FindingKind::GlobalRace,
        FindingKind::OutOfBounds,
        FindingKind::UninitializedLocalRead,
        FindingKind::UninitializedPrivateRead,
        FindingKind::DivisionByZero,
        FindingKind::AsyncCopyMisuse,
        FindingKind::AccessViolation,
        FindingKind::UninitializedGlobalRead,
    ];
}

/// Does not compile when a kind is added without updating [`FindingKind::ALL`] next to
/// it (the match must name every kind).
const _: () = {
    const fn listed(k: FindingKind) -> bool {
        match k {
            FindingKind::BarrierDivergence
            | FindingKind::LocalRace
            | FindingKind::GlobalRace
            | FindingKind::OutOfBounds
            | FindingKind::UninitializedLocalRead
            | FindingKind::UninitializedPrivateRead
            | FindingKind::DivisionByZero
            | FindingKind::AsyncCopyMisuse
            | FindingKind::AccessViolation
            | FindingKind::UninitializedGlobalRead => true,
        }
    }
    assert!(listed(FindingKind::LocalRace));
};

/// One kind of error at one line, with where it happened first and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What.
    pub kind: FindingKind,
    /// Source file.
    pub file: String,
    /// Source line.
    pub line: u32,
    /// Global id of the first work-item it happened to.
    pub work_item: [usize; 3],
    /// Its work-group.
    pub work_group: [usize; 3],
    /// Details of the first occurrence.
    pub message: String,
    /// Occurrences (per work-item).
    pub count: u64,
}

/// One warp step of the traced work-group, for the pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    /// Source line.
    pub line: u32,
    /// Active lanes (bit k: lane k of the warp).
    pub active: u64,
    /// For a branch: the lanes that took the first way.
    pub taken: Option<u64>,
}

/// One warp-wide access to a watched local array, for the bank map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BankAccess {
    /// The array.
    pub array: String,
    /// Source line.
    pub line: u32,
    /// Warp in the group.
    pub warp: usize,
    /// A store (else a load).
    pub store: bool,
    /// `(lane, bank, word)` for each active lane's first word.
    pub lanes: Vec<(usize, usize, u64)>,
    /// Wavefronts of the access.
    pub wavefronts: u64,
}

/// Recorded steps and watched accesses of one work-group.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Trace {
    /// Which group (linear index).
    pub group: usize,
    /// Steps per warp.
    pub warps: Vec<Vec<TraceStep>>,
    /// Accesses to watched arrays.
    pub bank_maps: Vec<BankAccess>,
    /// Steps or accesses were dropped past the recording limit.
    pub truncated: bool,
}

/// Most steps recorded per warp.
pub const TRACE_STEPS: usize = 4000;
/// Most watched accesses recorded.
pub const TRACE_ACCESSES: usize = 400;

/// All metrics of a launch.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// The whole launch.
    pub total: Counters,
    /// Per `(file, line)`.
    pub lines: BTreeMap<(u32, u32), Counters>,
    /// Per warp index in the group.
    pub warps: Vec<Counters>,
    /// Errors by kind and position.
    pub findings: BTreeMap<(FindingKind, u32, u32), Finding>,
}

impl Metrics {
    /// Applies `f` to the run's, the line's and (if given) the warp's counters.
    pub fn count(&mut self, pos: Pos, warp: Option<usize>, f: impl Fn(&mut Counters)) {
        f(&mut self.total);
        f(self.lines.entry((pos.file, pos.line)).or_default());
        if let Some(w) = warp {
            if self.warps.len() <= w {
                self.warps.resize(w + 1, Counters::default());
            }
            f(&mut self.warps[w]);
        }
    }

    /// Records an error (grouped with others of its kind on its line).
    pub fn find(
        &mut self,
        kind: FindingKind,
        pos: Pos,
        file: &str,
        at: ([usize; 3], [usize; 3]),
        message: impl FnOnce() -> String,
    ) {
        self.findings
            .entry((kind, pos.file, pos.line))
            .and_modify(|f| f.count += 1)
            .or_insert_with(|| Finding {
                kind,
                file: file.to_string(),
                line: pos.line,
                work_item: at.0,
                work_group: at.1,
                message: message(),
                count: 1,
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wavefronts_count_distinct_words_per_bank() {
        // 32 lanes on consecutive words: one wavefront.
        let seq: Vec<_> = (0..32).map(|l| (l, 4 * l as u64, 4)).collect();
        assert_eq!(wavefronts(&seq, 32), 1);
        // Stride 2 words: lanes l and l+16 share a bank on different words.
        let stride2: Vec<_> = (0..32).map(|l| (l, 8 * l as u64, 4)).collect();
        assert_eq!(wavefronts(&stride2, 32), 2);
        // Everyone on one word is a broadcast.
        let same: Vec<_> = (0..32).map(|l| (l, 64, 4)).collect();
        assert_eq!(wavefronts(&same, 32), 1);
        // 8-byte elements of 32 lanes cover 64 words: two per bank.
        let wide: Vec<_> = (0..32).map(|l| (l, 8 * l as u64, 8)).collect();
        assert_eq!(wavefronts(&wide, 32), 2);
    }

    #[test]
    fn sectors_are_distinct_32_byte_blocks() {
        let coalesced: Vec<_> = (0..32).map(|l| (0u32, 4 * l as u64, 4)).collect();
        assert_eq!(sectors(&coalesced), 4);
        let strided: Vec<_> = (0..32).map(|l| (0u32, 128 * l as u64, 4)).collect();
        assert_eq!(sectors(&strided), 32);
        let straddling = [(0u32, 30u64, 4usize)];
        assert_eq!(sectors(&straddling), 2);
    }
}
