//! Memory accesses of a warp-wide instruction: the per-lane reads and writes with their
//! checks (bounds, uninitialized local and private memory, races between barriers,
//! bytes of unfinished async copies) and the
//! per-warp metrics (local wavefronts and bank conflicts, global requests and sectors),
//! plus the bank map of watched local arrays.

use crate::mask::Mask;
use crate::metrics::{sectors, wavefronts, BankAccess, FindingKind, TRACE_ACCESSES};
use crate::source::{Diag, Pos};
use crate::types::{Space, Type};
use crate::value::{convert, from_bytes, to_bytes, Ptr};

use super::{Lanes, Sim};

impl Sim<'_> {
    /// Loads a `ty` at `ptrs[lane]` for each lane of `mask`.
    pub(crate) fn load(
        &mut self,
        pos: Pos,
        mask: &Mask,
        ptrs: &[Ptr],
        ty: &Type,
    ) -> Result<Lanes, Diag> {
        self.meter(pos, mask, ptrs, ty.size(), false);
        let mut ranges = Vec::new();
        ty.data_ranges(0, &mut ranges);
        let mut out = vec![crate::value::Value::Void; self.lanes];
        for lane in mask.iter() {
            let ptr = ptrs[lane];
            if !self.pending.is_empty() && ptr.space != Space::Private {
                self.check_pending(pos, lane, &ptr, ty.size(), false);
            }
            if ptr.space == Space::Global {
                self.note_global(pos, lane, &ptr, ty.size(), false, false);
                self.check_declared(pos, lane, &ptr, ty.size(), &ranges, false);
            }
            if ptr.space == Space::Private
                && !self.mem.private_initialized(&ptr, lane, &ranges)
                && self.mem.read(&ptr, lane, ty.size()).is_ok()
            {
                let name = self.mem.private_name(&ptr);
                let (local, _) = self.ids(lane);
                self.find(FindingKind::UninitializedPrivateRead, pos, lane, || {
                    format!("work-item {local:?} reads {name} before anything wrote it")
                });
            }
            if ptr.space == Space::Local {
                self.check_local(pos, lane, &ptr, ty.size(), false);
                if !self.mem.local_initialized(&ptr, &ranges)
                    && self.mem.read(&ptr, lane, ty.size()).is_ok()
                {
                    let name = self.mem.name(&ptr);
                    let (local, _) = self.ids(lane);
                    self.find(FindingKind::UninitializedLocalRead, pos, lane, || {
                        format!(
                            "work-item {local:?} reads bytes {}..{} of {name}, which nothing wrote",
                            ptr.offset,
                            ptr.offset + ty.size() as i64
                        )
                    });
                }
            }
            let bytes = match self.mem.read(&ptr, lane, ty.size()) {
                Ok(b) => b,
                Err(what) => {
                    self.out_of_bounds(pos, lane, "reads", what);
                    vec![0; ty.size()]
                }
            };
            out[lane] = from_bytes(ty, &bytes).map_err(|m| Diag::new(pos, m))?;
        }
        Ok(out)
    }

    /// Stores `values[lane]` (converted to `ty`) at `ptrs[lane]` for each lane of `mask`.
    pub(crate) fn store(
        &mut self,
        pos: Pos,
        mask: &Mask,
        ptrs: &[Ptr],
        ty: &Type,
        values: &Lanes,
    ) -> Result<Lanes, Diag> {
        self.meter(pos, mask, ptrs, ty.size(), true);
        let mut out = vec![crate::value::Value::Void; self.lanes];
        let mut bytes = vec![0u8; ty.size()];
        for lane in mask.iter() {
            let ptr = ptrs[lane];
            let v = convert(&values[lane], ty).map_err(|m| Diag::new(pos, m))?;
            to_bytes(&v, ty, &mut bytes).map_err(|m| Diag::new(pos, m))?;
            if !self.pending.is_empty() && ptr.space != Space::Private {
                self.check_pending(pos, lane, &ptr, ty.size(), true);
            }
            if ptr.space == Space::Global {
                self.note_global(pos, lane, &ptr, ty.size(), true, false);
                self.check_declared(pos, lane, &ptr, ty.size(), &[], true);
            }
            if ptr.space == Space::Local {
                self.check_local(pos, lane, &ptr, ty.size(), true);
            }
            if ptr.space == Space::Constant {
                return Err(Diag::new(pos, "a store to __constant memory"));
            }
            if let Err(what) = self.mem.write(&ptr, lane, &bytes) {
                self.out_of_bounds(pos, lane, "writes", what);
            }
            out[lane] = v;
        }
        Ok(out)
    }

    /// The host's declarations of a global buffer: its access (`ro`/`wo`) and, for one
    /// left uninitialized on purpose, whether the bytes `ranges` a read takes were
    /// written (`ranges` relative to `ptr`; a write passes none).
    pub(crate) fn check_declared(
        &mut self,
        pos: Pos,
        lane: usize,
        ptr: &crate::value::Ptr,
        bytes: usize,
        ranges: &[(usize, usize)],
        write: bool,
    ) {
        use crate::memory::Access;
        let Some(access) = self.mem.global.get(ptr.buffer as usize).map(|b| b.access) else {
            return;
        };
        let name = self.mem.name(ptr);
        let (local, _) = self.ids(lane);
        let span = format!("bytes {}..{}", ptr.offset, ptr.offset + bytes as i64);
        let refused = match (access, write) {
            (Access::ReadOnly, true) => Some("writes"),
            (Access::WriteOnly, false) => Some("reads"),
            _ => None,
        };
        if let Some(verb) = refused {
            let declared = if write { "read-only" } else { "write-only" };
            self.find(FindingKind::AccessViolation, pos, lane, || {
                format!("work-item {local:?} {verb} {span} of {name}, which the host declared {declared}")
            });
        }
        if !write
            && !self.mem.global_initialized(ptr, ranges)
            && self.mem.read(ptr, lane, bytes).is_ok()
        {
            self.find(FindingKind::UninitializedGlobalRead, pos, lane, || {
                format!("work-item {local:?} reads {span} of {name}, which the host left uninitialized and nothing wrote")
            });
        }
    }

    fn out_of_bounds(&mut self, pos: Pos, lane: usize, verb: &str, what: String) {
        let (local, _) = self.ids(lane);
        self.find(FindingKind::OutOfBounds, pos, lane, || {
            format!("work-item {local:?} {verb} {what}")
        });
    }

    /// The race check of one lane's local access.
    fn check_local(&mut self, pos: Pos, lane: usize, ptr: &Ptr, bytes: usize, write: bool) {
        let Some(c) = self.mem.note_local(ptr, lane, bytes, write) else {
            return;
        };
        let name = self.mem.name(ptr);
        let (me, _) = self.ids(lane);
        let other = if c.other == usize::MAX {
            "several work-items".to_string()
        } else {
            format!("work-item {:?}", self.ids(c.other).0)
        };
        self.find(FindingKind::LocalRace, pos, lane, || {
            format!(
                "{other} {} bytes {}..{} of {name} and work-item {me:?} {} them with no barrier between",
                if c.other_wrote { "wrote" } else { "read" },
                ptr.offset,
                ptr.offset + bytes as i64,
                if write { "writes" } else { "reads" },
            )
        });
    }

    /// The global race check of one lane's access (`atomic`: an atomic update).
    pub(crate) fn note_global(
        &mut self,
        pos: Pos,
        lane: usize,
        ptr: &Ptr,
        bytes: usize,
        write: bool,
        atomic: bool,
    ) {
        let Some(size) = self
            .mem
            .global
            .get(ptr.buffer as usize)
            .map(|b| b.bytes.len())
        else {
            return;
        };
        let Ok(start) = usize::try_from(ptr.offset) else {
            return;
        };
        let mem = &*self.mem;
        let fits = |extra: u64| mem.check_budget(extra, String::new).is_ok();
        let race = self.global_races.access(
            ptr.buffer as usize,
            size,
            start..start + bytes,
            lane,
            write,
            atomic,
            &fits,
        );
        let Some(race) = race else { return };
        let name = self.mem.name(ptr);
        let (me, _) = self.ids(lane);
        let other = match race {
            crate::global_races::Race::InGroup { other, other_wrote } => (
                if other == usize::MAX {
                    "several work-items of this group".to_string()
                } else {
                    format!("work-item {:?} of this group", self.ids(other).0)
                },
                other_wrote,
            ),
            crate::global_races::Race::Across { group, other_wrote } => {
                (format!("work-group {group} (linear index)"), other_wrote)
            }
        };
        self.find(FindingKind::GlobalRace, pos, lane, || {
            format!(
                "{} {} bytes {}..{} of {name} and work-item {me:?} {} them, unordered (no global barrier between, or no atomic release/acquire between groups)",
                other.0,
                if other.1 { "wrote" } else { "read" },
                ptr.offset,
                ptr.offset + bytes as i64,
                if write || atomic { "writes" } else { "reads" },
            )
        });
    }

    /// Counts one access per warp with active lanes.
    pub(crate) fn meter(&mut self, pos: Pos, mask: &Mask, ptrs: &[Ptr], bytes: usize, store: bool) {
        let ws = self.cfg.warp;
        for w in 0..self.warps() {
            let lanes: Vec<usize> = (w * ws..((w + 1) * ws).min(self.lanes))
                .filter(|l| mask.get(*l))
                .collect();
            let Some(first) = lanes.first() else { continue };
            match ptrs[*first].space {
                Space::Private => {}
                Space::Local => {
                    let accesses: Vec<(usize, u64, usize)> = lanes
                        .iter()
                        .map(|l| {
                            let p = ptrs[*l];
                            let base = self.mem.local.get(p.buffer as usize).map_or(0, |b| b.base);
                            (*l - w * ws, base.wrapping_add(p.offset as u64), bytes)
                        })
                        .collect();
                    let wf = wavefronts(&accesses, self.cfg.banks);
                    self.metrics.count(pos, Some(w), |c| {
                        let k = if store {
                            &mut c.local_store
                        } else {
                            &mut c.local_load
                        };
                        k.requests += 1;
                        k.wavefronts += wf;
                        k.bank_conflicts += wf.saturating_sub(1);
                    });
                    let buffer = ptrs[*first].buffer;
                    if self.tracing && self.watched.contains(&buffer) {
                        self.record_bank_map(pos, w, store, buffer, &accesses, wf);
                    }
                }
                Space::Global | Space::Constant => {
                    let accesses: Vec<(u32, u64, usize)> = lanes
                        .iter()
                        .map(|l| {
                            let p = ptrs[*l];
                            let tag = if p.space == Space::Constant {
                                1 << 31
                            } else {
                                0
                            };
                            (p.buffer | tag, p.offset as u64, bytes)
                        })
                        .collect();
                    let s = sectors(&accesses);
                    let n = (bytes * lanes.len()) as u64;
                    self.metrics.count(pos, Some(w), |c| {
                        let k = if store {
                            &mut c.global_store
                        } else {
                            &mut c.global_load
                        };
                        k.requests += 1;
                        k.sectors += s;
                        k.bytes += n;
                    });
                }
            }
        }
    }

    fn record_bank_map(
        &mut self,
        pos: Pos,
        warp: usize,
        store: bool,
        buffer: u32,
        accesses: &[(usize, u64, usize)],
        wf: u64,
    ) {
        if self.trace.bank_maps.len() >= TRACE_ACCESSES {
            self.trace.truncated = true;
            return;
        }
        let banks = self.cfg.banks as u64;
        let array = self
            .mem
            .local
            .get(buffer as usize)
            .map_or(String::new(), |b| b.name.clone());
        self.trace.bank_maps.push(BankAccess {
            array,
            line: pos.line,
            warp,
            store,
            lanes: accesses
                .iter()
                .map(|(lane, addr, _)| (*lane, ((addr / 4) % banks) as usize, addr / 4))
                .collect(),
            wavefronts: wf,
        });
    }
}
