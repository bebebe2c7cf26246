//! Float sums and products of columns (neighbouring outputs whose elements lie one row
//! apart, as in axis 0 of a C-order matrix), in the canonical order of each column,
//! without gathering. The tile fold and the tile tree run per column exactly as for a
//! 1-D reduction, so every column's bits equal the 1-D reduction of that column alone;
//! only the order of the memory traffic differs, vectorized across columns:
//!
//! - **Narrow runs** (the whole run of columns fits 256 KiB of lanes): rows are
//!   read in order, each adding its stretch of the block's columns to one lane of all of
//!   them, so consecutive rows stream from contiguous memory.
//! - **Wide runs** (8192×8192): keeping 1024 lanes of every column would not fit a
//!   cache, and a narrow block would read a short stretch of every row, one DRAM page
//!   each. Instead a block of 16 KiB of columns builds one lane at a time (its
//!   eight rows, each a long contiguous stretch) in the order the halving fold pairs
//!   them, bit-reversed, and joins finished lanes on a stack like a binary counter: the
//!   fold's tree, with eleven rows of partials instead of 1024. Tiles of fewer than
//!   1024 rows fold only the lanes that hold rows (`used_lanes`).
use crate::fork::map_range_init;
use redlab_core::canonical::{reduce_tree, tile_count, LANES, ROWS, TILE};
use redlab_core::num::{AccFloat, FloatInput};
use redlab_core::shape::AxisPlan;

use crate::canonical::Combine;

/// Bytes of lanes one block keeps (1024 lanes × the block's columns): within L2.
const LANE_BYTES: usize = 256 << 10;

/// Bytes of one row's stretch that a wide-run block reads at a time.
const CHUNK_BYTES: usize = 16 << 10;

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
    let tiles = tile_count(plan.segment_len());
    // Narrow blocks are whole runs; when each row of a run follows the previous one in
    // memory, a tile's rows are one contiguous stretch.
    let rows_follow =
        matches!(plan.reduced_runs().as_slice(), &[(_, stride)] if stride == width as isize);
    // One task per block and tile, so a few wide columns (2^22 × 32) still use every
    // thread: task b·tiles + t gives block b's roots of tile t.
    let roots: Vec<Vec<A>> = map_range_init(blocks * tiles, Vec::new, |scratch, task| {
        let (b, t) = (task / tiles, task % tiles);
        let first = (b / blocks_per_run) * run + (b % blocks_per_run) * width;
        let w = width.min(run - (b % blocks_per_run) * width);
        if wide {
            tile_by_lanes(op, src, plan, first, w, t)
        } else {
            tile_by_rows(op, src, plan, (first, w), t, rows_follow, scratch)
        }
    });
    // Every column has at least one tile, so each tree has a root.
    roots
        .chunks(tiles)
        .flat_map(|block| {
            (0..block[0].len()).map(move |c| {
                let column = block.iter().map(|tile| tile[c]).collect();
                reduce_tree(op.arith(), column).unwrap_or_else(|| op.identity())
            })
        })
        .collect()
}

/// Tile `t`'s roots of outputs `first … first + width − 1`, reading rows in order.
fn tile_by_rows<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    plan: &AxisPlan,
    (first, width): (usize, usize),
    t: usize,
    rows_follow: bool,
    lanes: &mut Vec<A>,
) -> Vec<A> {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    let used = used_lanes(rows);
    // Lane-major: lane l of column c at l·width + c; the buffer is the thread's own,
    // reused from task to task (a fresh one per tile was mostly page faults).
    lanes.clear();
    lanes.resize(used * width, op.identity());
    let mut walk = plan.segment_from(first, t * TILE).take(rows);
    if rows_follow {
        // Rows that follow each other in memory, each exactly the block's width: 1024
        // rows are the whole lane buffer, added in one pass.
        if let Some(start) = walk.next() {
            let tile = &src[start..start + rows * width];
            for group in tile.chunks(LANES * width) {
                add_row(op, &mut lanes[..group.len()], group);
            }
        }
    } else {
        for (r, offset) in walk.enumerate() {
            let lane = &mut lanes[(r % LANES) * width..(r % LANES + 1) * width];
            add_row(op, lane, &src[offset..offset + width]);
        }
    }
    // Fold by halving, every column at once.
    let mut half = used / 2;
    while half >= 1 {
        let (low, high) = lanes[..2 * half * width].split_at_mut(half * width);
        add_row_acc(op, low, high);
        half /= 2;
    }
    lanes[..width].to_vec()
}

/// Tile `t`'s roots of outputs `first … first + width − 1`, one lane at a time in the
/// fold's order.
fn tile_by_lanes<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    plan: &AxisPlan,
    first: usize,
    width: usize,
    t: usize,
) -> Vec<A> {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    let offsets: Vec<usize> = plan.segment_from(first, t * TILE).take(rows).collect();
    // The halving fold first pairs lane l with l + 512, then with l + 256, …: its
    // leaves, left to right, are the lanes in bit-reversed order.
    // stack[0 … depth − 1] are the roots of finished subtrees of lanes, oldest first;
    // stack[depth] is the lane being built.
    let used = used_lanes(rows);
    let levels = used.trailing_zeros();
    let mut stack = vec![vec![op.identity(); width]; levels as usize + 1];
    let mut depth = 0;
    for p in 0..used {
        let lane = if levels == 0 {
            0
        } else {
            p.reverse_bits() >> (usize::BITS - levels)
        };
        let building = &mut stack[depth];
        if lane + (ROWS - 1) * LANES < rows {
            // A full lane: its eight rows in one pass, eight streams at once, the lane's
            // value kept in a register until it is stored.
            let rows: [&[T]; ROWS] = std::array::from_fn(|j| {
                let at = offsets[lane + j * LANES];
                &src[at..at + width]
            });
            full_lane(op, building, rows);
        } else {
            building.fill(op.identity());
            for &offset in offsets.iter().skip(lane).step_by(LANES) {
                add_row(op, building, &src[offset..offset + width]);
            }
        }
        depth += 1;
        // Like a binary counter: each trailing one of p closes a pair of subtrees.
        for _ in 0..p.trailing_ones() {
            let (left, right) = stack[..depth].split_at_mut(depth - 1);
            add_row_acc(op, &mut left[depth - 2], &right[0]);
            depth -= 1;
        }
    }
    debug_assert_eq!(depth, 1);
    stack.swap_remove(0)
}

/// The lanes whose fold a tile of `rows` rows needs: the power of two at or above
/// `rows`, at most [`LANES`]. A tile of at most 512 rows leaves lanes 512 … 1023 with the
/// identity only, so the halving fold's first step adds an exact neutral to every lane
/// (-0.0 for sums, 1.0 for products) and changes no bits; likewise each step until the
/// lanes that hold rows meet. Folding from `used` lanes gives the same bits as folding
/// all 1024 (a signaling NaN may stay signaling where the neutral step would have
/// quieted it: NaN payloads are not promised). A 256×1024 f32 matrix summed along axis 0
/// had paid for 1024 lanes per column for 256 rows. The statistics' column lanes
/// (`column_lanes`) skip empty lanes' merges, so the same cut keeps their results.
pub(crate) fn used_lanes(rows: usize) -> usize {
    rows.next_power_of_two().min(LANES)
}

/// `lane ⊕= row`, element by element.
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
