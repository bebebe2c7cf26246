//! Whole rows: when a work-group takes every tile of one output (`row_whole`) instead of
//! one tile (`row_tiles`), with no `tree` after it ([`Strategy::RowWhole`]).
//!
//! `row_tiles` gives each tile of an output its own work-group and joins an output's tile
//! results with `tree`. Where rows are a few tiles long and numerous, the split costs more
//! than it gives: rows of 8193 elements are one whole tile and a tile of one element, so
//! half the work-groups all but idle, and `tree` is a second launch. One work-group per
//! row then reads the row's tiles in turn and writes its result. Operators whose answer
//! does not depend on the order fold the whole row's lanes together (16-byte words for
//! whole tiles, `row_words.h`); the others fold each tile by halving, as before, and join
//! the tile results on a binary counter, which builds `tree`'s aligned pairwise tree, so
//! every bit stays the same (`row_whole.h`).

use redlab_core::Problem;

use super::{SegmentJob, Strategy, TILE};

/// The fewest outputs that take whole rows. On an H100 (results/h100-whole-rows-limits,
/// f32 in a CUDA graph, against `row_tiles` and the tree in the same run) whole rows won
/// from 128 outputs on, though 128 work-groups leave the 132 SMs one each: `row_tiles`
/// gives an output's tiles to different SMs, but the tree's second launch and its idle
/// tail cost more. 128×16385 argmax 876 → 1251 GB/s, sum 1460 → 1577; 256×16385 argmax
/// 1227 → 1990, sum 2366 → 2827; 384×8193 sum 1641 → 2401; 512×8193 argmax 1015 → 1753.
/// Fewer outputs were not measured.
const WHOLE_MIN_OUTPUTS: usize = 128;
/// The most tiles an output of whole rows may span below [`WIDE_MIN_OUTPUTS`]: longer
/// rows leave few, long work-groups; 4 is the longest measured there (256×32768 argmax
/// 2451 → 3710 GB/s, sum 3740 → 4079).
const WHOLE_MAX_TILES: usize = 4;
/// Outputs from which rows of up to [`WIDE_MAX_TILES`] take whole rows: the device is
/// full (132 SMs × 8 work-groups of 256 on an H100), and on the H100 2048×65536 read
/// 1.5–4% faster than on `row_tiles` in a graph (argmax 2957 → 3086, sum 3082 → 3131),
/// 1024×40961 argmax +2%, max the same, sum 4% slower (2842 → 2738), all faster per call.
const WIDE_MIN_OUTPUTS: usize = 1024;
/// The most tiles from [`WIDE_MIN_OUTPUTS`] outputs on; more were not measured.
const WIDE_MAX_TILES: usize = 8;
/// The most tiles the kernel's binary counter joins (2^`RW_LEVELS` − 1, row_whole.h).
const COUNTER_TILES: usize = 15;

/// The limits in force, as (fewest outputs, most tiles) pairs tried in turn:
/// `REDLAB_WHOLE_ROWS=OUTPUTS,TILES` makes them one pair, for measurements (`0,0`
/// never takes whole rows) and to run whole rows of small shapes in the simulator. Read
/// once per process: every axis call plans a job.
fn limits() -> [(usize, usize); 2] {
    static LIMITS: std::sync::OnceLock<[(usize, usize); 2]> = std::sync::OnceLock::new();
    *LIMITS.get_or_init(|| {
        std::env::var("REDLAB_WHOLE_ROWS")
            .ok()
            .and_then(|v| {
                let (a, b) = v.split_once(',')?;
                let pair = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                Some([pair, pair])
            })
            .unwrap_or([
                (WHOLE_MIN_OUTPUTS, WHOLE_MAX_TILES),
                (WIDE_MIN_OUTPUTS, WIDE_MAX_TILES),
            ])
    })
}

/// The most tiles whole rows take for `outputs` outputs (0: none).
fn max_tiles_for(outputs: usize) -> usize {
    limits()
        .iter()
        .filter(|(min_outputs, _)| outputs >= (*min_outputs).max(1))
        .map(|&(_, tiles)| tiles)
        .max()
        .unwrap_or(0)
}

impl SegmentJob {
    /// Turns `row_tiles` with a tree into whole rows where outputs are numerous, each
    /// spans at most a few tiles, and their elements are consecutive (`row_whole` reads
    /// no other: a strided walk beside the rows' took it to 128 registers).
    pub(super) fn take_whole_rows(&mut self, problem: &Problem) {
        let max_tiles = max_tiles_for(self.outputs);
        let free = self.order_free_here(problem);
        let max_tiles = if free {
            max_tiles
        } else {
            max_tiles.min(COUNTER_TILES)
        };
        let spans = self.max_len.div_ceil(TILE);
        // Header word 1: the stride between an output's elements.
        if self.strategy != Strategy::RowTiles
            || self.header[1] != 1
            || spans < 2
            || spans > max_tiles
        {
            return;
        }
        self.strategy = Strategy::RowWhole;
        let fold = if free {
            "folding them as they come (the answer does not depend on the order)"
        } else {
            "folding each by halving and joining them on a binary counter (the canonical tree)"
        };
        self.reason = format!(
            "row_whole: a work-group per output ({} outputs of up to {} elements, \
             at most {spans} tiles of {TILE} each), reading its tiles in turn, {fold}; no tree",
            self.outputs, self.max_len
        );
    }
}
