//! `row_whole` (a work-group per output of a few tiles, no tree) in the simulator, as
//! OpenCL and CUDA build it: each output bitwise equal to the reference of its own
//! elements, and no race, out-of-bounds or uninitialized read, or barrier divergence,
//! for order-free operators (one accumulator per work-item, 16-byte words) and float sums
//! (each tile folded, the tiles joined on work-item 0's counter between barriers).
//!
//! The host takes whole rows from 128 outputs on, far more work-items than a simulator
//! test can afford, so this binary lowers that limit through `REDLAB_WHOLE_ROWS`, the
//! measurement override, before its one test runs (a test binary of its own: the setting
//! reaches no other test).

mod common;

use common::{findings, segment_options};
use redlab_analyzer::segments;
use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::{self, Selection};
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{DType, Op, Problem};

#[test]
fn whole_rows_match_the_reference_in_the_simulator() {
    // Whole rows from 2 outputs of up to 4 tiles.
    std::env::set_var("REDLAB_WHOLE_ROWS", "2,4");
    let plan =
        |dims: &[usize]| AxisPlan::new(Layout::c_order(dims), Some(&[1]), false).expect("plan");
    let two = plan(&[2, 8195]);
    let three = plan(&[3, 2 * 8192 + 7]);
    let ranges = Segments::Offsets(vec![0, 9000, 9000, 26_000])
        .ranges(26_000)
        .expect("ranges");
    let cases: [(&str, usize, Selection<'_>); 3] = [
        ("2x8195", 2 * 8195, Selection::Axes(&two)),
        ("3x16391", 3 * (2 * 8192 + 7), Selection::Axes(&three)),
        (
            "segments of 9000, 0, 17000",
            26_000,
            Selection::Ranges(&ranges),
        ),
    ];
    let mut failures = Vec::new();
    let mut runs = 0;
    for (op, dtype) in [
        (Op::Sum, DType::F32),
        (Op::ArgMax, DType::F32),
        (Op::Min, DType::I32),
        (Op::ArgMin, DType::F64),
    ] {
        let problem = Problem::new(op, dtype, None).expect("problem");
        for shuffles in [false, true] {
            for &(label, n, selection) in &cases {
                let data = generate(dtype, n, Distribution::Normal, 11).expect("data");
                let expected =
                    segmented::reference(&problem, data.view(), selection).expect("reference");
                let what = format!("{problem} {label} shuffles={shuffles}");
                match segments::run(
                    &problem,
                    data.view(),
                    selection,
                    &segment_options(shuffles, 5),
                ) {
                    Ok(Some(run)) => {
                        if !run.strategy.starts_with("row_whole") {
                            failures.push(format!("{what}: {}", run.strategy));
                        }
                        let wrong = run
                            .values
                            .iter()
                            .zip(&expected)
                            .position(|(got, want)| !got.same_as(want));
                        if let Some(k) = wrong {
                            failures.push(format!(
                                "{what}: [{k}] {} vs {}",
                                run.values[k], expected[k]
                            ));
                        }
                        failures.extend(findings(&what, &run));
                        runs += 1;
                    }
                    Ok(None) => failures.push(format!("{what}: no job")),
                    Err(e) => failures.push(format!("{what}: {e}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(runs, 24);
}
