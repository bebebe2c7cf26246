//! Splitting one reduction over several devices without changing its bits.
//!
//! The input is cut at aligned subtree boundaries of the canonical tile tree
//! ([`crate::canonical`]): level `k` is chosen so that there are several subtrees of
//! `2^k` tiles per device ([`SUBTREES_PER_DEVICE`], so uneven device counts stay
//! balanced), and each device takes a contiguous run of them. A device reduces each of
//! its subtrees on its own — a subtree is an input of its own whose canonical reduction
//! is that subtree's root — and the roots, joined in order by the aligned pairwise tree
//! ([`crate::merge::merge_tree`]), are the canonical result: a float sum on any number
//! of devices equals the one-device and CPU results bit for bit. Integers and
//! selections are exact anyway; argmin/argmax indices are offset by each subtree's start.

use std::ops::Range;

use crate::canonical::TILE;
use crate::merge::merge_tree;
use crate::{Problem, Value};

/// Subtrees per device the plan aims for, at least (fewer when the input is small).
pub const SUBTREES_PER_DEVICE: usize = 4;

/// How `n` elements are split over devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardPlan {
    /// Tiles per subtree (a power of two).
    pub span_tiles: usize,
    /// Element range of each subtree, in order.
    pub subtrees: Vec<Range<usize>>,
    /// The device of each subtree (non-decreasing: each device has a contiguous run).
    pub owner: Vec<usize>,
}

impl ShardPlan {
    /// The element range device `d` holds (empty when it has no subtree).
    pub fn shard(&self, d: usize) -> Range<usize> {
        let mine: Vec<&Range<usize>> = self
            .subtrees
            .iter()
            .zip(&self.owner)
            .filter(|(_, &o)| o == d)
            .map(|(r, _)| r)
            .collect();
        match (mine.first(), mine.last()) {
            (Some(a), Some(b)) => a.start..b.end,
            _ => 0..0,
        }
    }

    /// The subtrees of device `d`, in order.
    pub fn subtrees_of(&self, d: usize) -> Vec<Range<usize>> {
        self.subtrees
            .iter()
            .zip(&self.owner)
            .filter(|(_, &o)| o == d)
            .map(|(r, _)| r.clone())
            .collect()
    }
}

/// Splits `n` elements over `devices` devices (at least 1).
pub fn plan(n: usize, devices: usize) -> ShardPlan {
    let devices = devices.max(1);
    let tiles = n.div_ceil(TILE);
    let want = devices * SUBTREES_PER_DEVICE;
    // The widest span that still leaves `want` subtrees (or one tile per subtree).
    let mut span = 1usize;
    while span * 2 <= tiles && tiles.div_ceil(span * 2) >= want {
        span *= 2;
    }
    let count = tiles.div_ceil(span).max(usize::from(n > 0));
    let subtrees: Vec<Range<usize>> = (0..count)
        .map(|s| (s * span * TILE).min(n)..((s + 1) * span * TILE).min(n))
        .collect();
    // Contiguous runs of nearly equal length; the first devices take the remainder.
    let owner = (0..count).map(|s| s * devices / count.max(1)).collect();
    ShardPlan {
        span_tiles: span,
        subtrees,
        owner,
    }
}

/// [`plan`] for `problem`: where the result cannot depend on how the input is cut
/// (everything but float sums and products: integers wrap or widen exactly, selections
/// and bitwise operators are exact, ties go to the lowest index), each device's run of
/// subtrees becomes one part, reduced in one launch; float sums and products keep the
/// subtrees, whose roots the canonical tree needs.
pub fn plan_for(problem: &Problem, n: usize, devices: usize) -> ShardPlan {
    let subtrees = plan(n, devices);
    if problem.dtype.is_float() && problem.op.is_arithmetic() {
        return subtrees;
    }
    let mut whole = ShardPlan {
        span_tiles: subtrees.span_tiles,
        subtrees: Vec::new(),
        owner: Vec::new(),
    };
    for d in 0..devices.max(1) {
        let part = subtrees.shard(d);
        if !part.is_empty() {
            whole.subtrees.push(part);
            whole.owner.push(d);
        }
    }
    whole
}

/// Joins the subtrees' results (in plan order, each from its own input) into the
/// result over all `n` elements: argmin/argmax indices offset, then the aligned tree.
pub fn combine(problem: &Problem, plan: &ShardPlan, roots: &[Value]) -> Option<Value> {
    let level: Vec<Value> = roots
        .iter()
        .zip(&plan.subtrees)
        .map(|(v, r)| match *v {
            Value::Indexed { value, index } => Value::Indexed {
                value,
                index: index + r.start as u64,
            },
            other => other,
        })
        .collect();
    merge_tree(problem, level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Distribution};
    use crate::{reference, DType, Op};

    #[test]
    fn shards_cover_the_input_in_aligned_subtrees_and_balance() {
        for n in [0, 1, 8191, 8193, 100_000, 1 << 22, (1 << 22) + 5] {
            for devices in 1..=8 {
                let p = plan(n, devices);
                let mut at = 0;
                for r in &p.subtrees {
                    assert_eq!(r.start, at);
                    assert_eq!(r.start % (p.span_tiles * TILE), 0, "aligned");
                    at = r.end;
                }
                assert_eq!(at, n);
                assert!(p.span_tiles.is_power_of_two());
                assert!(p.owner.windows(2).all(|w| w[0] <= w[1]));
                let per: Vec<usize> = (0..devices).map(|d| p.subtrees_of(d).len()).collect();
                let (lo, hi) = (
                    per.iter().min().copied().unwrap_or(0),
                    per.iter().max().copied().unwrap_or(0),
                );
                assert!(hi - lo <= 1, "n={n} devices={devices}: {per:?}");
            }
        }
    }

    #[test]
    fn whole_shards_only_where_the_cut_cannot_show() {
        let sum = Problem::new(Op::Sum, DType::F32, None).expect("valid");
        let min = Problem::new(Op::Min, DType::F32, None).expect("valid");
        let isum = Problem::new(Op::Sum, DType::I32, None).expect("valid");
        let n = 1 << 22;
        assert_eq!(plan_for(&sum, n, 3), plan(n, 3));
        for p in [plan_for(&min, n, 3), plan_for(&isum, n, 3)] {
            assert_eq!(p.subtrees.len(), 3);
            assert_eq!(p.owner, vec![0, 1, 2]);
            for d in 0..3 {
                assert_eq!(p.shard(d), plan(n, 3).shard(d));
            }
        }
        assert_eq!(plan_for(&min, 1, 4).subtrees, vec![0..1]);
    }

    #[test]
    fn any_split_combined_equals_the_one_device_result() {
        for (dtype, ops) in [
            (DType::F32, vec![Op::Sum, Op::Min, Op::ArgMax, Op::ArgMin]),
            (DType::F64, vec![Op::Sum, Op::Max]),
            (DType::I32, vec![Op::Sum, Op::Xor, Op::ArgMin]),
        ] {
            for n in [1, 8193, 300_007] {
                let data = generate(dtype, n, Distribution::Normal, 7).expect("data");
                for op in &ops {
                    let problem = Problem::new(*op, dtype, None).expect("valid");
                    let whole = reference::reduce(&problem, data.view()).expect("reduces");
                    for (devices, p) in [1, 2, 3, 4, 7].into_iter().flat_map(|devices| {
                        // Subtrees, and whole shards where the problem allows them.
                        [plan(n, devices), plan_for(&problem, n, devices)].map(|p| (devices, p))
                    }) {
                        let roots: Vec<Value> = p
                            .subtrees
                            .iter()
                            .map(|r| {
                                reference::reduce(&problem, data.view().slice(r.start, r.end))
                                    .expect("reduces")
                            })
                            .collect();
                        let got = combine(&problem, &p, &roots).expect("parts");
                        assert!(
                            got.same_as(&whole),
                            "{problem} n={n} devices={devices}: {got} vs {whole}"
                        );
                    }
                }
            }
        }
    }
}
