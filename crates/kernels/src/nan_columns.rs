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
//! compacts only the tiles whose mean came out NaN: those that hold a NaN, and those
//! whose infinities of both signs made one. Data without NaN pays for one column walk;
//! each tile with a NaN pays for one more read of itself.
//!
//! The second pass takes the tiles of neighbouring columns at one tile index together,
//! a work-group of `stat_kept_columns` (`stat_kept_columns.h`) per block of them, so
//! that its copies read neighbouring elements of each row; `stat_kept`, a work-group per
//! tile, where the device's work-groups are too small for two tiles.

use crate::assembly::Target;
use crate::generate::WORK_GROUP;
use crate::statistics::{
    kept_program_of, nanmean_walks_columns, program, source, Program, StateKind,
};
use crate::tile_plan::TilePlan;
use redlab_core::DType;

/// The kernel that reruns tiles of columns several at a time (`stat_kept_columns.h`).
pub const KEPT_COLUMNS_ENTRY_POINT: &str = "stat_kept_columns";

/// Tiles per work-group of `stat_kept_columns`: four neighbouring columns, so that a
/// warp's copy reads 16 bytes of each row of f32 (32 of f64).
const KEPT_COLUMNS_TILES: usize = 4;

/// The most bytes `stat_kept_columns` stages by default (its tiles' rows of a part).
const KEPT_COLUMNS_STAGE_BYTES: usize = 32 * 1024;

/// The most it may stage in any shape: CUDA's static shared memory is 48 KiB, and the
/// kernel's counts take 4 KiB more.
const KEPT_COLUMNS_STAGE_MAX: usize = 40 * 1024;

/// The fewest tiles to rerun that take `stat_kept_columns`: fewer take `stat_kept`, whose
/// one work-group per tile stages a tile of f32 whole, in one part, where
/// `stat_kept_columns` waits for its parts in turn. On an H100 in a graph, 8192² f32
/// with NaN in 128 columns (128 tiles) read 1839–1852 GB/s on `stat_kept` and 1748–1749
/// on `stat_kept_columns`; in 512 columns 1553–1555 and 1730; in 2048 923–925 and
/// 1141–1142; 10% NaN (8192 tiles) 385–386 and 481–482
/// (results/h100-nanmean-kept-columns-threshold).
pub const KEPT_COLUMNS_MIN_TILES: usize = 512;

/// How `stat_kept_columns` reruns tiles of columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeptColumns {
    /// Tiles per work-group (2 or 4), each taken by 256 work-items.
    pub tiles: usize,
    /// Rows of each tile staged at once (1, 2, 4 or 8).
    pub rows: usize,
    /// Stage buffers: 2 copies the next part while this one is compacted. Not the
    /// default: on an H100, 4 tiles of f32 with one row in two buffers read 1–2% more in
    /// a graph than 4 tiles with two rows in one, and the same per call
    /// (results/h100-nanmean-kept-columns-threshold).
    pub buffers: usize,
}

impl KeptColumns {
    fn stage_bytes(self, dtype: DType) -> usize {
        self.buffers * self.tiles * self.rows * 1024 * dtype.size_bytes()
    }
}

/// The state of every tile of `plan` for `kind`, and the seconds of the kernels that
/// computed them: `run` runs one program over a plan of the same input (the whole plan,
/// or the tiles to run again) and gives their states and seconds. `max_work_group`: the
/// device's largest work-group, which bounds the tiles rerun per work-group.
pub fn tile_states<E>(
    kind: StateKind,
    dtype: DType,
    target: Target,
    plan: &TilePlan,
    max_work_group: usize,
    mut run: impl FnMut(&Program, &TilePlan) -> Result<(Vec<[f64; 3]>, f64), E>,
) -> Result<(Vec<[f64; 3]>, f64), E> {
    let first = first_kind(kind, dtype, plan);
    let (mut states, mut seconds) = if first != kind && !first_pass_wanted() {
        // Every tile's mean unknown, as NaN: the second pass reruns them all.
        (vec![[0.0, f64::NAN, 0.0]; plan.tiles()], 0.0)
    } else {
        run(&program(first, dtype, target, plan), plan)?
    };
    if first != kind {
        let rerun = states.iter().filter(|s| s[1].is_nan()).count();
        let shape = kept_columns_shape(dtype, max_work_group, rerun);
        if let Some(redo) = Redo::of(dtype, target, plan, &states, shape) {
            let (again, more) = run(&redo.program, &redo.plan)?;
            redo.merge(&mut states, &again);
            seconds += more;
        }
    }
    Ok((states, seconds))
}

/// Whether nanmean over columns runs the moments' pass first (the default).
/// `REDLAB_NANMEAN_FIRST_PASS=0` sends every tile straight to the second pass, to
/// measure what the first pass costs on data with NaN in most tiles; read once per
/// process. The results are the same bits either way.
fn first_pass_wanted() -> bool {
    static SET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SET.get_or_init(|| std::env::var("REDLAB_NANMEAN_FIRST_PASS").map_or(true, |v| v != "0"))
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

/// How `stat_kept_columns` reruns `rerun` tiles of columns of `dtype`, or `None` for
/// `stat_kept`, a work-group per tile: for fewer than [`KEPT_COLUMNS_MIN_TILES`], and
/// where the device's work-groups hold fewer than two tiles' 256 work-items.
/// `REDLAB_KEPT_COLUMNS=TILES,ROWS[,BUFFERS]` sets the shape for measurements, whatever
/// the count (TILES 1: `stat_kept`); read once per process.
pub fn kept_columns_shape(
    dtype: DType,
    max_work_group: usize,
    rerun: usize,
) -> Option<KeptColumns> {
    static SET: std::sync::OnceLock<Option<(usize, usize, usize)>> = std::sync::OnceLock::new();
    let set = *SET.get_or_init(|| {
        let v = std::env::var("REDLAB_KEPT_COLUMNS").ok()?;
        let mut words = v.split(',').map(|w| w.trim().parse::<usize>().ok());
        let (tiles, rows) = (words.next()??, words.next()??);
        Some((tiles, rows, words.next().flatten().unwrap_or(1)))
    });
    let fits = |shape: KeptColumns| {
        shape.tiles * WORK_GROUP <= max_work_group
            && shape.stage_bytes(dtype) <= KEPT_COLUMNS_STAGE_MAX
    };
    match set {
        Some((tiles, rows, buffers)) if tiles > 1 => {
            let shape = KeptColumns {
                tiles,
                rows,
                buffers,
            };
            let valid = [2, 4].contains(&tiles)
                && [1, 2, 4, 8].contains(&rows)
                && [1, 2].contains(&buffers);
            (valid && fits(shape)).then_some(shape)
        }
        Some(_) => None,
        None if rerun < KEPT_COLUMNS_MIN_TILES => None,
        None => [KEPT_COLUMNS_TILES, 2].into_iter().find_map(|tiles| {
            [8, 4, 2, 1]
                .into_iter()
                .map(|rows| KeptColumns {
                    tiles,
                    rows,
                    buffers: 1,
                })
                .find(|&shape| shape.stage_bytes(dtype) <= KEPT_COLUMNS_STAGE_BYTES)
                .filter(|&shape| fits(shape))
        }),
    }
}

/// The tiles the first pass could not settle, and how to run them again.
#[derive(Debug)]
pub struct Redo {
    /// For each task of [`Redo::plan`], its tile in the first plan (`None`: a task of
    /// length 0 that fills a work-group of `stat_kept_columns`).
    pub tiles: Vec<Option<usize>>,
    /// A plan of just those tiles, over the same input.
    pub plan: TilePlan,
    /// `stat_kept` or `stat_kept_columns` over that plan.
    pub program: Program,
}

impl Redo {
    /// The tiles of `plan` whose first-pass state (`states`, one per tile) has a NaN
    /// mean, or `None` where there is none (nothing to run again). With `shape`
    /// ([`kept_columns_shape`]) and outputs that are columns, the tiles rerun by blocks
    /// of neighbouring columns at one tile index, every tile of a block where any has a
    /// NaN mean (a tile without NaN compacts to itself and gives the first pass's
    /// state again), blocks of the same tile index after each other, so that the
    /// work-groups on the device at once read the same rows.
    pub fn of(
        dtype: DType,
        target: Target,
        plan: &TilePlan,
        states: &[[f64; 3]],
        shape: Option<KeptColumns>,
    ) -> Option<Redo> {
        let rerun = |t: usize| states[t][1].is_nan();
        if !(0..plan.tiles()).any(rerun) {
            return None;
        }
        let columns = shape.zip(plan.columns());
        let tiles: Vec<Option<usize>> = match columns {
            Some((KeptColumns { tiles: width, .. }, per_output)) => {
                let outputs = plan.outputs.len();
                let tile = |o: usize, k: usize| (o < outputs).then_some(o * per_output + k);
                (0..per_output)
                    .flat_map(|k| (0..outputs).step_by(width).map(move |block| (k, block)))
                    .filter(|&(k, block)| {
                        (block..block + width).filter_map(|o| tile(o, k)).any(rerun)
                    })
                    .flat_map(|(k, block)| (block..block + width).map(move |o| tile(o, k)))
                    .collect()
            }
            None => (0..plan.tiles()).filter(|&t| rerun(t)).map(Some).collect(),
        };
        let table = tiles
            .iter()
            .flat_map(|t| match t {
                Some(t) => plan.table[3 * t..3 * t + 3].to_vec(),
                None => vec![0; 3],
            })
            .collect();
        // One output holding every tile (the kernels read only the table).
        let every = 0..tiles.len();
        let again = TilePlan {
            table,
            outputs: vec![every],
            gathered: None,
        };
        let program = match columns {
            Some((shape, _)) => kept_columns_program(dtype, target, tiles.len(), shape),
            None => kept_program_of(dtype, target, &again),
        };
        Some(Redo {
            tiles,
            plan: again,
            program,
        })
    }

    /// `states` with the tiles run again put in their places.
    pub fn merge(&self, states: &mut [[f64; 3]], again: &[[f64; 3]]) {
        for (t, state) in self.tiles.iter().zip(again) {
            if let Some(t) = t {
                states[*t] = *state;
            }
        }
    }
}

/// `stat_kept_columns` over `tasks` tasks in `shape`.
fn kept_columns_program(dtype: DType, target: Target, tasks: usize, shape: KeptColumns) -> Program {
    Program {
        source: format!(
            "#define ST_KC {}\n#define ST_KC_ROWS {}\n#define ST_KC_BUFFERS {}\n{}",
            shape.tiles,
            shape.rows,
            shape.buffers,
            source(StateKind::NanMoments, dtype, target)
        ),
        entry: KEPT_COLUMNS_ENTRY_POINT,
        groups: tasks / shape.tiles,
        work_group: shape.tiles * WORK_GROUP,
        unbounded: None,
        known_row: None,
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
        assert!(Redo::of(DType::F32, Target::OpenCl, &plan, &states, None).is_none());
        states[1][1] = f64::NAN;
        states[6][1] = f64::NAN;
        let redo = Redo::of(DType::F32, Target::OpenCl, &plan, &states, None).expect("redo");
        assert_eq!(redo.tiles, vec![Some(1), Some(6)]);
        assert_eq!(redo.plan.table[..3], plan.table[3..6]);
        assert_eq!(redo.plan.table[3..], plan.table[18..21]);
        assert_eq!(redo.program.entry, crate::statistics::KEPT_ENTRY_POINT);
        assert_eq!(redo.program.groups, 2);
        redo.merge(&mut states, &[[3.0, 0.5, 0.0], [0.0, f64::NAN, 0.0]]);
        assert_eq!(states[1], [3.0, 0.5, 0.0]);
        assert!(states[6][1].is_nan() && states[6][0] == 0.0);
        assert_eq!(states[2], [8192.0, 2.0, 1.0]);
    }

    #[test]
    fn columns_rerun_by_blocks_of_neighbours_at_one_tile_index() {
        // 5 columns of 2 tiles: tile (column o, index k) is 2o + k.
        let pairs = KeptColumns {
            tiles: 2,
            rows: 2,
            buffers: 1,
        };
        let plan = columns(10000, 5);
        let mut states: Vec<[f64; 3]> = (0..10).map(|t| [8192.0, t as f64, 1.0]).collect();
        assert!(Redo::of(DType::F32, Target::OpenCl, &plan, &states, Some(pairs)).is_none());
        states[8][1] = f64::NAN; // column 4, index 0: the last block, one column short
        states[3][1] = f64::NAN; // column 1, index 1
        let redo = Redo::of(DType::F32, Target::OpenCl, &plan, &states, Some(pairs)).expect("redo");
        // Index 0's blocks first, then index 1's; the short block padded.
        assert_eq!(redo.tiles, vec![Some(8), None, Some(1), Some(3)]);
        assert_eq!(redo.plan.table[..3], plan.table[24..27]);
        assert_eq!(redo.plan.table[3..6], [0, 0, 0]);
        assert_eq!(redo.plan.table[6..9], plan.table[3..6]);
        assert_eq!(redo.program.entry, KEPT_COLUMNS_ENTRY_POINT);
        assert_eq!((redo.program.groups, redo.program.work_group), (2, 512));
        assert!(redo
            .program
            .source
            .starts_with("#define ST_KC 2\n#define ST_KC_ROWS 2\n"));
        let again = [
            [1.0, 8.0, 0.0],
            [0.0, 0.0, 0.0],
            [2.0, 1.5, 0.5],
            [4.0, 3.5, 1.0],
        ];
        redo.merge(&mut states, &again);
        assert_eq!(states[8], again[0]);
        assert_eq!(states[1], again[2]);
        assert_eq!(states[3], again[3]);
        assert_eq!(states[9], [8192.0, 9.0, 1.0]);
        // Rows that are not columns rerun tile by tile whatever the shape.
        let axes = AxisPlan::new(Layout::c_order(&[2, 10000]), Some(&[1]), false).expect("axes");
        let rows = TilePlan::in_place(Selection::Axes(&axes)).expect("in place");
        let mut row_states: Vec<[f64; 3]> = (0..4).map(|t| [8192.0, t as f64, 1.0]).collect();
        row_states[2][1] = f64::NAN;
        let redo =
            Redo::of(DType::F32, Target::OpenCl, &rows, &row_states, Some(pairs)).expect("redo");
        assert_eq!(redo.tiles, vec![Some(2)]);
        assert_eq!(redo.program.entry, crate::statistics::KEPT_ENTRY_POINT);
    }

    #[test]
    fn kept_columns_stage_at_most_32_kib_in_groups_the_device_allows() {
        let shape = |dtype, widest, rerun| {
            kept_columns_shape(dtype, widest, rerun).map(|s| (s.tiles, s.rows, s.buffers))
        };
        assert_eq!(shape(DType::F32, 1024, 8192), Some((4, 2, 1)));
        assert_eq!(shape(DType::F64, 1024, 8192), Some((4, 1, 1)));
        assert_eq!(shape(DType::F16, 1024, 8192), Some((4, 4, 1)));
        assert_eq!(shape(DType::F32, 512, 8192), Some((2, 4, 1)));
        assert_eq!(shape(DType::F32, 256, 8192), None);
        // A few tiles take stat_kept, a work-group each.
        assert_eq!(shape(DType::F32, 1024, KEPT_COLUMNS_MIN_TILES - 1), None);
    }
}
