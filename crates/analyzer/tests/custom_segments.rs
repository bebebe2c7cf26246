//! Custom combines (an expression in `a` and `b`) in the segment kernels, run in the
//! simulator as OpenCL and CUDA build them: each output bitwise equal to the host's fold
//! of its own elements, and no race, out-of-bounds or uninitialized read, or barrier
//! divergence. The combines are not associative and their identity is a right identity
//! only, so a kernel that folds in another order, or takes a lane's first element
//! without combining it into the identity, gives other bits.

mod common;

use common::{findings, segment_options};
use redlab_analyzer::segments;
use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{ArrayRef, DType};
use redlab_expr::custom_outputs::custom_outputs;
use redlab_expr::Reduction;

#[test]
fn custom_combines_match_the_host_in_the_simulator() {
    let plan = |dims: &[usize], axis: isize| {
        AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan")
    };
    let (short, wide, wide_words, words, tiles, columns) = (
        plan(&[3, 7], 1),
        plan(&[5, 129], 1),
        plan(&[3, 256], 1),
        plan(&[40, 32], 1),
        plan(&[2, 8195], 1),
        plan(&[70, 40], 0),
    );
    let ranges = Segments::Offsets(vec![0, 0, 5, 300, 9000])
        .ranges(9000)
        .expect("ranges");
    // Rows of 32: word_rows for 4-byte partials (f32), short_rows for 8-byte ones. Full
    // rows of 256 load as words where warps shuffle; columns take column_words for
    // 4-byte partials, column_tiles for 8-byte ones.
    let cases: [(&str, usize, Selection<'_>, &str); 7] = [
        ("3x7", 21, Selection::Axes(&short), "short_rows"),
        ("5x129", 5 * 129, Selection::Axes(&wide), "short_rows_wide"),
        (
            "3x256",
            3 * 256,
            Selection::Axes(&wide_words),
            "short_rows_wide",
        ),
        (
            "40x32",
            40 * 32,
            Selection::Axes(&words),
            "word_rows|short_rows",
        ),
        ("2x8195", 2 * 8195, Selection::Axes(&tiles), "row_tiles"),
        (
            "70x40 axis 0",
            70 * 40,
            Selection::Axes(&columns),
            "column_words|column_tiles",
        ),
        (
            "segments 0, 5, 295, 8700",
            9000,
            Selection::Ranges(&ranges),
            "row_tiles",
        ),
    ];
    let reductions = [
        Reduction::builder("x", "a ^ (b * 3)")
            .identity("0")
            .build(&[DType::I32])
            .expect("builds"),
        Reduction::builder("x * 2", "a + b * 1.5")
            .identity("-0.0")
            .build(&[DType::F32])
            .expect("builds"),
        // Two inputs packed into one buffer, mapped a word of each at a time.
        Reduction::builder("x * y", "a + b * 1.5")
            .identity("-0.0")
            .build(&[DType::F32, DType::F32])
            .expect("builds"),
    ];
    let mut failures = Vec::new();
    let mut runs = 0;
    for reduction in &reductions {
        for shuffles in [false, true] {
            for &(label, n, selection, kernel) in &cases {
                let data: Vec<_> = (0..)
                    .zip(&reduction.inputs)
                    .map(|(k, &dtype)| {
                        generate(dtype, n, Distribution::Normal, 17 + k).expect("data")
                    })
                    .collect();
                let inputs: Vec<ArrayRef<'_>> = data.iter().map(|d| d.view()).collect();
                let expected = custom_outputs(reduction, &inputs, selection).expect("host");
                let what = format!("{} {label} shuffles={shuffles}", reduction.describe());
                match segments::run_mapped(
                    reduction,
                    &inputs,
                    selection,
                    &segment_options(shuffles, 3),
                ) {
                    Ok(Some(run)) => {
                        if !kernel.split('|').any(|k| run.strategy.starts_with(k)) {
                            failures.push(format!("{what}: {}", run.strategy));
                        }
                        // Empty outputs are the device layer's to fill (the identity).
                        let wrong = (0..expected.len()).find(|&k| {
                            let empty =
                                matches!(selection, Selection::Ranges(r) if r[k].is_empty());
                            !empty && !run.values[k].same_as(&expected[k])
                        });
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
    assert_eq!(runs, 42);
}
