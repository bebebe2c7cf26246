//! Races on global memory, within a work-group and between work-groups of one launch.
//!
//! A pair of accesses races when one of them is a plain (non-atomic) write: atomics
//! against atomics, and plain reads against atomics (the first read of a
//! compare-and-swap loop), are how atomics are meant to be used.
//!
//! - **Within a group**: two work-items touch a global byte between two barriers that
//!   order global memory (`CLK_GLOBAL_MEM_FENCE`).
//! - **Between groups**: a group touches a byte another group of the same launch wrote
//!   (or writes a byte another group read), unless the two are
//!   ordered the way the last-group pattern orders them: the writer performed a global
//!   atomic after its write (a release, as a fence then a ticket) and the later group
//!   performed one before its access (an acquire). Groups run one after another here,
//!   so "later" is well defined and every writer's atomics are known.
//!
//! Launches are ordered: the tracker lives for one launch.

/// The last access of a byte within the running group since its last global barrier.
#[derive(Debug, Clone, Copy, Default)]
struct Recent {
    /// Writer lane + 1 (0: none).
    writer: u32,
    /// Reader lane + 1 (0: none; `u32::MAX`: several).
    reader: u32,
    /// Whether the write was atomic.
    atomic: bool,
}

/// The last write and read of a byte by any group of the launch.
#[derive(Debug, Clone, Copy, Default)]
struct Across {
    /// Writing group + 1 (0: none), with its count of atomics at the write.
    writer: u32,
    writer_atomics: u32,
    atomic: bool,
    /// Reading group + 1 (0: none).
    reader: u32,
    reader_atomics: u32,
}

/// What the tracker found wrong with one access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Race {
    /// Another work-item of the group.
    InGroup {
        /// Its lane (`usize::MAX`: several read).
        other: usize,
        /// Whether it wrote.
        other_wrote: bool,
    },
    /// Another work-group.
    Across {
        /// Its linear index.
        group: usize,
        /// Whether it wrote.
        other_wrote: bool,
    },
}

/// Global-memory race tracking for one launch.
#[derive(Debug, Default)]
pub struct GlobalRaces {
    recent: Vec<Vec<Recent>>,
    across: Vec<Vec<Across>>,
    /// Global atomics each finished group performed.
    group_atomics: Vec<u32>,
    group: usize,
    atomics: u32,
    /// Buffers too large to track within the memory budget.
    skipped: Vec<bool>,
}

impl GlobalRaces {
    /// Starts work-group `group` (linear index).
    pub fn start_group(&mut self, group: usize) {
        self.group = group;
        self.atomics = 0;
        self.barrier();
    }

    /// Ends the running group.
    pub fn end_group(&mut self) {
        if self.group_atomics.len() <= self.group {
            self.group_atomics.resize(self.group + 1, 0);
        }
        self.group_atomics[self.group] = self.atomics;
    }

    /// A barrier that orders global memory within the group.
    pub fn barrier(&mut self) {
        for shadow in &mut self.recent {
            shadow.iter_mut().for_each(|r| *r = Recent::default());
        }
    }

    /// Whether `buffer` of `bytes` bytes is tracked; allocates its shadows on first use
    /// when `fits(extra bytes)` allows.
    fn tracked(&mut self, buffer: usize, bytes: usize, fits: &dyn Fn(u64) -> bool) -> bool {
        if self.skipped.len() <= buffer {
            self.skipped.resize(buffer + 1, false);
            self.recent.resize(buffer + 1, Vec::new());
            self.across.resize(buffer + 1, Vec::new());
        }
        if self.skipped[buffer] {
            return false;
        }
        if self.recent[buffer].len() != bytes {
            let cost = bytes as u64
                * (std::mem::size_of::<Recent>() + std::mem::size_of::<Across>()) as u64;
            if !fits(cost) {
                self.skipped[buffer] = true;
                return false;
            }
            self.recent[buffer] = vec![Recent::default(); bytes];
            self.across[buffer] = vec![Across::default(); bytes];
        }
        true
    }

    /// Notes an access of `range` of global `buffer` (`size` bytes) by `lane`; returns
    /// the first race it makes. An atomic access counts as a write, and as the group's
    /// next atomic once noted.
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        buffer: usize,
        size: usize,
        range: std::ops::Range<usize>,
        lane: usize,
        write: bool,
        atomic: bool,
        fits: &dyn Fn(u64) -> bool,
    ) -> Option<Race> {
        if range.end > size || !self.tracked(buffer, size, fits) {
            return None;
        }
        let me = lane as u32 + 1;
        let group = self.group as u32 + 1;
        let write = write || atomic;
        let mut found = None;
        for byte in range {
            let r = &mut self.recent[buffer][byte];
            // A pair races when one side is a plain write: an atomic against an atomic,
            // or against a plain read (the first read of a compare-and-swap loop), is
            // how atomics are meant to be used.
            let plain_write = write && !atomic;
            if found.is_none() {
                if r.writer != 0 && r.writer != me && (!r.atomic || plain_write) {
                    found = Some(Race::InGroup {
                        other: r.writer as usize - 1,
                        other_wrote: true,
                    });
                } else if plain_write && r.reader != 0 && r.reader != me {
                    found = Some(Race::InGroup {
                        other: if r.reader == u32::MAX {
                            usize::MAX
                        } else {
                            r.reader as usize - 1
                        },
                        other_wrote: false,
                    });
                }
            }
            if write {
                *r = Recent {
                    writer: me,
                    reader: 0,
                    atomic,
                };
            } else if r.reader == 0 || r.reader == me {
                r.reader = me;
            } else {
                r.reader = u32::MAX;
            }
            let a = self.across[buffer][byte];
            let ordered = |other: u32, at: u32, atomics: &[u32], mine: u32| {
                mine > 0 && atomics.get(other as usize - 1).is_some_and(|&n| n > at)
            };
            if found.is_none() {
                if a.writer != 0
                    && a.writer != group
                    && (!a.atomic || plain_write)
                    && !ordered(
                        a.writer,
                        a.writer_atomics,
                        &self.group_atomics,
                        self.atomics,
                    )
                {
                    found = Some(Race::Across {
                        group: a.writer as usize - 1,
                        other_wrote: true,
                    });
                } else if plain_write
                    && a.reader != 0
                    && a.reader != group
                    && !ordered(
                        a.reader,
                        a.reader_atomics,
                        &self.group_atomics,
                        self.atomics,
                    )
                {
                    found = Some(Race::Across {
                        group: a.reader as usize - 1,
                        other_wrote: false,
                    });
                }
            }
            let a = &mut self.across[buffer][byte];
            if write {
                *a = Across {
                    writer: group,
                    writer_atomics: self.atomics,
                    atomic,
                    reader: 0,
                    reader_atomics: 0,
                };
            } else {
                a.reader = group;
                a.reader_atomics = self.atomics;
            }
        }
        if atomic {
            self.atomics += 1;
        }
        found
    }
}
