//! Reductions with many results: one per output element of an axis reduction, or one per
//! segment of a flat array. Each result is the 1-D reduction of its own elements, listed
//! in canonical order (see [`crate::shape`]), so its bits are those of reducing that
//! sequence alone: they do not depend on the other outputs, the layout or the backend.
//!
//! This module says which elements each output reads ([`Selection`]), gathers them when
//! they are not consecutive, and packs the results into the array numpy would return
//! ([`crate::Packed`]); backends decide how to run the 1-D reductions.

use std::ops::Range;

use crate::shape::AxisPlan;
use crate::{reference, ArrayRef, Error, Problem, Value};

/// Which elements each output reads.
#[derive(Debug, Clone, Copy)]
pub enum Selection<'p> {
    /// The outputs of an axis reduction, in C order of the kept axes.
    Axes(&'p AxisPlan),
    /// Ranges of a flat array (segments).
    Ranges(&'p [Range<usize>]),
}

impl Selection<'_> {
    /// Number of outputs.
    pub fn outputs(&self) -> usize {
        match self {
            Selection::Axes(plan) => plan.outputs(),
            Selection::Ranges(ranges) => ranges.len(),
        }
    }

    /// The element range of `data` that output `k` reads, where its elements are
    /// consecutive in increasing index (a segment, or a row of a C-order matrix); `None`
    /// where they are gathered.
    pub fn consecutive(&self, k: usize) -> Option<Range<usize>> {
        match self {
            Selection::Ranges(ranges) => Some(ranges[k].clone()),
            Selection::Axes(plan) => {
                let len = plan.segment_len();
                if len == 0 {
                    return Some(0..0);
                }
                plan.contiguous(k).map(|start| start..start + len)
            }
        }
    }

    /// Output `k`'s elements as one view: a slice of `data` when they are consecutive,
    /// otherwise gathered into `scratch` (8-byte words, so any element type is aligned).
    pub fn view<'a>(
        &self,
        data: ArrayRef<'a>,
        k: usize,
        scratch: &'a mut Vec<u64>,
    ) -> Result<ArrayRef<'a>, Error> {
        match self {
            Selection::Ranges(ranges) => {
                let r = &ranges[k];
                Ok(data.slice(r.start, r.end))
            }
            Selection::Axes(plan) => {
                // An empty output reads nothing (and its base may lie past the data).
                if let Some(range) = self.consecutive(k) {
                    return Ok(data.slice(range.start, range.end));
                }
                let len = plan.segment_len();
                let size = data.dtype().size_bytes();
                scratch.clear();
                scratch.resize((len * size).div_ceil(8), 0);
                let out: &mut [u8] = bytemuck::cast_slice_mut(scratch.as_mut_slice());
                let src = data.bytes();
                for (j, offset) in plan.segment(k).enumerate() {
                    out[j * size..(j + 1) * size]
                        .copy_from_slice(&src[offset * size..(offset + 1) * size]);
                }
                ArrayRef::from_bytes(data.dtype(), &out[..len * size])
            }
        }
    }
}

/// Every output's elements copied one after another, in canonical order, with the range
/// each output occupies: for devices that read consecutive rows, where an output's
/// elements do not step evenly through `data`.
pub fn gather_rows(
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Result<(Vec<u8>, Vec<Range<usize>>), Error> {
    let size = data.dtype().size_bytes();
    let mut bytes = Vec::new();
    let mut ranges = Vec::with_capacity(selection.outputs());
    let mut scratch = Vec::new();
    for k in 0..selection.outputs() {
        let view = selection.view(data, k, &mut scratch)?;
        let start = bytes.len() / size;
        bytes.extend_from_slice(view.bytes());
        ranges.push(start..start + view.len());
    }
    Ok((bytes, ranges))
}

/// Reduces every output of `selection` with the host reference, one after another: the
/// oracle the backends are tested against.
pub fn reference(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Result<Vec<Value>, Error> {
    let mut scratch = Vec::new();
    (0..selection.outputs())
        .map(|k| {
            let view = selection.view(data, k, &mut scratch)?;
            reference::reduce(problem, view)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Layout;
    use crate::{DType, Op};

    #[test]
    fn gathered_and_sliced_outputs_reduce_like_their_own_sequences() {
        let data: Vec<f32> = (0..12).map(|i| (i as f32 * 0.37).sin()).collect();
        let problem = Problem::new(Op::Sum, DType::F32, None).expect("problem");
        let view = ArrayRef::from_slice(&data);
        let cols = AxisPlan::new(Layout::c_order(&[3, 4]), Some(&[0]), false).expect("plan");
        let values = reference(&problem, view, Selection::Axes(&cols)).expect("values");
        assert_eq!(values.len(), 4);
        for (j, v) in values.iter().enumerate() {
            let column = [data[j], data[4 + j], data[8 + j]];
            let expected =
                reference::reduce(&problem, ArrayRef::from_slice(&column)).expect("value");
            assert!(v.same_as(&expected), "column {j}: {v} vs {expected}");
        }
        let packed = crate::Packed::of_values(&problem, &values).expect("pack");
        assert_eq!((packed.dtype, packed.bytes.len()), (DType::F32, 16));
    }

    #[test]
    fn consecutive_names_the_rows_and_segments_and_not_the_columns() {
        let rows = AxisPlan::new(Layout::c_order(&[3, 4]), Some(&[1]), false).expect("plan");
        let got: Vec<_> = (0..3)
            .map(|k| Selection::Axes(&rows).consecutive(k))
            .collect();
        assert_eq!(got, [Some(0..4), Some(4..8), Some(8..12)]);
        let cols = AxisPlan::new(Layout::c_order(&[3, 4]), Some(&[0]), false).expect("plan");
        assert_eq!(Selection::Axes(&cols).consecutive(1), None);
        let empty = AxisPlan::new(Layout::c_order(&[3, 0]), Some(&[1]), false).expect("plan");
        assert_eq!(Selection::Axes(&empty).consecutive(2), Some(0..0));
        let ranges = [0..5, 5..5, 5..9];
        assert_eq!(Selection::Ranges(&ranges).consecutive(2), Some(5..9));
    }
}
