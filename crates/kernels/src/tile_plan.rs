//! The tile plan of a statistic over a selection (`TilePlan`): every output's canonical
//! tiles as a task table (first element, length, signed step) that the statistics
//! kernels read, gathering the outputs into rows on the host where their elements do not
//! step evenly through the data.

use std::ops::Range;

use redlab_core::canonical::TILE;
use redlab_core::segmented::{gather_rows, Selection};
use redlab_core::{ArrayRef, Error};

use crate::driver::RunError;
use crate::statistics::SHORT_MAX;

/// The tiles of every output, for the kernel, and where they come from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TilePlan {
    /// Three words per tile: first element, length, signed step (as bits).
    pub table: Vec<u64>,
    /// The tiles of each output, as a range of tile indices.
    pub outputs: Vec<Range<usize>>,
    /// The outputs' elements gathered into rows, when they do not step evenly in place
    /// (the table then indexes these bytes).
    pub gathered: Option<Vec<u8>>,
}

impl TilePlan {
    /// Plans the tiles of `selection` over `data`, gathering the outputs into rows
    /// when they do not step evenly in place.
    pub fn new(data: ArrayRef<'_>, selection: Selection<'_>) -> Result<TilePlan, Error> {
        if let Some(plan) = TilePlan::in_place(selection) {
            return Ok(plan);
        }
        let (bytes, ranges) = gather_rows(data, selection)?;
        let mut plan = TilePlan::in_place(Selection::Ranges(&ranges))
            .ok_or_else(|| Error::Shape("gathered rows do not step evenly".into()))?;
        plan.gathered = Some(bytes);
        Ok(plan)
    }

    /// Plans the tiles of `selection` where the data lies (for device-resident inputs),
    /// or `None` when some output's elements do not step evenly through it.
    pub fn in_place(selection: Selection<'_>) -> Option<TilePlan> {
        let mut plan = TilePlan {
            table: Vec::new(),
            outputs: Vec::with_capacity(selection.outputs()),
            gathered: None,
        };
        match selection {
            Selection::Ranges(ranges) => {
                for r in ranges {
                    plan.output(r.start as i64, r.len(), 1);
                }
            }
            Selection::Axes(axes) => {
                let step = match axes.reduced_runs().as_slice() {
                    [] => 1,
                    [(_, s)] => *s as i64,
                    _ => return None,
                };
                let len = axes.segment_len();
                for k in 0..axes.outputs() {
                    let first = if len == 0 { 0 } else { axes.start(k) as i64 };
                    plan.output(first, len, step);
                }
            }
        }
        Some(plan)
    }

    /// Adds one output of `len` elements from `first`, `step` apart.
    fn output(&mut self, first: i64, len: usize, step: i64) {
        let start = self.tiles();
        for t in 0..len.div_ceil(TILE) {
            let from = first + (t * TILE) as i64 * step;
            self.table.extend_from_slice(&[
                from as u64,
                (len - t * TILE).min(TILE) as u64,
                step as u64,
            ]);
        }
        self.outputs.push(start..self.tiles());
    }

    /// What the kernel reads: the plan's gathered rows, or `data` itself.
    pub fn rows<'a>(&'a self, data: ArrayRef<'a>) -> Result<ArrayRef<'a>, RunError> {
        match &self.gathered {
            Some(bytes) => ArrayRef::from_bytes(data.dtype(), bytes)
                .map_err(|e| RunError::Device(e.to_string())),
            None => Ok(data),
        }
    }

    /// Tiles in all.
    pub fn tiles(&self) -> usize {
        self.table.len() / 3
    }

    /// Tiles per output, when the outputs are columns: at least two, each with the same
    /// tiles (lengths and strided step), output `o + 1` starting one element after output
    /// `o`, so 32 of them side by side read 32 neighbouring elements per load.
    pub fn columns(&self) -> Option<usize> {
        let outputs = self.outputs.len();
        let per = self.outputs.first()?.len();
        if outputs < 2 || per == 0 || self.tiles() != outputs * per {
            return None;
        }
        let row = |o: usize| &self.table[3 * o * per..3 * (o + 1) * per];
        let first = row(0);
        if first[2] as i64 == 1
            || self
                .outputs
                .iter()
                .enumerate()
                .any(|(o, r)| r.start != o * per)
        {
            return None;
        }
        (1..outputs)
            .all(|o| {
                let this = row(o);
                (0..per).all(|t| {
                    this[3 * t] == first[3 * t] + o as u64
                        && this[3 * t + 1] == first[3 * t + 1]
                        && this[3 * t + 2] == first[3 * t + 2]
                })
            })
            .then_some(per)
    }

    /// The lanes per tile of the short kernel (the longest tile's length rounded up to
    /// a power of two), when every tile has at most [`SHORT_MAX`] elements.
    pub fn short_width(&self) -> Option<usize> {
        let longest = self.longest()?;
        (longest <= SHORT_MAX).then(|| longest.next_power_of_two().max(1))
    }

    /// The length of the longest tile, when there is one.
    pub fn longest(&self) -> Option<usize> {
        self.table.chunks(3).map(|t| t[1] as usize).max()
    }

    /// The length of the shortest tile, when there is one.
    pub fn shortest(&self) -> Option<usize> {
        self.table.chunks(3).map(|t| t[1] as usize).min()
    }
}
