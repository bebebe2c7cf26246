//! Canonical order v1: the one order in which every backend sums (and multiplies) floats.
//!
//! The order depends only on `n`. Specification (see `docs/canonical-order.md` for the
//! reasons and the error bound):
//!
//! 1. The input is cut into tiles of [`TILE`] = [`LANES`] × [`ROWS`] elements; the last
//!    tile may be partial. A missing element is the identity (-0.0 for sum, 1.0 for prod),
//!    which leaves every value, signed zeros included, unchanged.
//! 2. Inside a tile, element `i` belongs to lane `i % LANES`. Each lane starts at the
//!    identity and combines its elements in increasing `i`.
//! 3. The lanes are folded by halving: with `w = LANES/2, LANES/4, …, 1`, lane `j` becomes
//!    `lane[j] ⊕ lane[j + w]` for `j < w`. Lane 0 is the tile's result.
//! 4. Tile results are combined by an aligned pairwise tree: each level pairs entries
//!    `(2k, 2k+1)` as `left ⊕ right`; an unpaired last entry moves up unchanged. So the
//!    node covering tiles `[j·2^k, (j+1)·2^k)` is a complete subtree, and a range of
//!    tiles aligned to a power of two can be reduced anywhere (another thread, block or
//!    device) and joined later without changing a bit.
//! 5. An empty input is +0.0 for sum (as numpy) and 1.0 for prod.
//!
//! The functions here are the plain scalar reference: the tests' oracle. Backends have
//! their own fast implementations of the same order.

use crate::num::{AccFloat, FloatInput};

/// Version of the order. Changing any constant or step above is a format change: results
/// recorded under one version need not match another.
pub const VERSION: u32 = 1;

/// Accumulators per tile. 1024 = a GPU block of 256 threads × one 16-byte load of f32;
/// on a CPU, 4 KiB of f32 accumulators that stay in L1 and vectorize at any SIMD width.
pub const LANES: usize = 1024;

/// Elements per lane per tile: the length of the sequential chain in each accumulator.
pub const ROWS: usize = 8;

/// Elements per tile.
pub const TILE: usize = LANES * ROWS;

/// The arithmetic combine of a canonical reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// Addition; identity -0.0.
    Sum,
    /// Multiplication; identity 1.0.
    Prod,
}

impl Arith {
    /// The identity used to pad partial tiles and start lanes.
    #[inline(always)]
    pub fn identity<A: AccFloat>(self) -> A {
        match self {
            Arith::Sum => A::NEG_ZERO,
            Arith::Prod => A::ONE,
        }
    }

    /// The result for empty input.
    pub fn empty_result<A: AccFloat>(self) -> A {
        match self {
            Arith::Sum => A::POS_ZERO,
            Arith::Prod => A::ONE,
        }
    }

    /// `left ⊕ right`.
    #[inline(always)]
    pub fn combine<A: AccFloat>(self, left: A, right: A) -> A {
        match self {
            Arith::Sum => left + right,
            Arith::Prod => left * right,
        }
    }
}

/// Number of tiles for `n` elements.
pub fn tile_count(n: usize) -> usize {
    n.div_ceil(TILE)
}

/// Reduces one tile (at most [`TILE`] elements) in the canonical order: steps 1–3.
pub fn reduce_tile<A: AccFloat, T: FloatInput<A>>(arith: Arith, tile: &[T]) -> A {
    debug_assert!(tile.len() <= TILE);
    let mut lanes = [arith.identity::<A>(); LANES];
    for (i, &x) in tile.iter().enumerate() {
        let lane = i % LANES;
        lanes[lane] = arith.combine(lanes[lane], x.to_acc());
    }
    let mut width = LANES / 2;
    while width >= 1 {
        for j in 0..width {
            lanes[j] = arith.combine(lanes[j], lanes[j + width]);
        }
        width /= 2;
    }
    lanes[0]
}

/// Combines tile results with the aligned pairwise tree: step 4. `None` for no tiles.
pub fn reduce_tree<A: AccFloat>(arith: Arith, mut level: Vec<A>) -> Option<A> {
    reduce_tree_in_place(arith, &mut level)
}

/// [`reduce_tree`] over a borrowed level, which it overwrites with the tree's partial
/// results: callers that reduce many short trees (one per column) reuse one buffer
/// instead of allocating a level per tree and per step.
pub fn reduce_tree_in_place<A: AccFloat>(arith: Arith, level: &mut [A]) -> Option<A> {
    pairwise_in_place(level, |left, right| arith.combine(left, right))
}

/// The aligned pairwise tree of step 4 over any items joined by `join`: item pairs
/// (2j, 2j + 1) of each level land in j, an odd last item moves up unchanged. `level`
/// is overwritten with partial results; `None` for no items.
pub fn pairwise_in_place<S: Copy>(level: &mut [S], join: impl Fn(S, S) -> S) -> Option<S> {
    let mut len = level.len();
    while len > 1 {
        for j in 0..len / 2 {
            level[j] = join(level[2 * j], level[2 * j + 1]);
        }
        if len % 2 == 1 {
            level[len / 2] = level[len - 1];
        }
        len = len.div_ceil(2);
    }
    level.first().copied()
}

/// The canonical reduction of `data`: the reference every backend must match bit for bit.
pub fn reduce<A: AccFloat, T: FloatInput<A>>(arith: Arith, data: &[T]) -> A {
    let tiles = data
        .chunks(TILE)
        .map(|tile| reduce_tile(arith, tile))
        .collect();
    reduce_tree(arith, tiles).unwrap_or_else(|| arith.empty_result())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_zeros_survive() {
        assert_eq!(
            reduce::<f32, f32>(Arith::Sum, &[-0.0]).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(
            reduce::<f32, f32>(Arith::Sum, &[0.0]).to_bits(),
            0.0f32.to_bits()
        );
        assert_eq!(
            reduce::<f32, f32>(Arith::Sum, &[]).to_bits(),
            0.0f32.to_bits()
        );
        assert_eq!(reduce::<f64, f64>(Arith::Prod, &[]), 1.0);
        assert_eq!(
            reduce::<f64, f64>(Arith::Prod, &[-0.0, 3.0]).to_bits(),
            (-0.0f64).to_bits()
        );
    }

    #[test]
    fn order_is_the_documented_one_on_a_small_case() {
        // Three elements: lanes 0, 1, 2 hold one element each; the fold combines lane 0
        // with lane 512, …, so the result is ((x0 + x2) + x1) after the w = 2 and w = 1
        // folds (everything else is -0.0). 1e8 + 1 - 1e8 shows the order: in f32,
        // (1e8 + -1e8) + 1 = 1, while (1e8 + 1) + -1e8 = 0.
        let data = [1.0e8f32, 1.0, -1.0e8];
        assert_eq!(reduce::<f32, f32>(Arith::Sum, &data), 1.0);
    }

    #[test]
    fn tree_matches_recursive_halving_on_aligned_ranges() {
        // The node covering tiles [0, 4) must equal the tree of the first four values.
        let values: Vec<f64> = (0..7).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let whole = reduce_tree(Arith::Sum, values.clone());
        let left = reduce_tree(Arith::Sum, values[..4].to_vec());
        let right = reduce_tree(Arith::Sum, values[4..].to_vec());
        assert_eq!(whole, left.zip(right).map(|(l, r)| l + r));
    }
}
