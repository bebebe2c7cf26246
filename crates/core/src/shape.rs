//! Shapes for reductions along axes: an array's dimensions and element strides (C order,
//! Fortran order or any strided view of a flat buffer), which axes to reduce, and the
//! segments that result — each output element's input elements, listed in the order the
//! canonical order reads them (docs/canonical-order.md, "Axes and segments").

use crate::Error;

/// Version of the rule that says which sequence each output of an axis or segment
/// reduction reduces (docs/canonical-order.md, "Axes and segments").
pub const SEGMENT_RULE_VERSION: u32 = 1;

/// Dimensions and element strides of an array view into a flat buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Length of each axis.
    pub dims: Vec<usize>,
    /// Elements between neighbours along each axis (may be 0 or negative).
    pub strides: Vec<isize>,
    /// The element of index (0, …, 0).
    pub offset: usize,
}

/// The most axes a layout may have (numpy's limit).
pub const MAX_DIMS: usize = 64;

fn shape_error(message: String) -> Error {
    Error::Shape(message)
}

impl Layout {
    /// C order (last axis contiguous).
    pub fn c_order(dims: &[usize]) -> Layout {
        Layout::packed(dims, (0..dims.len()).rev())
    }

    /// Fortran order (first axis contiguous).
    pub fn fortran_order(dims: &[usize]) -> Layout {
        Layout::packed(dims, 0..dims.len())
    }

    /// A dense layout whose strides grow along `fastest_first`.
    fn packed(dims: &[usize], fastest_first: impl Iterator<Item = usize>) -> Layout {
        let mut strides = vec![0isize; dims.len()];
        let mut step = 1isize;
        for axis in fastest_first {
            strides[axis] = step;
            step = step.saturating_mul(dims[axis].max(1) as isize);
        }
        Layout {
            dims: dims.to_vec(),
            strides,
            offset: 0,
        }
    }

    /// Number of elements the view holds (checked: the product of the dimensions).
    pub fn count(&self) -> Result<usize, Error> {
        if self.dims.contains(&0) {
            return Ok(0);
        }
        self.dims.iter().try_fold(1usize, |acc, &d| {
            acc.checked_mul(d)
                .ok_or_else(|| shape_error(format!("shape {:?} has too many elements", self.dims)))
        })
    }

    /// The lowest and highest element offsets a non-empty view reaches.
    fn reach(&self) -> (i128, i128) {
        let (mut low, mut high) = (self.offset as i128, self.offset as i128);
        for (&d, &s) in self.dims.iter().zip(&self.strides) {
            let reach = (d as i128 - 1) * s as i128;
            if reach < 0 {
                low += reach;
            } else {
                high += reach;
            }
        }
        (low, high)
    }

    /// The elements of the buffer a checked, non-empty view reaches (`None` if empty).
    pub fn span(&self) -> Option<std::ops::Range<usize>> {
        if self.dims.contains(&0) {
            return None;
        }
        let (low, high) = self.reach();
        Some(low.max(0) as usize..(high + 1).max(0) as usize)
    }

    /// Checks that every element the view names lies inside a buffer of `len` elements.
    pub fn check(&self, len: usize) -> Result<(), Error> {
        if self.dims.len() != self.strides.len() {
            return Err(shape_error(format!(
                "{} dimensions but {} strides",
                self.dims.len(),
                self.strides.len()
            )));
        }
        if self.dims.len() > MAX_DIMS {
            return Err(shape_error(format!(
                "{} dimensions; at most {MAX_DIMS} are supported",
                self.dims.len()
            )));
        }
        if self.count()? == 0 {
            return Ok(());
        }
        let (low, high) = self.reach();
        if low < 0 || high >= len as i128 {
            return Err(shape_error(format!(
                "the view {:?} (strides {:?}, offset {}) reaches elements {low}..={high}, outside the {len} elements of the data",
                self.dims, self.strides, self.offset
            )));
        }
        Ok(())
    }
}

/// One part of an [`AxisPlan`] cut along its outermost kept axis
/// ([`AxisPlan::split_outer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanPart {
    /// The part's own plan, its layout counted from `base`.
    pub plan: AxisPlan,
    /// The whole plan's outputs this part computes, in order.
    pub outputs: std::ops::Range<usize>,
    /// The buffer element the part's layout counts from.
    pub base: usize,
}

/// Which axes a reduction folds, checked against a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisPlan {
    layout: Layout,
    /// Reduced axes, ascending.
    reduced: Vec<usize>,
    /// Kept axes, ascending.
    kept: Vec<usize>,
    keepdims: bool,
}

impl AxisPlan {
    /// Plans reducing `axes` of `layout` (`None`: all axes). Negative axes count from the
    /// end, as in numpy; repeated or out-of-range axes are errors.
    pub fn new(layout: Layout, axes: Option<&[isize]>, keepdims: bool) -> Result<AxisPlan, Error> {
        let ndim = layout.dims.len();
        let mut reduced: Vec<usize> = match axes {
            None => (0..ndim).collect(),
            Some(list) => {
                let mut out = Vec::with_capacity(list.len());
                for &a in list {
                    let axis = if a < 0 { a + ndim as isize } else { a };
                    if axis < 0 || axis >= ndim as isize {
                        return Err(shape_error(format!(
                            "axis {a} is out of range for an array of {ndim} dimension{}",
                            if ndim == 1 { "" } else { "s" }
                        )));
                    }
                    if out.contains(&(axis as usize)) {
                        return Err(shape_error(format!("axis {a} is given twice")));
                    }
                    out.push(axis as usize);
                }
                out
            }
        };
        reduced.sort_unstable();
        let kept = (0..ndim).filter(|a| !reduced.contains(a)).collect();
        Ok(AxisPlan {
            layout,
            reduced,
            kept,
            keepdims,
        })
    }

    /// The shape of the result (reduced axes dropped, or kept as 1 with `keepdims`).
    pub fn out_dims(&self) -> Vec<usize> {
        (0..self.layout.dims.len())
            .filter_map(|a| {
                if self.reduced.contains(&a) {
                    self.keepdims.then_some(1)
                } else {
                    Some(self.layout.dims[a])
                }
            })
            .collect()
    }

    /// The plan cut into at most `parts` plans along its outermost kept axis, each with
    /// the range of outputs it computes: outputs are in C order of the kept axes, so each
    /// part's outputs are one contiguous run of the whole plan's. Each part's layout is
    /// rebased on the first element it reaches, and that element is returned with it, so
    /// a part can be handed only its own elements. `None` when no axis is kept (one
    /// output) or there are no outputs.
    pub fn split_outer(&self, parts: usize) -> Option<Vec<PlanPart>> {
        let &axis = self.kept.first()?;
        let extent = self.layout.dims[axis];
        let per_index = self.outputs() / extent.max(1);
        if extent == 0 || per_index == 0 {
            return None;
        }
        let parts = parts.clamp(1, extent);
        let mut out = Vec::with_capacity(parts);
        for p in 0..parts {
            let (lo, hi) = (extent * p / parts, extent * (p + 1) / parts);
            let mut layout = self.layout.clone();
            layout.dims[axis] = hi - lo;
            let moved = self.layout.offset as i128 + lo as i128 * layout.strides[axis] as i128;
            layout.offset = moved as usize;
            let base = layout.span().map_or(0, |r| r.start);
            layout.offset -= base;
            out.push(PlanPart {
                plan: AxisPlan {
                    layout,
                    reduced: self.reduced.clone(),
                    kept: self.kept.clone(),
                    keepdims: self.keepdims,
                },
                outputs: lo * per_index..hi * per_index,
                base,
            });
        }
        Some(out)
    }

    /// Number of output elements.
    pub fn outputs(&self) -> usize {
        self.kept.iter().map(|&a| self.layout.dims[a]).product()
    }

    /// The view the plan reduces.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Elements per output (the product of the reduced axes).
    pub fn segment_len(&self) -> usize {
        self.reduced.iter().map(|&a| self.layout.dims[a]).product()
    }

    /// The buffer offset of the first element of output `k` (outputs in C order of the
    /// kept axes).
    fn base(&self, mut k: usize) -> isize {
        let mut offset = self.layout.offset as isize;
        for &axis in self.kept.iter().rev() {
            let d = self.layout.dims[axis];
            offset += (k % d) as isize * self.layout.strides[axis];
            k /= d;
        }
        offset
    }

    /// Output `k`'s input elements as buffer offsets, in canonical order: C order of the
    /// reduced axes (the last reduced axis fastest), whatever the memory layout.
    pub fn segment(&self, k: usize) -> SegmentWalk<'_> {
        self.segment_from(k, 0)
    }

    /// Output `k`'s elements from its `start`-th on (as [`AxisPlan::segment`], without
    /// walking the ones before): the odometer starts at `start` unravelled over the
    /// reduced axes.
    pub fn segment_from(&self, k: usize, start: usize) -> SegmentWalk<'_> {
        let len = self.segment_len();
        let mut index = vec![0; self.reduced.len()];
        let mut offset = self.base(k);
        if start >= len {
            return SegmentWalk {
                plan: self,
                index,
                offset,
                left: 0,
            };
        }
        // Every reduced axis is non-empty here, since len > start.
        let mut rest = start;
        for (slot, &axis) in self.reduced.iter().enumerate().rev() {
            let d = self.layout.dims[axis];
            index[slot] = rest % d;
            rest /= d;
            offset += index[slot] as isize * self.layout.strides[axis];
        }
        SegmentWalk {
            plan: self,
            index,
            offset,
            left: len - start,
        }
    }

    /// When output `k`'s elements are consecutive in the buffer, their first offset.
    pub fn contiguous(&self, k: usize) -> Option<usize> {
        // Reduced axes of length 1 do not matter; the others must step by 1, then by the
        // product of the lengths inside them.
        let mut step = 1isize;
        for &axis in self.reduced.iter().rev() {
            let d = self.layout.dims[axis];
            if d == 1 {
                continue;
            }
            if self.layout.strides[axis] != step {
                return None;
            }
            step *= d as isize;
        }
        Some(self.base(k) as usize)
    }
}

/// Axes (outermost first, as `(length, stride)`) merged into runs that step evenly:
/// axes of length 1 drop out, and an axis whose stride is its inner neighbour's stride
/// times that neighbour's length joins it. One run means the elements form a single
/// arithmetic progression.
pub fn even_runs(axes: impl Iterator<Item = (usize, isize)>) -> Vec<(usize, isize)> {
    let mut runs: Vec<(usize, isize)> = Vec::new();
    for (d, s) in axes.filter(|&(d, _)| d != 1) {
        match runs.last_mut() {
            Some(last) if last.1 == s * d as isize => {
                last.0 *= d;
                last.1 = s;
            }
            _ => runs.push((d, s)),
        }
    }
    runs
}

impl AxisPlan {
    /// The buffer offset of output `k`'s first element.
    pub fn start(&self, k: usize) -> usize {
        self.base(k) as usize
    }

    /// The kept axes as even runs (see [`even_runs`]), outermost first.
    pub fn kept_runs(&self) -> Vec<(usize, isize)> {
        let axes = self
            .kept
            .iter()
            .map(|&a| (self.layout.dims[a], self.layout.strides[a]));
        even_runs(axes)
    }

    /// The reduced axes as even runs, outermost first: one run when every output's
    /// elements step evenly through the buffer.
    pub fn reduced_runs(&self) -> Vec<(usize, isize)> {
        let axes = self
            .reduced
            .iter()
            .map(|&a| (self.layout.dims[a], self.layout.strides[a]));
        even_runs(axes)
    }
}

impl AxisPlan {
    /// When neighbouring outputs read neighbouring elements (the last kept axis has
    /// stride 1), the length of such runs: outputs `r·L … r·L + L − 1` read the elements
    /// of output `r·L` shifted by 0 … L − 1. Column reductions of a C-order matrix are
    /// the common case.
    pub fn output_runs(&self) -> Option<usize> {
        let &last = self.kept.last()?;
        (self.layout.strides[last] == 1).then_some(self.layout.dims[last])
    }
}

/// The offsets of one output's elements (see [`AxisPlan::segment`]).
pub struct SegmentWalk<'a> {
    plan: &'a AxisPlan,
    index: Vec<usize>,
    offset: isize,
    left: usize,
}

impl Iterator for SegmentWalk<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let here = self.offset as usize;
        // Advance the odometer over the reduced axes, last fastest.
        for slot in (0..self.index.len()).rev() {
            let axis = self.plan.reduced[slot];
            let (d, s) = (self.plan.layout.dims[axis], self.plan.layout.strides[axis]);
            self.index[slot] += 1;
            self.offset += s;
            if self.index[slot] < d {
                break;
            }
            self.offset -= s * d as isize;
            self.index[slot] = 0;
        }
        Some(here)
    }
}

/// Segments of a flat array: CSR-style offsets or a fixed length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segments {
    /// Segment i is elements `offsets[i]..offsets[i + 1]` (m + 1 offsets, m segments).
    Offsets(Vec<u64>),
    /// Consecutive segments of this many elements; the last may be shorter.
    Fixed(usize),
}

impl Segments {
    /// Checks the segments against `n` elements and returns them as ranges.
    pub fn ranges(&self, n: usize) -> Result<Vec<std::ops::Range<usize>>, Error> {
        match self {
            Segments::Fixed(0) => Err(shape_error("a segment length must be at least 1".into())),
            Segments::Fixed(len) => Ok((0..n.div_ceil(*len))
                .map(|i| i * len..((i + 1) * len).min(n))
                .collect()),
            Segments::Offsets(offsets) => {
                if offsets.is_empty() {
                    return Err(shape_error(
                        "segment offsets need at least one entry (m segments take m + 1)".into(),
                    ));
                }
                let mut ranges = Vec::with_capacity(offsets.len() - 1);
                for (i, pair) in offsets.windows(2).enumerate() {
                    if pair[1] < pair[0] {
                        return Err(shape_error(format!(
                            "segment offsets must not decrease: offsets[{}] = {} > offsets[{}] = {}",
                            i,
                            pair[0],
                            i + 1,
                            pair[1]
                        )));
                    }
                    ranges.push(pair[0] as usize..pair[1] as usize);
                }
                if let Some(&last) = offsets.last() {
                    if last > n as u64 {
                        return Err(shape_error(format!(
                            "segment offsets run to {last}, past the end of the {n} elements"
                        )));
                    }
                }
                Ok(ranges)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(plan: &AxisPlan, k: usize) -> Vec<usize> {
        plan.segment(k).collect()
    }

    #[test]
    fn rows_and_columns_of_c_and_fortran_matrices() {
        let c = AxisPlan::new(Layout::c_order(&[2, 3]), Some(&[1]), false).expect("plan");
        assert_eq!(c.out_dims(), vec![2]);
        assert_eq!(offsets(&c, 1), vec![3, 4, 5]);
        assert_eq!(c.contiguous(1), Some(3));
        let cols = AxisPlan::new(Layout::c_order(&[2, 3]), Some(&[0]), true).expect("plan");
        assert_eq!(cols.out_dims(), vec![1, 3]);
        assert_eq!(offsets(&cols, 2), vec![2, 5]);
        assert_eq!(cols.contiguous(2), None);
        let f = AxisPlan::new(Layout::fortran_order(&[2, 3]), Some(&[1]), false).expect("plan");
        assert_eq!(offsets(&f, 1), vec![1, 3, 5]);
    }

    #[test]
    fn several_axes_read_in_c_order_of_the_reduced_axes() {
        // Shape (2, 3, 4) in C order; reduce axes 0 and 2: output j (axis 1) reads
        // (i0, j, i2) with i2 fastest.
        let plan = AxisPlan::new(Layout::c_order(&[2, 3, 4]), Some(&[0, -1]), false).expect("plan");
        assert_eq!(plan.out_dims(), vec![3]);
        assert_eq!(offsets(&plan, 1), vec![4, 5, 6, 7, 16, 17, 18, 19]);
        let all = AxisPlan::new(Layout::fortran_order(&[2, 2]), None, false).expect("plan");
        assert_eq!(all.out_dims(), Vec::<usize>::new());
        assert_eq!(offsets(&all, 0), vec![0, 2, 1, 3]);
    }

    #[test]
    fn a_walk_from_any_start_continues_the_whole_walk() {
        // A strided, reversed view of shape (3, 4, 5) reducing axes 0 and 2.
        let mut layout = Layout::c_order(&[3, 4, 5]);
        for s in &mut layout.strides {
            *s *= 2;
        }
        layout.offset = (2 * layout.strides[0]) as usize;
        layout.strides[0] = -layout.strides[0];
        let plan = AxisPlan::new(layout, Some(&[0, 2]), false).expect("plan");
        for k in 0..plan.outputs() {
            let whole = offsets(&plan, k);
            for start in 0..=whole.len() + 1 {
                let from: Vec<usize> = plan.segment_from(k, start).collect();
                assert_eq!(
                    from,
                    whole[start.min(whole.len())..],
                    "output {k} from {start}"
                );
            }
        }
    }

    #[test]
    fn bad_axes_views_and_offsets_are_errors() {
        let layout = Layout::c_order(&[2, 3]);
        assert!(AxisPlan::new(layout.clone(), Some(&[2]), false).is_err());
        assert!(AxisPlan::new(layout.clone(), Some(&[-3]), false).is_err());
        assert!(AxisPlan::new(layout.clone(), Some(&[1, -1]), false).is_err());
        assert!(layout.check(5).is_err());
        assert!(layout.check(6).is_ok());
        let reversed = Layout {
            dims: vec![3],
            strides: vec![-1],
            offset: 1,
        };
        assert!(reversed.check(3).is_err());
        assert!(Segments::Offsets(vec![0, 3, 2]).ranges(5).is_err());
        assert!(Segments::Offsets(vec![0, 6]).ranges(5).is_err());
        assert!(Segments::Offsets(vec![]).ranges(5).is_err());
        assert!(Segments::Fixed(0).ranges(5).is_err());
        assert_eq!(
            Segments::Fixed(2).ranges(5).expect("ranges"),
            vec![0..2, 2..4, 4..5]
        );
    }
}
