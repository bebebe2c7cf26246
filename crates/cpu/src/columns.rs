//! Float sums and products of columns (neighbouring outputs whose elements lie one row
//! apart, as in axis 0 of a C-order matrix), in the canonical order of each column,
//! without gathering. The tile fold and the tile tree run per column exactly as for a
//! 1-D reduction, so every column's bits equal the 1-D reduction of that column alone;
//! only the order of the memory traffic differs, vectorized across columns:
//!
//! - **Narrow runs** (the whole run of columns fits [`LANE_BYTES`] of lanes): rows are
//!   read in order, each adding its stretch of the block's columns to one lane of all of
//!   them, so consecutive rows stream from contiguous memory.
//! - **Wide runs** (8192×8192): keeping 1024 lanes of every column would not fit a
//!   cache, and a narrow block would read a short stretch of every row, one DRAM page
//!   each. Instead a block of [`CHUNK_BYTES`] of columns builds one lane at a time (its
//!   eight rows, each a long contiguous stretch) in the order the halving fold pairs
//!   them, bit-reversed, and joins finished lanes on a stack like a binary counter: the
//!   fold's tree, with eleven rows of partials instead of 1024.
use rayon::prelude::*;
use redlab_core::canonical::{reduce_tree, tile_count, LANES, ROWS, TILE};
use redlab_core::num::{AccFloat, FloatInput};
use redlab_core::shape::AxisPlan;

use crate::canonical::Combine;

/// Bytes of lanes one block keeps (1024 lanes × the block's columns): within L2.
const LANE_BYTES: usize = 256 << 10;

/// Bytes of one row's stretch that a wide-run block reads at a time.
const CHUNK_BYTES: usize = 16 << 10;

/// Levels of the lanes' fold tree, plus one for the lane being built.
const FOLD_LEVELS: usize = LANES.trailing_zeros() as usize + 1;

/// The canonical results of outputs `0 … plan.outputs() − 1`, given that the last kept
/// axis has unit stride with runs of `run` outputs and each output has at least one
/// element.
pub fn reduce_columns<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    plan: &AxisPlan,
    run: usize,
) -> Vec<A> {
    let narrow = LANE_BYTES / (LANES * std::mem::size_of::<A>());
    let wide = run > narrow;
    let width = if wide {
        (CHUNK_BYTES / std::mem::size_of::<A>()).max(1)
    } else {
        run
    };
    let blocks_per_run = run.div_ceil(width);
    let blocks = (plan.outputs() / run) * blocks_per_run;
    let per_block: Vec<Vec<A>> = (0..blocks)
        .into_par_iter()
        .map(|b| {
            let first = (b / blocks_per_run) * run + (b % blocks_per_run) * width;
            let w = width.min(run - (b % blocks_per_run) * width);
            if wide {
                block_by_lanes(op, src, plan, first, w)
            } else {
                block(op, src, plan, first, w)
            }
        })
        .collect();
    per_block.into_iter().flatten().collect()
}

/// Outputs `first … first + width − 1`.
fn block<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    plan: &AxisPlan,
    first: usize,
    width: usize,
) -> Vec<A> {
    let len = plan.segment_len();
    let tiles = tile_count(len);
    // Lane-major: lane l of column c at l·width + c.
    let mut lanes = vec![op.identity(); LANES * width];
    let mut results: Vec<Vec<A>> = vec![Vec::with_capacity(tiles); width];
    let mut walk = plan.segment(first);
    for t in 0..tiles {
        lanes.fill(op.identity());
        let rows = TILE.min(len - t * TILE);
        for r in 0..rows {
            let Some(offset) = walk.next() else { break };
            let lane = &mut lanes[(r % LANES) * width..(r % LANES + 1) * width];
            add_row(op, lane, &src[offset..offset + width]);
        }
        // Fold by halving, every column at once.
        let mut half = LANES / 2;
        while half >= 1 {
            let (low, high) = lanes[..2 * half * width].split_at_mut(half * width);
            add_row_acc(op, low, high);
            half /= 2;
        }
        for (c, column) in results.iter_mut().enumerate() {
            column.push(lanes[c]);
        }
    }
    // Every column has at least one tile, so the tree has a root.
    results
        .into_iter()
        .map(|r| reduce_tree(op.arith(), r).unwrap_or_else(|| op.identity()))
        .collect()
}

/// Outputs `first … first + width − 1`, one lane at a time in the fold's order.
fn block_by_lanes<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    plan: &AxisPlan,
    first: usize,
    width: usize,
) -> Vec<A> {
    let len = plan.segment_len();
    let tiles = tile_count(len);
    // stack[0 … depth − 1] are the roots of finished subtrees of lanes, oldest first;
    // stack[depth] is the lane being built.
    let mut stack = vec![vec![op.identity(); width]; FOLD_LEVELS];
    let mut results: Vec<Vec<A>> = vec![Vec::with_capacity(tiles); width];
    let mut walk = plan.segment(first);
    let mut offsets = Vec::with_capacity(TILE.min(len));
    let (mut visits, mut ends) = (Vec::with_capacity(TILE.min(len)), Vec::with_capacity(LANES));
    for t in 0..tiles {
        let rows = TILE.min(len - t * TILE);
        offsets.clear();
        offsets.extend(walk.by_ref().take(rows));
        // The halving fold first pairs lane l with l + 512, then with l + 256, …: its
        // leaves, left to right, are the lanes in bit-reversed order. `visits` lists
        // the rows in the order they are read, `ends[p]` where leaf p's rows end.
        visits.clear();
        ends.clear();
        for p in 0..LANES {
            let lane = p.reverse_bits() >> (usize::BITS - LANES.trailing_zeros());
            visits.extend(offsets.iter().skip(lane).step_by(LANES));
            ends.push(visits.len());
        }
        let mut depth = 0;
        let mut next = 0;
        for (p, &end) in ends.iter().enumerate() {
            let building = &mut stack[depth];
            if end - next == ROWS {
                // A full lane: its eight rows in one pass, eight streams at once, the
                // lane's value kept in a register until it is stored.
                let rows: [&[T]; ROWS] =
                    std::array::from_fn(|j| &src[visits[next + j]..visits[next + j] + width]);
                full_lane(op, building, rows);
            } else {
                building.fill(op.identity());
                for &offset in &visits[next..end] {
                    add_row(op, building, &src[offset..offset + width]);
                }
            }
            next = end;
            depth += 1;
            // Like a binary counter: each trailing one of p closes a pair of subtrees.
            for _ in 0..p.trailing_ones() {
                let (left, right) = stack[..depth].split_at_mut(depth - 1);
                add_row_acc(op, &mut left[depth - 2], &right[0]);
                depth -= 1;
            }
        }
        debug_assert_eq!(depth, 1);
        for (c, column) in results.iter_mut().enumerate() {
            column.push(stack[0][c]);
        }
    }
    results
        .into_iter()
        .map(|r| reduce_tree(op.arith(), r).unwrap_or_else(|| op.identity()))
        .collect()
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn add_row<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(op: C, lane: &mut [A], row: &[T]) {
    for (a, &x) in lane.iter_mut().zip(row) {
        *a = op.combine(*a, x.to_acc());
    }
}

/// `lane = ((identity ⊕ rows[0]) ⊕ rows[1]) ⊕ … ⊕ rows[7]`, element by element.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn full_lane<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    lane: &mut [A],
    rows: [&[T]; ROWS],
) {
    let n = lane.len();
    let rows = rows.map(|r| &r[..n]);
    for (c, a) in lane.iter_mut().enumerate() {
        let mut acc = op.identity();
        for row in rows {
            acc = op.combine(acc, row[c].to_acc());
        }
        *a = acc;
    }
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn add_row_acc<A: AccFloat, C: Combine<A>>(op: C, low: &mut [A], high: &[A]) {
    for (a, &b) in low.iter_mut().zip(high) {
        *a = op.combine(*a, b);
    }
}
