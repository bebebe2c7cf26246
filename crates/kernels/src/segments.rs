//! Axis and segmented reductions on OpenCL and CUDA devices: which kernel of
//! `segments.cl` runs a shape ([`Strategy`], with the reason `--explain` prints), the
//! header and tables that tell the kernels where each output's elements are
//! ([`SegmentJob`]), and the launches ([`run_segments`]) through the same [`Launcher`]
//! every 1-D strategy uses.
//!
//! Every output is reduced in the canonical order of its own sequence, so float results
//! equal the CPU backend's bit for bit (docs/canonical-order.md, "Axes and segments").

use std::ops::Range;

use redlab_core::segmented::Selection;
use redlab_core::{ArrayRef, Op, Problem, Value};

use crate::codec::Codec;
use crate::driver::{ChainStep, Launcher, RunError};
pub use crate::segment_results::SegmentResults;

/// Elements per canonical tile (1024 lanes × 8 rows).
const TILE: usize = 8192;
/// Work-items per group in every kernel of `segments.cl`.
const WG: usize = 256;
/// Words of the header (`HEADER_WORDS` in `segments.cl`).
const HEADER_WORDS: usize = 16;
/// Blocks of outputs per work-group of `short_rows` (`SHORT_BLOCKS`).
const SHORT_BLOCKS: usize = 4;
/// Work-items per output of `short_rows_wide` (`SHORT_WIDTH`: one warp).
const SHORT_WIDTH: usize = 32;
/// Blocks of rows per work-group of `word_rows` (`WR_BLOCKS`).
const WR_BLOCKS: usize = 4;
/// Elements per work-item of `word_rows`: two words of 4 elements.
const WR_LANES_PER_ITEM: usize = 8;

/// Rows of `span` elements that one work-group of `word_rows` reduces.
const fn word_rows_per_group(span: usize) -> usize {
    WR_BLOCKS * WG * WR_LANES_PER_ITEM / span
}
/// Neighbouring outputs per work-group of `column_tiles` (`COL_OUTPUTS`).
const COL_OUTPUTS: usize = 32;
/// Neighbouring strided outputs from which `column_tiles` beats reading each output
/// along its stride (fewer leave threads of a column group idle, but still coalesce).
const MIN_COLUMNS: usize = 8;
/// Work-items per group of `column_tiles` (`COL_WG`: 32 outputs × 32 lane classes).
const COL_WG: usize = 1024;
/// Whether `problem`'s answer does not depend on the order in which its elements are
/// combined: every operator but float sums and products (min/max fold order keys, integer
/// sums wrap exactly). The kernels' `SEG_ORDER_FREE` (segments.cl) says the same.
fn order_free(problem: &Problem) -> bool {
    !(problem.dtype.is_float() && problem.op.is_arithmetic())
}

/// Partials per tile of `column_words` (`CW_PARTIALS`), joined by `column_finish`.
const CW_PARTIALS: usize = 4;
/// Outputs side by side from which `column_words` replaces `column_tiles`.
const CW_MIN_OUTPUTS: usize = 8;

/// Words of 4 outputs side by side in a work-group of `column_words` (`cw_slots` in
/// column_words.h): 32 from 128 outputs on, else 16, 8, 4 or 2, the group then holding 16
/// to 128 lane classes of those words (a tile's classes split over 2 groups, all in one,
/// or the classes of 2 or 4 tiles in one).
fn column_word_slots(outputs: usize) -> usize {
    match outputs {
        128.. => 32,
        33..=127 => 16,
        17..=32 => 8,
        9..=16 => 4,
        _ => 2,
    }
}

/// How `column_words` lays a tile's 32 lane classes over work-groups of `slots` words per
/// row: (work-groups per tile, tiles per work-group), one of them 1.
fn column_word_split(slots: usize) -> (usize, usize) {
    let classes = WG / slots;
    ((32 / classes).max(1), (classes / 32).max(1))
}
/// "No fixed length" in the header.
const NONE: u64 = u64::MAX;

/// How a shape is reduced on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Outputs of at most 1024 elements, `width` work-items each (`short_rows`).
    ShortRows {
        /// Work-items per output: the next power of two of the longest output, at most
        /// 256 (each holding up to 4 lanes).
        width: usize,
    },
    /// Outputs of 33 to 1024 elements with accumulators of at most 8 bytes: 32
    /// work-items per output, each holding up to 32 lanes in registers
    /// (`short_rows_wide`).
    ShortRowsWide,
    /// Rows of exactly 8, 16, 32 or 64 elements lying side by side, read as words of 4
    /// elements (16 bytes of 4-byte elements, 8 of 2-byte ones): `span / 8` work-items
    /// per row, two words each (`word_rows`).
    WordRows {
        /// Elements per row.
        span: usize,
    },
    /// A work-group per tile of each output (`row_tiles`), then `tree` where an output
    /// has more than one tile.
    RowTiles,
    /// A work-group per output reading all of its tiles and joining them itself, for
    /// many outputs of a few tiles: no tree (`row_whole`, segments_whole.rs).
    RowWhole,
    /// Strided outputs that start side by side (columns): 32 outputs × 32 lane classes per
    /// work-group and tile (`column_tiles`), then `tree` for outputs of several tiles.
    ColumnTiles,
    /// Columns of 2- or 4-byte elements read as words of 4: 128 outputs × 8 lane classes per
    /// work-group, a tile's 32 classes split over 4 work-groups (`column_words`), their
    /// partials joined by `column_finish`, then `tree` for outputs of several tiles.
    ColumnWords,
}

/// The kernels of `segments.cl`, built for one problem.
pub struct SegmentKernels<'k, K: ?Sized> {
    /// `short_rows`.
    pub short_rows: &'k K,
    /// `short_rows_wide`.
    pub short_rows_wide: &'k K,
    /// `row_tiles`.
    pub row_tiles: &'k K,
    /// `column_tiles`.
    pub column_tiles: &'k K,
    /// `tree`.
    pub tree: &'k K,
    /// `column_words`.
    pub column_words: &'k K,
    /// `column_finish`.
    pub column_finish: &'k K,
    /// `word_rows`.
    pub word_rows: &'k K,
    /// `row_whole`.
    pub row_whole: &'k K,
}

/// The entry points of `segments.cl`, in the order of [`SegmentKernels`]' fields.
pub const ENTRY_POINTS: [&str; 9] = [
    "short_rows",
    "short_rows_wide",
    "row_tiles",
    "column_tiles",
    "tree",
    "column_words",
    "column_finish",
    "word_rows",
    "row_whole",
];

/// The indices into [`ENTRY_POINTS`] of `column_words` and `column_finish`, which a
/// source built with `SEG_SKIP_COLUMN_WORDS` leaves out (`segments.cl`).
pub const COLUMN_WORD_ENTRIES: [usize; 2] = [5, 6];

/// The define that leaves [`COLUMN_WORD_ENTRIES`] out of a segment source: jobs that do
/// not launch them ([`SegmentJob::launches_column_words`]) build much faster without.
pub const SKIP_COLUMN_WORDS: &str = "#define SEG_SKIP_COLUMN_WORDS 1\n";

/// Where every output's elements are, and how the device will reduce them.
#[derive(Debug, Clone)]
pub struct SegmentJob {
    outputs: usize,
    header: [u64; HEADER_WORDS],
    /// starts[outputs + 1] then tile prefix[outputs + 1] (table modes), else empty.
    tables: Vec<u64>,
    /// Length of each output when they differ; `None`: all `fixed_len`.
    lens: Option<Vec<usize>>,
    fixed_len: usize,
    tiles: usize,
    max_len: usize,
    strategy: Strategy,
    reason: String,
    /// The kernels apply a user-defined combine (`OP_CUSTOM`): whatever the stand-in
    /// problem's operator, the plan keeps to the canonical order's paths.
    custom: bool,
}

impl SegmentJob {
    /// Describes `selection` for the kernels, or `None` when an output's elements do not
    /// step evenly through the buffer (several reduced axes that do not merge): the
    /// caller then gathers them into rows first.
    pub fn new(selection: Selection<'_>) -> Option<SegmentJob> {
        let mut h = [0u64; HEADER_WORDS];
        match selection {
            Selection::Ranges(ranges) => Self::from_ranges(ranges, h),
            Selection::Axes(plan) => {
                let outputs = plan.outputs();
                let len = plan.segment_len();
                let reduced = plan.reduced_runs();
                let stride = match reduced.as_slice() {
                    [] => 1,
                    [(_, s)] => *s,
                    _ => return None,
                };
                let kept = plan.kept_runs();
                h[0] = len as u64;
                h[1] = stride as u64;
                h[9] = if outputs == 0 {
                    0
                } else {
                    plan.start(0) as u64
                };
                let mut tables = Vec::new();
                match kept.as_slice() {
                    [] => {
                        h[5] = 1;
                    }
                    [(d, s)] => {
                        h[5] = *d as u64;
                        h[7] = *s as u64;
                    }
                    [(_, outer), (d, s)] => {
                        h[5] = *d as u64;
                        h[6] = *outer as u64;
                        h[7] = *s as u64;
                    }
                    _ => {
                        h[4] = 1;
                        // Fixed length: only the starts (tiles are k × tiles per output).
                        tables = (0..outputs).map(|k| plan.start(k) as u64).collect();
                    }
                }
                // Columns: strided outputs whose neighbours start one element apart.
                let columns = stride != 1
                    && len > 1
                    && matches!(kept.last(), Some((d, 1)) if *d >= MIN_COLUMNS);
                Some(Self::finish(outputs, h, tables, None, len, columns))
            }
        }
    }

    fn from_ranges(ranges: &[Range<usize>], mut h: [u64; HEADER_WORDS]) -> Option<SegmentJob> {
        // Lengths come from consecutive starts, so the ranges must touch (segments from
        // offsets or a fixed length always do).
        if ranges.windows(2).any(|w| w[0].end != w[1].start) {
            return None;
        }
        let outputs = ranges.len();
        if let Some(first) = ranges.first() {
            let len = first.len();
            if len > 0 && ranges.iter().all(|r| r.len() == len) {
                // Segments of one length: output k starts k × len after the first, the
                // formula of a matrix's rows, with no tables to upload and the row
                // kernels that need that layout.
                h[0] = len as u64;
                h[1] = 1;
                h[5] = outputs as u64;
                h[7] = len as u64;
                h[9] = first.start as u64;
                return Some(Self::finish(outputs, h, Vec::new(), None, len, false));
            }
        }
        let lens: Vec<usize> = ranges.iter().map(|r| r.end - r.start).collect();
        h[0] = NONE;
        h[1] = 1;
        h[4] = 1;
        let mut tables = Vec::with_capacity(2 * (outputs + 1));
        tables.extend(ranges.iter().map(|r| r.start as u64));
        tables.push(ranges.last().map_or(0, |r| r.end as u64));
        let mut tiles = 0u64;
        for len in &lens {
            tables.push(tiles);
            tiles += len.div_ceil(TILE) as u64;
        }
        tables.push(tiles);
        Some(SegmentJob::finish(outputs, h, tables, Some(lens), 0, false))
    }

    fn finish(
        outputs: usize,
        mut h: [u64; HEADER_WORDS],
        tables: Vec<u64>,
        lens: Option<Vec<usize>>,
        fixed_len: usize,
        columns: bool,
    ) -> SegmentJob {
        let max_len = lens
            .as_ref()
            .map_or(fixed_len, |l| l.iter().copied().max().unwrap_or(0));
        let tiles = match &lens {
            Some(l) => l.iter().map(|len| len.div_ceil(TILE)).sum(),
            None => outputs * fixed_len.div_ceil(TILE),
        };
        h[3] = fixed_len.div_ceil(TILE) as u64;
        let mut job = SegmentJob {
            outputs,
            header: h,
            tables,
            lens,
            fixed_len,
            tiles,
            max_len,
            strategy: Strategy::RowTiles,
            reason: String::new(),
            custom: false,
        };
        job.choose(columns);
        job
    }

    /// Picks the kernel (columns where the caller found them) and says why.
    fn choose(&mut self, columns: bool) {
        let (outputs, fixed_len, max_len, tiles) =
            (self.outputs, self.fixed_len, self.max_len, self.tiles);
        let (strategy, reason) = if columns {
            (
                Strategy::ColumnTiles,
                format!(
                    "column_tiles: {outputs} strided outputs side by side; a work-group takes 32 \
                     neighbouring outputs × 32 lane classes of one tile of {TILE} elements, each \
                     warp load reading 32 neighbours in one row{}",
                    if fixed_len > TILE {
                        ", then a canonical tree over each output's tiles"
                    } else {
                        ""
                    }
                ),
            )
        } else if max_len <= 1024 {
            let span = max_len.max(1).next_power_of_two();
            let width = span.min(WG);
            self.header[2] = span as u64;
            (
                Strategy::ShortRows { width },
                format!(
                    "short_rows: outputs of at most {max_len} elements; {width} work-items per output \
                     ({} lanes each), {} outputs per work-group, folded by halving",
                    span / width,
                    SHORT_BLOCKS * WG / width
                ),
            )
        } else {
            (
                Strategy::RowTiles,
                format!(
                    "row_tiles: a work-group per tile of {TILE} elements ({tiles} tiles for {outputs} \
                     outputs of up to {max_len}){}",
                    if max_len > TILE {
                        "; several work-groups per long output, then a canonical tree over its tiles"
                    } else {
                        ""
                    }
                ),
            )
        };
        self.strategy = strategy;
        self.reason = reason;
    }

    /// The job for a device whose work-groups hold at most `max_work_group` work-items:
    /// column tiles need groups of 1024, so a smaller device reads columns as rows.
    pub fn for_device(mut self, max_work_group: usize) -> SegmentJob {
        if self.strategy == Strategy::ColumnTiles && max_work_group < COL_WG {
            self.choose(false);
            self.reason.push_str(&format!(
                " (column tiles need work-groups of {COL_WG}; this device allows {max_work_group})"
            ));
        }
        self
    }

    /// The job for `problem`: outputs of 33 to 1024 elements go to `short_rows_wide`.
    /// (value, index) pairs of argmin/argmax fold there as they load, whatever the
    /// order, since their answer does not depend on it: held as 16 registers of pairs
    /// for the halving fold they read slower than on `short_rows` (measured on the H200).
    /// Columns of 2- or 4-byte elements (8-byte ones for operators whose answer does
    /// not depend on the order) go to `column_words` where every word holds 4
    /// neighbouring outputs at every row and the H200 measured it faster
    /// (`words_hold_columns`).
    pub fn for_problem(self, problem: &Problem) -> SegmentJob {
        self.choose_for(problem, true, true)
    }

    /// [`Self::for_problem`] for kernels reading through a user-defined map (`problem`
    /// over mapped values). `words`: the kernels load words of 4 elements
    /// ([`crate::mapped::loads_words`]: raw words of one input of 2- or 4-byte elements,
    /// or each input's words for float sums of several), so they plan as plain ones do.
    /// Without words, no `column_words`, which would fall back to a work-item per 4
    /// columns (8192×8192 column means read at 0.27 of torch on the H200);
    /// `column_tiles` reads mapped elements of 32 neighbouring outputs per warp load.
    /// `word_rows` stays either way: without words it loads a row's lanes one element at
    /// a time, in the same shape (2^20 rows of 32, f32 mean on the H200: 0.069 ms per
    /// call on `word_rows`, 0.30 on `short_rows`).
    pub fn for_mapped(self, problem: &Problem, words: bool) -> SegmentJob {
        self.choose_for(problem, words, false)
    }

    /// [`Self::for_problem`] for the kernels of a user-defined combine (`OP_CUSTOM`,
    /// [`crate::mapped::custom_on_device`]), `problem` standing in for its partials'
    /// layout: the canonical order's paths only, as for float sums, whatever the stand-in
    /// (an integer sum's would fold in any order). `words`: the kernels load words of 4
    /// elements (raw or mapped, [`crate::mapped::custom_loads_words`]), so columns whose
    /// stand-in has 4-byte partials (f32 accumulators) take `column_words`' canonical
    /// class fold, as f32 sums do; 8-byte accumulators keep `column_tiles`, which the
    /// word path has not been measured against for them.
    pub fn for_custom(mut self, problem: &Problem, words: bool) -> SegmentJob {
        self.custom = true;
        self.choose_for(problem, words, false)
    }

    /// Whether the kernels may fold `problem`'s elements in any order: never for a
    /// user-defined combine ([`Self::for_custom`]).
    fn order_free_here(&self, problem: &Problem) -> bool {
        !self.custom && order_free(problem)
    }

    /// `raw_words`: the kernels load raw words of 4 elements (plain, or mapped through
    /// `MAP_BITS`), which `column_words` needs; `plain`: they read the problem's own
    /// elements, with no map (8-byte words exist only then).
    fn choose_for(mut self, problem: &Problem, raw_words: bool, plain: bool) -> SegmentJob {
        let span = self.header[2] as usize;
        let pairs = matches!(problem.op, Op::ArgMin | Op::ArgMax);
        if self.strategy == Strategy::ColumnTiles
            && raw_words
            && self.words_hold_columns(problem, plain)
        {
            self.strategy = Strategy::ColumnWords;
            let class_fold = if pairs {
                "each output's class scanned in increasing index for the first strictly \
                 better key, 32 words in flight"
            } else if self.order_free_here(problem) {
                "each class folded as its words arrive, 32 in flight (the answer does not \
                 depend on the order)"
            } else {
                "each class folded by the canonical halving"
            };
            let slots = column_word_slots(self.outputs);
            let warp_rows = if slots == 32 {
                "each warp load reading 32 words of one row".to_string()
            } else {
                format!(
                    "each warp load reading {slots} words of {} rows",
                    32 / slots
                )
            };
            let classes = match column_word_split(slots) {
                (1, 1) => "the 32 lane classes of one tile".to_string(),
                (1, n) => format!("the 32 lane classes of each of {n} tiles"),
                (n, _) => format!(
                    "{} of the 32 lane classes of one tile ({n} per tile)",
                    32 / n
                ),
            };
            self.reason = format!(
                "column_words: {} strided outputs side by side, read as words of 4 outputs; a \
                 work-group takes {} neighbouring outputs × {classes} of {TILE} elements \
                 (partials joined by column_finish), {warp_rows}, {class_fold}{}",
                self.outputs,
                4 * slots,
                if self.fixed_len > TILE {
                    ", then a canonical tree over each output's tiles"
                } else {
                    ""
                }
            );
        }
        if matches!(self.strategy, Strategy::ShortRows { .. }) && self.words_hold_rows(problem) {
            self.strategy = Strategy::WordRows { span };
            self.reason = format!(
                "word_rows: {} rows of {span} elements side by side, read as words of 4; {} \
                 work-items per row (two words each), {} rows per work-group, folded in \
                 registers, then across the row's work-items",
                self.outputs,
                span / WR_LANES_PER_ITEM,
                word_rows_per_group(span)
            );
        }
        if matches!(self.strategy, Strategy::ShortRows { .. }) && span > SHORT_WIDTH {
            self.strategy = Strategy::ShortRowsWide;
            let fold = if pairs {
                "each work-item's lanes folded as they load (any order gives the one answer), \
                 then within the warp"
            } else {
                "folded by halving in registers then within the warp"
            };
            self.reason = format!(
                "short_rows_wide: outputs of at most {} elements; {SHORT_WIDTH} work-items per \
                 output ({} lanes each, in registers), {} outputs per work-group, {fold}",
                self.max_len,
                span / SHORT_WIDTH,
                SHORT_BLOCKS * WG / SHORT_WIDTH
            );
        }
        self.take_whole_rows(problem);
        self
    }

    /// Whether `column_words` runs these columns of `problem`: every word must hold 4
    /// neighbouring outputs at every row (2- or 4-byte elements, outputs one element
    /// apart in runs of a multiple of 4, first elements and row strides of a multiple of
    /// 4 elements; the kernel checks the buffer's alignment itself), and the H200's
    /// measurements must favour it. Float sums and products keep the canonical class
    /// fold: columns shorter than a tile 1.22× `column_tiles` (results/h200-column-words),
    /// columns of exactly 1024, 2048 or 4096 rows 1.44–4.38× in a CUDA graph
    /// (results/h200-short-columns), whole tiles 1.02–1.44×. Every other operator's
    /// answer does not depend on the order, and `column_words` folds each class's
    /// elements as they arrive (`cw_free_fold`; argmin/argmax scan them by order key),
    /// with no test per row, for every length and grid (results/h200-column-free).
    fn words_hold_columns(&self, problem: &Problem, plain: bool) -> bool {
        let h = &self.header;
        let word_elements = match problem.dtype.size_bytes() {
            2 | 4 => true,
            // 8-byte elements, unmapped: order-free operators only (`SEG_WIDE_WORDS`),
            // and not argmin/argmax: on the H200 f64 argmax of 8192×4096 columns read
            // 3617–3620 GB/s on column_tiles against 3293–3295 on wide words, while f64
            // max went 2516–2523 → 3665–3668 (results/h200-column-trials).
            8 => plain && self.order_free_here(problem) && !problem.op.is_indexed(),
            _ => false,
        };
        word_elements
            && self.outputs >= CW_MIN_OUTPUTS
            && h[4] == 0
            && h[7] == 1
            && h[5] % 4 == 0
            && h[6] % 4 == 0
            && h[1] % 4 == 0
            && h[9] % 4 == 0
    }

    /// Whether `word_rows` runs these rows of `problem`: every output exactly 8, 16, 32 or 64
    /// consecutive 2- or 4-byte elements, output k starting k rows after the first (the kernel
    /// checks the words' alignment itself and loads element by element without it).
    fn words_hold_rows(&self, problem: &Problem) -> bool {
        let h = &self.header;
        let span = h[2] as usize;
        // Output k starts at OFFSET + (k / INNER) × OUTER + (k % INNER) × INNER_STRIDE.
        let side_by_side = self.outputs <= 1
            || (h[7] == span as u64 && (h[5] as usize >= self.outputs || h[6] == h[5] * h[7]));
        matches!(problem.dtype.size_bytes(), 2 | 4)
            && matches!(span, 8 | 16 | 32 | 64)
            && self.lens.is_none()
            && self.fixed_len == span
            && h[4] == 0
            && h[1] == 1
            && side_by_side
    }

    /// Work-groups of `column_words`: a block of 4 × [`column_word_slots`] outputs × each
    /// tile × the groups a tile's 32 lane classes split over (256 work-items each).
    fn column_word_groups(&self) -> usize {
        let slots = column_word_slots(self.outputs);
        let (split, tiles_in) = column_word_split(slots);
        self.outputs.div_ceil(4 * slots) * self.fixed_len.div_ceil(TILE).div_ceil(tiles_in) * split
    }

    /// Whether the job launches `column_words` and `column_finish`
    /// ([`COLUMN_WORD_ENTRIES`]); kernels built with `SEG_SKIP_COLUMN_WORDS` lack them.
    pub fn launches_column_words(&self) -> bool {
        self.strategy == Strategy::ColumnWords
    }

    /// The strategy the device will run.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Why: the strategy and what it does with this shape.
    pub fn explain(&self) -> &str {
        &self.reason
    }

    /// Number of outputs.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Whether every output has at least one element (then no output needs the value
    /// over nothing, which the host supplies).
    pub fn every_output_has_elements(&self) -> bool {
        match &self.lens {
            Some(lens) => lens.iter().all(|&len| len > 0),
            None => self.fixed_len > 0,
        }
    }

    /// The kernels that run the job, in order: which of [`ENTRY_POINTS`], and the
    /// launch shape. Empty when no output has elements.
    pub fn launches(&self) -> Vec<SegmentLaunch> {
        let n = self.outputs;
        if n == 0 || self.max_len == 0 {
            return Vec::new();
        }
        let first = match self.strategy {
            Strategy::ShortRows { width } => SegmentLaunch {
                entry: 0,
                global: n.div_ceil(SHORT_BLOCKS * (WG / width)) * WG,
                local: WG,
            },
            Strategy::ShortRowsWide => SegmentLaunch {
                entry: 1,
                global: n.div_ceil(SHORT_BLOCKS * (WG / SHORT_WIDTH)) * WG,
                local: WG,
            },
            Strategy::RowTiles => SegmentLaunch {
                entry: 2,
                global: self.tiles * WG,
                local: WG,
            },
            Strategy::RowWhole => SegmentLaunch {
                entry: 8,
                global: n * WG,
                local: WG,
            },
            Strategy::WordRows { span } => SegmentLaunch {
                entry: 7,
                global: n.div_ceil(word_rows_per_group(span)) * WG,
                local: WG,
            },
            Strategy::ColumnTiles => SegmentLaunch {
                entry: 3,
                global: n.div_ceil(COL_OUTPUTS) * self.fixed_len.div_ceil(TILE) * COL_WG,
                local: COL_WG,
            },
            Strategy::ColumnWords => SegmentLaunch {
                entry: 5,
                global: self.column_word_groups() * WG,
                local: WG,
            },
        };
        let mut launches = vec![first];
        if self.strategy == Strategy::ColumnWords {
            launches.push(SegmentLaunch {
                entry: 6,
                global: self.tiles.div_ceil(WG) * WG,
                local: WG,
            });
        }
        if self.has_tree() {
            launches.push(SegmentLaunch {
                entry: 4,
                global: n * WG,
                local: WG,
            });
        }
        launches
    }

    /// The header and tables as the kernels read them, with the byte offset of the
    /// scratch area after them and `result` (a device address, or 0) as `H_RESULT`.
    fn header_and_tables(&self, result: u64, acc_bytes: usize) -> Vec<u8> {
        let mut header = self.header;
        header[8] = ((HEADER_WORDS + self.tables.len()) * 8) as u64;
        header[10] = result;
        header[11] = header[8] + self.tile_scratch_bytes(acc_bytes) as u64;
        let mut bytes = Vec::with_capacity(header[8] as usize);
        for word in header.iter().chain(self.tables.iter()) {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// Whether outputs span several tiles whose results `tree` joins.
    fn has_tree(&self) -> bool {
        self.max_len > TILE && self.strategy != Strategy::RowWhole
    }

    /// Bytes of the scratch area's tile results: one accumulator per tile where outputs
    /// span several (rounded up to 16 bytes, where `column_words`' partials follow).
    fn tile_scratch_bytes(&self, acc_bytes: usize) -> usize {
        if self.has_tree() {
            (self.tiles * acc_bytes).next_multiple_of(16)
        } else {
            0
        }
    }

    /// Bytes of the scratch area: the tile results, then `column_words`' partials.
    fn scratch_bytes(&self, acc_bytes: usize) -> usize {
        let partials = if self.strategy == Strategy::ColumnWords {
            self.tiles * CW_PARTIALS * acc_bytes
        } else {
            0
        };
        self.tile_scratch_bytes(acc_bytes) + partials
    }

    /// The bytes of the `out` buffer before the kernels run: results (left for the
    /// kernels), header, tables; the scratch area follows.
    fn layout(&self, acc_bytes: usize) -> (Vec<u8>, usize) {
        let results = (self.outputs * acc_bytes).next_multiple_of(8);
        let mut bytes = vec![0u8; results];
        bytes.extend_from_slice(&self.header_and_tables(0, acc_bytes));
        (bytes, self.scratch_bytes(acc_bytes))
    }

    /// The `out` buffer of kernels built with `SEG_RESULT` (`segments.cl`), which
    /// write output k's result to element k of the array at device address `result`:
    /// header and tables, then the scratch area, whose size is the second value.
    pub fn result_layout(&self, result: u64, acc_bytes: usize) -> (Vec<u8>, usize) {
        (
            self.header_and_tables(result, acc_bytes),
            self.scratch_bytes(acc_bytes),
        )
    }
}

/// One kernel launch of a [`SegmentJob`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentLaunch {
    /// Index into [`ENTRY_POINTS`] (and the fields of [`SegmentKernels`]).
    pub entry: usize,
    /// Work-items in all.
    pub global: usize,
    /// Work-items per group.
    pub local: usize,
}

impl<K: ?Sized> SegmentKernels<'_, K> {
    /// The kernel of [`ENTRY_POINTS`]`[entry]`.
    fn entry(&self, entry: usize) -> &K {
        match entry {
            0 => self.short_rows,
            1 => self.short_rows_wide,
            2 => self.row_tiles,
            3 => self.column_tiles,
            5 => self.column_words,
            6 => self.column_finish,
            7 => self.word_rows,
            8 => self.row_whole,
            _ => self.tree,
        }
    }
}

/// How the kernels of a job read and fold, for [`prepare`].
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// The device's largest work-group.
    pub max_work_group: usize,
    /// The kernels load raw words of the data (plain kernels, and maps that read words:
    /// [`SegmentJob::for_mapped`], [`SegmentJob::for_custom`]).
    pub words: bool,
    /// The kernels apply a user-defined combine ([`SegmentJob::for_custom`]).
    pub custom: bool,
}

impl Reading {
    /// Plain kernels over the problem's own elements, which load raw words.
    pub fn plain(max_work_group: usize) -> Reading {
        Reading {
            max_work_group,
            words: true,
            custom: false,
        }
    }
}

/// Runs `run` with the job for `selection` on a device that reads as `reading` says,
/// and the rows it reads: `data` itself, or, where the outputs' elements do not step
/// evenly through `data`, the rows gathered on the host to upload in its place.
pub fn prepare<T>(
    problem: &Problem,
    data: ArrayRef<'_>,
    selection: Selection<'_>,
    reading: Reading,
    run: impl FnOnce(&SegmentJob, ArrayRef<'_>) -> Result<T, redlab_core::Error>,
) -> Result<T, redlab_core::Error> {
    let (job, gathered) = match SegmentJob::new(selection) {
        Some(job) => (job, None),
        None => {
            let (bytes, ranges) = redlab_core::segmented::gather_rows(data, selection)?;
            let job = SegmentJob::new(Selection::Ranges(&ranges))
                .ok_or_else(|| redlab_core::Error::Shape("gathered rows do not touch".into()))?;
            (job, Some(bytes))
        }
    };
    // 8-byte words need the problem's own elements; a map reading 2- or 4-byte words
    // into 8-byte values (`(f64)x`) reads another type than it reduces.
    let plain = data.dtype() == problem.dtype;
    let job = job.for_device(reading.max_work_group);
    let job = if reading.custom {
        job.for_custom(problem, reading.words)
    } else {
        job.choose_for(problem, reading.words, plain)
    };
    match &gathered {
        Some(bytes) => run(&job, ArrayRef::from_bytes(data.dtype(), bytes)?),
        None => run(&job, data),
    }
}

/// Runs `job` over `source` (the whole input buffer) and returns one value per output.
pub fn run_segments<L: Launcher>(
    launcher: &L,
    kernels: &SegmentKernels<'_, L::Kernel>,
    problem: &Problem,
    source: &L::Buffer,
    job: &SegmentJob,
) -> Result<(Vec<Value>, Vec<f64>), RunError> {
    launch_segments(launcher, kernels, problem, source, job)?.values()
}

/// Runs `job` over `source` (the whole input buffer) and brings back what the kernels
/// wrote, for [`SegmentResults::values`] or [`SegmentResults::packed`].
pub fn launch_segments<L: Launcher>(
    launcher: &L,
    kernels: &SegmentKernels<'_, L::Kernel>,
    problem: &Problem,
    source: &L::Buffer,
    job: &SegmentJob,
) -> Result<SegmentResults, RunError> {
    let codec = Codec::new(problem);
    let mut results = SegmentResults {
        problem: *problem,
        codec,
        bytes: Vec::new(),
        // Outputs of one length are all empty or none is: no scan over millions of them.
        empty: match &job.lens {
            Some(lens) => (0..job.outputs).filter(|&k| lens[k] == 0).collect(),
            None if job.fixed_len == 0 => (0..job.outputs).collect(),
            None => Vec::new(),
        },
        outputs: job.outputs,
        passes: Vec::new(),
    };
    if job.outputs == 0 || job.max_len == 0 {
        return Ok(results);
    }
    let results_bytes = job.outputs * codec.acc_bytes;
    let (bytes, scratch) = job.layout(codec.acc_bytes);
    let mut out = launcher.alloc(bytes.len() + scratch.max(8))?;
    launcher.write(&mut out, &bytes)?;
    let steps: Vec<ChainStep<'_, L::Kernel>> = job
        .launches()
        .iter()
        .map(|launch| ChainStep {
            kernel: kernels.entry(launch.entry),
            global: launch.global,
            local: launch.local,
        })
        .collect();
    results.passes = launcher.launch_chain(&steps, source, &out, job.outputs)?;
    results.bytes = launcher.read(&out, results_bytes)?.0;
    launcher.recycle(out);
    Ok(results)
}

#[path = "segments_whole.rs"]
mod whole;

#[cfg(test)]
#[path = "segments_tests.rs"]
mod tests;
