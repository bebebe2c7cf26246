//! NVRTC builds of the statistics kernels: every state, type and tile kernel, whole
//! arrays through the stream path, and maps that finish statistics in place.

use super::*;

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn whole_array_statistics_build_into_the_stream_path_kernel() {
    require_nvrtc();
    // The production kernel with the map as lift(), the result after `post` stored in
    // the caller's memory (fourth argument): the mean's division and the norm's square
    // root in the kernel, any's byte, nansum's raw f64.
    let variant = registry::find("production").expect("registered");
    for (name, dtype, needle) in [
        ("mean", DType::F32, "div.rn.f32"),
        ("mean", DType::F16, "div.rn.f32"),
        ("mean", DType::I32, "div.rn.f64"),
        ("nansum", DType::I32, "reduce_param_3"),
        ("norm2", DType::F16, "sqrt.rn.f32"),
        ("any", DType::F32, "st.global.u8"),
        ("count_nonzero", DType::I32, "reduce_param_3"),
        ("nansum", DType::F64, "reduce_param_3"),
    ] {
        let reduction = redlab_expr::stats::reduction(name, dtype).expect("statistic");
        let whole = redlab_kernels::mapped::whole_to_result(&reduction)
            .unwrap_or_else(|e| panic!("{name} {dtype}: {e}"));
        let (problem, decls) = (whole.problem, whole.decls);
        let params: &[(&str, u32)] = if whole.plain {
            &[]
        } else {
            redlab_kernels::mapped::FLOAT_PARAMS
        };
        let source =
            assembly::assemble_with(&variant, &problem, &decls, params, &[], Target::Cuda, true)
                .expect("assembles")
                .source;
        let ptx = compile::compile(&source, variant.file, "sm_90")
            .unwrap_or_else(|f| panic!("{name} {dtype}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(
            text.contains("reduce_param_3"),
            "{name} {dtype}: no result argument"
        );
        assert!(text.contains(needle), "{name} {dtype}: no {needle}");
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn mapped_statistics_store_their_finished_results_in_place() {
    require_nvrtc();
    // The mean of f32 stores an f32 (the division on the device), the mean of i32 an
    // f64, any a byte (`r != 0`), the norm of f16 an f32 square root; norminf, without
    // a post, the float its max key stands for.
    for (name, dtype, bits, needle) in [
        ("mean", DType::F32, 32, "div.rn.f32"),
        ("mean", DType::I32, 64, "div.rn.f64"),
        ("any", DType::F32, 8, ""),
        ("norm2", DType::F16, 32, "sqrt.rn.f32"),
        ("norminf", DType::F64, 64, ""),
    ] {
        let reduction = redlab_expr::stats::reduction(name, dtype).expect("statistic");
        let (_, assembled, result) =
            redlab_kernels::mapped::segments_to_result(&reduction, Target::Cuda)
                .unwrap_or_else(|e| panic!("{name} {dtype}: {e}"));
        assert_eq!(result.size_bytes() * 8, bits, "{name} {dtype}");
        let ptx = compile::compile(&assembled.source, "segments.cl", "sm_90")
            .unwrap_or_else(|f| panic!("{name} {dtype}:\n{}", f.log));
        let text = String::from_utf8_lossy(&ptx);
        assert!(text.contains(needle), "{name} {dtype}: no {needle}");
        assert!(
            ["b", "u", "s", "f"]
                .iter()
                .any(|kind| text.contains(&format!("st.global.{kind}{bits} "))),
            "{name} {dtype}: no {bits}-bit store"
        );
    }
}

#[test]
#[ignore = "needs libnvrtc; run with --include-ignored"]
fn the_statistics_kernel_compiles_for_every_state_and_type() {
    use redlab_core::segmented::Selection;
    use redlab_core::shape::{AxisPlan, Layout};
    use redlab_kernels::statistics::{
        program, source, StateKind, TilePlan, COLUMNS_ENTRY_POINT, ENTRY_POINT, KEPT_ENTRY_POINT,
        SHORT_ENTRY_POINT, THREAD_TILES_ENTRY_POINT, WARP_ROWS_ENTRY_POINT,
    };
    require_nvrtc();
    for kind in [
        StateKind::Moments,
        StateKind::ExpSum,
        StateKind::NanMin,
        StateKind::NanMax,
        StateKind::NanMoments,
    ] {
        for dtype in [
            DType::F32,
            DType::F64,
            DType::F16,
            DType::BF16,
            DType::I8,
            DType::U64,
        ] {
            // Columns of 8 and 16 lane classes, and the launch bound, across the types.
            let classes = if dtype == DType::I8 { 8 } else { 16 };
            let mut text = format!(
                "#define ST_MIN_GROUPS 5\n{}",
                source(kind, dtype, Target::Cuda)
            );
            let entries: &[&str] = match kind {
                StateKind::NanMoments => {
                    // Short tiles compact their values that are not NaN in the lanes, or
                    // in each work-item's staged row.
                    text = format!(
                        "#define ST_WIDTH 32\n#define ST_THREAD_WIDTH 16\n#define ST_THREAD_STAGED 1\n{text}"
                    );
                    &[
                        ENTRY_POINT,
                        KEPT_ENTRY_POINT,
                        SHORT_ENTRY_POINT,
                        THREAD_TILES_ENTRY_POINT,
                    ]
                }
                _ => {
                    // The short, column, warp-row and thread-tile kernels too (the
                    // latter staged where its 256 tiles of 32 fit in 40 KiB).
                    let staged = u8::from(dtype.size_bytes() <= 4);
                    text = format!(
                        "#define ST_WIDTH 64\n#define ST_COLUMNS 1\n#define ST_CLASSES {classes}\n#define ST_WARP_ROWS 1\n\
                         #define ST_THREAD_WIDTH 32\n#define ST_THREAD_STAGED {staged}\n{text}"
                    );
                    &[
                        ENTRY_POINT,
                        SHORT_ENTRY_POINT,
                        COLUMNS_ENTRY_POINT,
                        WARP_ROWS_ENTRY_POINT,
                        THREAD_TILES_ENTRY_POINT,
                    ]
                }
            };
            let ptx = compile::compile(&text, "statistics.cl", "sm_90")
                .unwrap_or_else(|f| panic!("{kind:?} {dtype}:\n{}", f.log));
            let text = String::from_utf8_lossy(&ptx);
            for entry in entries {
                assert!(
                    text.contains(&format!(".entry {entry}")),
                    "{kind:?} {dtype} {entry}"
                );
            }
            // The program the library builds for `dims` along `axis`, compiled, with its
            // entry in the PTX.
            let built = |dims: [usize; 2], axis: isize| {
                let axes =
                    AxisPlan::new(Layout::c_order(&dims), Some(&[axis]), false).expect("plan");
                let plan = TilePlan::in_place(Selection::Axes(&axes)).expect("tiles");
                let p = program(kind, dtype, Target::Cuda, &plan);
                let ptx = compile::compile(&p.source, "statistics.cl", "sm_90")
                    .unwrap_or_else(|f| panic!("{kind:?} {dtype} {dims:?}:\n{}", f.log));
                assert!(
                    String::from_utf8_lossy(&ptx).contains(&format!(".entry {}", p.entry)),
                    "{kind:?} {dtype} {dims:?}"
                );
                // The build the device takes where the bounded one spills.
                if let Some(free) = &p.unbounded {
                    let ptx =
                        compile::compile(free, "statistics.cl", "sm_90").unwrap_or_else(|f| {
                            panic!("{kind:?} {dtype} {dims:?} unbounded:\n{}", f.log)
                        });
                    assert!(
                        String::from_utf8_lossy(&ptx).contains(&format!(".entry {}", p.entry)),
                        "{kind:?} {dtype} {dims:?} unbounded"
                    );
                }
                p
            };
            // nanmean's tiles of at most a row: rows of elements of at most 4 bytes take
            // stat_warp_rows (compacted in each segment's staged row), other rows and
            // columns stat_kept with a one-row stage (rows of 300 and 700, columns of 700).
            if kind == StateKind::NanMoments {
                for (dims, axis) in [([3usize, 700usize], 1isize), ([3, 300], 1), ([700, 3], 0)] {
                    let short = built(dims, axis);
                    if axis == 1 && dtype.size_bytes() <= 4 {
                        assert_eq!(short.entry, WARP_ROWS_ENTRY_POINT, "{dtype} {dims:?}");
                    } else {
                        assert_eq!(short.entry, KEPT_ENTRY_POINT, "{dtype} {dims:?}");
                        assert!(short.source.contains("ST_KEPT_ROWS 1"), "{dtype} {dims:?}");
                    }
                }
            }
            // nanmean's reruns of tiles of columns, several tiles a work-group, in the
            // shapes chosen for work-groups of up to 1024 and up to 512, and double-buffered.
            if kind == StateKind::NanMoments {
                use redlab_kernels::nan_columns::{
                    kept_columns_shape, KeptColumns, Redo, KEPT_COLUMNS_ENTRY_POINT,
                };
                let axes =
                    AxisPlan::new(Layout::c_order(&[9000, 6]), Some(&[0]), false).expect("plan");
                let plan = TilePlan::in_place(Selection::Axes(&axes)).expect("tiles");
                let states = vec![[1.0, f64::NAN, 0.0]; plan.tiles()];
                let double = KeptColumns {
                    tiles: if dtype.size_bytes() > 4 { 2 } else { 4 },
                    rows: 1,
                    buffers: 2,
                };
                for shape in [
                    kept_columns_shape(dtype, 1024, 8192),
                    kept_columns_shape(dtype, 512, 8192),
                    Some(double),
                ] {
                    let redo = Redo::of(dtype, Target::Cuda, &plan, &states, shape).expect("redo");
                    assert_eq!(redo.program.entry, KEPT_COLUMNS_ENTRY_POINT, "{dtype}");
                    let ptx = compile::compile(&redo.program.source, "statistics.cl", "sm_90")
                        .unwrap_or_else(|f| panic!("{dtype} {shape:?}:\n{}", f.log));
                    assert!(
                        String::from_utf8_lossy(&ptx)
                            .contains(&format!(".entry {KEPT_COLUMNS_ENTRY_POINT}")),
                        "{dtype} {shape:?}"
                    );
                }
            }
            // Rows of 100 take stat_warp_rows with segments of 4 work-items (shuffles
            // within the segment; nanmean's of 8-byte elements take the short kernel):
            // the program the library builds, for every kind.
            let expected = if kind == StateKind::NanMoments && dtype.size_bytes() > 4 {
                SHORT_ENTRY_POINT
            } else {
                WARP_ROWS_ENTRY_POINT
            };
            assert_eq!(
                built([3, 100], 1).entry,
                expected,
                "{kind:?} {dtype} rows of 100"
            );
            // Rows of 3000 take a whole warp each, three elements a lane (nanmean's
            // compact in a work-group's stage).
            if kind != StateKind::NanMoments {
                let long = built([3, 3000], 1);
                assert!(
                    long.entry == WARP_ROWS_ENTRY_POINT
                        && long.source.contains("#define ST_LANE_ROWS 3\n"),
                    "{kind:?} {dtype} rows of 3000"
                );
            }
            // Columns of 1000 and 3000 rows stage one and four rows a lane.
            if kind != StateKind::NanMoments {
                for (dims, lane_rows) in [([1000usize, 40usize], 1), ([3000, 40], 4)] {
                    let columns = built(dims, 0);
                    assert!(
                        columns.entry == COLUMNS_ENTRY_POINT
                            && columns
                                .source
                                .contains(&format!("#define ST_COL_ROWS {lane_rows}\n")),
                        "{kind:?} {dtype} columns of {}",
                        dims[0]
                    );
                }
            }
            // stat_tiles stages its rows with asynchronous copies where elements have
            // 4 bytes or more (16 bytes per copy for contiguous rows).
            // (stat_warp_rows stages elements of at most 4 bytes).
            let staged = dtype.size_bytes() >= 4;
            assert_eq!(
                text.contains("cp.async.cg.shared.global"),
                staged,
                "{kind:?} {dtype}: staged copies"
            );
            // No multiply fused into an add, as the host never fuses (log-sum-exp's
            // canonical exp fuses on purpose, with explicit fma on every backend, so it
            // is not checked).
            if kind != StateKind::ExpSum {
                assert!(
                    !text.contains("fma.rn.f64"),
                    "{kind:?} {dtype}: fused multiply-add"
                );
            }
        }
    }
}
