//! The walk shared by the statistics of columns (neighbouring outputs whose elements lie
//! one row apart, as along axis 0 of a C-order matrix): each column keeps the canonical
//! order of its own elements, but the memory is read row by row across a block of
//! columns, and the work is vectorized across those columns.
//!
//! Every column runs exactly the steps of [`crate::statistics`]: each lane of a tile
//! takes its rows in increasing index, the lanes fold by halving (the lower lanes on the
//! left, empty lanes skipped), and the tiles join in the aligned pairwise tree. Its bits
//! are therefore those of the same column reduced alone. A statistic supplies its lane
//! state over a block of columns ([`ColumnLanes`]); this file decides the order:
//!
//! - **Narrow runs** (at most [`ColumnLanes::NARROW`] columns): rows are read in order,
//!   each updating one lane of every column, and the lanes fold at the end. All the
//!   lanes are live at once (8 MiB of state for 512 columns, per task in flight, so one
//!   per thread), but they are read and written in order and whole rows stream.
//! - **Wide runs**: one lane at a time (its eight rows, each a contiguous stretch of the
//!   block's columns) in the order the halving fold pairs lanes, bit-reversed, joined on
//!   a stack like a binary counter. Only the fold's eleven levels of state are live.
//!   Two lanes of one element each that the fold merges first (every pair, in tiles of
//!   at most 1024 rows) are built and merged by one call, which a statistic can make a
//!   single pass over the block ([`ColumnLanes::single_pair`]), and eight single lanes
//!   that its first three steps join, where the statistic can ([`ColumnLanes::single_octet`]).
//! - **Short columns** (at most `LANES` rows, every lane one element) go lane by lane
//!   at any width, in blocks cut so that a pool's threads each get one.

use crate::columns::{join_tiles, used_lanes};
use std::mem::MaybeUninit;

use crate::fork::{for_each_init, map_range_init, on_pool};
use crate::spare::Spare;
use redlab_core::canonical::{tile_count, LANES, ROWS, TILE};
use redlab_core::shape::AxisPlan;

use crate::exp_merge_avx2::Element;
use crate::statistics::{tree_in_place, Lane};

/// Calls `$build::<K, _>(args)` with the constant `K` equal to `$present`, the lanes of
/// an octet that hold a row (one to eight): the octet builds of the column statistics
/// are compiled once per count, so that their merges' counts are constants and their
/// tests and weights fold away.
macro_rules! for_present_lanes {
    ($present:expr, $build:ident($($arg:expr),* $(,)?)) => {
        match $present {
            1 => $build::<1, _>($($arg),*),
            2 => $build::<2, _>($($arg),*),
            3 => $build::<3, _>($($arg),*),
            4 => $build::<4, _>($($arg),*),
            5 => $build::<5, _>($($arg),*),
            6 => $build::<6, _>($($arg),*),
            7 => $build::<7, _>($($arg),*),
            8 => $build::<8, _>($($arg),*),
            _ => unreachable!("an octet holds one to eight lanes"),
        }
    };
}
pub(crate) use for_present_lanes;

/// Columns a wide-run block updates per row: 16 KiB of f64 state per array.
const WIDE_COLUMNS: usize = 1024;

/// Short columns' blocks are cut to a multiple of this many columns.
const SHORT_COLUMNS_STEP: usize = 8;

/// Threads the walk's tasks can run on: the pool's where it runs on one.
fn threads() -> usize {
    if on_pool() {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// Rows a narrow run hands a statistic at once (a divisor of `LANES`).
const ROW_BATCH: usize = 64;

/// Levels of the lanes' fold tree, plus one for the lane being built.
const FOLD_LEVELS: usize = LANES.trailing_zeros() as usize + 1;

/// One statistic's lane states over a block of columns: `lanes` slots of `width`
/// columns each. Element counts are the walk's; each call gets the ones it needs.
pub(crate) trait ColumnLanes: Default {
    /// One column's state.
    type State: Lane;

    /// The widest run read row by row.
    const NARROW: usize;

    /// `lanes` slots of `width` columns, reusing this value's memory: every one empty
    /// where `empty`, else holding whatever it held (for walks that write every slot
    /// before reading it; filling the slots was an eighth of var of 3×4096).
    fn reset(&mut self, lanes: usize, width: usize, empty: bool);

    /// Slots `lane`, `lane + 1`, … ← the next row each (`rows[i]` to slot `lane + i`),
    /// the `count`-th element of each of those lanes.
    fn push_rows<T: Element>(
        &mut self,
        lane: usize,
        rows: &[&[T]],
        count: usize,
        to_f64: impl Fn(T) -> f64 + Copy,
    );

    /// Slot `lane` ← a whole lane (`ROWS` rows), from no elements.
    fn full_lane<T: Element>(
        &mut self,
        lane: usize,
        rows: [&[T]; ROWS],
        to_f64: impl Fn(T) -> f64 + Copy,
    );

    /// Slot `lane` ← no elements.
    fn clear(&mut self, lane: usize);

    /// Slot `lane` ← a lane of one element per column (`row`): the state
    /// [`ColumnLanes::clear`] then [`ColumnLanes::push_rows`] leave, which a statistic
    /// may write in one pass.
    fn single_lane<T: Element>(
        &mut self,
        lane: usize,
        row: &[T],
        to_f64: impl Fn(T) -> f64 + Copy,
    ) {
        self.clear(lane);
        self.push_rows(lane, &[row], 1, to_f64);
    }

    /// Slot `lane` ← two lanes of one element each, `low` and `high`, merged as the
    /// fold merges them: the state [`ColumnLanes::clear`], [`ColumnLanes::push_rows`]
    /// (of each into its own slot) and [`ColumnLanes::merge`] would leave, in one pass.
    fn single_pair<T: Element>(
        &mut self,
        lane: usize,
        low: &[T],
        high: &[T],
        to_f64: impl Fn(T) -> f64 + Copy,
    );

    /// Slot `lane` ← eight lanes `j + m·S` (`S` the fold's width at its third step),
    /// the first `present` ≥ 1 of one element each (`rows[m]`) and the rest empty (past
    /// the rows; their `rows` are not read), merged as the fold's first three steps
    /// merge them. Returns whether it did: a statistic without this one pass returns
    /// false, and the walk builds the lanes in pairs.
    fn single_octet<T: Element>(
        &mut self,
        _lane: usize,
        _rows: [&[T]; ROWS],
        _present: usize,
        _to_f64: impl Fn(T) -> f64 + Copy,
    ) -> bool {
        false
    }

    /// Slot `low` ← slot `low` (the lower indices, `low_count` elements) merged with
    /// slot `high` (`high_count` ≥ 1 elements), column by column.
    fn merge(&mut self, low: usize, high: usize, low_count: usize, high_count: usize);

    /// `out[c]` ← `finish` of column `c`'s state in slot `lane`, which holds `count`
    /// elements per column; `out` is as long as the block is wide.
    fn finish_into<R>(
        &self,
        lane: usize,
        count: usize,
        out: &mut [MaybeUninit<R>],
        finish: impl Fn(Self::State) -> R,
    );

    /// [`ColumnLanes::finish_into`] a new `Vec`.
    fn finish<R>(&self, lane: usize, count: usize, finish: impl Fn(Self::State) -> R) -> Vec<R> {
        let mut out = Vec::with_capacity(self.width());
        self.finish_into(
            lane,
            count,
            &mut out.spare_capacity_mut()[..self.width()],
            finish,
        );
        // SAFETY: `finish_into` wrote all `width` elements.
        unsafe { out.set_len(self.width()) };
        out
    }

    /// The block's width in columns (as last [`ColumnLanes::reset`]).
    fn width(&self) -> usize;
}

/// Two lane-major arrays over a block's columns (lane `l` of column `c` at
/// `l·width + c`): the state of a lane that holds two numbers per column.
/// The arrays are [`Spare`]: kept for the next call on the thread.
#[derive(Default)]
pub(crate) struct LaneArrays {
    width: usize,
    first: Spare<f64>,
    second: Spare<f64>,
}

impl LaneArrays {
    /// `lanes` slots in the arrays' own memory, every column's numbers at `empty` where
    /// it is given, else left as they were.
    pub(crate) fn reset(&mut self, lanes: usize, width: usize, empty: Option<(f64, f64)>) {
        self.width = width;
        let (a, b) = empty.unwrap_or_default();
        for (array, value) in [(&mut self.first, a), (&mut self.second, b)] {
            array.fit(lanes * width, value);
            if empty.is_some() {
                array.fill(value);
            }
        }
    }

    /// The block's width in columns.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Slots `lane … lane + count − 1` of both arrays.
    pub(crate) fn slots(&mut self, lane: usize, count: usize) -> (&mut [f64], &mut [f64]) {
        let at = lane * self.width..(lane + count) * self.width;
        (&mut self.first[at.clone()], &mut self.second[at])
    }

    /// `out[c]` ← `finish` of column `c`'s two numbers in slot `lane`, for every column.
    pub(crate) fn finish_into<R>(
        &self,
        lane: usize,
        out: &mut [MaybeUninit<R>],
        finish: impl Fn(f64, f64) -> R,
    ) {
        let (first, second) = self.slot(lane);
        finish_pairs(first, second, out, finish);
    }

    /// Slot `lane` of both arrays, to read.
    pub(crate) fn slot(&self, lane: usize) -> (&[f64], &[f64]) {
        let at = lane * self.width..(lane + 1) * self.width;
        (&self.first[at.clone()], &self.second[at])
    }

    /// Slot `low` of both arrays to update, and slot `high` > `low` to merge into it.
    pub(crate) fn pair(&mut self, low: usize, high: usize) -> [(&mut [f64], &[f64]); 2] {
        let w = self.width;
        [
            split_pair(&mut self.first, low * w, high * w, w),
            split_pair(&mut self.second, low * w, high * w, w),
        ]
    }
}

/// `out[c]` ← `finish(first[c], second[c])` for every column: compiled for the vector
/// units, so that a finish without branches (log-sum-exp's canonical `ln`) runs
/// several columns at a time. Finishing 3×4096 f32 columns with the platform's scalar
/// `ln` had been a fifth of the whole reduction.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn finish_pairs<R>(
    first: &[f64],
    second: &[f64],
    out: &mut [MaybeUninit<R>],
    finish: impl Fn(f64, f64) -> R,
) {
    assert!(
        first.len() == out.len() && second.len() == out.len(),
        "one result per column"
    );
    for (place, (&a, &b)) in out.iter_mut().zip(first.iter().zip(second)) {
        place.write(finish(a, b));
    }
}

/// The two disjoint `w`-element stretches of `v` at `lo` < `hi`.
fn split_pair(v: &mut [f64], lo: usize, hi: usize, w: usize) -> (&mut [f64], &[f64]) {
    let (left, right) = v.split_at_mut(hi);
    (&mut left[lo..lo + w], &right[..w])
}

/// The canonical states of outputs `0 … plan.outputs() − 1`, runs of `run` neighbouring
/// columns: one task per block of columns and tile, then each column's tiles joined.
pub(crate) fn states_of_columns<L, T, F>(
    src: &[T],
    plan: &AxisPlan,
    run: usize,
    to_f64: F,
) -> Vec<L::State>
where
    L: ColumnLanes,
    T: Element,
    F: Fn(T) -> f64 + Copy + Sync,
{
    let tiles = tile_count(plan.segment_len());
    join_tiles(
        block_tiles::<L, T, F, _>(src, plan, run, to_f64, |s| s),
        tiles,
        tree_in_place,
    )
}

/// [`states_of_columns`] finished into each column's result by `finish`. Where every
/// column is one tile (3×4096), each block's task finishes its own columns: no states
/// are joined, and only the results are gathered. Var of 3×4096 f32 along axis 0 had
/// spent a third of its time copying states and faulting in a `Value` per column.
pub(crate) fn finished_columns<L, T, F, E>(
    src: &[T],
    plan: &AxisPlan,
    run: usize,
    to_f64: F,
    finish: impl Fn(L::State) -> E + Copy + Sync + Send,
) -> Vec<E>
where
    L: ColumnLanes,
    T: Element,
    F: Fn(T) -> f64 + Copy + Sync,
    E: Send,
{
    if tile_count(plan.segment_len()) > 1 {
        let states = states_of_columns::<L, T, F>(src, plan, run, to_f64);
        return states.into_iter().map(finish).collect();
    }
    // Each block writes its columns' results straight into their place: gathering the
    // blocks' own vectors was an eighth of var of 3×4096 (glibc copies slowly here).
    let outputs = plan.outputs();
    let mut results: Vec<E> = Vec::with_capacity(outputs);
    let mut rest = &mut results.spare_capacity_mut()[..outputs];
    let mut places = Vec::new();
    let blocking = Blocking::of(plan, run, L::NARROW);
    for (first, w) in blocking.blocks(plan, run) {
        assert_eq!(first, outputs - rest.len(), "blocks in order");
        let (place, tail) = rest.split_at_mut(w);
        places.push(place);
        rest = tail;
    }
    assert!(rest.is_empty(), "blocks cover every output");
    for_each_init(places, L::default, |lanes, b, place| {
        let count = walk_tile::<L, T, F>(src, plan, blocking, run, (b, 0), to_f64, lanes);
        lanes.finish_into(0, count, place, finish);
    });
    // SAFETY: the blocks cover outputs 0 … outputs − 1 in order (asserted above), and
    // each block's `finish_into` wrote all of its place.
    unsafe { results.set_len(outputs) };
    results
}

/// How a run of columns is cut and walked: blocks of `width` columns, walked lane by
/// lane ([`tile_by_lanes`]) where `by_lanes`, else row by row ([`tile_by_rows`]).
#[derive(Clone, Copy)]
struct Blocking {
    width: usize,
    by_lanes: bool,
}

impl Blocking {
    /// Runs wider than `narrow` columns go lane by lane in blocks of [`WIDE_COLUMNS`];
    /// narrower ones row by row, one block per run. Columns of at most `LANES` rows
    /// (every lane one element) always go lane by lane: row by row, all their lanes
    /// were live at once (1.6 MB of state for var of 1000×100), and the fold passed
    /// over them from L2.
    fn of(plan: &AxisPlan, run: usize, narrow: usize) -> Self {
        let short = plan.segment_len() <= LANES;
        let by_lanes = run > narrow || short;
        let width = if short {
            // Such a run is one tile, so its blocks are the only tasks to share out.
            WIDE_COLUMNS.min(run.div_ceil(threads()).next_multiple_of(SHORT_COLUMNS_STEP))
        } else if by_lanes {
            WIDE_COLUMNS
        } else {
            run
        };
        Self {
            width: width.min(run),
            by_lanes,
        }
    }

    /// Block `b`'s first output and width, in runs of `run` outputs.
    fn block(self, b: usize, run: usize) -> (usize, usize) {
        let blocks_per_run = run.div_ceil(self.width);
        let first = (b / blocks_per_run) * run + (b % blocks_per_run) * self.width;
        (
            first,
            self.width.min(run - (b % blocks_per_run) * self.width),
        )
    }

    /// Every block of `plan`'s outputs in order.
    fn blocks(self, plan: &AxisPlan, run: usize) -> impl Iterator<Item = (usize, usize)> {
        let per_run = run.div_ceil(self.width);
        (0..(plan.outputs() / run) * per_run).map(move |b| self.block(b, run))
    }
}

/// Every block's roots per tile (`[b·tiles + t]`), each column's passed through
/// `finish` in the block's own task.
fn block_tiles<L, T, F, R>(
    src: &[T],
    plan: &AxisPlan,
    run: usize,
    to_f64: F,
    finish: impl Fn(L::State) -> R + Copy + Sync + Send,
) -> Vec<Vec<R>>
where
    L: ColumnLanes,
    T: Element,
    F: Fn(T) -> f64 + Copy + Sync,
    R: Send,
{
    let blocking = Blocking::of(plan, run, L::NARROW);
    let blocks = blocking.blocks(plan, run).count();
    let tiles = tile_count(plan.segment_len());
    // The lanes are the task's scratch, reused by the next task on its thread and (as
    // [`Spare`] arrays) by the next call.
    map_range_init(blocks * tiles, L::default, |lanes, task| {
        let (b, t) = (task / tiles, task % tiles);
        let count = walk_tile::<L, T, F>(src, plan, blocking, run, (b, t), to_f64, lanes);
        lanes.finish(0, count, finish)
    })
}

/// Block `b`'s tile `t`, walked into slot 0 of `lanes` (row by row for narrow runs,
/// lane by lane for wide ones); returns the elements per column it holds.
fn walk_tile<L: ColumnLanes, T: Element, F: Fn(T) -> f64 + Copy>(
    src: &[T],
    plan: &AxisPlan,
    blocking: Blocking,
    run: usize,
    (b, t): (usize, usize),
    to_f64: F,
    lanes: &mut L,
) -> usize {
    let columns = blocking.block(b, run);
    if blocking.by_lanes {
        tile_by_lanes::<L, T, F>(src, plan, columns, t, to_f64, lanes)
    } else {
        tile_by_rows::<L, T, F>(src, plan, columns, t, to_f64, lanes)
    }
}

/// Tile `t`'s states of outputs `first … first + width − 1`, reading rows in order,
/// left in slot 0; returns their element count.
fn tile_by_rows<L: ColumnLanes, T: Element, F: Fn(T) -> f64 + Copy>(
    src: &[T],
    plan: &AxisPlan,
    (first, width): (usize, usize),
    t: usize,
    to_f64: F,
    lanes: &mut L,
) -> usize {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    // Lanes past the rows stay empty and their merges are skipped: fold the used ones.
    let used = used_lanes(rows);
    lanes.reset(used, width, true);
    // Rows in batches of consecutive lanes of one count (a batch never crosses lane
    // 1023), so that a statistic pays its per-call costs once per batch.
    let mut batch: Vec<&[T]> = Vec::with_capacity(ROW_BATCH);
    let mut walk = plan.segment_from(first, t * TILE).take(rows);
    for r0 in (0..rows).step_by(ROW_BATCH) {
        batch.clear();
        batch.extend(walk.by_ref().take(ROW_BATCH).map(|o| &src[o..o + width]));
        lanes.push_rows(r0 % LANES, &batch, r0 / LANES + 1, to_f64);
    }
    // Lane j holds the rows j, j + 1024, … below `rows`.
    let mut counts: Vec<usize> = (0..used).map(|j| (rows + LANES - 1 - j) / LANES).collect();
    let mut half = used / 2;
    while half >= 1 {
        for j in 0..half {
            if counts[j + half] > 0 {
                lanes.merge(j, j + half, counts[j], counts[j + half]);
                counts[j] += counts[j + half];
            }
        }
        half /= 2;
    }
    rows
}

/// Tile `t`'s states of outputs `first … first + width − 1`, one lane at a time in the
/// fold's order, left in slot 0; returns their element count.
fn tile_by_lanes<L: ColumnLanes, T: Element, F: Fn(T) -> f64 + Copy>(
    src: &[T],
    plan: &AxisPlan,
    (first, width): (usize, usize),
    t: usize,
    to_f64: F,
    lanes: &mut L,
) -> usize {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    let offsets: Vec<usize> = plan.segment_from(first, t * TILE).take(rows).collect();
    // Slots 0 … depth − 1 hold the roots of finished subtrees of lanes, oldest first;
    // slot `depth` is the lane being built. `counts` are their elements per column.
    // Only the levels of the lanes used: a 3-row tile needs three slots, not eleven
    // (the slots are filled per task).
    let used = used_lanes(rows);
    let levels = used.trailing_zeros();
    let stack = lanes;
    // Every slot is written (cleared, pushed into empty, or a pair built) before it is
    // read or merged into.
    stack.reset(levels as usize + 1, width, false);
    let mut counts = [0usize; FOLD_LEVELS];
    let mut depth = 0;
    let full = |lane: usize| lane + (ROWS - 1) * LANES < rows;
    let rows_of = |lane: usize| -> [&[T]; ROWS] {
        std::array::from_fn(|j| {
            let offset = offsets[lane + j * LANES];
            &src[offset..offset + width]
        })
    };
    // A lane of exactly one element per column (every lane, in tiles of at most 1024
    // rows).
    let single = |lane: usize| lane < rows && lane + LANES >= rows;
    // Lanes past the rows stay empty and their merges are skipped: fold the used ones.
    let mut p = 0;
    while p < used {
        let lane = if levels == 0 {
            0
        } else {
            p.reverse_bits() >> (usize::BITS - levels)
        };
        // p … p + 7 (p a multiple of 8) are lanes `lane + m·used/8`, which the fold's
        // first three steps join into one. In tiles of at most 1024 rows every lane
        // holds one element or none, and those holding one are the first `present`
        // (at least lane itself: lane < used/8 < rows), so the eight are built and
        // merged in one pass. Pass by pass, var of 1000×100 columns spent most of its
        // time storing and reloading the first steps' states.
        let stride = used / ROWS;
        if used >= ROWS && p % ROWS == 0 && rows <= LANES {
            let present = (rows - lane).div_ceil(stride).min(ROWS);
            let octet: [&[T]; ROWS] = std::array::from_fn(|m| {
                let offset = offsets[lane + m.min(present - 1) * stride];
                &src[offset..offset + width]
            });
            if stack.single_octet(depth, octet, present, to_f64) {
                counts[depth] = present;
                depth += 1;
                // p + 7's three lowest ones are the octet's own merges; the rest close
                // older subtrees (each holding at least its first lane).
                for _ in ROWS.trailing_zeros()..(p + ROWS - 1).trailing_ones() {
                    stack.merge(depth - 2, depth - 1, counts[depth - 2], counts[depth - 1]);
                    counts[depth - 2] += counts[depth - 1];
                    depth -= 1;
                }
                p += ROWS;
                continue;
            }
        }
        // An even p and the next one are lanes `lane` and `lane + used / 2`, which the
        // fold merges first: two single lanes are built and merged at once.
        if used >= 2 && p % 2 == 0 && single(lane) && single(lane + used / 2) {
            let row = |lane: usize| &src[offsets[lane]..offsets[lane] + width];
            stack.single_pair(depth, row(lane), row(lane + used / 2), to_f64);
            counts[depth] = 2;
            depth += 1;
            // p + 1's trailing ones close the pair (done above), then older subtrees.
            for _ in 1..(p + 1).trailing_ones() {
                stack.merge(depth - 2, depth - 1, counts[depth - 2], counts[depth - 1]);
                counts[depth - 2] += counts[depth - 1];
                depth -= 1;
            }
            p += 2;
            continue;
        }
        if full(lane) {
            // A full lane: its eight rows in one pass.
            stack.full_lane(depth, rows_of(lane), to_f64);
            counts[depth] = ROWS;
        } else if lane >= rows {
            // A lane past the rows: never read, as every merge it takes part in is
            // skipped (it is the higher side of them all, and empty).
            counts[depth] = 0;
        } else if single(lane) {
            // A lane without a partner (3 rows: lane 1, whose partner 3 is past them).
            let offset = offsets[lane];
            stack.single_lane(depth, &src[offset..offset + width], to_f64);
            counts[depth] = 1;
        } else {
            stack.clear(depth);
            let mut count = 0;
            for j in 0..ROWS {
                let Some(&offset) = offsets.get(lane + j * LANES) else {
                    break;
                };
                count += 1;
                stack.push_rows(depth, &[&src[offset..offset + width]], count, to_f64);
            }
            counts[depth] = count;
        }
        depth += 1;
        // Like a binary counter: each trailing one of p closes a pair of subtrees.
        for _ in 0..p.trailing_ones() {
            if counts[depth - 1] > 0 {
                debug_assert!(counts[depth - 2] > 0, "an empty lower side is never merged");
                stack.merge(depth - 2, depth - 1, counts[depth - 2], counts[depth - 1]);
                counts[depth - 2] += counts[depth - 1];
            }
            depth -= 1;
        }
        p += 1;
    }
    debug_assert_eq!(depth, 1);
    counts[0]
}
