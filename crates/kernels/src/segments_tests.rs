//! Unit tests of [`super`]: strategy choice, launches, header layout and tables.

use super::*;
use redlab_core::shape::{AxisPlan, Layout};

#[test]
fn shapes_pick_the_strategy_their_layout_suits() {
    let rows = AxisPlan::new(Layout::c_order(&[1000, 32]), Some(&[1]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&rows)).expect("job");
    assert_eq!(job.strategy(), Strategy::ShortRows { width: 32 });
    let cols = AxisPlan::new(Layout::c_order(&[1000, 64]), Some(&[0]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&cols)).expect("job");
    assert_eq!(job.strategy(), Strategy::ColumnTiles);
    // A device with smaller work-groups reads the same columns as rows.
    let small = job.for_device(256);
    assert_eq!(small.strategy(), Strategy::ShortRows { width: 256 });
    assert!(
        small.explain().contains("allows 256"),
        "{}",
        small.explain()
    );
    // Rows of 33 to 1024 go to the register kernel, pairs folding as they load.
    let wide = AxisPlan::new(Layout::c_order(&[10, 1000]), Some(&[1]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&wide)).expect("job");
    let sum = Problem::new(Op::Sum, redlab_core::DType::F32, None).expect("sum");
    let argmax = Problem::new(Op::ArgMax, redlab_core::DType::F32, None).expect("argmax");
    assert_eq!(
        job.clone().for_problem(&sum).strategy(),
        Strategy::ShortRowsWide
    );
    assert!(job
        .clone()
        .for_problem(&sum)
        .explain()
        .starts_with("short_rows_wide"));
    let pairs = job.for_problem(&argmax);
    assert_eq!(pairs.strategy(), Strategy::ShortRowsWide);
    assert!(
        pairs.explain().contains("folded as they load"),
        "{}",
        pairs.explain()
    );
    // Rows of exactly 32 4-byte elements side by side read as words; f64 rows and rows
    // of 31 (padded lanes) stay on short_rows.
    let job = SegmentJob::new(Selection::Axes(&rows)).expect("job");
    assert_eq!(
        job.clone().for_problem(&sum).strategy(),
        Strategy::WordRows { span: 32 }
    );
    let f64_sum = Problem::new(Op::Sum, redlab_core::DType::F64, None).expect("sum");
    assert_eq!(
        job.for_problem(&f64_sum).strategy(),
        Strategy::ShortRows { width: 32 }
    );
    let ragged = AxisPlan::new(Layout::c_order(&[1000, 31]), Some(&[1]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&ragged)).expect("job");
    assert_eq!(
        job.for_problem(&sum).strategy(),
        Strategy::ShortRows { width: 32 }
    );
    // Rows of 16 inside a middle axis's runs are side by side too; rows of a slice
    // (axis 2 of a 3-D array whose middle axis is cut) are not.
    let middle = AxisPlan::new(Layout::c_order(&[3, 7, 16]), Some(&[2]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&middle)).expect("job");
    assert_eq!(
        job.for_problem(&sum).strategy(),
        Strategy::WordRows { span: 16 }
    );
    let cut = Layout {
        dims: vec![3, 7, 16],
        strides: vec![8 * 16, 16, 1],
        offset: 0,
    };
    let cut = AxisPlan::new(cut, Some(&[2]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&cut)).expect("job");
    assert_eq!(
        job.for_problem(&sum).strategy(),
        Strategy::ShortRows { width: 16 }
    );
    let long = AxisPlan::new(Layout::c_order(&[4, 100_000]), Some(&[1]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&long)).expect("job");
    assert_eq!(job.strategy(), Strategy::RowTiles);
    assert!(
        job.explain().contains("canonical tree"),
        "{}",
        job.explain()
    );
    // Axes 0 and 2 of a C-order (2, 3, 4) array do not step evenly: gathered instead.
    let split = AxisPlan::new(Layout::c_order(&[2, 3, 4]), Some(&[0, 2]), false).expect("plan");
    assert!(SegmentJob::new(Selection::Axes(&split)).is_none());
}

#[test]
fn launches_follow_the_strategy_and_add_the_tree_for_long_outputs() {
    let rows = AxisPlan::new(Layout::c_order(&[1000, 32]), Some(&[1]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&rows)).expect("job");
    // 32 work-items per row, 4 blocks of 8 rows per group of 256.
    let one = SegmentLaunch {
        entry: 0,
        global: 1000usize.div_ceil(32) * WG,
        local: WG,
    };
    assert_eq!(job.launches(), vec![one]);
    // As words: 4 work-items per row, 4 blocks of 64 rows per group.
    let sum = Problem::new(Op::Sum, redlab_core::DType::F32, None).expect("sum");
    assert_eq!(
        job.for_problem(&sum).launches(),
        vec![SegmentLaunch {
            entry: 7,
            global: 1000usize.div_ceil(256) * WG,
            local: WG,
        }]
    );
    let long = AxisPlan::new(Layout::c_order(&[3, 70_001]), Some(&[1]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&long)).expect("job");
    let tiles = 3 * 70_001usize.div_ceil(TILE);
    assert_eq!(
        job.launches(),
        vec![
            SegmentLaunch {
                entry: 2,
                global: tiles * WG,
                local: WG
            },
            SegmentLaunch {
                entry: 4,
                global: 3 * WG,
                local: WG
            }
        ]
    );
    assert!(job.every_output_has_elements());
    let empty = AxisPlan::new(Layout::c_order(&[4, 0]), Some(&[1]), false).expect("plan");
    let job = SegmentJob::new(Selection::Axes(&empty)).expect("job");
    assert!(job.launches().is_empty() && !job.every_output_has_elements());
    // The stream path's header carries the result's address and no results area.
    let (header, scratch) = job.result_layout(0xabc0, 4);
    assert_eq!(header.len(), HEADER_WORDS * 8);
    assert_eq!(header[80..88], 0xabc0u64.to_le_bytes());
    assert_eq!(scratch, 0);
    let ranges = [0..5, 5..5];
    let csr = SegmentJob::new(Selection::Ranges(&ranges)).expect("job");
    assert!(!csr.every_output_has_elements());
}

#[test]
fn results_stored_in_place_are_raw_bytes_float_keys_or_indices() {
    use crate::codec::InPlace;
    use redlab_core::DType;
    let in_place = |op, dtype| {
        let problem = Problem::new(op, dtype, None).expect("problem");
        Codec::new(&problem).in_place_result()
    };
    assert_eq!(in_place(Op::Sum, DType::F32), Some(InPlace::Raw(4)));
    assert_eq!(in_place(Op::Min, DType::I8), Some(InPlace::Raw(1)));
    assert_eq!(in_place(Op::Max, DType::F32), Some(InPlace::FloatKey(4)));
    assert_eq!(in_place(Op::Min, DType::F64), Some(InPlace::FloatKey(8)));
    assert_eq!(in_place(Op::ArgMax, DType::F32), Some(InPlace::Index));
    assert_eq!(in_place(Op::ArgMin, DType::U8), Some(InPlace::Index));
    assert_eq!(in_place(Op::Max, DType::F16), Some(InPlace::HalfKey));
    assert_eq!(in_place(Op::Min, DType::BF16), Some(InPlace::BFloatKey));
    assert_eq!(InPlace::Index.bytes(), 8);
    assert_eq!(InPlace::HalfKey.bytes(), 2);
    // Every operator over every type now stores its results itself.
    for op in Op::ALL {
        for dtype in DType::ALL {
            if let Ok(problem) = Problem::new(op, dtype, None) {
                assert!(
                    Codec::new(&problem).in_place_result().is_some(),
                    "{problem}"
                );
            }
        }
    }
    let argmax = Problem::new(Op::ArgMax, DType::F32, None).expect("problem");
    let built =
        crate::assembly::assemble_segments_to_result(&argmax, &[], crate::assembly::Target::Cuda)
            .expect("argmax assembles");
    assert!(built.source.contains("#define SEG_RESULT_INDEX 1"));
}

#[test]
fn csr_tables_hold_starts_and_tile_prefixes() {
    let ranges = [0..10, 10..10, 10..20_000];
    let job = SegmentJob::new(Selection::Ranges(&ranges)).expect("job");
    assert_eq!(job.tables, vec![0, 10, 10, 20_000, 0, 1, 1, 4]);
    assert_eq!(job.tiles, 4);
    assert_eq!(job.strategy(), Strategy::RowTiles);
    // Segments of one length need no tables: the rows' formula, and the row kernels.
    let fixed: Vec<_> = (0..100).map(|k| 7 + 32 * k..7 + 32 * (k + 1)).collect();
    let job = SegmentJob::new(Selection::Ranges(&fixed)).expect("job");
    assert!(job.tables.is_empty() && job.lens.is_none());
    assert_eq!(
        (job.header[0], job.header[5], job.header[7], job.header[9]),
        (32, 100, 32, 7)
    );
    let sum = Problem::new(Op::Sum, redlab_core::DType::I32, None).expect("sum");
    assert_eq!(
        job.for_problem(&sum).strategy(),
        Strategy::WordRows { span: 32 }
    );
    // A shorter last segment keeps the tables.
    let ragged = [0..32, 32..64, 64..70];
    let job = SegmentJob::new(Selection::Ranges(&ragged)).expect("job");
    assert_eq!(job.tables.len(), 8);
}

#[test]
fn columns_take_words_where_every_word_holds_four_outputs() {
    use redlab_core::DType;
    let cols = |dims: &[usize], axis: isize| {
        AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan")
    };
    let problem = |op, dtype| Problem::new(op, dtype, None).expect("problem");
    let job = |plan: &AxisPlan, p: &Problem| {
        SegmentJob::new(Selection::Axes(plan))
            .expect("job")
            .for_device(1024)
            .for_problem(p)
    };
    let sum = problem(Op::Sum, DType::F32);
    let tall = cols(&[20_000, 256], 0);
    let words = job(&tall, &sum);
    assert_eq!(words.strategy(), Strategy::ColumnWords);
    assert!(
        words.explain().starts_with("column_words"),
        "{}",
        words.explain()
    );
    // Two blocks of 128 outputs × 3 tiles × 4 work-groups, the finish over every tile,
    // then the tree.
    let tiles = 256 * 20_000usize.div_ceil(TILE);
    assert_eq!(
        words.launches(),
        vec![
            SegmentLaunch {
                entry: 5,
                global: 2 * 3 * CW_PARTIALS * WG,
                local: WG
            },
            SegmentLaunch {
                entry: 6,
                global: tiles.div_ceil(WG) * WG,
                local: WG
            },
            SegmentLaunch {
                entry: 4,
                global: 256 * WG,
                local: WG
            },
        ]
    );
    // Scratch: the tile results (16-byte aligned), then 4 partials per tile, at H_PARTIALS.
    let (header, scratch) = words.result_layout(0, 4);
    let word = |i: usize| u64::from_le_bytes(header[8 * i..8 * i + 8].try_into().expect("word"));
    assert_eq!(word(11), word(8) + (tiles * 4).next_multiple_of(16) as u64);
    assert_eq!(
        scratch,
        (tiles * 4).next_multiple_of(16) + tiles * CW_PARTIALS * 4
    );
    // 2-byte elements take words of 4 too (8 bytes).
    for dtype in [DType::F16, DType::BF16, DType::I16] {
        assert_eq!(
            job(&tall, &problem(Op::Sum, dtype)).strategy(),
            Strategy::ColumnWords,
            "{dtype}"
        );
    }
    // Not words: 8-byte float sums and products (no canonical fold of wide words) and
    // argmin/argmax (slower on wide words), 1-byte elements, too few outputs, outputs
    // that are not in whole words.
    for (plan, p) in [
        (&tall, problem(Op::Sum, DType::F64)),
        (&tall, problem(Op::Prod, DType::F64)),
        (&tall, problem(Op::ArgMax, DType::F64)),
        (&tall, problem(Op::ArgMin, DType::I64)),
        (&tall, problem(Op::Sum, DType::U8)),
        (&cols(&[1000, 66], 0), sum),
        (&cols(&[1000, 130], 0), sum),
    ] {
        assert_eq!(job(plan, &p).strategy(), Strategy::ColumnTiles, "{p}");
    }
    // Every other operator too, at any length and grid: float sums and products keep the
    // canonical class fold, order-free operators fold in arrival order (cw_free_fold).
    let short = cols(&[3, 40, 132], 1);
    let taller = cols(&[1 << 20, 256], 0);
    for p in [
        sum,
        problem(Op::Prod, DType::F32),
        problem(Op::Xor, DType::I32),
        problem(Op::Max, DType::I32),
        problem(Op::Sum, DType::I32),
        problem(Op::Max, DType::F32),
        problem(Op::Min, DType::F16),
        problem(Op::ArgMax, DType::F32),
        problem(Op::ArgMin, DType::F16),
        problem(Op::ArgMin, DType::I32),
        // 8-byte elements of order-free operators: wide words (SEG_WIDE_WORDS).
        problem(Op::Max, DType::F64),
        problem(Op::Min, DType::I64),
        problem(Op::Sum, DType::I64),
        problem(Op::Xor, DType::U64),
    ] {
        for plan in [&short, &tall, &taller] {
            assert_eq!(job(plan, &p).strategy(), Strategy::ColumnWords, "{p}");
        }
    }
}

#[test]
fn mapped_jobs_take_column_words_only_where_they_map_words() {
    // Maps of 4-byte inputs map raw words (MAP_BITS) and plan as plain kernels do; other
    // maps load no raw words: column_words would fall back to a work-item per 4 columns,
    // while word_rows loads the same lanes one element at a time.
    let plan = |dims: &[usize], axis: isize| {
        AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan")
    };
    let mean = Problem::new(Op::Sum, redlab_core::DType::F32, None).expect("sum");
    let job = |p: &AxisPlan| {
        SegmentJob::new(Selection::Axes(p))
            .expect("job")
            .for_device(1024)
    };
    let rows = plan(&[4096, 32], 1);
    for words in [false, true] {
        assert_eq!(
            job(&rows).for_mapped(&mean, words).strategy(),
            Strategy::WordRows { span: 32 }
        );
    }
    let columns = plan(&[20_000, 256], 0);
    assert_eq!(
        job(&columns).for_problem(&mean).strategy(),
        Strategy::ColumnWords
    );
    assert_eq!(
        job(&columns).for_mapped(&mean, true).strategy(),
        Strategy::ColumnWords
    );
    assert_eq!(
        job(&columns).for_mapped(&mean, false).strategy(),
        Strategy::ColumnTiles
    );
}

#[test]
fn narrow_columns_take_fewer_words_per_row_and_more_classes_per_group() {
    // Fewer than 128 outputs side by side: 16 words (33–127 outputs) and 16 classes in
    // each of 2 groups per tile, 8 words (17–32) and a tile's 32 classes in one group, or
    // 4 (9–16) and 2 (8) words with the classes of 2 or 4 tiles in one group.
    let sum = Problem::new(Op::Sum, redlab_core::DType::F32, None).expect("sum");
    let job = |dims: &[usize]| {
        let plan = AxisPlan::new(Layout::c_order(dims), Some(&[0]), false).expect("plan");
        SegmentJob::new(Selection::Axes(&plan))
            .expect("job")
            .for_device(1024)
            .for_problem(&sum)
    };
    // 20000 rows: 3 tiles. (columns, outputs per block, work-groups per tile, tiles per
    // work-group, words the explanation names)
    for (columns, block, split, tiles_in, layout) in [
        (8, 8, 1, 4, "the 32 lane classes of each of 4 tiles"),
        (12, 16, 1, 2, "the 32 lane classes of each of 2 tiles"),
        (16, 16, 1, 2, "the 32 lane classes of each of 2 tiles"),
        (32, 32, 1, 1, "the 32 lane classes of one tile"),
        (
            64,
            64,
            2,
            1,
            "16 of the 32 lane classes of one tile (2 per tile)",
        ),
        (
            100,
            64,
            2,
            1,
            "16 of the 32 lane classes of one tile (2 per tile)",
        ),
    ] {
        let narrow = job(&[20000, columns]);
        assert_eq!(narrow.strategy(), Strategy::ColumnWords, "{columns}");
        let groups = columns.div_ceil(block) * 3usize.div_ceil(tiles_in) * split;
        assert_eq!(
            narrow.launches()[0],
            SegmentLaunch {
                entry: 5,
                global: groups * WG,
                local: WG
            },
            "{columns}"
        );
        let explain = narrow.explain();
        assert!(
            explain.contains(&format!("takes {block} neighbouring outputs × {layout}")),
            "{explain}"
        );
    }
}

#[test]
fn whole_rows_take_many_rows_of_a_few_tiles() {
    let problem = |op, dtype| Problem::new(op, dtype, None).expect("problem");
    let argmax = problem(Op::ArgMax, redlab_core::DType::F32);
    let rows = |dims: &[usize]| {
        let plan = AxisPlan::new(Layout::c_order(dims), Some(&[1]), false).expect("plan");
        SegmentJob::new(Selection::Axes(&plan)).expect("job")
    };
    // 8192 rows of a whole tile and one element: a work-group per row, no tree, no
    // scratch for tile results, entry `row_whole`.
    let job = rows(&[8192, 8193]).for_problem(&argmax);
    assert_eq!(job.strategy(), Strategy::RowWhole);
    assert_eq!(
        job.launches(),
        vec![SegmentLaunch {
            entry: 8,
            global: 8192 * WG,
            local: WG
        }]
    );
    assert_eq!(job.scratch_bytes(16), 0);
    assert!(job.explain().contains("row_whole"), "{}", job.explain());
    for op in [Op::Min, Op::Max, Op::Xor, Op::Sum, Op::ArgMin] {
        let p = problem(op, redlab_core::DType::I32);
        assert_eq!(
            rows(&[1024, 4 * TILE]).for_problem(&p).strategy(),
            Strategy::RowWhole
        );
    }
    // Float sums fold each tile canonically and join the tiles on the kernel's counter.
    let f32_sum = problem(Op::Sum, redlab_core::DType::F32);
    let job = rows(&[8192, 8193]).for_problem(&f32_sum);
    assert_eq!(job.strategy(), Strategy::RowWhole);
    assert!(
        job.explain().contains("binary counter"),
        "{}",
        job.explain()
    );
    assert_eq!(job.launches().len(), 1);
    // From 128 outputs of up to 4 tiles, and from 1024 of up to 8 (measured on an H100).
    for dims in [[128, 8193], [500, 4 * TILE], [1024, 8 * TILE]] {
        let job = rows(&dims).for_problem(&argmax);
        assert_eq!(job.strategy(), Strategy::RowWhole, "{dims:?}");
    }
    // Too few rows, rows of one tile (one group each already), and rows of more tiles
    // than a group walks (4 below 1024 outputs, 8 from there): row tiles.
    for dims in [
        [100, 8193],
        [8192, 8192],
        [1000, 4 * TILE + 1],
        [1024, 8 * TILE + 1],
    ] {
        let job = rows(&dims).for_problem(&argmax);
        assert_eq!(job.strategy(), Strategy::RowTiles, "{dims:?}");
    }
    // Strided outputs (axis 1 of 1024×8193×2) keep row tiles.
    let plan = AxisPlan::new(Layout::c_order(&[1024, 8193, 2]), Some(&[1]), false).expect("plan");
    let strided = SegmentJob::new(Selection::Axes(&plan)).expect("job");
    assert_eq!(strided.for_problem(&argmax).strategy(), Strategy::RowTiles);
    // Segments of different lengths: the longest decides.
    let mut ranges = Vec::new();
    let mut at = 0;
    for k in 0..1100usize {
        let len = if k % 7 == 0 {
            0
        } else {
            9000 + (k * 37) % 20_000
        };
        ranges.push(at..at + len);
        at += len;
    }
    let job = SegmentJob::new(Selection::Ranges(&ranges))
        .expect("job")
        .for_problem(&argmax);
    assert_eq!(job.strategy(), Strategy::RowWhole);
    assert_eq!(job.launches()[0].global, 1100 * WG);
}

#[test]
fn custom_combines_plan_for_the_canonical_order_whatever_their_stand_in() {
    // A custom combine over i64 stands in as an i64 sum, whose plan would fold in any
    // order; the kernels apply the combine in the canonical order only.
    let stand_in = Problem::new(Op::Sum, redlab_core::DType::I64, None).expect("sum");
    let job = |dims: &[usize], axis: isize| {
        let plan = AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan");
        SegmentJob::new(Selection::Axes(&plan))
            .expect("job")
            .for_device(1024)
    };
    // Rows of 9 tiles: more than a work-group walks, row tiles and the tree.
    assert_eq!(
        job(&[8192, 8 * TILE + 1], 1)
            .for_custom(&stand_in, true)
            .strategy(),
        Strategy::RowTiles
    );
    let rows = job(&[8192, 8193], 1);
    let custom = rows.clone().for_custom(&stand_in, true);
    assert_eq!(custom.strategy(), Strategy::RowWhole);
    assert!(
        custom.explain().contains("binary counter"),
        "{}",
        custom.explain()
    );
    assert!(
        rows.for_problem(&stand_in)
            .explain()
            .contains("as they come"),
        "the stand-in alone folds in any order"
    );
    // No raw words (several inputs, 8-byte ones): columns stay on column tiles, short
    // rows load element by element.
    let f32_stand_in = Problem::new(Op::Sum, redlab_core::DType::F32, None).expect("sum");
    assert_eq!(
        job(&[20_000, 256], 0)
            .for_custom(&f32_stand_in, false)
            .strategy(),
        Strategy::ColumnTiles
    );
    assert_eq!(
        job(&[4096, 32], 1)
            .for_custom(&f32_stand_in, false)
            .strategy(),
        Strategy::WordRows { span: 32 }
    );
    // Raw words and 4-byte partials: columns take column_words' canonical class fold, as
    // f32 sums do; 8-byte partials keep column tiles.
    let words = job(&[20_000, 256], 0).for_custom(&f32_stand_in, true);
    assert_eq!(words.strategy(), Strategy::ColumnWords);
    assert!(
        words.explain().contains("canonical halving"),
        "{}",
        words.explain()
    );
    assert_eq!(
        job(&[20_000, 256], 0)
            .for_custom(&stand_in, true)
            .strategy(),
        Strategy::ColumnTiles
    );
}
