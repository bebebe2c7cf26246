//! The axis and segment kernels (`segments.cl`) in the simulator, as OpenCL builds them
//! and as CUDA builds them (`HAVE_SUBGROUP_SHUFFLE`: the short-row fold in warp shuffles):
//! every kernel path, each output bitwise equal to the reference of its own elements, and
//! no race, out-of-bounds or uninitialized read, or barrier divergence in any launch.

mod common;

use common::{findings, segment_options};
use redlab_analyzer::segments;
use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::{self, Selection};
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{DType, Op, Problem};

#[test]
fn every_segment_kernel_matches_the_reference_in_the_simulator() {
    let mut failures = Vec::new();
    let mut strategies = Vec::new();
    let problems = [
        (Op::Sum, DType::F32),
        (Op::ArgMax, DType::F64),
        (Op::Min, DType::I32),
    ];
    let plan = |dims: &[usize], axis: isize| {
        AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan")
    };
    let rows = plan(&[37, 19], 1);
    let wide = plan(&[3, 1000], 1);
    // Full rows of 1024 and 256 elements: with shuffles, 16-byte words.
    let full = plan(&[3, 1024], 1);
    let quarter = plan(&[5, 256], 1);
    let long = plan(&[2, 8195], 1);
    let cols = plan(&[45, 11], 0);
    let tall = plan(&[8200, 9], 0);
    // 4-byte columns as 16-byte words: a partial tile, then a whole one with the tree.
    let words = plan(&[300, 132], 0);
    let tall_words = plan(&[8200, 128], 0);
    // Rows of 32, 8 and 64 side by side: word_rows.
    let word_rows = plan(&[70, 32], 1);
    let word_rows_8 = plan(&[9, 8], 1);
    let word_rows_64 = plan(&[11, 64], 1);
    let ranges = Segments::Offsets(vec![0, 3, 3, 300, 301, 1000])
        .ranges(1000)
        .expect("ranges");
    let cases: [(&str, usize, Selection<'_>); 13] = [
        ("word rows 11x64", 11 * 64, Selection::Axes(&word_rows_64)),
        ("word rows 70x32", 70 * 32, Selection::Axes(&word_rows)),
        ("word rows 9x8", 9 * 8, Selection::Axes(&word_rows_8)),
        ("short rows 37x19", 37 * 19, Selection::Axes(&rows)),
        ("short rows 3x1000", 3 * 1000, Selection::Axes(&wide)),
        ("full rows 3x1024", 3 * 1024, Selection::Axes(&full)),
        ("full rows 5x256", 5 * 256, Selection::Axes(&quarter)),
        (
            "row tiles and tree 2x8195",
            2 * 8195,
            Selection::Axes(&long),
        ),
        ("column tiles 45x11", 45 * 11, Selection::Axes(&cols)),
        (
            "column tiles and tree 8200x9",
            8200 * 9,
            Selection::Axes(&tall),
        ),
        ("column words 300x132", 300 * 132, Selection::Axes(&words)),
        (
            "column words and tree 8200x128",
            8200 * 128,
            Selection::Axes(&tall_words),
        ),
        ("csr segments", 1000, Selection::Ranges(&ranges)),
    ];
    for (op, dtype) in problems {
        let problem = Problem::new(op, dtype, None).expect("problem");
        for shuffles in [false, true] {
            for &(label, n, selection) in &cases {
                let data = generate(problem.dtype, n, Distribution::Normal, 7).expect("data");
                let expected =
                    segmented::reference(&problem, data.view(), selection).expect("reference");
                match segments::run(
                    &problem,
                    data.view(),
                    selection,
                    &segment_options(shuffles, 3),
                ) {
                    Ok(Some(run)) => {
                        strategies.push(run.strategy.split(':').next().unwrap_or("").to_string());
                        for (k, (got, want)) in run.values.iter().zip(&expected).enumerate() {
                            if !got.same_as(want) {
                                failures.push(format!(
                                    "{problem} {label} shuffles={shuffles}: [{k}] {got} vs {want}"
                                ));
                                break;
                            }
                        }
                        let what = format!("{problem} {label} shuffles={shuffles}");
                        failures.extend(findings(&what, &run));
                    }
                    Ok(None) => failures.push(format!("{label}: no job")),
                    Err(e) => failures.push(format!("{problem} {label} shuffles={shuffles}: {e}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for wanted in [
        "short_rows",
        "row_tiles",
        "column_tiles",
        "column_words",
        "word_rows",
    ] {
        assert!(
            strategies.iter().any(|s| s == wanted),
            "no case ran {wanted}"
        );
    }
}
