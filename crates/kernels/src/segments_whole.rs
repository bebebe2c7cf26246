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

/// Outputs from which one work-group per output fills the device: an H100 holds 132 SMs
/// × 8 work-groups of 256 (`row_tiles` runs at full occupancy), 1056 in all.
const WHOLE_MIN_OUTPUTS: usize = 1024;
/// The most tiles an output of whole rows may span. Longer rows leave fewer, longer
/// work-groups, whose last wave balances worse; 4 is the longest measured
/// (results/h100-whole-rows: 2048×32768 argmax 1.10×, max 1.05×, f32 sum 1.03× the
/// speed on `row_tiles`), and no limit was swept.
const WHOLE_MAX_TILES: usize = 4;
/// The most tiles the kernel's binary counter joins (2^`RW_LEVELS` − 1, row_whole.h).
const COUNTER_TILES: usize = 15;

/// The limits in force: `REDLAB_WHOLE_ROWS=OUTPUTS,TILES` overrides both, for
/// measurements (`0,0` never takes whole rows) and to run whole rows of small shapes in
/// the simulator. Read once per process: every axis call plans a job.
fn limits() -> (usize, usize) {
    static LIMITS: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();
    *LIMITS.get_or_init(|| {
        std::env::var("REDLAB_WHOLE_ROWS")
            .ok()
            .and_then(|v| {
                let (a, b) = v.split_once(',')?;
                Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
            })
            .unwrap_or((WHOLE_MIN_OUTPUTS, WHOLE_MAX_TILES))
    })
}

impl SegmentJob {
    /// Turns `row_tiles` with a tree into whole rows where outputs are numerous, each
    /// spans at most a few tiles, and their elements are consecutive (`row_whole` reads
    /// no other: a strided walk beside the rows' took it to 128 registers).
    pub(super) fn take_whole_rows(&mut self, problem: &Problem) {
        let (min_outputs, max_tiles) = limits();
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
            || self.outputs < min_outputs.max(1)
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
