//! Statistics with several numbers per lane on OpenCL and CUDA devices
//! (`statistics.cl`): variance and standard deviation (moments), log-sum-exp, and the
//! NaN-skipping minimum, maximum and mean. One work-group computes one canonical tile of one
//! output, in f64, with the host's steps; the host joins each output's tile states in
//! the aligned pairwise tree and finishes them (`redlab_cpu::statistics::finish_tiles`),
//! so every output has the CPU's bits (log-sum-exp too: it calls the canonical exp).
//!
//! Outputs whose tiles all have at most 32 elements run a work-item per tile
//! (`stat_thread_tiles`), its lanes folded in registers; columns of at most 256 run
//! several tiles per work-group (`stat_short`), one element per lane; tiles of at most
//! 1024 run a segment of 2–32 work-items of a warp each, sized by the longest tile
//! (`stat_warp_rows`); neighbouring strided outputs (columns) run 16 or 32 side by side
//! so that loads are coalesced (`stat_columns`); nanmean compacts each tile's values that
//! are not NaN first, as the host does: in each work-item's staged row
//! (`stat_thread_tiles`) for staged rows of at most 32, in a segment's staged row
//! (`stat_warp_rows`) for other rows of at most 1024 elements of at most 4 bytes, within
//! the lanes of `stat_short` for other tiles of at most 256 elements, with a work-group
//! per tile (`stat_kept`) for the rest; over columns longer than 256 rows nanmean runs
//! the moments' columns kernel first and compacts only the tiles with a NaN mean,
//! several neighbouring columns' tiles per work-group (`stat_kept_columns`,
//! `nan_columns.rs`). The tiles are listed in a task table
//! (first element, length, signed step), so rows, columns, strided views and CSR segments
//! all run through the same kernel; outputs whose elements do not step evenly are
//! gathered into rows on the host first. On CUDA, `stat_tiles` and the moments'
//! `stat_warp_rows` carry a launch bound that keeps their registers at 48, so that more
//! warps wait on loads at once; where ptxas spills under it, the device runs the same
//! source unbounded ([`Program::unbounded`]). The moments' columns of at most 1024 rows
//! and rows of at most 3072 elements compile their common length in, so that their
//! folds' counts are constants; such rows that do not start on 64 bytes are read so
//! that DRAM delivers their blocks once ([`prefetches_rows`], and L2 eviction priorities
//! in `stat_warp_rows.h`). The tile plan itself is [`TilePlan`] (`tile_plan.rs`).

use redlab_core::canonical::{LANES, TILE};
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::DType;

use crate::assembly::{self, Target};
use crate::optype::storage_type;
pub use crate::stat_launch::run_tiles;
pub use crate::tile_plan::TilePlan;

/// The kernel's name.
pub const ENTRY_POINT: &str = "stat_tiles";

/// The kernel for plans whose tiles all have at most [`SHORT_MAX`] elements.
pub const SHORT_ENTRY_POINT: &str = "stat_short";

/// The kernel of [`StateKind::NanMoments`] (compacts each tile first).
pub const KEPT_ENTRY_POINT: &str = "stat_kept";

/// The kernel for plans whose tiles all have at most [`THREAD_TILES_MAX`] elements, a
/// work-item per tile.
pub const THREAD_TILES_ENTRY_POINT: &str = "stat_thread_tiles";

/// The longest tile a work-item folds alone (its lanes' states stay in registers).
pub const THREAD_TILES_MAX: usize = 32;

/// The most local memory `stat_thread_tiles` stages its work-group's tiles in (the
/// static limit on CUDA is 48 KiB): 256 tiles of 32 4-byte elements take 33 KiB, of 32
/// 8-byte ones 66 KiB, which load straight from global memory instead.
const THREAD_STAGE_MAX_BYTES: usize = 40 * 1024;

/// The kernel for neighbouring strided outputs (columns), 32 per work-group.
pub const COLUMNS_ENTRY_POINT: &str = "stat_columns";

/// Work-groups of the columns kernel below which its outputs take 16 lane classes (16
/// neighbouring columns per work-group) instead of 8 (32 columns): 8192 columns of 8192
/// rows give 256 work-groups of 32 columns, under two per SM of an H200, and var read
/// 1280 GB/s that way against 1541 with 16 classes (results/h200-stat-occupancy), while
/// 32 columns of 2^22 rows (512 work-groups) read 1907 GB/s with 8 classes and 1750
/// with 16.
const COLUMNS_FEW_GROUPS: usize = 512;

/// Work-groups of `stat_tiles` the CUDA compiler must fit on an SM (OpenCL ignores it), which bounds its
/// registers (48 for 5): var along rows of 8192 read 1450 GB/s on an H200 with the
/// compiler's own 80 registers, 1686 with this bound (results/h200-stat-occupancy).
const TILES_MIN_GROUPS: usize = 5;

/// The same bound for `stat_kept` (nanmean of tiles longer than 256 elements, but for
/// the rows `stat_warp_rows` takes) over
/// rows, and over other tiles (columns). On an H200 the compiler's own choice, 101
/// registers, left two work-groups on an SM; nanmean of f32 without NaN in a CUDA graph
/// (results/h200-nanmean-staged, `bounds/`) read, with 4 and 5 work-groups:
/// 8192×8192 rows 2605 and 2893 GB/s (1887 unbounded), 65536×1024 345 and 403 (225),
/// but 8192×8192 columns 568 and 410 (578), 2^22×32 columns 242 and 177 (254); with
/// 10% NaN, rows 1160 and 1261 (892), columns 489 and 351 (452).
const KEPT_ROWS_MIN_GROUPS: usize = 5;
/// [`KEPT_ROWS_MIN_GROUPS`]' counterpart for tiles that are not rows.
const KEPT_MIN_GROUPS: usize = 4;

/// The longest tile `stat_kept` stages one row of at a time ([`KEPT_SHORT_MIN_GROUPS`]).
const KEPT_SHORT_MAX: usize = 1024;

/// The bound for `stat_kept` where no tile is longer than [`KEPT_SHORT_MAX`]: its stage
/// is one row (4 KiB of f32), so shared memory no longer limits it to five work-groups
/// an SM, and a work-group's few elements leave most of its time to latency. nanmean of
/// f32 on an H200 in a CUDA graph (results/h200-nanmean-staged, `short/`), with 6 and 8
/// work-groups: 65536 rows of 1024 918 and 735 GB/s (403 staging eight rows), with 10%
/// NaN 561 and 457 (234); 2^18 rows of 300 224 and 240 (101).
const KEPT_SHORT_MIN_GROUPS: usize = 6;

/// The same bound for `stat_warp_rows` of nanmean, which compacts each segment's staged
/// row first: on an H200, f32 with 10% NaN in a CUDA graph (results/h200-nanmean-warp), rows
/// of 1024 read 842 GB/s with the compiler's own registers and 909 with this bound, rows
/// of 300 292 and 321 (561 and 198 with a work-group per row before).
const WARP_KEPT_MIN_GROUPS: usize = 4;

/// The same bound for `stat_warp_rows` of the moments (var, std): 68 registers without
/// it, 48 with it; var along 65536 rows of 1024 on an H200 read 1244–1258 GB/s without
/// and 1432–1444 with it, while log-sum-exp (its f64 `exp` needs the registers) read 5%
/// less with it, so it keeps the compiler's choice (results/h200-stat-occupancy).
const WARP_ROWS_MIN_GROUPS: usize = 5;

/// The columns kernel's lane classes per output for `outputs` columns of `per_output`
/// tiles each: each work-item takes every `classes`-th lane of its output's tile, so a
/// work-group holds `WORK_GROUP / classes` neighbouring columns.
fn column_classes(outputs: usize, per_output: usize) -> usize {
    if outputs.div_ceil(WORK_GROUP / 8) * per_output < COLUMNS_FEW_GROUPS {
        16
    } else {
        8
    }
}

/// Rows of a lane that `stat_columns` stages and pushes for `plan`: a tile's lanes hold
/// at most ⌈longest / 1024⌉ rows, rounded up to a power of two so that the stage's
/// chunks of leaves divide a class's leaves. The stage then carries the same bytes per
/// chunk for columns of one row a lane as for whole tiles of eight; sized for eight,
/// a column of 1000 rows had one element in flight where sixteen fit, and var along
/// 1000×65536 f32 read 557 GB/s on the H200 against torch's 2643
/// (results/h200-stat-columns-prefix).
fn column_lane_rows(plan: &TilePlan) -> usize {
    plan.longest()
        .unwrap_or(0)
        .div_ceil(LANES)
        .next_power_of_two()
        .clamp(1, TILE / LANES)
}

/// Whether `stat_columns` streams its lanes through local memory for `kind` over `dtype`
/// (its `ST_COL_STAGED`): elements of 4 bytes or more, except log-sum-exp's and where the
/// host asks for direct loads (`ST_COL_DIRECT`).
fn columns_staged(kind: StateKind, dtype: DType, direct: bool) -> bool {
    kind != StateKind::ExpSum && dtype.size_bytes() >= 4 && !direct
}

/// The longest tile the short kernel takes (several tiles per work-group, one element
/// per lane).
pub const SHORT_MAX: usize = 256;

/// The kernel for tiles of one row (at most [`WARP_ROWS_MAX`] elements), a warp each.
pub const WARP_ROWS_ENTRY_POINT: &str = "stat_warp_rows";

/// The longest tile a segment of a warp takes with one element per lane: one row of
/// lanes.
pub const WARP_ROWS_MAX: usize = 1024;

/// The longest tile a whole warp takes, its 1024 lanes holding up to three elements each
/// (the moments, log-sum-exp and the NaN-skipping extremes; nanmean compacts longer
/// tiles in a work-group's stage). On the H200 (f32, in a CUDA graph) var along rows of
/// 2000, 2500 and 3072 read 1.57×, 1.31× and 2.07× as fast as a work-group per row, but
/// rows of 4000, 5000 and 7000 (four or more elements a lane, so fewer leaves' loads in
/// flight; not profiled) 0.90×, 0.64× and 0.50× (results/h200-stat-lane-rows).
pub const WARP_ROWS_LONG_MAX: usize = 3072;

/// Neighbouring work-items per tile of `stat_warp_rows` over `plan`: one per 32 lanes of
/// the longest tile rounded up to a power of two (2 … 32), so that each work-item's 32
/// leaves hold elements. A whole warp per row of 40, 100 or 300 elements read 0.30–0.35×
/// torch's speed for var on an H200 (results/h200-nanmean-warp, `thread/`).
fn warp_span(plan: &TilePlan) -> usize {
    let longest = plan.longest().unwrap_or(0).max(1);
    (longest.next_power_of_two() / 32).clamp(2, 32)
}

/// `stat_warp_rows` over `plan`'s tiles: a segment per tile ([`warp_span`]), each lane
/// holding up to `lane_rows` elements (the longest tile's rows of 1024 lanes).
fn warp_rows(kind: StateKind, plan: &TilePlan) -> Kernel {
    let lane_rows = plan.longest().unwrap_or(0).div_ceil(WARP_ROWS_MAX).max(1);
    Kernel::WarpRows {
        span: warp_span(plan),
        lane_rows,
        known_len: known_length(plan).filter(|_| kind == StateKind::Moments),
    }
}

/// The length every tile of `plan` has, if they all have one (and it is not 0): the
/// moments' columns of one element a lane and rows of at most 3072 compile it in
/// (`ST_COL_LEN`, `ST_ROW_LEN`), so that every count of their folds is a constant. On an H100, var along
/// 300×65536 f32 read 972 GB/s in a CUDA graph with the counts tested at run time and
/// 2192–2203 with them compiled in (results/h100-columns-known). Each length compiles its
/// own module (cached by source).
fn known_length(plan: &TilePlan) -> Option<usize> {
    plan.longest()
        .filter(|&l| l > 0 && plan.shortest() == Some(l))
}

/// Work-items per group (each holds 4 of a tile's 1024 lanes).
pub const WORK_GROUP: usize = 256;

/// Which state the kernel keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    /// `(count, mean, M2)`: variance, standard deviation.
    Moments = 0,
    /// `(max, Σ exp(x − max))`: log-sum-exp.
    ExpSum = 1,
    /// `(kept, smallest)` of the values that are not NaN.
    NanMin = 2,
    /// `(kept, largest)` of the values that are not NaN.
    NanMax = 3,
    /// `(count, mean, M2)` of each tile's values that are not NaN, compacted in order:
    /// nanmean.
    NanMoments = 4,
}

/// What runs a plan: the source, the kernel's name, and its work-groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The complete source.
    pub source: String,
    /// The kernel to launch.
    pub entry: &'static str,
    /// Work-groups to launch.
    pub groups: usize,
    /// Work-items per work-group: [`WORK_GROUP`] but for `stat_kept_columns`.
    pub work_group: usize,
    /// Where `source` bounds the kernel's registers (`ST_MIN_GROUPS`, CUDA's launch
    /// bound), the same source without the bound: the one to run where the bounded
    /// build spills to local memory. Which lengths spill is ptxas's choice, not a rule:
    /// with NVRTC 13.0 for sm_90, var along rows of 1607, 1704, 1898, 2383–2500, 2600,
    /// 2771 and 2868 elements spilled 8–24 bytes under the bound, where every one of them
    /// built without it needs 42–56 registers and no stack, and rows of 2500 read 4% more
    /// unbounded on an H100 (results/h100-warp-rows-bound).
    pub unbounded: Option<String>,
    /// The length compiled into the program where every row of the launch has it
    /// (warp rows of the moments, `ST_ROW_LEN`), for [`prefetches_rows`].
    pub known_row: Option<usize>,
}

/// Share of the L2 that the rows resident at once may fill when each is prefetched
/// whole ([`prefetches_rows`]): on an H100, rows filling 0.77 of it (1898 f32) read
/// 1.02–1.03× as fast with the prefetch and rows filling 0.85 (2100) 0.92×
/// (results/h100-row-prefetch).
const ROW_PREFETCH_L2_SHARE: (u64, u64) = (4, 5);

/// Whether the warp rows of `program` over `dtype` should each be prefetched into L2 in
/// one bulk copy (`ST_ROW_PREFETCH`, CUDA sm_90 and later) on a device of `sms`
/// multiprocessors and `l2_bytes` of L2.
///
/// Why: a warp reads its row 128 bytes at a time in the fold's bit-reversed leaf order,
/// so neighbouring pieces are read far apart in time. DRAM fills L2 64 bytes at a time,
/// and a row that does not start on 64 bytes splits a 64-byte block between each pair of
/// neighbouring pieces: when the block has left L2 before its second piece is read, it
/// is read from DRAM twice. ncu on an H100 counted 1.31 GB read from DRAM for var along
/// 104858 rows of 2500 f32 (1.05 GB of input) and 1.24 GB for 87381 rows of 3000
/// (results/h100-row-prefetch). A prefetch of the whole row at the warp's start reads
/// each block once, in address order, but only pays where the rows resident at once fit
/// in L2 beside everything else: on an H100 (5280 rows resident), in a CUDA graph, rows
/// of 1100–1850 read 1.12–1.24× as fast with it, rows of 2000 (64-byte aligned) 0.90×,
/// of 2100 0.92×, of 3000 0.81×. Only rows of more than one lane row (over 1024 elements) of
/// 4-byte elements take it, as measured: shorter rows of 4-byte elements are staged
/// through shared memory in address order already (rows of 300 read 0.94× with the
/// prefetch), and other widths were not measured.
pub fn prefetches_rows(program: &Program, dtype: DType, sms: usize, l2_bytes: u64) -> bool {
    let Some(len) = program.known_row else {
        return false;
    };
    if len <= LANES || dtype.size_bytes() != 4 {
        return false;
    }
    let bytes = (len * dtype.size_bytes()) as u64;
    let resident = (sms * WARP_ROWS_MIN_GROUPS * (WORK_GROUP / 32)) as u64;
    let (part, whole) = ROW_PREFETCH_L2_SHARE;
    bytes % 64 != 0 && bytes * resident * whole <= l2_bytes * part
}

/// `source` under a launch bound of `groups` work-groups per multiprocessor, with the
/// unbounded source beside it ([`Program::unbounded`]).
fn bounded(groups: usize, source: String) -> (String, Option<String>) {
    (
        format!("#define ST_MIN_GROUPS {groups}\n{source}"),
        Some(source),
    )
}

/// Which kernel runs a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// NaN-skipping moments: each tile compacted first, a work-group per tile.
    Kept {
        /// Every tile is a run of neighbouring elements (rows).
        rows: bool,
        /// No tile is longer than a row of the tile (1024): one row is staged.
        short: bool,
    },
    /// Tiles of at most this many lanes (a power of two), several per work-group.
    Short(usize),
    /// Tiles of at most this many lanes (a power of two, at most
    /// [`THREAD_TILES_MAX`]), a work-item each; staged in local memory first when the
    /// flag is set.
    ThreadTiles(usize, bool),
    /// Columns, with this many tiles per output.
    Columns {
        /// Tiles per output.
        per_output: usize,
        /// Lane classes per output ([`column_classes`]).
        classes: usize,
        /// Rows of a lane the kernel provides for ([`column_lane_rows`]).
        lane_rows: usize,
        /// Some tile leaves lanes empty (shorter than [`LANES`]): the lane classes walk
        /// only the leaves that can hold elements, and their merges branch past empty
        /// sides. Where every tile fills its lanes, the unstaged fold (log-sum-exp) is
        /// built without that walk: with it, log-sum-exp along 1500×32768 read 6% less
        /// on an H100 (results/h100-columns-whole).
        skip: bool,
        /// The moments' lanes load straight into registers instead of streaming through
        /// local memory: on the H200, var along columns of 500 and 1000 rows (one row a
        /// lane) read 8% more that way, along columns of 1500–8192 rows 11–32% less
        /// (results/h200-columns-direct).
        direct: bool,
        /// The length of every column, compiled in where the direct moments' columns all
        /// have one (`ST_COL_LEN`): every count of the fold is then a constant, so the
        /// merges of empty sides vanish and the others' weights fold.
        known_len: Option<usize>,
    },
    /// Tiles of 33 to 3072 elements, a segment of `span` neighbouring work-items each
    /// ([`warp_span`]), each lane holding up to `lane_rows` elements.
    WarpRows {
        /// Neighbouring work-items per tile.
        span: usize,
        /// Elements per lane, at most.
        lane_rows: usize,
        /// The length of every row, compiled in for the moments' rows where they all have
        /// one (`ST_ROW_LEN`), as for columns.
        known_len: Option<usize>,
    },
    /// A work-group per tile.
    Tiles,
}

/// The kernel for `kind` over `plan`: tiles of at most [`THREAD_TILES_MAX`] lanes take a
/// work-item each (nanmean's only where they are staged; elsewhere they compact their
/// values in the short kernel's lanes), other columns of at most [`SHORT_MAX`] the short
/// kernel, other columns the columns kernel, other tiles of at most [`WARP_ROWS_LONG_MAX`]
/// elements a segment of a warp each ([`warp_rows`]), the rest a work-group each.
fn kernel(kind: StateKind, dtype: DType, plan: &TilePlan) -> Kernel {
    let columns = plan.columns();
    // nanmean compacts each tile's values that are not NaN: a work-item in its staged
    // row (rows of at most 32 that stat_thread_tiles stages), a segment of a warp in its
    // staged row (other rows of at most 1024 elements of at most 4 bytes), the short
    // kernel within its lanes (other tiles of at most 256), a work-group in its stage
    // (the rest). (A whole warp per row of 100 or 40 had read 0.6× and 0.3× as fast as
    // the short kernel: results/h200-nanmean-warp.)
    if kind == StateKind::NanMoments {
        // Rows longer than a work-item's tile and at most a row of lanes.
        let segment_row = plan
            .longest()
            .is_some_and(|l| (THREAD_TILES_MAX + 1..=WARP_ROWS_MAX).contains(&l));
        return match (plan.short_width(), columns) {
            (Some(width), None)
                if width <= THREAD_TILES_MAX && thread_tiles_staged(plan, width, dtype) =>
            {
                Kernel::ThreadTiles(width, true)
            }
            (_, None) if segment_row && dtype.size_bytes() <= 4 => warp_rows(kind, plan),
            (Some(width), _) => Kernel::Short(width),
            _ => Kernel::Kept {
                rows: contiguous_tiles(plan),
                short: plan.longest().is_some_and(|l| l <= KEPT_SHORT_MAX),
            },
        };
    }
    match (plan.short_width(), columns) {
        (Some(width), _) if width <= THREAD_TILES_MAX => {
            Kernel::ThreadTiles(width, thread_tiles_staged(plan, width, dtype))
        }
        (Some(width), Some(_)) => Kernel::Short(width),
        (_, Some(per_output)) => {
            let lane_rows = column_lane_rows(plan);
            let direct = kind == StateKind::Moments && lane_rows == 1;
            Kernel::Columns {
                per_output,
                classes: column_classes(plan.outputs.len(), per_output),
                lane_rows,
                skip: plan.shortest().is_some_and(|l| l < LANES),
                direct,
                known_len: known_length(plan).filter(|_| direct),
            }
        }
        _ if plan.longest().is_some_and(|l| l <= WARP_ROWS_LONG_MAX) => warp_rows(kind, plan),
        _ => Kernel::Tiles,
    }
}

/// The program that runs `plan`: tiles of at most 32 lanes a work-item each (nanmean's,
/// and columns of at most 256, on the short kernel), other columns on the columns kernel, other tiles of at most 1024
/// elements a warp each, the rest a work-group each.
pub fn program(kind: StateKind, dtype: DType, target: Target, plan: &TilePlan) -> Program {
    let source = source(kind, dtype, target);
    let tiles = plan.tiles();
    match kernel(kind, dtype, plan) {
        Kernel::Kept { rows, short } => kept_program(source, tiles, rows, short),
        Kernel::Short(width) => Program {
            source: format!("#define ST_WIDTH {width}\n{source}"),
            entry: SHORT_ENTRY_POINT,
            groups: tiles.div_ceil(WORK_GROUP / width),
            work_group: WORK_GROUP,
            unbounded: None,
            known_row: None,
        },
        Kernel::ThreadTiles(width, staged) => Program {
            source: format!(
                "#define ST_THREAD_WIDTH {width}\n#define ST_THREAD_STAGED {}\n{source}",
                u8::from(staged)
            ),
            entry: THREAD_TILES_ENTRY_POINT,
            groups: tiles.div_ceil(WORK_GROUP),
            work_group: WORK_GROUP,
            unbounded: None,
            known_row: None,
        },
        Kernel::Columns {
            per_output,
            classes,
            lane_rows,
            skip,
            direct,
            known_len,
        } => Program {
            source: format!(
                "#define ST_COLUMNS 1\n#define ST_CLASSES {classes}\n\
                 #define ST_COL_ROWS {lane_rows}\n#define ST_COL_SKIP {}\n\
                 #define ST_COL_DIRECT {}\n{}{source}",
                u8::from(skip),
                u8::from(direct),
                known_len
                    .map(|len| format!("#define ST_COL_LEN {len}\n"))
                    .unwrap_or_default()
            ),
            entry: COLUMNS_ENTRY_POINT,
            groups: plan.outputs.len().div_ceil(WORK_GROUP / classes) * per_output,
            work_group: WORK_GROUP,
            unbounded: None,
            known_row: None,
        },
        Kernel::WarpRows {
            span,
            lane_rows,
            known_len,
        } => {
            let known = known_len
                .map(|len| format!("#define ST_ROW_LEN {len}\n"))
                .unwrap_or_default();
            let source = format!(
                "#define ST_WARP_ROWS 1\n#define ST_SPAN {span}\n\
                 #define ST_LANE_ROWS {lane_rows}\n{known}{source}"
            );
            let (source, unbounded) = match kind {
                StateKind::NanMoments => bounded(WARP_KEPT_MIN_GROUPS, source),
                StateKind::Moments => bounded(WARP_ROWS_MIN_GROUPS, source),
                _ => (source, None),
            };
            Program {
                source,
                entry: WARP_ROWS_ENTRY_POINT,
                groups: tiles.div_ceil(WORK_GROUP / span),
                work_group: WORK_GROUP,
                unbounded,
                known_row: known_len,
            }
        }
        Kernel::Tiles => {
            let (source, unbounded) = bounded(TILES_MIN_GROUPS, source);
            Program {
                source,
                entry: ENTRY_POINT,
                groups: tiles,
                work_group: WORK_GROUP,
                unbounded,
                known_row: None,
            }
        }
    }
}

/// `stat_kept` over `tiles` tiles of nanmean's `source`: `rows` where every tile is a
/// run of neighbouring elements, `short` where none is longer than a row (one row staged
/// at a time).
fn kept_program(source: String, tiles: usize, rows: bool, short: bool) -> Program {
    let (source, unbounded) = bounded(
        match (short, rows) {
            (true, _) => KEPT_SHORT_MIN_GROUPS,
            (false, true) => KEPT_ROWS_MIN_GROUPS,
            (false, false) => KEPT_MIN_GROUPS,
        },
        format!(
            "{}{source}",
            if short {
                "#define ST_KEPT_ROWS 1\n#define ST_KEPT_PARTS 1\n"
            } else {
                ""
            }
        ),
    );
    Program {
        source,
        entry: KEPT_ENTRY_POINT,
        groups: tiles,
        work_group: WORK_GROUP,
        unbounded,
        known_row: None,
    }
}

/// Whether nanmean over `plan` first runs the moments' columns kernel
/// ([`crate::nan_columns`]): where it would otherwise take `stat_kept` over columns
/// that the moments walk coalesced.
pub(crate) fn nanmean_walks_columns(kind: StateKind, dtype: DType, plan: &TilePlan) -> bool {
    kind == StateKind::NanMoments
        && matches!(kernel(kind, dtype, plan), Kernel::Kept { .. })
        && matches!(
            kernel(StateKind::Moments, dtype, plan),
            Kernel::Columns { .. }
        )
}

/// `stat_kept` over every tile of `plan`, whatever kernel nanmean would choose for it
/// (the tiles [`crate::nan_columns`] reruns).
pub(crate) fn kept_program_of(dtype: DType, target: Target, plan: &TilePlan) -> Program {
    kept_program(
        source(StateKind::NanMoments, dtype, target),
        plan.tiles(),
        contiguous_tiles(plan),
        plan.longest().is_some_and(|l| l <= KEPT_SHORT_MAX),
    )
}

/// How `kind` runs over `selection` on a device, in words (for `--explain`).
pub fn explain(kind: StateKind, dtype: DType, selection: Selection<'_>) -> String {
    let how = match kind {
        StateKind::Moments | StateKind::NanMoments => "Welford updates per lane, Chan merges",
        StateKind::ExpSum => "an online maximum per lane, scaled merges",
        StateKind::NanMin | StateKind::NanMax => "the kept count and extreme per lane",
    };
    // Outputs that do not step evenly run as the rows they are gathered into.
    let (plan, gathered) = match TilePlan::in_place(selection) {
        Some(plan) => (Some(plan), ""),
        None => (
            gathered_rows(selection),
            "; the outputs do not step evenly, so they are gathered into rows on the host first",
        ),
    };
    let program = if let Some(plan) = plan {
        match kernel(kind, dtype, &plan) {
            Kernel::Kept { .. } if nanmean_walks_columns(kind, dtype, &plan) => {
                "stat_columns first (the moments' coalesced walk across columns: a tile \
                 without NaN has the same state), then only the tiles whose mean came out \
                 NaN again, their values that are not NaN compacted in order: \
                 stat_kept_columns, the tiles of 4 neighbouring columns at one index per \
                 work-group (2 where work-groups hold at most 512 work-items, stat_kept's \
                 one per tile where they hold fewer)"
                    .to_string()
            }
            Kernel::Kept { short, .. } => format!(
                "stat_kept: one work-group per canonical tile, staged in local memory{}, \
                 where its values that are not NaN are compacted in order",
                if short {
                    " one row at a time (no tile is longer)"
                } else {
                    ""
                }
            ),
            Kernel::Short(width) => format!(
                "stat_short: tiles of at most {width} elements, {} per work-group, one element per lane{}",
                WORK_GROUP / width,
                if kind == StateKind::NanMoments {
                    ", the values that are not NaN compacted in order first"
                } else {
                    ""
                }
            ),
            Kernel::ThreadTiles(width, staged) => format!(
                "stat_thread_tiles: a work-item per tile of at most {width} elements, its lanes \
                 folded in registers by a binary counter in bit-reversed order{}{}",
                if staged {
                    ", the work-group's tiles copied into local memory first"
                } else {
                    ""
                },
                if kind == StateKind::NanMoments {
                    ", each tile's values that are not NaN moved to the front of its row there"
                } else {
                    ""
                }
            ),
            Kernel::Columns {
                classes,
                lane_rows,
                skip,
                direct,
                known_len,
                ..
            } => format!(
                "stat_columns: the same tile of {} neighbouring columns per work-group, each \
                 load reading them side by side in one row, {classes} lane classes per column \
                 each folded by a binary counter in bit-reversed order, its leaves of up to \
                 {lane_rows} rows {}{}",
                WORK_GROUP / classes,
                if columns_staged(kind, dtype, direct) {
                    "staged in chunks"
                } else {
                    "loaded straight into registers"
                },
                if let Some(len) = known_len {
                    format!(
                        "; compiled for columns of {len} rows, so the fold's counts are \
                         constants and its merges of empty sides vanish"
                    )
                } else if skip {
                    "; a tile shorter than its 1024 lanes walks only the leaves that hold elements"
                        .to_string()
                } else {
                    String::new()
                }
            ),
            Kernel::WarpRows {
                span,
                lane_rows,
                known_len,
            } => format!(
                "stat_warp_rows: {span} neighbouring work-items per tile of at most {} \
                 elements{}, 32 lanes per work-item{} folded by a binary counter in \
                 bit-reversed order as they load, then across the {span}{}",
                32 * span * lane_rows,
                if kind == StateKind::NanMoments {
                    ", its values that are not NaN compacted in order in its staged row"
                } else {
                    ""
                },
                if lane_rows > 1 {
                    format!(" (up to {lane_rows} elements each, 1024 apart)")
                } else {
                    String::new()
                },
                known_len
                    .map(|len| format!(
                        "; compiled for rows of {len}, so the counter's counts are constants \
                         and its merges of empty sides vanish"
                    ))
                    .unwrap_or_default()
            ),
            Kernel::Tiles => {
                "stat_tiles: one work-group per canonical tile, 4 lanes per work-item".to_string()
            }
        }
    } else {
        "one work-group per canonical tile of the gathered rows".to_string()
    };
    let join = if kind == StateKind::NanMoments {
        "one after another"
    } else {
        "in the aligned tree"
    };
    format!(
        "{program} ({how}, lanes folded by halving, in f64); each output's tile states \
         joined {join} on the host{gathered}; time: the tile kernel"
    )
}

/// Whether `stat_thread_tiles` copies its work-group's tiles into local memory before
/// the work-items read their own: where every tile is a run of neighbouring elements
/// (rows), so that the copy reads neighbouring elements, and the copy fits.
fn thread_tiles_staged(plan: &TilePlan, width: usize, dtype: DType) -> bool {
    WORK_GROUP * (width + 1) * dtype.size_bytes() <= THREAD_STAGE_MAX_BYTES
        && contiguous_tiles(plan)
}

/// Whether every tile of `plan` is a run of neighbouring elements (step 1, or one element).
fn contiguous_tiles(plan: &TilePlan) -> bool {
    plan.table.chunks(3).all(|t| t[2] == 1 || t[1] <= 1)
}

/// The tile plan of the rows that `selection`'s outputs are gathered into (one row of
/// the segment's length per output), where it can be told without the data.
fn gathered_rows(selection: Selection<'_>) -> Option<TilePlan> {
    let Selection::Axes(plan) = selection else {
        return None;
    };
    let layout = Layout::c_order(&[plan.outputs(), plan.segment_len()]);
    let rows = AxisPlan::new(layout, Some(&[1]), false).ok()?;
    TilePlan::in_place(Selection::Axes(&rows))
}

/// The complete source for `kind` over elements of `dtype` on `target`.
pub fn source(kind: StateKind, dtype: DType, target: Target) -> String {
    let mut text = String::new();
    match target {
        Target::Cuda => text.push_str(assembly::file("cuda_prelude.h").unwrap_or_default()),
        Target::OpenCl => text.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"),
    }
    // Local memory is a qualifier in OpenCL and a generic pointer in CUDA.
    let local = match target {
        Target::Cuda => "",
        Target::OpenCl => "__local ",
    };
    let read = |space: &str| match dtype {
        DType::F16 => format!("(double)vload_half(i, (const {space}half*)in)"),
        DType::BF16 => "(double)as_float(((uint)in[i]) << 16)".to_string(),
        _ => "(double)in[i]".to_string(),
    };
    text.push_str(&format!(
        "#define STAT_KIND {}\n#define ST_STAGE_ROWS {}\n#define ST_WIDE {}\n#define ST_IN_BYTES {}\ntypedef {} in_t;\n\
         inline double stat_load(const __global in_t* in, ulong i) {{ return {}; }}\n\
         inline double st_stage_load(const {local}in_t* in, uint i) {{ return {}; }}\n",
        kind as u32,
        stage_rows(dtype),
        u8::from(dtype.size_bytes() >= 4),
        dtype.size_bytes(),
        storage_type(dtype),
        read("__global "),
        read(local),
    ));
    if matches!(kind, StateKind::Moments | StateKind::NanMoments) {
        text.push_str(&prefix_weights(target));
    }
    // (An include that cannot be resolved shows in the build log.)
    text.push_str(&assembly::expanded("statistics.cl").unwrap_or_else(|e| format!("#error {e}\n")));
    text
}

/// Entries of the tables of `st_merge_prefix`: every count of a merge there is below
/// 1024, so the upper side's count `c` of an unequal merge (`c + 1`, `c`) is below 512.
const PREFIX_WEIGHTS: usize = 512;

/// The weights of Chan's merge of moments over `c + 1` and `c` elements, as the merge
/// computes them: `c / (2c + 1)` for the mean and `c(c + 1) / (2c + 1)` for M2, each
/// one correctly rounded division (the product is exact).
fn prefix_weight(c: usize) -> (f64, f64) {
    let (lo, hi) = ((c + 1) as f64, c as f64);
    (hi / (lo + hi), lo * hi / (lo + hi))
}

/// `st_merge_prefix`'s tables as program-scope constants of `target`. Each value is
/// written in the shortest decimal that reads back to its bits.
fn prefix_weights(target: Target) -> String {
    let space = match target {
        Target::Cuda => "__constant__",
        Target::OpenCl => "__constant",
    };
    let (mean, m2): (Vec<String>, Vec<String>) = (0..PREFIX_WEIGHTS)
        .map(|c| {
            let (mean, m2) = prefix_weight(c);
            (format!("{mean:?}"), format!("{m2:?}"))
        })
        .unzip();
    format!(
        "#define ST_PREFIX_WEIGHTS {PREFIX_WEIGHTS}
         {space} double st_mean_weight[{PREFIX_WEIGHTS}] = {{{}}};
         {space} double st_m2_weight[{PREFIX_WEIGHTS}] = {{{}}};
",
        mean.join(","),
        m2.join(",")
    )
}

/// Rows of a tile that `stat_tiles` stages in local memory at once: 32 KiB of elements
/// (8 rows of 4-byte elements, 4 of 8-byte ones), so that with the fold's 6 KiB five
/// work-groups still fit an SM's shared memory ([`TILES_MIN_GROUPS`]).
fn stage_rows(dtype: DType) -> usize {
    if dtype.size_bytes() > 4 {
        4
    } else {
        8
    }
}

#[cfg(test)]
#[path = "statistics_tests.rs"]
mod tests;
