//! Statistics of columns (neighbouring outputs whose elements lie one row apart) tile by
//! tile: each task copies one canonical tile of a block of neighbouring columns out of
//! the rows it spans (contiguous stretches), column by column into scratch, and reduces
//! each column's tile with the statistic's own tile code; the tiles of each column then
//! join in the aligned pairwise tree. The steps per column are those of the column
//! reduced alone, so the bits are too.
//!
//! Without this, each column was gathered whole, one element per row, by one thread: for
//! 2^22×32 f32 every column pass read the whole matrix again (log-sum-exp read 0.5 GB/s
//! on the 2-core development machine, numpy 0.73). Var and std have a faster path of
//! their own that runs across columns (columns_moments.rs); this one serves any
//! [`Lane`] state.

use rayon::prelude::*;
use redlab_core::canonical::{tile_count, TILE};
use redlab_core::segmented::Selection;
use redlab_core::shape::AxisPlan;
use redlab_core::{ArrayRef, DType, Element, Error};

use crate::columns_moments::columns_run;
use crate::statistics::{tree, Lane};

/// Columns one task copies: a 256-byte stretch of each row for 4-byte elements.
const BLOCK_COLUMNS: usize = 64;

/// Rows copied before their stretches are scattered into the columns' scratch, so that
/// each column's part is written as one run.
const CHUNK_ROWS: usize = 64;

/// The canonical states of every output of `selection` over `data`, where the outputs
/// are columns of f32 or f64; `None` where they are not.
pub(crate) fn columns<S: Lane>(
    data: ArrayRef<'_>,
    selection: Selection<'_>,
) -> Option<Result<Vec<S>, Error>> {
    let (plan, run) = columns_run(selection)?;
    Some(match data.dtype() {
        DType::F32 => data
            .typed::<f32>()
            .map(|src| states_of_columns(src, plan, run)),
        DType::F64 => data
            .typed::<f64>()
            .map(|src| states_of_columns(src, plan, run)),
        _ => return None,
    })
}

/// The canonical states of outputs `0 … plan.outputs() − 1`, runs of `run` neighbouring
/// columns.
fn states_of_columns<S: Lane, T: Element + Copy + Send + Sync>(
    src: &[T],
    plan: &AxisPlan,
    run: usize,
) -> Vec<S> {
    let width = run.min(BLOCK_COLUMNS);
    let blocks_per_run = run.div_ceil(width);
    let blocks = (plan.outputs() / run) * blocks_per_run;
    let tiles = tile_count(plan.segment_len());
    let per_block: Vec<Vec<S>> = (0..blocks * tiles)
        .into_par_iter()
        .map_init(
            || (Vec::new(), Vec::new()),
            |(scratch, buffer), task| {
                let (b, t) = (task / tiles, task % tiles);
                let first = (b / blocks_per_run) * run + (b % blocks_per_run) * width;
                let w = width.min(run - (b % blocks_per_run) * width);
                tile_of_block(src, plan, first, w, t, scratch, buffer)
            },
        )
        .collect();
    per_block
        .chunks(tiles)
        .flat_map(|block| {
            (0..block[0].len()).map(move |c| tree(block.iter().map(|tile| tile[c]).collect()))
        })
        .collect()
}

/// Tile `t`'s states of outputs `first … first + width − 1`.
fn tile_of_block<S: Lane, T: Element + Copy>(
    src: &[T],
    plan: &AxisPlan,
    first: usize,
    width: usize,
    t: usize,
    scratch: &mut Vec<T>,
    buffer: &mut Vec<f64>,
) -> Vec<S> {
    let rows = TILE.min(plan.segment_len() - t * TILE);
    scratch.clear();
    scratch.resize(width * rows, src[0]);
    let mut offsets = plan.segment_from(first, t * TILE).take(rows);
    let mut at = [0usize; CHUNK_ROWS];
    let mut r0 = 0;
    while r0 < rows {
        let n = CHUNK_ROWS.min(rows - r0);
        for slot in &mut at[..n] {
            *slot = offsets.next().unwrap_or(0);
        }
        for c in 0..width {
            let column = &mut scratch[c * rows + r0..c * rows + r0 + n];
            for (x, &offset) in column.iter_mut().zip(&at[..n]) {
                *x = src[offset + c];
            }
        }
        r0 += n;
    }
    scratch
        .chunks_exact(rows)
        .map(|column| {
            S::tile_of(&ArrayRef::from_slice(column), 0..rows, buffer)
                .expect("a typed view of its own elements")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statistics::{canonical, ExpSum};
    use redlab_core::shape::Layout;

    /// Columns of several shapes (partial last tiles, runs wider than a block, a 3-D
    /// array's middle axis) give the states of each column gathered and reduced alone.
    #[test]
    fn columns_by_tiles_equal_each_column_alone() {
        for (dims, axes) in [
            (vec![9000usize, 5usize], vec![0isize]),
            (vec![300, 130], vec![0]),
            (vec![17_000, 3], vec![0]),
            (vec![4, 2500, 6], vec![1]),
        ] {
            let n: usize = dims.iter().product();
            let data: Vec<f32> = (0..n)
                .map(|i| ((i * 7919 + 13) % 2003) as f32 * 0.01 - 10.0)
                .collect();
            let plan = AxisPlan::new(Layout::c_order(&dims), Some(&axes), false).expect("plan");
            let states = columns::<ExpSum>(ArrayRef::from_slice(&data), Selection::Axes(&plan))
                .expect("columns")
                .expect("computes");
            assert_eq!(states.len(), plan.outputs());
            for (k, state) in states.iter().enumerate() {
                let column: Vec<f32> = plan.segment(k).map(|o| data[o]).collect();
                let alone: ExpSum = canonical(ArrayRef::from_slice(&column)).expect("alone");
                assert_eq!(state.max.to_bits(), alone.max.to_bits(), "{dims:?} {k}");
                assert_eq!(state.sum.to_bits(), alone.sum.to_bits(), "{dims:?} {k}");
            }
        }
    }
}
