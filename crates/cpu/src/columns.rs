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
use crate::spare::Spare;
use redlab_core::canonical::{reduce_tree_in_place, tile_count, LANES, ROWS, TILE};
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
    let roots: Vec<Vec<A>> = map_range_init(blocks * tiles, Default::default, |scratch, task| {
        let (b, t) = (task / tiles, task % tiles);
        let first = (b / blocks_per_run) * run + (b % blocks_per_run) * width;
        let w = width.min(run - (b % blocks_per_run) * width);
        if wide {
            tile_by_lanes(op, src, plan, first, w, t)
        } else {
            tile_by_rows(op, src, plan, (first, w), t, rows_follow, scratch)
        }
    });
    join_tiles(roots, tiles, |column| {
        reduce_tree_in_place(op.arith(), column).unwrap_or_else(|| op.identity())
    })
}

/// Each column's result from its tiles' roots (`roots[b·tiles + t]`: block b's roots
/// of tile t), joined by `tree`, columns in order. A column of one tile is its root;
/// longer ones gather their roots into one reused buffer (a `Vec` per column cost
/// more than summing 3×4096 columns).
pub(crate) fn join_tiles<S: Copy>(
    mut roots: Vec<Vec<S>>,
    tiles: usize,
    mut tree: impl FnMut(&mut [S]) -> S,
) -> Vec<S> {
    if tiles == 1 && roots.len() == 1 {
        // One block of one tile (3×4096 f32): its roots are the results, not copied.
        return roots.swap_remove(0);
    }
    let mut joined = Vec::with_capacity(roots.iter().step_by(tiles).map(Vec::len).sum());
    if tiles == 1 {
        // Whole slices: a flattening iterator moved one element per step.
        for block in &roots {
            joined.extend_from_slice(block);
        }
        return joined;
    }
    let mut column = Vec::with_capacity(tiles);
    for block in roots.chunks(tiles) {
        for c in 0..block[0].len() {
            column.clear();
            column.extend(block.iter().map(|tile| tile[c]));
            joined.push(tree(&mut column));
        }
    }
    joined
}

/// Tile `t`'s roots of outputs `first … first + width − 1`, reading rows in order.
///
/// A lane's first row needs no identity: `identity ⊕ x` is `x` exactly (`-0.0 + x`,
/// `1.0 · x`), so the first row of every lane is converted into it rather than added
/// to a filled lane. In a tile of at most 1024 rows every lane holds one row, and the
/// fold's first step, lane `j` ⊕ lane `j + half`, reads the two rows themselves.
fn tile_by_rows<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    src: &[T],
    plan: &AxisPlan,
    (first, width): (usize, usize),
    t: usize,
    rows_follow: bool,
    (lanes, offsets): &mut (Spare<A>, Vec<usize>),
) -> Vec<A> {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    let used = used_lanes(rows);
    // Lane-major: lane l of column c at l·width + c; the buffers are the thread's own,
    // reused from task to task and call to call (a fresh one per tile was mostly page
    // faults). Every
    // slot the fold reads is written first, so stale values from a previous task are
    // never read and the buffer is filled only when it grows.
    let live = if rows <= LANES {
        (used / 2).max(1)
    } else {
        LANES
    };
    if lanes.len() < live * width {
        lanes.fit(live * width, op.identity());
    }
    offsets.clear();
    if rows_follow {
        // Rows that follow each other in memory, each exactly the block's width: a
        // stretch of rows is one stretch of `src`, handled in one call.
        offsets.extend(plan.segment_from(first, t * TILE).next());
    } else {
        offsets.extend(plan.segment_from(first, t * TILE).take(rows));
    }
    let stretch = |r: usize, count: usize| {
        let at = if rows_follow {
            offsets[0] + r * width
        } else {
            offsets[r]
        };
        &src[at..at + count * width]
    };
    let lane = |l: usize, count: usize| l * width..(l + count) * width;
    // Rows `from … from + count − 1` as runs `(r, n)` of one `stretch` each: all of
    // them at once when rows follow, one by one otherwise.
    let runs = |from: usize, count: usize| {
        let step = if rows_follow { count.max(1) } else { 1 };
        (from..from + count)
            .step_by(step)
            .map(move |r| (r, step.min(from + count - r)))
    };
    if rows <= LANES {
        // Rows `0 … rows − half − 1` pair with `half …`; the rest stand alone (their
        // partner lanes are empty), as does a tile of one row.
        let half = used / 2;
        let paired = if half == 0 { 0 } else { rows - half };
        for (j, n) in runs(0, paired) {
            pair_into(
                op,
                &mut lanes[lane(j, n)],
                stretch(j, n),
                stretch(j + half, n),
            );
        }
        for (j, n) in runs(paired, live - paired) {
            convert_into(&mut lanes[lane(j, n)], stretch(j, n));
        }
    } else {
        for (r, n) in runs(0, LANES) {
            convert_into(&mut lanes[lane(r, n)], stretch(r, n));
        }
        // Row r adds to lane r mod 1024; a run of up to 1024 rows starts at lane 0.
        for r0 in (LANES..rows).step_by(LANES) {
            for (r, n) in runs(r0, LANES.min(rows - r0)) {
                add_row(op, &mut lanes[lane(r - r0, n)], stretch(r, n));
            }
        }
    }
    // Fold the rest by halving, every column at once.
    let mut half = live / 2;
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
    // Every slot is written whole before it is read, so its old contents do not matter:
    // the slots are arrays this thread kept, filled only where they grow (filling three
    // fresh 16 KiB slots was most of `reduce_columns`' own time in a 3×4096 sum).
    let mut stack: Vec<Spare<A>> = (0..=levels)
        .map(|_| {
            let mut slot = Spare::default();
            slot.fit(width, op.identity());
            slot
        })
        .collect();
    let mut depth = 0;
    let row = |r: usize| &src[offsets[r]..offsets[r] + width];
    let mut p = 0;
    while p < used {
        let lane = if levels == 0 {
            0
        } else {
            p.reverse_bits() >> (usize::BITS - levels)
        };
        let building = &mut stack[depth];
        let mut leaves = 1;
        if rows <= LANES && used >= 2 {
            // One row per lane: an even p and the next one are lanes `lane` and
            // `lane + used / 2`, which the fold merges first; both are built and merged
            // in one pass (the second may be empty: `identity ⊕ x` is `x` exactly).
            let high = lane + used / 2;
            if high < rows {
                pair_into(op, building, row(lane), row(high));
            } else {
                convert_into(building, row(lane));
            }
            leaves = 2;
        } else if lane + (ROWS - 1) * LANES < rows {
            // A full lane: its eight rows in one pass, eight streams at once, the lane's
            // value kept in a register until it is stored.
            full_lane(op, building, std::array::from_fn(|j| row(lane + j * LANES)));
        } else {
            // The lane's first row is converted into it, the others added.
            convert_into(building, row(lane));
            for r in (lane + LANES..rows).step_by(LANES) {
                add_row(op, building, row(r));
            }
        }
        depth += 1;
        p += leaves;
        // Like a binary counter: each trailing zero of the leaves done so far closes a
        // pair of subtrees (the pair built at once above is already closed).
        for _ in leaves.trailing_zeros()..p.trailing_zeros() {
            let (left, right) = stack[..depth].split_at_mut(depth - 1);
            add_row_acc(op, &mut left[depth - 2], &right[0]);
            depth -= 1;
        }
    }
    debug_assert_eq!(depth, 1);
    // The root leaves the kept arrays: it is the result.
    std::mem::take(&mut *stack[0])
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

/// `lane = row`, converted to the accumulator: a lane's first row.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn convert_into<A: AccFloat, T: FloatInput<A>>(lane: &mut [A], row: &[T]) {
    for (a, &x) in lane.iter_mut().zip(row) {
        *a = x.to_acc();
    }
}

/// `lane = low ⊕ high`, element by element: two one-row lanes merged by the fold.
#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn pair_into<A: AccFloat, T: FloatInput<A>, C: Combine<A>>(
    op: C,
    lane: &mut [A],
    low: &[T],
    high: &[T],
) {
    let n = lane.len();
    let (low, high) = (&low[..n], &high[..n]);
    for (c, a) in lane.iter_mut().enumerate() {
        *a = op.combine(low[c].to_acc(), high[c].to_acc());
    }
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
