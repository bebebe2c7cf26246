//! The simulated memories: global and constant buffers (they outlive a launch), local
//! buffers of the running work-group with a byte map of what was written and a shadow
//! of who touched each byte since the last barrier (for race detection), and one
//! private arena per work-item.

use crate::types::Space;
use crate::value::Ptr;

/// Who touched a local byte since the last barrier (lane + 1; 0: nobody).
#[derive(Debug, Clone, Copy, Default)]
struct Shadow {
    writer: u32,
    reader: u32,
}

/// Marks a byte read by more than one work-item.
const MANY: u32 = u32::MAX;

/// One buffer.
#[derive(Debug, Clone)]
pub struct Buffer {
    /// Its name (argument or variable), for messages.
    pub name: String,
    /// Contents.
    pub bytes: Vec<u8>,
    /// Start in the group's local address space (local buffers; it decides the banks).
    pub base: u64,
    /// What the kernel may do with a global buffer (`--arg …:ro|wo`).
    pub access: Access,
    /// Which bytes hold a written value: every local buffer, and global buffers left
    /// uninitialized on purpose (empty otherwise: all bytes count as written).
    init: Vec<bool>,
    shadow: Vec<Shadow>,
}

/// What a kernel may do with a global buffer, as the host declared it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Reads and writes.
    #[default]
    ReadWrite,
    /// Reads only (`CL_MEM_READ_ONLY`).
    ReadOnly,
    /// Writes only (`CL_MEM_WRITE_ONLY`).
    WriteOnly,
}

impl Buffer {
    /// A buffer with these contents.
    pub fn new(name: &str, bytes: Vec<u8>) -> Buffer {
        Buffer {
            name: name.to_string(),
            bytes,
            base: 0,
            access: Access::ReadWrite,
            init: Vec::new(),
            shadow: Vec::new(),
        }
    }

    /// A global buffer of `len` bytes that nothing has written: a read of a byte before
    /// the kernel writes it is reported.
    pub fn uninitialized(name: &str, len: usize) -> Buffer {
        Buffer {
            init: vec![false; len],
            ..Buffer::new(name, vec![0; len])
        }
    }
}

/// A conflicting earlier access found by the race check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// The other work-item (lane in the group).
    pub other: usize,
    /// Whether the other access was a write.
    pub other_wrote: bool,
}

/// Every memory of a launch.
#[derive(Debug, Default)]
pub struct Memory {
    /// Global buffers (kernel arguments), kept across launches.
    pub global: Vec<Buffer>,
    /// Program-scope `__constant` data.
    pub constant: Vec<Buffer>,
    /// Local buffers of the running work-group.
    pub local: Vec<Buffer>,
    /// Private memory, one arena per work-item of the group.
    pub private: Vec<Vec<u8>>,
    /// Which private bytes hold a value written since their variable was declared, per
    /// work-item (for uninitialized private reads).
    private_init: Vec<Vec<bool>>,
    /// Private variables, by id − 1 (a private pointer's `buffer`; 0: no variable known):
    /// their byte range in every arena and their name, so an index past an array's end
    /// is caught even where the arena goes on (a neighbouring variable).
    private_vars: Vec<(usize, usize, String)>,
    private_ids: std::collections::HashMap<(usize, usize, String), u32>,
    local_top: u64,
    /// The most bytes the simulation may hold, bookkeeping included (`None`:
    /// [`DEFAULT_LIMIT`]).
    pub limit: Option<u64>,
}

/// The simulator's memory budget unless told otherwise: enough for any kernel a GPU
/// could run with a realistic local and private footprint over a few million elements,
/// far below what would take a workstation down.
pub const DEFAULT_LIMIT: u64 = 2 << 30;

/// Bytes of bookkeeping per local byte: the byte, its written flag and its race shadow.
const LOCAL_COST: u64 = 2 + std::mem::size_of::<Shadow>() as u64;

impl Memory {
    fn buffer(&self, ptr: &Ptr, lane: usize) -> Option<&[u8]> {
        match ptr.space {
            Space::Global => self.global.get(ptr.buffer as usize).map(|b| &b.bytes[..]),
            Space::Constant => self.constant.get(ptr.buffer as usize).map(|b| &b.bytes[..]),
            Space::Local => self.local.get(ptr.buffer as usize).map(|b| &b.bytes[..]),
            Space::Private => self.private.get(lane).map(|b| &b[..]),
        }
    }

    fn buffer_mut(&mut self, ptr: &Ptr, lane: usize) -> Option<&mut Vec<u8>> {
        match ptr.space {
            Space::Global => self
                .global
                .get_mut(ptr.buffer as usize)
                .map(|b| &mut b.bytes),
            Space::Constant => self
                .constant
                .get_mut(ptr.buffer as usize)
                .map(|b| &mut b.bytes),
            Space::Local => self
                .local
                .get_mut(ptr.buffer as usize)
                .map(|b| &mut b.bytes),
            Space::Private => self.private.get_mut(lane),
        }
    }

    /// The name of the buffer `ptr` points into.
    pub fn name(&self, ptr: &Ptr) -> String {
        let b = match ptr.space {
            Space::Global => self.global.get(ptr.buffer as usize),
            Space::Constant => self.constant.get(ptr.buffer as usize),
            Space::Local => self.local.get(ptr.buffer as usize),
            Space::Private => return "private memory".into(),
        };
        b.map_or("an unknown buffer".into(), |b| b.name.clone())
    }

    fn range(&self, ptr: &Ptr, lane: usize, len: usize) -> Result<std::ops::Range<usize>, String> {
        let size = self.buffer(ptr, lane).map_or(0, <[u8]>::len);
        let start = ptr.offset;
        if ptr.space == Space::Private && ptr.buffer > 0 {
            if let Some((lo, hi, name)) = self.private_vars.get(ptr.buffer as usize - 1) {
                let end = start + len as i64;
                if start < *lo as i64 || end > *hi as i64 {
                    return Err(format!(
                        "bytes {}..{} of private variable '{name}' ({} bytes)",
                        start - *lo as i64,
                        end - *lo as i64,
                        hi - lo
                    ));
                }
            }
        }
        if start < 0 || start as u64 + len as u64 > size as u64 {
            return Err(format!(
                "bytes {start}..{} of {} ({} bytes)",
                start + len as i64,
                self.name(ptr),
                size
            ));
        }
        Ok(start as usize..start as usize + len)
    }

    /// Reads `len` bytes; an error names the buffer and range when out of bounds.
    pub fn read(&self, ptr: &Ptr, lane: usize, len: usize) -> Result<Vec<u8>, String> {
        let r = self.range(ptr, lane, len)?;
        Ok(self
            .buffer(ptr, lane)
            .map(|b| b[r].to_vec())
            .unwrap_or_default())
    }

    /// Writes bytes; an error names the buffer and range when out of bounds.
    pub fn write(&mut self, ptr: &Ptr, lane: usize, bytes: &[u8]) -> Result<(), String> {
        let r = self.range(ptr, lane, bytes.len())?;
        if let Some(b) = self.buffer_mut(ptr, lane) {
            b[r.clone()].copy_from_slice(bytes);
        }
        if ptr.space == Space::Local {
            if let Some(b) = self.local.get_mut(ptr.buffer as usize) {
                b.init[r].iter_mut().for_each(|x| *x = true);
            }
        } else if ptr.space == Space::Global {
            if let Some(b) = self.global.get_mut(ptr.buffer as usize) {
                if let Some(flags) = b.init.get_mut(r) {
                    flags.iter_mut().for_each(|x| *x = true);
                }
            }
        } else if ptr.space == Space::Private {
            self.mark_private(lane, r);
        }
        Ok(())
    }

    /// Starts a work-group: no local buffers, `lanes` empty private arenas.
    pub fn start_group(&mut self, lanes: usize) {
        self.local.clear();
        self.local_top = 0;
        self.private = vec![Vec::new(); lanes];
        self.private_init = vec![Vec::new(); lanes];
    }

    /// The bytes the simulation holds now, bookkeeping included.
    pub fn used(&self) -> u64 {
        let global: u64 = self.global.iter().map(|b| b.bytes.len() as u64).sum();
        let constant: u64 = self.constant.iter().map(|b| b.bytes.len() as u64).sum();
        // Each private byte has its written flag beside it.
        let private: u64 = self.private.iter().map(|a| 2 * a.len() as u64).sum();
        global + constant + private + self.local_top * LOCAL_COST
    }

    /// Refuses to grow by `extra` bytes past the limit, saying what asked for them.
    pub fn check_budget(&self, extra: u64, what: impl FnOnce() -> String) -> Result<(), String> {
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        match self.used().checked_add(extra) {
            Some(total) if total <= limit => Ok(()),
            _ => Err(format!(
                "{} would take the simulator past its memory limit of {} MiB (raise --max-memory)",
                what(),
                limit >> 20
            )),
        }
    }

    /// Allocates a local buffer of `bytes` (uninitialized); returns its index, or says why
    /// it would not fit in the memory limit.
    pub fn alloc_local(&mut self, name: &str, bytes: usize, align: usize) -> Result<u32, String> {
        self.check_budget((bytes as u64).saturating_mul(LOCAL_COST), || {
            format!("local array {name} of {bytes} bytes")
        })?;
        let align = align.max(4) as u64;
        let base = self.local_top.div_ceil(align) * align;
        self.local_top = base + bytes as u64;
        self.local.push(Buffer {
            name: name.to_string(),
            bytes: vec![0; bytes],
            base,
            access: Access::ReadWrite,
            init: vec![false; bytes],
            shadow: vec![Shadow::default(); bytes],
        });
        Ok((self.local.len() - 1) as u32)
    }

    /// Local memory the group uses, in bytes.
    pub fn local_bytes(&self) -> u64 {
        self.local_top
    }

    /// The id of the private variable `name` at bytes `start..end` of every arena (the
    /// same declaration met again gets the same id).
    pub fn private_var(&mut self, start: usize, end: usize, name: &str) -> u32 {
        let key = (start, end, name.to_string());
        if let Some(&id) = self.private_ids.get(&key) {
            return id;
        }
        self.private_vars.push(key.clone());
        let id = self.private_vars.len() as u32;
        self.private_ids.insert(key, id);
        id
    }

    /// Grows every private arena to at least `bytes`, or says why that would not fit in
    /// the memory limit.
    pub fn reserve_private(&mut self, bytes: usize) -> Result<(), String> {
        // The arenas grow together, so the first says how far all of them are. Most calls
        // (a declaration met again in a loop) need nothing: return before any counting.
        let have = self.private.first().map_or(bytes, Vec::len);
        if have >= bytes {
            return Ok(());
        }
        let lanes = self.private.len();
        let grow = ((bytes - have) as u64).saturating_mul(2 * lanes as u64);
        self.check_budget(grow, || {
            format!("{bytes} bytes of private memory for each of {lanes} work-items")
        })?;
        for arena in &mut self.private {
            arena.resize(bytes, 0);
        }
        for flags in &mut self.private_init {
            flags.resize(bytes, false);
        }
        Ok(())
    }

    /// Marks `range` of `lane`'s private arena as written.
    pub fn mark_private(&mut self, lane: usize, range: std::ops::Range<usize>) {
        if let Some(flags) = self
            .private_init
            .get_mut(lane)
            .and_then(|f| f.get_mut(range))
        {
            flags.iter_mut().for_each(|x| *x = true);
        }
    }

    /// A declaration: `range` holds no value yet in any work-item's arena.
    pub fn forget_private(&mut self, range: std::ops::Range<usize>) {
        for flags in &mut self.private_init {
            if let Some(f) = flags.get_mut(range.clone()) {
                f.iter_mut().for_each(|x| *x = false);
            }
        }
    }

    /// Whether every byte in `ranges` (offsets relative to `ptr`) of `lane`'s private
    /// arena was written since its declaration.
    pub fn private_initialized(&self, ptr: &Ptr, lane: usize, ranges: &[(usize, usize)]) -> bool {
        let Some(flags) = self.private_init.get(lane) else {
            return true;
        };
        ranges.iter().all(|(o, n)| {
            let start = ptr.offset as usize + o;
            flags
                .get(start..start + n)
                .is_none_or(|s| s.iter().all(|x| *x))
        })
    }

    /// The private variable `ptr` points into, by name.
    pub fn private_name(&self, ptr: &Ptr) -> String {
        ptr.buffer
            .checked_sub(1)
            .and_then(|k| self.private_vars.get(k as usize))
            .map_or("private memory".into(), |(_, _, name)| name.clone())
    }

    /// Whether the data bytes `ranges` (relative to `ptr`) of a global buffer hold
    /// written values (always, unless the buffer was left uninitialized on purpose).
    pub fn global_initialized(&self, ptr: &Ptr, ranges: &[(usize, usize)]) -> bool {
        let Some(b) = self.global.get(ptr.buffer as usize) else {
            return true;
        };
        b.init.is_empty()
            || ranges.iter().all(|(o, n)| {
                let start = ptr.offset as usize + o;
                b.init
                    .get(start..start + n)
                    .is_none_or(|s| s.iter().all(|x| *x))
            })
    }

    /// Whether every byte in `ranges` (offsets relative to `ptr`) of a local buffer was
    /// written.
    pub fn local_initialized(&self, ptr: &Ptr, ranges: &[(usize, usize)]) -> bool {
        let Some(b) = self.local.get(ptr.buffer as usize) else {
            return true;
        };
        ranges.iter().all(|(o, n)| {
            let start = ptr.offset as usize + o;
            b.init
                .get(start..start + n)
                .is_some_and(|s| s.iter().all(|x| *x))
        })
    }

    /// Notes an access of `len` local bytes by `lane`; returns a conflicting access by
    /// another work-item since the last barrier, if any.
    pub fn note_local(
        &mut self,
        ptr: &Ptr,
        lane: usize,
        len: usize,
        write: bool,
    ) -> Option<Conflict> {
        let b = self.local.get_mut(ptr.buffer as usize)?;
        let me = lane as u32 + 1;
        let start = ptr.offset.max(0) as usize;
        let end = (start + len).min(b.shadow.len());
        let mut conflict = None;
        for s in &mut b.shadow[start.min(end)..end] {
            if s.writer != 0 && s.writer != me {
                conflict = conflict.or(Some(Conflict {
                    other: s.writer as usize - 1,
                    other_wrote: true,
                }));
            }
            if write {
                if s.reader == MANY || (s.reader != 0 && s.reader != me) {
                    let other = if s.reader == MANY {
                        usize::MAX
                    } else {
                        s.reader as usize - 1
                    };
                    conflict = conflict.or(Some(Conflict {
                        other,
                        other_wrote: false,
                    }));
                }
                s.writer = me;
            } else if s.reader == 0 {
                s.reader = me;
            } else if s.reader != me {
                s.reader = MANY;
            }
        }
        conflict
    }

    /// A barrier: accesses before it no longer race with accesses after it.
    pub fn barrier(&mut self) {
        for b in &mut self.local {
            b.shadow.iter_mut().for_each(|s| *s = Shadow::default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(offset: i64) -> Ptr {
        Ptr {
            space: Space::Local,
            buffer: 0,
            offset,
        }
    }

    #[test]
    fn races_are_found_between_barriers_only() {
        let mut m = Memory::default();
        m.start_group(4);
        m.alloc_local("s", 16, 4).expect("fits");
        assert_eq!(m.note_local(&local(0), 0, 4, true), None);
        assert_eq!(m.note_local(&local(0), 0, 4, false), None, "own write");
        let c = m
            .note_local(&local(0), 1, 4, false)
            .expect("read after another's write");
        assert_eq!((c.other, c.other_wrote), (0, true));
        m.barrier();
        assert_eq!(m.note_local(&local(0), 1, 4, false), None);
        assert!(
            m.note_local(&local(0), 2, 4, true).is_some(),
            "write after another's read"
        );
    }

    #[test]
    fn bounds_and_initialization_are_tracked() {
        let mut m = Memory::default();
        m.start_group(1);
        m.alloc_local("s", 8, 4).expect("fits");
        assert!(m.read(&local(6), 0, 4).is_err());
        assert!(!m.local_initialized(&local(0), &[(0, 4)]));
        m.write(&local(0), 0, &[1, 2, 3, 4]).expect("in bounds");
        assert!(m.local_initialized(&local(0), &[(0, 4)]));
        assert!(!m.local_initialized(&local(0), &[(0, 8)]));
    }
}
