//! Axis and segment reductions on a group of devices (`cuda:0,1`): the outputs split
//! into one contiguous run per member, each member handed only the elements its outputs
//! read, the values joined in order.
//!
//! Every output is reduced whole, in the canonical order of its own elements, on one
//! member, so the bits are those of one device whatever the group: no output is cut
//! across devices, and nothing is combined across them. An axis reduction splits its
//! outermost kept axis ([`AxisPlan::split_outer`](redlab_core::shape::AxisPlan::split_outer)): columns of a C-order matrix split by
//! column blocks, rows by row blocks. Segments split into runs of whole segments with
//! about equal element counts. A reduction with one output (every axis reduced) runs on
//! the first member. Statistics (variance, log-sum-exp, …) split the same way, and so
//! do the ranks of a multi-process run ([`output_shares`]).

use std::ops::Range;

use redlab_core::segmented::Selection;
use redlab_core::shape::PlanPart;
use redlab_core::{ArrayRef, Value};

use crate::sharded::on_each_member;
use crate::{Device, Error};

/// One member's (or one rank's) share of a reduction with many outputs: the elements it
/// reads and what it reduces in them.
#[derive(Debug, Clone)]
pub enum OutputShare {
    /// A block of the outermost kept axis.
    Axes(PlanPart),
    /// A run of whole segments, `ranges` counted from `elements.start`.
    Ranges {
        /// The input elements the run's segments cover.
        elements: Range<usize>,
        /// The segments, counted from `elements.start`.
        ranges: Vec<Range<usize>>,
    },
}

impl OutputShare {
    /// The input elements this share reads, in an input of `len` elements.
    pub fn elements(&self, len: usize) -> Range<usize> {
        match self {
            OutputShare::Axes(part) => part.base..part_end(part, len),
            OutputShare::Ranges { elements, .. } => elements.clone(),
        }
    }

    /// What this share reduces, counted from the first of its [`elements`](Self::elements).
    pub fn selection(&self) -> Selection<'_> {
        match self {
            OutputShare::Axes(part) => Selection::Axes(&part.plan),
            OutputShare::Ranges { ranges, .. } => Selection::Ranges(ranges),
        }
    }

    /// How many outputs this share computes.
    pub fn outputs(&self) -> usize {
        self.selection().outputs()
    }
}

/// `selection` cut into at most `parts` shares of whole outputs, in output order, or
/// `None` where it cannot be cut (a single output, or no kept axis to cut along): then
/// one device reduces it whole.
pub fn output_shares(selection: Selection<'_>, parts: usize) -> Option<Vec<OutputShare>> {
    let shares: Vec<OutputShare> = match selection {
        Selection::Axes(plan) => plan
            .split_outer(parts)?
            .into_iter()
            .map(OutputShare::Axes)
            .collect(),
        Selection::Ranges(ranges) => split_ranges(ranges, parts),
    };
    (shares.len() > 1).then_some(shares)
}

/// Runs `work(member, elements, selection)` for each member's share of `selection` over
/// `data`, all at once, and returns the outputs in order with each member's seconds.
/// `work` is a reduction or a statistic of one device.
pub fn split_outputs<W>(
    members: &[Device],
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    work: W,
) -> Result<(Vec<Value>, Vec<f64>), Error>
where
    W: Fn(&Device, ArrayRef<'_>, Selection<'_>) -> Result<(Vec<Value>, f64), Error> + Sync,
{
    let Some(shares) = output_shares(selection, members.len()) else {
        return work(&members[0], data, selection).map(|(v, s)| (v, vec![s]));
    };
    let results = on_each_member(&members[..shares.len()], |d, member| {
        let elements = shares[d].elements(data.len());
        work(
            member,
            data.slice(elements.start, elements.end),
            shares[d].selection(),
        )
    });
    let mut values = Vec::with_capacity(selection.outputs());
    let mut seconds = Vec::with_capacity(results.len());
    for r in results {
        let (v, s) = r?;
        values.extend(v);
        seconds.push(s);
    }
    Ok((values, seconds))
}

/// Where a part's elements end in the buffer: its base plus its layout's span.
fn part_end(part: &PlanPart, len: usize) -> usize {
    part.plan
        .layout()
        .span()
        .map_or(part.base, |r| part.base + r.end)
        .min(len)
}

/// Segments cut into at most `parts` runs of whole segments, each with about the same
/// number of elements, and each run's ranges moved to count from its first element.
fn split_ranges(ranges: &[Range<usize>], parts: usize) -> Vec<OutputShare> {
    let total: usize = ranges.iter().map(|r| r.len()).sum();
    let parts = parts.clamp(1, ranges.len().max(1));
    let mut shares = Vec::with_capacity(parts);
    let mut first = 0;
    let mut seen = 0;
    for p in 1..=parts {
        // The run ends after the segment that reaches p/parts of the elements.
        let goal = total * p / parts;
        let mut last = first;
        while last < ranges.len() && (seen < goal || p == parts) {
            seen += ranges[last].len();
            last += 1;
        }
        if last == first {
            continue;
        }
        let run = &ranges[first..last];
        let lo = run.iter().map(|r| r.start).min().unwrap_or(0);
        let hi = run.iter().map(|r| r.end).max().unwrap_or(lo).max(lo);
        shares.push(OutputShare::Ranges {
            elements: lo..hi,
            ranges: run.iter().map(|r| r.start - lo..r.end - lo).collect(),
        });
        first = last;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::{split_ranges, OutputShare};

    #[test]
    fn segment_runs_cover_every_segment_once_in_order() {
        let ranges: Vec<_> = [0..5, 5..5, 5..100, 100..101, 101..300, 300..301]
            .into_iter()
            .collect();
        for parts in 1..8 {
            let shares = split_ranges(&ranges, parts);
            assert!(shares.len() <= parts);
            let mut rebuilt = Vec::new();
            for s in &shares {
                let OutputShare::Ranges { elements, ranges } = s else {
                    panic!("ranges only")
                };
                rebuilt.extend(
                    ranges
                        .iter()
                        .map(|r| r.start + elements.start..r.end + elements.start),
                );
            }
            assert_eq!(rebuilt, ranges, "{parts} parts");
        }
        assert!(split_ranges(&[], 3).is_empty());
    }
}
