//! Asynchronous copies between global and local memory (`async_work_group_copy`,
//! `async_work_group_strided_copy`, `wait_group_events`, `prefetch`) and their misuse.
//!
//! A copy is a work-group function: every work-item must reach it with the same
//! arguments. The simulator performs it at the call, then keeps its destination (and
//! source) ranges pending until a `wait_group_events` names its event: a work-item that
//! touches a pending destination, or writes a pending source, before the wait reads or
//! clobbers bytes a GPU may still be moving, and a copy never waited for is reported at
//! the end of the work-group.

use crate::mask::Mask;
use crate::metrics::FindingKind;
use crate::source::{Diag, Pos};
use crate::types::Scalar;
use crate::value::{Ptr, Value};

use super::{Lanes, Sim};

/// A copy whose event has not been waited for.
#[derive(Debug, Clone)]
pub(crate) struct PendingCopy {
    event: u64,
    /// Destination and source: (pointer to the first byte, bytes spanned).
    dst: (Ptr, usize),
    src: (Ptr, usize),
    /// Where it was started, for messages.
    line_pos: Pos,
}

fn overlaps(range: &(Ptr, usize), ptr: &Ptr, bytes: usize) -> bool {
    let (start, len) = range;
    start.space == ptr.space
        && start.buffer == ptr.buffer
        && ptr.offset < start.offset + *len as i64
        && start.offset < ptr.offset + bytes as i64
}

impl Sim<'_> {
    /// `async_work_group_copy(dst, src, n, event)` and the strided form (`stride` in
    /// elements on the global side: the source for global→local copies).
    pub(super) fn async_copy(
        &mut self,
        name: &str,
        args: &[crate::ast::Expr],
        mask: &Mask,
        pos: Pos,
    ) -> Result<Lanes, Diag> {
        let strided = name == "async_work_group_strided_copy";
        let wanted = if strided { 5 } else { 4 };
        if args.len() != wanted {
            return Err(Diag::new(pos, format!("{name} takes {wanted} arguments")));
        }
        let values: Vec<Lanes> = args
            .iter()
            .map(|a| self.eval(a, mask))
            .collect::<Result<_, _>>()?;
        self.group_wide(pos, mask, name);
        let Some(first) = mask.iter().next() else {
            return Ok(vec![Value::Void; self.lanes]);
        };
        let uniform = mask.iter().all(|l| values.iter().all(|v| v[l] == v[first]));
        if !uniform {
            self.find(FindingKind::AsyncCopyMisuse, pos, first, || {
                format!("{name}: the work-items of the group pass different arguments")
            });
        }
        let (Value::Ptr(dst, elem), Value::Ptr(src, _)) = (&values[0][first], &values[1][first])
        else {
            return Err(Diag::new(
                pos,
                format!("{name} copies between two pointers"),
            ));
        };
        let (dst, src, elem) = (*dst, *src, elem.clone());
        let count = values[2][first].as_u64() as usize;
        let stride = if strided {
            values[3][first].as_u64().max(1) as usize
        } else {
            1
        };
        let event = values[wanted - 1][first].as_u64();
        let size = elem.size();
        let global_source = src.space == crate::types::Space::Global;
        let (src_step, dst_step) = if global_source {
            (stride * size, size)
        } else {
            (size, stride * size)
        };
        for k in 0..count {
            let from = Ptr {
                offset: src.offset + (k * src_step) as i64,
                ..src
            };
            let to = Ptr {
                offset: dst.offset + (k * dst_step) as i64,
                ..dst
            };
            let copied = self
                .mem
                .read(&from, first, size)
                .and_then(|bytes| self.mem.write(&to, first, &bytes));
            if let Err(what) = copied {
                self.find(FindingKind::OutOfBounds, pos, first, || {
                    format!("{name} element {k}: {what}")
                });
                break;
            }
        }
        let span = |step: usize| {
            if count == 0 {
                0
            } else {
                (count - 1) * step + size
            }
        };
        let event = if event != 0 {
            event
        } else {
            self.next_event += 1;
            self.next_event
        };
        self.pending.push(PendingCopy {
            event,
            dst: (dst, span(dst_step)),
            src: (src, span(src_step)),
            line_pos: pos,
        });
        Ok(self.broadcast(Value::Int(Scalar::ULong, event), mask))
    }

    /// `wait_group_events(n, events)`: the copies of those events are complete.
    pub(super) fn wait_events(
        &mut self,
        args: &[crate::ast::Expr],
        mask: &Mask,
        pos: Pos,
    ) -> Result<Lanes, Diag> {
        let values: Vec<Lanes> = args
            .iter()
            .map(|a| self.eval(a, mask))
            .collect::<Result<_, _>>()?;
        self.group_wide(pos, mask, "wait_group_events");
        let Some(first) = mask.iter().next() else {
            return Ok(vec![Value::Void; self.lanes]);
        };
        let (Some(n), Some(list)) = (values.first(), values.get(1)) else {
            return Err(Diag::new(pos, "wait_group_events takes a count and a list"));
        };
        let n = n[first].as_u64() as usize;
        let Value::Ptr(list, elem) = &list[first] else {
            return Err(Diag::new(
                pos,
                "wait_group_events needs a pointer to events",
            ));
        };
        let size = elem.size().max(1);
        let mut waited = Vec::with_capacity(n);
        for k in 0..n {
            let at = Ptr {
                offset: list.offset + (k * size) as i64,
                ..*list
            };
            match self.mem.read(&at, first, size) {
                Ok(bytes) => {
                    let mut word = [0u8; 8];
                    word[..size.min(8)].copy_from_slice(&bytes[..size.min(8)]);
                    waited.push(u64::from_le_bytes(word));
                }
                Err(what) => {
                    self.find(FindingKind::OutOfBounds, pos, first, || {
                        format!("wait_group_events reads event {k}: {what}")
                    });
                }
            }
        }
        self.pending.retain(|p| !waited.contains(&p.event));
        Ok(vec![Value::Void; self.lanes])
    }

    /// The async-copy check of one lane's access.
    pub(super) fn check_pending(
        &mut self,
        pos: Pos,
        lane: usize,
        ptr: &Ptr,
        bytes: usize,
        write: bool,
    ) {
        let hit = self
            .pending
            .iter()
            .find(|p| overlaps(&p.dst, ptr, bytes) || (write && overlaps(&p.src, ptr, bytes)));
        let Some(p) = hit.cloned() else { return };
        let name = self.mem.name(ptr);
        let (me, _) = self.ids(lane);
        let started = p.line_pos.line;
        self.find(FindingKind::AsyncCopyMisuse, pos, lane, || {
            format!(
                "work-item {me:?} {} bytes {}..{} of {name} while the async copy started at line {started} may still be moving them (wait_group_events first)",
                if write { "writes" } else { "reads" },
                ptr.offset,
                ptr.offset + bytes as i64
            )
        });
    }

    /// Reports the copies a work-group never waited for, and forgets them.
    pub(super) fn unwaited_copies(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let started = p.line_pos.line;
            self.find(FindingKind::AsyncCopyMisuse, p.line_pos, 0, || {
                format!("the async copy started at line {started} is never waited for (wait_group_events)")
            });
        }
        self.next_event = 0;
    }
}
