//! Float sums and products of columns (neighbouring outputs whose elements lie one row
//! apart, as in axis 0 of a C-order matrix), in the canonical order of each column,
//! without gathering: a block of columns keeps the 1024 lanes of every column's current
//! tile side by side, and each input row adds its stretch of the block's columns to one
//! lane of all of them at once (contiguous loads, vectorized across columns). The tile
//! fold and the tile tree then run per column exactly as for a 1-D reduction, so every
//! column's bits equal the 1-D reduction of that column alone.

use rayon::prelude::*;
use redlab_core::canonical::{reduce_tree, tile_count, LANES, TILE};
use redlab_core::num::{AccFloat, FloatInput};
use redlab_core::shape::AxisPlan;

use crate::canonical::Combine;

/// Bytes of lanes one block keeps (1024 lanes × the block's columns): within L2.
const LANE_BYTES: usize = 256 << 10;

/// The canonical results of outputs `0 … plan.outputs() − 1`, given that the last kept
/// axis has unit stride with runs of `run` outputs and each output has at least one
/// element.
pub fn reduce_columns<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    plan: &AxisPlan,
    run: usize,
) -> Vec<A> {
    let width = (LANE_BYTES / (LANES * std::mem::size_of::<A>())).max(1);
    let blocks_per_run = run.div_ceil(width);
    let blocks = (plan.outputs() / run) * blocks_per_run;
    let per_block: Vec<Vec<A>> = (0..blocks)
        .into_par_iter()
        .map(|b| {
            let first = (b / blocks_per_run) * run + (b % blocks_per_run) * width;
            let w = width.min(run - (b % blocks_per_run) * width);
            block(op, src, plan, first, w)
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

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn add_row<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(op: C, lane: &mut [A], row: &[T]) {
    for (a, &x) in lane.iter_mut().zip(row) {
        *a = op.combine(*a, x.to_acc());
    }
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn add_row_acc<A: AccFloat, C: Combine<A>>(op: C, low: &mut [A], high: &[A]) {
    for (a, &b) in low.iter_mut().zip(high) {
        *a = op.combine(*a, b);
    }
}
