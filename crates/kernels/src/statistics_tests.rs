//! Unit tests of [`super`]: the prefix-weight tables, tile plans, kernel choice and
//! explanations.

use super::*;
use redlab_core::shape::{AxisPlan, Layout};
use redlab_core::ArrayRef;

#[test]
fn prefix_weights_read_back_to_the_merges_quotients() {
    // The tables are written as decimals: each must read back to the bits of the
    // division that st_merge computes, or the kernels' merges would drift from the
    // host's.
    for target in [Target::Cuda, Target::OpenCl] {
        let text = prefix_weights(target);
        for (name, pick) in [("st_mean_weight", 0), ("st_m2_weight", 1)] {
            let start = text.find(&format!("{name}[512] = {{")).expect("table") + name.len() + 9;
            let values: Vec<f64> = text[start..text[start..].find('}').expect("end") + start]
                .split(',')
                .map(|v| v.parse().expect("a number"))
                .collect();
            assert_eq!(values.len(), PREFIX_WEIGHTS);
            for (c, value) in values.iter().enumerate() {
                let (lo, hi) = ((c + 1) as f64, c as f64);
                let quotient = if pick == 0 {
                    hi / (lo + hi)
                } else {
                    lo * hi / (lo + hi)
                };
                assert_eq!(value.to_bits(), quotient.to_bits(), "{name}[{c}]");
            }
        }
    }
    assert!(source(StateKind::Moments, DType::F32, Target::Cuda)
        .contains("__constant__ double st_m2_weight"));
    assert!(!source(StateKind::ExpSum, DType::F32, Target::OpenCl).contains("double st_m2_weight["));
}

#[test]
fn tiles_follow_rows_columns_and_segments() {
    let data = [0.0f32; 6 * 10_000];
    let view = ArrayRef::from_slice(&data);
    let rows = AxisPlan::new(Layout::c_order(&[6, 10_000]), Some(&[1]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&rows)).expect("plan");
    assert_eq!(plan.tiles(), 12);
    assert_eq!(plan.outputs[1], 2..4);
    assert_eq!(&plan.table[6..9], &[10_000, TILE as u64, 1]);
    assert_eq!(
        &plan.table[9..12],
        &[10_000 + TILE as u64, (10_000 - TILE) as u64, 1]
    );
    let cols = AxisPlan::new(Layout::c_order(&[6, 10_000]), Some(&[0]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&cols)).expect("plan");
    assert_eq!(plan.tiles(), 10_000);
    assert_eq!((plan.columns(), plan.short_width()), (Some(1), Some(8)));
    let p = program(StateKind::Moments, DType::F32, Target::OpenCl, &plan);
    assert_eq!(
        (p.entry, p.groups),
        (THREAD_TILES_ENTRY_POINT, 10_000usize.div_ceil(WORK_GROUP)),
        "short columns take a work-item each"
    );
    assert!(
        p.source
            .starts_with("#define ST_THREAD_WIDTH 8\n#define ST_THREAD_STAGED 0\n"),
        "columns load their own elements, already side by side"
    );
    assert_eq!(&plan.table[3..6], &[1, 6, 10_000]);
    // Rows of 33 to 1024 elements take a segment of a warp each (a work-item per 32
    // lanes of the row rounded up to a power of two), rows of up to 3072 a whole warp
    // with lanes of several elements; columns of them do not, nor whole tiles.
    for (dims, axis, entry, span, lane_rows) in [
        ([100, 33], 0, SHORT_ENTRY_POINT, 0, 0),
        ([33, 100], 1, WARP_ROWS_ENTRY_POINT, 4, 1),
        ([33, 40], 1, WARP_ROWS_ENTRY_POINT, 2, 1),
        ([33, 300], 1, WARP_ROWS_ENTRY_POINT, 16, 1),
        ([20, 1024], 1, WARP_ROWS_ENTRY_POINT, 32, 1),
        ([20, 1025], 1, WARP_ROWS_ENTRY_POINT, 32, 2),
        ([3, 2049], 1, WARP_ROWS_ENTRY_POINT, 32, 3),
        ([3, 3072], 1, WARP_ROWS_ENTRY_POINT, 32, 3),
        ([3, 3073], 1, ENTRY_POINT, 0, 0),
        ([1000, 50], 0, COLUMNS_ENTRY_POINT, 0, 0),
    ] {
        let rows = AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
        let plan = TilePlan::new(view, Selection::Axes(&rows)).expect("plan");
        let p = program(StateKind::Moments, DType::F32, Target::Cuda, &plan);
        assert_eq!(p.entry, entry, "{dims:?} axis {axis}");
        if entry == WARP_ROWS_ENTRY_POINT {
            let unbounded = p
                .unbounded
                .as_deref()
                .expect("the moments' rows are bounded");
            assert!(unbounded.starts_with(&format!(
                "#define ST_WARP_ROWS 1\n#define ST_SPAN {span}\n#define ST_LANE_ROWS {lane_rows}\n"
            )));
            assert_eq!(p.groups, plan.tiles().div_ceil(WORK_GROUP / span));
            let words = explain(StateKind::Moments, DType::F32, Selection::Axes(&rows));
            assert!(words.starts_with("stat_warp_rows"), "{words}");
            // The rows compile their length in, for the moments only.
            let known = format!("#define ST_ROW_LEN {}\n", dims[1]);
            assert!(p.source.contains(&known), "{dims:?}");
            assert!(words.contains("compiled for rows"), "{words}");
            let lse = program(StateKind::ExpSum, DType::F32, Target::Cuda, &plan);
            assert!(!lse.source.contains("#define ST_ROW_LEN"), "{dims:?}");
        }
    }
    // nanmean compacts tiles longer than a row of lanes in a work-group's stage.
    let rows = AxisPlan::new(Layout::c_order(&[3, 2000]), Some(&[1]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&rows)).expect("plan");
    let p = program(StateKind::NanMoments, DType::F32, Target::Cuda, &plan);
    assert_eq!(p.entry, KEPT_ENTRY_POINT);
    // The launch bound: on every tile kernel, on warp rows for the moments only.
    let rows = AxisPlan::new(Layout::c_order(&[3, 20_000]), Some(&[1]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&rows)).expect("plan");
    let p = program(StateKind::ExpSum, DType::F32, Target::Cuda, &plan);
    assert!(p.entry == ENTRY_POINT && p.source.starts_with("#define ST_MIN_GROUPS 5\n"));
    let rows = AxisPlan::new(Layout::c_order(&[30, 1000]), Some(&[1]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&rows)).expect("plan");
    for (kind, bound) in [(StateKind::Moments, true), (StateKind::ExpSum, false)] {
        let p = program(kind, DType::F32, Target::Cuda, &plan);
        assert_eq!(
            p.source.contains("#define ST_MIN_GROUPS"),
            bound,
            "{kind:?}"
        );
        assert_eq!(p.unbounded.is_some(), bound, "{kind:?}");
    }
    // Every bounded program comes with its source unbounded, the one difference being
    // the bound's line (for the device to take where the bounded build spills).
    for (dims, axis) in [
        ([3, 20_000], 1),
        ([30, 2500], 1),
        ([30, 300], 1),
        ([700, 30], 0),
    ] {
        let axes = AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
        let plan = TilePlan::new(view, Selection::Axes(&axes)).expect("plan");
        for kind in [StateKind::Moments, StateKind::ExpSum, StateKind::NanMoments] {
            let p = program(kind, DType::F32, Target::Cuda, &plan);
            let bound = p
                .source
                .lines()
                .find(|l| l.starts_with("#define ST_MIN_GROUPS"));
            match (&p.unbounded, bound) {
                (Some(free), Some(line)) => {
                    assert_eq!(p.source, format!("{line}\n{free}"), "{kind:?} {dims:?}");
                    assert!(!free.contains("#define ST_MIN_GROUPS"), "{kind:?} {dims:?}");
                }
                (None, None) => {}
                (free, line) => panic!("{kind:?} {dims:?}: {line:?} but {free:?}"),
            }
        }
    }
    // Columns stage the rows their lanes hold, rounded up to a power of two; tiles
    // past one per column are whole (eight rows a lane). Where some tile is shorter than
    // its 1024 lanes (a column of 1000, the last 808 rows of 9000), the classes skip the
    // leaves that hold nothing. The moments' lanes of one row load straight into
    // registers.
    for (dims, lane_rows, skip) in [
        ([300, 50], 1, 1),
        ([1000, 50], 1, 1),
        ([1024, 50], 1, 0),
        ([1025, 50], 2, 0),
        ([3000, 20], 4, 0),
        ([4100, 14], 8, 0),
        ([9000, 6], 8, 1),
    ] {
        let cols = AxisPlan::new(Layout::c_order(&dims), Some(&[0]), false).expect("plan");
        let plan = TilePlan::new(view, Selection::Axes(&cols)).expect("plan");
        let p = program(StateKind::Moments, DType::F32, Target::Cuda, &plan);
        assert_eq!(p.entry, COLUMNS_ENTRY_POINT, "{dims:?}");
        assert!(
            p.source
                .contains(&format!("#define ST_COL_ROWS {lane_rows}\n")),
            "{dims:?}"
        );
        assert!(
            p.source.contains(&format!("#define ST_COL_SKIP {skip}\n")),
            "{dims:?}"
        );
        let direct = u8::from(lane_rows == 1);
        assert!(
            p.source
                .contains(&format!("#define ST_COL_DIRECT {direct}\n")),
            "{dims:?}"
        );
        // The direct moments' columns compile their length in; nothing else does.
        assert_eq!(
            p.source
                .contains(&format!("#define ST_COL_LEN {}\n", dims[0])),
            direct == 1,
            "{dims:?}"
        );
        assert_eq!(
            p.source.contains("#define ST_COL_LEN"),
            direct == 1,
            "{dims:?}"
        );
        // Log-sum-exp always loads straight into registers; the define stays 0.
        let lse = program(StateKind::ExpSum, DType::F32, Target::Cuda, &plan);
        assert!(lse.source.contains("#define ST_COL_DIRECT 0\n"), "{dims:?}");
        assert!(!lse.source.contains("#define ST_COL_LEN"), "{dims:?}");
    }
    // Columns: 16 lane classes where 32 columns per work-group give few work-groups.
    assert_eq!(column_classes(32, 512), 8);
    assert_eq!(column_classes(16_384, 1), 8);
    let long = AxisPlan::new(Layout::c_order(&[10_000, 6]), Some(&[0]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&long)).expect("plan");
    assert_eq!(plan.columns(), Some(2));
    let p = program(StateKind::Moments, DType::F32, Target::OpenCl, &plan);
    assert_eq!((p.entry, p.groups), (COLUMNS_ENTRY_POINT, 2));
    let ranges = [0..3, 3..3, 3..20_000];
    let plan = TilePlan::new(view, Selection::Ranges(&ranges)).expect("plan");
    assert_eq!(plan.outputs, vec![0..1, 1..1, 1..4]);
    let split =
        AxisPlan::new(Layout::c_order(&[2, 3, 10_000]), Some(&[0, 2]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&split)).expect("plan");
    assert!(plan.gathered.is_some());
    assert_eq!(plan.outputs.len(), 3);
    assert!(source(StateKind::ExpSum, DType::BF16, Target::Cuda).contains("STAT_KIND 1"));
    assert_eq!(plan.short_width(), None);
    let short = AxisPlan::new(Layout::c_order(&[2000, 30]), Some(&[1]), false).expect("plan");
    let plan = TilePlan::new(view, Selection::Axes(&short)).expect("plan");
    assert_eq!(plan.short_width(), Some(32));
    let p = program(StateKind::Moments, DType::F32, Target::OpenCl, &plan);
    assert!(
        p.source
            .starts_with("#define ST_THREAD_WIDTH 32\n#define ST_THREAD_STAGED 1\n")
            && p.entry == THREAD_TILES_ENTRY_POINT
    );
    assert_eq!(p.groups, 2000usize.div_ceil(WORK_GROUP));
    // Rows of 32 8-byte elements would stage 66 KiB: they load their own.
    let p = program(StateKind::ExpSum, DType::F64, Target::Cuda, &plan);
    assert!(p.source.contains("#define ST_THREAD_STAGED 0\n"));
    // nanmean compacts rows of at most 32 in a work-item's staged row, rows of at
    // most 1024 4-byte elements in a segment each (16 of 300 per work-group), 8-byte ones a
    // work-group per tile.
    let p = program(StateKind::NanMoments, DType::F32, Target::OpenCl, &plan);
    assert_eq!(
        (p.entry, p.groups),
        (THREAD_TILES_ENTRY_POINT, 2000usize.div_ceil(WORK_GROUP))
    );
    assert!(p.source.contains("#define ST_THREAD_STAGED 1\n"));
    // Rows of 32 8-byte elements would stage 66 KiB: the short kernel's lanes.
    let p = program(StateKind::NanMoments, DType::F64, Target::OpenCl, &plan);
    assert_eq!((p.entry, p.groups), (SHORT_ENTRY_POINT, 250));
    let long_rows = AxisPlan::new(Layout::c_order(&[9, 300]), Some(&[1]), false).expect("plan");
    let plan_long = TilePlan::new(view, Selection::Axes(&long_rows)).expect("plan");
    for (dtype, entry, groups) in [
        (DType::F32, WARP_ROWS_ENTRY_POINT, 1),
        (DType::F64, KEPT_ENTRY_POINT, 9),
    ] {
        let p = program(StateKind::NanMoments, dtype, Target::OpenCl, &plan_long);
        assert_eq!((p.entry, p.groups), (entry, groups), "{dtype}");
    }
    let p = program(
        StateKind::NanMoments,
        DType::F32,
        Target::OpenCl,
        &plan_long,
    );
    assert!(p.source.contains("#define ST_MIN_GROUPS 4\n"));
    let words = explain(StateKind::Moments, DType::F32, Selection::Axes(&short));
    assert!(
        words.starts_with("stat_thread_tiles: a work-item per tile of at most 32 elements")
            && words.contains("local memory first"),
        "{words}"
    );
    let words = explain(StateKind::ExpSum, DType::F32, Selection::Axes(&split));
    assert!(
        words.starts_with("stat_tiles") && words.contains("gathered"),
        "rows of 10,000 gathered take a group per tile: {words}"
    );
    let long = AxisPlan::new(Layout::c_order(&[10_000, 6]), Some(&[0]), false).expect("plan");
    assert!(
        explain(StateKind::NanMax, DType::F32, Selection::Axes(&long)).starts_with("stat_columns")
    );
}

#[test]
fn rows_are_prefetched_where_they_split_dram_blocks_and_fit_in_l2() {
    // An H100's 132 multiprocessors and 50 MiB of L2.
    let (sms, l2): (usize, u64) = (132, 50 << 20);
    let data = vec![0f32; 4 * 3072];
    let view = ArrayRef::from_slice(&data);
    let takes_on = |kind, dtype, len: usize, l2: u64| {
        let rows = AxisPlan::new(Layout::c_order(&[4, len]), Some(&[1]), false).expect("plan");
        let plan = TilePlan::new(view, Selection::Axes(&rows)).expect("plan");
        prefetches_rows(&program(kind, dtype, Target::Cuda, &plan), dtype, sms, l2)
    };
    let takes = |kind, dtype, len| takes_on(kind, dtype, len, l2);
    // Rows off the 64-byte grid whose 5280 resident copies fit in four fifths of L2.
    for len in [1025, 1607, 1704, 1850, 1898, 1985] {
        assert!(takes(StateKind::Moments, DType::F32, len), "{len}");
    }
    // On the grid (2000, 2048, 2400), too large to fit (1986, 2100, 2500, 3000), one
    // lane row (staged in address order already), other widths, and statistics without
    // a compiled-in length.
    for len in [2000, 2048, 2400, 1986, 2100, 2500, 3000, 300, 1000] {
        assert!(!takes(StateKind::Moments, DType::F32, len), "{len}");
    }
    assert!(!takes(StateKind::Moments, DType::F64, 1607));
    assert!(!takes(StateKind::Moments, DType::F16, 1607));
    assert!(!takes(StateKind::ExpSum, DType::F32, 1607));
    assert!(!takes(StateKind::NanMoments, DType::F32, 1607));
    // A larger L2 takes longer rows.
    assert!(takes_on(StateKind::Moments, DType::F32, 2500, 100 << 20));
}
