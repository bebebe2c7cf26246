//! nanmean over columns by way of the moments' columns kernel.
//!
//! The canonical nanmean compacts each tile's values that are not NaN before its lanes
//! take them, so over columns `stat_kept` stages every tile in local memory, one
//! work-group per tile, and reads a fraction of what the moments' coalesced column walk
//! (`stat_columns`) reads: on an H100, nanmean over 8192² columns ran at 481 GB/s per
//! call where var ran at 1891 (results/h100-stat-survey-current). But a tile with no
//! NaN compacts to itself, and then its nanmean state is its moments' state, bit for
//! bit (the same Welford steps over the same lanes). And a NaN among a tile's values
//! always leaves its moments' mean NaN (the NaN reaches its lane's mean and every merge
//! above it). So nanmean runs the moments' columns kernel over every tile first, and
//! `stat_kept` only over the tiles whose mean came out NaN: those that hold a NaN, and
//! those whose infinities of both signs made one. Data without NaN pays for one column
//! walk; each tile with a NaN pays for one more read of itself.

use crate::assembly::Target;
use crate::statistics::{kept_program_of, nanmean_walks_columns, program, Program, StateKind};
use crate::tile_plan::TilePlan;
use redlab_core::DType;

/// The state of every tile of `plan` for `kind`, and the seconds of the kernels that
/// computed them: `run` runs one program over a plan of the same input (the whole plan,
/// or the tiles to run again) and gives their states and seconds.
pub fn tile_states<E>(
    kind: StateKind,
    dtype: DType,
    target: Target,
    plan: &TilePlan,
    mut run: impl FnMut(&Program, &TilePlan) -> Result<(Vec<[f64; 3]>, f64), E>,
) -> Result<(Vec<[f64; 3]>, f64), E> {
    let first = first_kind(kind, dtype, plan);
    let (mut states, mut seconds) = run(&program(first, dtype, target, plan), plan)?;
    if first != kind {
        if let Some(redo) = Redo::of(dtype, target, plan, &states) {
            let (again, more) = run(&redo.program, &redo.plan)?;
            redo.merge(&mut states, &again);
            seconds += more;
        }
    }
    Ok((states, seconds))
}

/// The state kind whose kernel runs first over `plan` for `kind`: the moments where
/// nanmean walks columns this way, else `kind` itself.
pub fn first_kind(kind: StateKind, dtype: DType, plan: &TilePlan) -> StateKind {
    if nanmean_walks_columns(kind, dtype, plan) {
        StateKind::Moments
    } else {
        kind
    }
}

/// The tiles the first pass could not settle, and how to run them again.
#[derive(Debug)]
pub struct Redo {
    /// Indices, in `plan`, of the tiles to run again.
    pub tiles: Vec<usize>,
    /// A plan of just those tiles, over the same input.
    pub plan: TilePlan,
    /// `stat_kept` over that plan.
    pub program: Program,
}

impl Redo {
    /// The tiles of `plan` whose first-pass state (`states`, one per tile) has a NaN
    /// mean, or `None` where there is none (nothing to run again).
    pub fn of(dtype: DType, target: Target, plan: &TilePlan, states: &[[f64; 3]]) -> Option<Redo> {
        let tiles: Vec<usize> = states
            .iter()
            .enumerate()
            .filter(|(_, state)| state[1].is_nan())
            .map(|(t, _)| t)
            .collect();
        if tiles.is_empty() {
            return None;
        }
        // One output holding every tile (the kernel reads only the table).
        let every = 0..tiles.len();
        let again = TilePlan {
            table: tiles
                .iter()
                .flat_map(|&t| plan.table[3 * t..3 * t + 3].iter().copied())
                .collect(),
            outputs: vec![every],
            gathered: None,
        };
        let program = kept_program_of(dtype, target, &again);
        Some(Redo {
            tiles,
            plan: again,
            program,
        })
    }

    /// `states` with the tiles run again put in their places.
    pub fn merge(&self, states: &mut [[f64; 3]], again: &[[f64; 3]]) {
        for (&t, state) in self.tiles.iter().zip(again) {
            states[t] = *state;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlab_core::segmented::Selection;
    use redlab_core::shape::{AxisPlan, Layout};

    /// The tile plan of reducing axis 0 of a C-order `rows × columns` matrix.
    fn columns(rows: usize, columns: usize) -> TilePlan {
        let axes =
            AxisPlan::new(Layout::c_order(&[rows, columns]), Some(&[0]), false).expect("axes");
        TilePlan::in_place(Selection::Axes(&axes)).expect("in place")
    }

    #[test]
    fn long_columns_take_the_moments_first_and_short_ones_do_not() {
        let long = columns(3000, 64);
        assert_eq!(
            first_kind(StateKind::NanMoments, DType::F32, &long),
            StateKind::Moments
        );
        assert_eq!(
            first_kind(StateKind::Moments, DType::F32, &long),
            StateKind::Moments
        );
        assert_eq!(
            first_kind(StateKind::ExpSum, DType::F32, &long),
            StateKind::ExpSum
        );
        // Columns of at most 256 compact within the short kernel's lanes already.
        let short = columns(200, 64);
        assert_eq!(
            first_kind(StateKind::NanMoments, DType::F32, &short),
            StateKind::NanMoments
        );
    }

    #[test]
    fn only_tiles_with_a_nan_mean_run_again_in_their_places() {
        let plan = columns(10000, 4);
        assert_eq!(plan.tiles(), 8);
        let mut states: Vec<[f64; 3]> = (0..8).map(|t| [8192.0, t as f64, 1.0]).collect();
        assert!(Redo::of(DType::F32, Target::OpenCl, &plan, &states).is_none());
        states[1][1] = f64::NAN;
        states[6][1] = f64::NAN;
        let redo = Redo::of(DType::F32, Target::OpenCl, &plan, &states).expect("redo");
        assert_eq!(redo.tiles, vec![1, 6]);
        assert_eq!(redo.plan.table[..3], plan.table[3..6]);
        assert_eq!(redo.plan.table[3..], plan.table[18..21]);
        assert_eq!(redo.program.entry, crate::statistics::KEPT_ENTRY_POINT);
        assert_eq!(redo.program.groups, 2);
        redo.merge(&mut states, &[[3.0, 0.5, 0.0], [0.0, f64::NAN, 0.0]]);
        assert_eq!(states[1], [3.0, 0.5, 0.0]);
        assert!(states[6][1].is_nan() && states[6][0] == 0.0);
        assert_eq!(states[2], [8192.0, 2.0, 1.0]);
    }
}
