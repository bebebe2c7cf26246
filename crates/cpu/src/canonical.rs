//! The canonical float order (v1) on CPU threads.
//!
//! Same order as [`redlab_core::canonical`], computed fast:
//! - a tile's lanes are one array of [`LANES`] accumulators; each full row of the tile is
//!   one `lanes[j] ⊕= row[j]` pass, which the compiler vectorizes at any SIMD width
//!   because the lanes are independent;
//! - the tile tree is walked recursively over aligned power-of-two ranges of tiles, and
//!   `rayon::join` runs the two halves of each node in parallel. Every node is the same
//!   subtree whichever thread computes it, so the result does not depend on the thread
//!   count or on work stealing.

use redlab_core::canonical::{tile_count, Arith, LANES, TILE};
use redlab_core::num::{AccFloat, FloatInput};

/// Tiles reduced by one task without further splitting (a power of two, so leaves stay
/// aligned subtrees). 16 tiles = 128 Ki elements: large enough to amortize a task.
const LEAF_TILES: usize = 16;

/// A canonical combine: its identity and its operation, as a monomorphized pair.
pub trait Combine<A>: Copy + Send + Sync {
    /// Pads partial tiles and starts lanes.
    fn identity(self) -> A;
    /// `left ⊕ right`.
    fn combine(self, left: A, right: A) -> A;
    /// The same operation as the reference names it.
    fn arith(self) -> Arith;
}

/// Addition with identity -0.0.
#[derive(Clone, Copy)]
pub struct Add;
/// Multiplication with identity 1.0.
#[derive(Clone, Copy)]
pub struct Mul;

impl<A: AccFloat> Combine<A> for Add {
    #[inline(always)]
    fn identity(self) -> A {
        A::NEG_ZERO
    }
    #[inline(always)]
    fn combine(self, left: A, right: A) -> A {
        left + right
    }
    fn arith(self) -> Arith {
        Arith::Sum
    }
}

impl<A: AccFloat> Combine<A> for Mul {
    #[inline(always)]
    fn identity(self) -> A {
        A::ONE
    }
    #[inline(always)]
    fn combine(self, left: A, right: A) -> A {
        left * right
    }
    fn arith(self) -> Arith {
        Arith::Prod
    }
}

/// A tile of at most `N` elements (`N` a power of two ≤ [`LANES`]): one partial row.
/// Lanes at or past its length hold the identity, and `x ⊕ identity = x` exactly, so the
/// fold steps wider than the next power of two of the length change nothing and are
/// skipped, as are the identity lanes' initial values: the same bits as the full tile,
/// at a cost that follows the length (short rows of axis reductions).
fn reduce_short<A: AccFloat, T: FloatInput<A>, C: Combine<A>, const N: usize>(
    op: C,
    tile: &[T],
) -> A {
    let mut lanes = [op.identity(); N];
    for (lane, &x) in lanes.iter_mut().zip(tile) {
        *lane = op.combine(op.identity(), x.to_acc());
    }
    let mut width = tile.len().next_power_of_two() / 2;
    while width >= 1 {
        let (low, high) = lanes[..2 * width].split_at_mut(width);
        for (a, &b) in low.iter_mut().zip(high.iter()) {
            *a = op.combine(*a, b);
        }
        width /= 2;
    }
    lanes[0]
}

/// Reduces one tile (at most `TILE` elements).
fn reduce_tile<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(op: C, tile: &[T]) -> A {
    match tile.len() {
        0..=64 => reduce_short::<A, T, C, 64>(op, tile),
        65..=512 => reduce_short::<A, T, C, 512>(op, tile),
        _ => reduce_full_tile(op, tile),
    }
}

/// Reduces one tile of any length up to `TILE`.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn reduce_full_tile<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(op: C, tile: &[T]) -> A {
    let mut lanes = [op.identity(); LANES];
    let rows = tile.chunks_exact(LANES);
    let rest = rows.remainder();
    for row in rows {
        for (lane, &x) in lanes.iter_mut().zip(row) {
            *lane = op.combine(*lane, x.to_acc());
        }
    }
    for (lane, &x) in lanes.iter_mut().zip(rest) {
        *lane = op.combine(*lane, x.to_acc());
    }
    let mut width = LANES / 2;
    while width >= 1 {
        let (low, high) = lanes[..2 * width].split_at_mut(width);
        for (a, &b) in low.iter_mut().zip(high.iter()) {
            *a = op.combine(*a, b);
        }
        width /= 2;
    }
    lanes[0]
}

/// Reduces the aligned tile range `[first, first + span)` clipped to `tiles`.
fn reduce_node<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    data: &[T],
    first: usize,
    span: usize,
    tiles: usize,
) -> A {
    if span <= LEAF_TILES {
        let mut level = [op.identity(); LEAF_TILES];
        let count = span.min(tiles - first);
        for (k, slot) in level.iter_mut().enumerate().take(count) {
            let start = (first + k) * TILE;
            let end = (start + TILE).min(data.len());
            *slot = reduce_tile(op, &data[start..end]);
        }
        // The pairwise tree inside the leaf, level by level, as in the reference.
        let mut len = count;
        while len > 1 {
            for k in 0..len / 2 {
                level[k] = op.combine(level[2 * k], level[2 * k + 1]);
            }
            if len % 2 == 1 {
                level[len / 2] = level[len - 1];
            }
            len = len.div_ceil(2);
        }
        return level[0];
    }
    let half = span / 2;
    if first + half >= tiles {
        return reduce_node(op, data, first, half, tiles);
    }
    let (left, right) = rayon::join(
        || reduce_node(op, data, first, half, tiles),
        || reduce_node(op, data, first + half, half, tiles),
    );
    op.combine(left, right)
}

/// The canonical reduction of `data`, or `None` when it is empty.
pub fn reduce<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(op: C, data: &[T]) -> Option<A> {
    let tiles = tile_count(data.len());
    if tiles == 0 {
        return None;
    }
    Some(reduce_node(op, data, 0, tiles.next_power_of_two(), tiles))
}
