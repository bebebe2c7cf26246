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

use redlab_core::canonical::{pairwise_in_place, tile_count, Arith, LANES, TILE};
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

/// Where a tile's values come from: an array ([`Elements`]), or values computed row by
/// row from other arrays (a user-defined map, without writing the mapped values out).
/// The canonical order only ever asks a source to fold one row of at most [`LANES`]
/// consecutive values into as many lanes.
pub trait Rows<A>: Sync {
    /// Per-task working memory (a map's row registers); made once per leaf of the tree.
    type Scratch;
    /// Number of values.
    fn len(&self) -> usize;
    /// Whether there are no values.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fresh working memory for [`Rows::fold_row`].
    fn scratch(&self) -> Self::Scratch;
    /// `lanes[j] = op.combine(lanes[j], value(start + j))` for every `j < lanes.len()`.
    fn fold_row<C: Combine<A>>(
        &self,
        op: C,
        lanes: &mut [A],
        start: usize,
        scratch: &mut Self::Scratch,
    );
}

/// The values of an array, converted exactly to the accumulator type.
pub struct Elements<'a, T>(pub &'a [T]);

impl<A: AccFloat, T: FloatInput<A>> Rows<A> for Elements<'_, T> {
    type Scratch = ();
    fn len(&self) -> usize {
        self.0.len()
    }
    fn scratch(&self) {}
    #[inline(always)]
    fn fold_row<C: Combine<A>>(&self, op: C, lanes: &mut [A], start: usize, _: &mut ()) {
        let row = &self.0[start..start + lanes.len()];
        // A whole tile reads 8 rows front to back: ask for the lines a few KiB ahead in
        // blocks, so the fills stay in flight (crate::prefetch).
        for (k, (lanes, src)) in lanes
            .chunks_mut(ROW_BLOCK)
            .zip(row.chunks(ROW_BLOCK))
            .enumerate()
        {
            crate::prefetch::ahead(self.0, start + k * ROW_BLOCK, src.len());
            T::combine_row(src, lanes, |lane, x| op.combine(lane, x));
        }
    }
}

/// Values of a row folded between two prefetches ([`Elements`]).
const ROW_BLOCK: usize = 256;

/// A tile of at most `N` values (`N` a power of two ≤ [`LANES`]): one partial row.
/// Lanes at or past its length hold the identity, and `x ⊕ identity = x` exactly, so
/// folding all `N` lanes gives the bits of the full tile's fold; with `N` a constant the
/// fold unrolls into vector operations (a fold bounded by the length ran scalar and
/// took most of the time of rows of 32 elements).
#[inline(always)]
fn reduce_short<A: AccFloat, R: Rows<A>, C: Combine<A>, const N: usize>(
    op: C,
    rows: &R,
    start: usize,
    len: usize,
    scratch: &mut R::Scratch,
) -> A {
    let mut lanes = [op.identity(); N];
    // identity ⊕ x == x: folding into identity lanes starts them as the reference does.
    rows.fold_row(op, &mut lanes[..len], start, scratch);
    fold_halving(op, &mut lanes)
}

/// The canonical reduction of a row of 1 to `N` values, `N` a power of two ≤ [`LANES`]:
/// such a row is one partial tile with at most one value per lane, and lanes `N..LANES`
/// hold only identities, which the halving steps fold into lanes with
/// `x ⊕ identity = x` exactly, so the fold of the first `N` lanes has the tile's bits
/// (a row of 3 takes 3 combines instead of 1023).
#[inline(always)]
pub fn reduce_row_within<A: AccFloat, T: FloatInput<A>, C: Combine<A>, const N: usize>(
    op: C,
    row: &[T],
) -> A {
    debug_assert!(N.is_power_of_two() && N <= LANES && (1..=N).contains(&row.len()));
    reduce_short::<A, Elements<'_, T>, C, N>(op, &Elements(row), 0, row.len().min(N), &mut ())
}

/// [`reduce_row_within`] for a row of `H + 1` to `2H` values (`H` a power of two,
/// `2H` ≤ [`LANES`]), with the fold's first halving step taken while reading: lane `j`
/// starts as `x[j]` and takes `x[j + H]` where the row has it, which is that step's
/// `(identity ⊕ x[j]) ⊕ (identity ⊕ x[j + H])` since `identity ⊕ x = x` exactly. So
/// the same bits, without `2H` lanes to clear and half of them to fold back.
#[inline(always)]
pub fn reduce_row_halves<A: AccFloat, T: FloatInput<A>, C: Combine<A>, const H: usize>(
    op: C,
    row: &[T],
) -> A {
    debug_assert!(H.is_power_of_two() && 2 * H <= LANES && (H + 1..=2 * H).contains(&row.len()));
    let mut lanes = [op.identity(); H];
    let (low, high) = row.split_at(H);
    if high.len() == H {
        // Both halves full: each lane is `x[j] ⊕ x[j + H]`, in one pass over the row
        // instead of a pass per half with the lanes stored between them (rows of 512 and
        // 32 f32 read 1.02–1.28× as fast, results/cpu-dev-2core-stat-rows-prefetch).
        T::combine_pairs(low, high, &mut lanes, |a, b| op.combine(a, b));
    } else {
        // `identity ⊕ x` is `x` exactly: the low half is copied in, not combined.
        T::combine_row(low, &mut lanes, |_, x| x);
        T::combine_row(high, &mut lanes[..high.len()], |lane, x| {
            op.combine(lane, x)
        });
    }
    fold_halving(op, &mut lanes)
}

/// Reduces the tile of `len` (at most `TILE`) values from `start`.
fn reduce_tile<A: AccFloat, R: Rows<A>, C: Combine<A>>(
    op: C,
    rows: &R,
    start: usize,
    len: usize,
    scratch: &mut R::Scratch,
) -> A {
    match len {
        0..=32 => reduce_short::<A, R, C, 32>(op, rows, start, len, scratch),
        33..=128 => reduce_short::<A, R, C, 128>(op, rows, start, len, scratch),
        129..=512 => reduce_short::<A, R, C, 512>(op, rows, start, len, scratch),
        _ => reduce_full_tile(op, rows, start, len, scratch),
    }
}

/// Reduces one tile of any length up to `TILE`.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn reduce_full_tile<A: AccFloat, R: Rows<A>, C: Combine<A>>(
    op: C,
    rows: &R,
    start: usize,
    len: usize,
    scratch: &mut R::Scratch,
) -> A {
    let mut lanes = [op.identity(); LANES];
    let mut at = start;
    let end = start + len;
    while at + LANES <= end {
        rows.fold_row(op, &mut lanes, at, scratch);
        at += LANES;
    }
    rows.fold_row(op, &mut lanes[..end - at], at, scratch);
    fold_halving(op, &mut lanes)
}

/// The tile's fold: lane `m` takes lane `m + w` for w = len/2 … 1 (`lanes.len()` a power
/// of two); inlined, so a constant length unrolls.
#[inline(always)]
fn fold_halving<A: AccFloat, C: Combine<A>>(op: C, lanes: &mut [A]) -> A {
    let mut width = lanes.len() / 2;
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
fn reduce_node<A: AccFloat, R: Rows<A>, C: Combine<A>>(
    op: C,
    rows: &R,
    first: usize,
    span: usize,
    tiles: usize,
) -> A {
    if span <= LEAF_TILES {
        let mut scratch = rows.scratch();
        let mut level = [op.identity(); LEAF_TILES];
        let count = span.min(tiles - first);
        for (k, slot) in level.iter_mut().enumerate().take(count) {
            let start = (first + k) * TILE;
            let end = (start + TILE).min(rows.len());
            *slot = reduce_tile(op, rows, start, end - start, &mut scratch);
        }
        // The pairwise tree inside the leaf, level by level, as in the reference.
        return pairwise_in_place(&mut level[..count], |l, r| op.combine(l, r))
            .unwrap_or_else(|| op.identity());
    }
    let half = span / 2;
    if first + half >= tiles {
        return reduce_node(op, rows, first, half, tiles);
    }
    let left = || reduce_node(op, rows, first, half, tiles);
    let right = || reduce_node(op, rows, first + half, half, tiles);
    let (left, right) = if crate::fork::on_pool() {
        rayon::join(left, right)
    } else {
        (left(), right())
    };
    op.combine(left, right)
}

/// The canonical reduction of `data`, or `None` when it is empty.
pub fn reduce<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(op: C, data: &[T]) -> Option<A> {
    reduce_rows(op, &Elements(data))
}

/// The canonical reduction of the values of `rows`, or `None` when there are none.
pub fn reduce_rows<A: AccFloat, R: Rows<A>, C: Combine<A>>(op: C, rows: &R) -> Option<A> {
    let tiles = tile_count(rows.len());
    if tiles == 0 {
        return None;
    }
    Some(reduce_node(op, rows, 0, tiles.next_power_of_two(), tiles))
}
