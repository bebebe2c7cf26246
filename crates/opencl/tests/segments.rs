//! Axis and segmented reductions on the first OpenCL device (PoCL in CI) against the
//! host reference of each output's own sequence: floats bit for bit (the canonical order
//! per output), integers and selections exactly, empty outputs as the reference says;
//! the typed arrays decoded straight from the device hold the reference's values.
//! Every kernel of `segments.cl` is reached: short rows, row tiles with and without the
//! tree, column tiles and column words (words of 4 outputs of 2-, 4- or 8-byte elements,
//! whole and partial tiles, the tree), two-level and tabled output starts,
//! CSR offsets with empty and multi-tile segments, the gathered fallback, and whole rows
//! (a work-group per output of a few tiles).
//!
//! Without an OpenCL platform the test prints a visible SKIPPED line and passes, unless
//! `REDLAB_REQUIRE_OPENCL=1` (CI sets it).

mod common;

use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::{self, Selection};
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{DType, Op, Packed, Problem};
use redlab_kernels::segments::{SegmentJob, Strategy};
use redlab_opencl::OpenClDevice;

fn device() -> Option<OpenClDevice> {
    common::device("OpenCL segment tests")
}

/// A shape, its layout and the axes reduced.
fn axis_cases() -> Vec<(&'static str, Layout, Option<Vec<isize>>)> {
    let c = Layout::c_order;
    let f = Layout::fortran_order;
    vec![
        ("rows 1x1", c(&[1, 1]), Some(vec![1])),
        ("rows 3x7", c(&[3, 7]), Some(vec![1])),
        ("rows 5x257", c(&[5, 257]), Some(vec![1])),
        ("word rows 300x32", c(&[300, 32]), Some(vec![1])),
        ("word rows 1001x8", c(&[1001, 8]), Some(vec![1])),
        ("word rows 131x64", c(&[131, 64]), Some(vec![1])),
        (
            "word rows middle axis 3x43x16",
            c(&[3, 43, 16]),
            Some(vec![2]),
        ),
        (
            "word rows, misaligned view 77x32",
            Layout {
                dims: vec![77, 32],
                strides: vec![32, 1],
                offset: 1,
            },
            Some(vec![1]),
        ),
        ("rows 7x1000", c(&[7, 1000]), Some(vec![1])),
        ("rows 11x128 (full wide rows)", c(&[11, 128]), Some(vec![1])),
        ("rows 5x1024 (full wide rows)", c(&[5, 1024]), Some(vec![1])),
        ("rows 3x1025", c(&[3, 1025]), Some(vec![1])),
        ("rows 3x8193", c(&[3, 8193]), Some(vec![-1])),
        ("rows 2x20011 (tree)", c(&[2, 20011]), Some(vec![1])),
        // Order-free operators read whole tiles whose first element is word-aligned as
        // words (row_words.h), the others one element at a time.
        (
            "row words 3x16388 (aligned whole tiles, partial tiles, tree)",
            c(&[3, 16388]),
            Some(vec![1]),
        ),
        (
            "row words, misaligned view 2x16384",
            Layout {
                dims: vec![2, 16384],
                strides: vec![16384, 1],
                offset: 2,
            },
            Some(vec![1]),
        ),
        ("rows 4x0", c(&[4, 0]), Some(vec![1])),
        ("columns 257x33", c(&[257, 33]), Some(vec![0])),
        ("columns 5x40", c(&[5, 40]), Some(vec![0])),
        ("columns 1025x37", c(&[1025, 37]), Some(vec![0])),
        ("columns 20011x33 (tree)", c(&[20011, 33]), Some(vec![0])),
        (
            "column words 300x132 (partial tile)",
            c(&[300, 132]),
            Some(vec![0]),
        ),
        (
            "column words 8200x136 (whole and partial tiles, tree)",
            c(&[8200, 136]),
            Some(vec![0]),
        ),
        (
            "column words 1024x132 (a tile of one untested row)",
            c(&[1024, 132]),
            Some(vec![0]),
        ),
        ("column words 2048x128", c(&[2048, 128]), Some(vec![0])),
        ("column words 4096x128", c(&[4096, 128]), Some(vec![0])),
        (
            "column words 9216x128 (a whole tile, then one of 1024 rows)",
            c(&[9216, 128]),
            Some(vec![0]),
        ),
        (
            "column words middle axis 3x40x132",
            c(&[3, 40, 132]),
            Some(vec![1]),
        ),
        // Fewer than 128 columns: 8 or 16 words side by side, 4 or 2 lane classes per warp.
        (
            "narrow column words 9000x32 (8 words, tree)",
            c(&[9000, 32]),
            Some(vec![0]),
        ),
        (
            "narrow column words 1024x12 (3 of 4 words)",
            c(&[1024, 12]),
            Some(vec![0]),
        ),
        (
            "narrow column words 300x100 (16 words, two blocks)",
            c(&[300, 100]),
            Some(vec![0]),
        ),
        (
            "narrow column words 8192x64 (a whole tile)",
            c(&[8192, 64]),
            Some(vec![0]),
        ),
        (
            "narrow column words 20011x8 (2 words, 4 tiles per group, one past the end)",
            c(&[20011, 8]),
            Some(vec![0]),
        ),
        (
            "narrow column words 17000x16 (4 words, 2 tiles per group, one past the end)",
            c(&[17000, 16]),
            Some(vec![0]),
        ),
        ("middle axis 3x31x65", c(&[3, 31, 65]), Some(vec![1])),
        (
            "axes 0,2 of 3x5x7 (gathered)",
            c(&[3, 5, 7]),
            Some(vec![0, 2]),
        ),
        ("all axes 9x913", c(&[9, 913]), None),
        ("fortran 37x41 axis 0", f(&[37, 41]), Some(vec![0])),
        ("fortran 37x41 axis 1", f(&[37, 41]), Some(vec![1])),
    ]
}

fn segment_cases(n: usize) -> Vec<(&'static str, Segments)> {
    vec![
        (
            "offsets with empty and long segments",
            Segments::Offsets(vec![0, 0, 5, 5, 300, 9000, 9001, n as u64 - 17]),
        ),
        ("fixed 100", Segments::Fixed(100)),
        ("fixed 8193", Segments::Fixed(8193)),
    ]
}

fn problems() -> Vec<Problem> {
    let mut all = Vec::new();
    for op in [
        Op::Sum,
        Op::Prod,
        Op::Min,
        Op::Max,
        Op::ArgMin,
        Op::ArgMax,
        Op::Xor,
    ] {
        for dtype in [DType::F32, DType::I32] {
            if let Ok(p) = Problem::new(op, dtype, None) {
                all.push(p);
            }
        }
    }
    for (op, dtype) in [
        (Op::Sum, DType::F64),
        (Op::Sum, DType::F16),
        (Op::Sum, DType::BF16),
        (Op::Max, DType::F64),
        (Op::Min, DType::I64),
        (Op::ArgMax, DType::F64),
        (Op::Sum, DType::I64),
        (Op::Xor, DType::U64),
        (Op::ArgMax, DType::F16),
        (Op::Max, DType::BF16),
        (Op::Min, DType::I16),
        (Op::Xor, DType::U16),
        (Op::Sum, DType::U8),
    ] {
        all.push(Problem::new(op, dtype, None).expect("problem"));
    }
    all
}

#[test]
fn axis_and_segment_outputs_match_the_reference() {
    let Some(device) = device() else { return };
    let mut failures = Vec::new();
    let mut strategies = Vec::new();
    for problem in problems() {
        let dist = if problem.op == Op::Prod {
            Distribution::Ints
        } else {
            Distribution::Normal
        };
        let mut check = |label: &str, data: redlab_core::ArrayRef<'_>, selection: Selection<'_>| {
            if let Some(job) = SegmentJob::new(selection) {
                strategies.push(job.for_problem(&problem).strategy());
            }
            let expected = segmented::reference(&problem, data, selection).expect("reference");
            match device.compute_outputs(&problem, data, selection) {
                Ok((values, _)) => {
                    for (k, (got, want)) in values.iter().zip(&expected).enumerate() {
                        if !got.same_as(want) {
                            failures
                                .push(format!("{problem} {label}: output {k}: {got} vs {want}"));
                            break;
                        }
                    }
                    if values.len() != expected.len() {
                        failures.push(format!(
                            "{problem} {label}: {} outputs, want {}",
                            values.len(),
                            expected.len()
                        ));
                    }
                }
                Err(e) => failures.push(format!("{problem} {label}: {e}")),
            }
            // The typed array: the reference's values packed, or the same refusal where
            // an output without elements has no value.
            let packed = device.compute_outputs_packed(&problem, data, selection);
            match (packed, Packed::of_values(&problem, &expected)) {
                (Ok((got, _)), Ok(want)) if got == want => {}
                (Err(_), Err(_)) => {}
                (got, want) => failures.push(format!(
                    "{problem} {label}: packed {:?} vs {:?}",
                    got.map(|(p, _)| p.dtype),
                    want.map(|p| p.dtype)
                )),
            }
        };
        for (label, layout, axes) in axis_cases() {
            // A view with an offset needs that many elements before its first.
            let count = layout.offset + layout.dims.iter().product::<usize>();
            let data = generate(problem.dtype, count, dist, 5 + count as u64).expect("data");
            let plan = AxisPlan::new(layout, axes.as_deref(), false).expect("plan");
            check(label, data.view(), Selection::Axes(&plan));
        }
        let n = 30_011;
        let data = generate(problem.dtype, n, dist, 99).expect("data");
        for (label, segments) in segment_cases(n) {
            let ranges = segments.ranges(n).expect("ranges");
            check(label, data.view(), Selection::Ranges(&ranges));
        }
        // Fixed segments that divide the array: one length, the rows' formula (word_rows
        // for 4-byte elements).
        let n = 32 * 937;
        let data = generate(problem.dtype, n, dist, 98).expect("data");
        let ranges = Segments::Fixed(32).ranges(n).expect("ranges");
        check(
            "fixed 32, all full",
            data.view(),
            Selection::Ranges(&ranges),
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for wanted in [
        Strategy::RowTiles,
        Strategy::ColumnTiles,
        Strategy::ColumnWords,
        Strategy::ShortRows { width: 8 },
        Strategy::WordRows { span: 32 },
        Strategy::WordRows { span: 16 },
        Strategy::WordRows { span: 8 },
        Strategy::WordRows { span: 64 },
    ] {
        assert!(strategies.contains(&wanted), "no case ran {wanted:?}");
    }
}

/// Values with many ties (small integers) and NaNs of both signs planted in some rows:
/// argmin/argmax must keep the first of equal values and the first NaN, along rows that
/// take each kernel path (short rows, wide short rows, whole and partial row tiles, the
/// tree over tiles, column lanes).
fn tied_values_with_nans<T: Copy>(
    count: usize,
    row: usize,
    seed: u64,
    from_int: impl Fn(f64) -> T,
    nans: [T; 2],
) -> Vec<T> {
    let ints = generate(DType::I32, count, Distribution::Ints, seed).expect("data");
    let ints = ints.view().typed::<i32>().expect("i32").to_vec();
    let mut values: Vec<T> = ints.iter().map(|&v| from_int(v as f64)).collect();
    // Row r gets NaNs where r % 3 says: none, one negative NaN late in the row, or a
    // positive NaN early and a negative one later.
    for (r, chunk) in values.chunks_mut(row).enumerate() {
        let len = chunk.len();
        match r % 3 {
            1 => chunk[len - 1 - len / 5] = nans[1],
            2 => {
                chunk[len / 3] = nans[0];
                chunk[len - 1] = nans[1];
            }
            _ => {}
        }
    }
    values
}

#[test]
fn selections_keep_the_first_of_ties_and_the_first_nan() {
    let Some(device) = device() else { return };
    // (shape, axis): rows along axis 1 (rows of 8, 32 and 64 take word_rows for 4-byte
    // types), columns along axis 0 (NaNs are planted per chunk of the flat array, so in
    // some columns only; 128 or more side by side take column_words).
    let shapes: [(&[usize], isize); 15] = [
        (&[6, 20], 1),
        (&[30, 32], 1),
        (&[12, 8], 1),
        (&[6, 1000], 1),
        (&[6, 1024], 1),
        (&[9, 64], 1),
        (&[6, 8192], 1),
        (&[6, 8193], 1),
        (&[3, 30011], 1),
        (&[4, 3 * 8192], 1),
        // Whole rows: a work-group per row of a whole tile and 3 elements.
        (&[1024, 8195], 1),
        (&[9000, 40], 0),
        (&[20011, 33], 0),
        // column_words: each class scanned by key, then joined across classes and tiles.
        (&[300, 256], 0),
        (&[9000, 132], 0),
    ];
    let mut failures = Vec::new();
    for (dims, axis) in shapes {
        let (count, row) = (dims.iter().product::<usize>(), dims[1]);
        let f32s = tied_values_with_nans(count, row, 7, |v| v as f32, [f32::NAN, -f32::NAN]);
        let f64s = tied_values_with_nans(count, row, 8, |v| v, [f64::NAN, -f64::NAN]);
        let i32s = tied_values_with_nans(count, row, 9, |v| v as i32, [7, -7]);
        let plan = AxisPlan::new(Layout::c_order(dims), Some(&[axis]), false).expect("plan");
        for op in [Op::ArgMin, Op::ArgMax] {
            for data in [
                redlab_core::ArrayRef::from_slice(&f32s),
                redlab_core::ArrayRef::from_slice(&f64s),
                redlab_core::ArrayRef::from_slice(&i32s),
            ] {
                let problem = Problem::new(op, data.dtype(), None).expect("problem");
                let selection = Selection::Axes(&plan);
                let expected = segmented::reference(&problem, data, selection).expect("reference");
                match device.compute_outputs(&problem, data, selection) {
                    Ok((values, _)) if values.len() == expected.len() => {
                        for (k, (got, want)) in values.iter().zip(&expected).enumerate() {
                            if !got.same_as(want) {
                                failures
                                    .push(format!("{problem} {dims:?}: row {k}: {got} vs {want}"));
                            }
                        }
                    }
                    Ok((values, _)) => failures.push(format!(
                        "{problem} {dims:?}: {} outputs, want {}",
                        values.len(),
                        expected.len()
                    )),
                    Err(e) => failures.push(format!("{problem} {dims:?}: {e}")),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Whole rows (`Strategy::RowWhole`): a work-group per output walking all of its tiles,
/// for many outputs of 2 to 4 tiles. Rows of a whole tile and one element (off the word
/// grid in 3 rows of 4), rows of 3 whole tiles and a partial one, and CSR segments of 0
/// to 29 000 elements. Order-free operators fold the row's lanes together; float sums and
/// products join canonical tile results on the kernel's binary counter, bit for bit.
#[test]
fn whole_rows_match_the_reference() {
    let Some(device) = device() else { return };
    let mut problems: Vec<Problem> = [Op::Sum, Op::Min, Op::Max, Op::Xor, Op::ArgMin, Op::ArgMax]
        .into_iter()
        .map(|op| Problem::new(op, DType::I32, None).expect("problem"))
        .collect();
    for (op, dtype) in [
        (Op::ArgMax, DType::F32),
        (Op::Min, DType::F32),
        (Op::Sum, DType::F32),
        (Op::Prod, DType::F32),
        (Op::Sum, DType::F64),
        (Op::Sum, DType::F16),
        (Op::ArgMin, DType::F16),
        (Op::Max, DType::I16),
        (Op::Sum, DType::U8),
        (Op::Max, DType::F64),
        (Op::ArgMax, DType::I64),
    ] {
        problems.push(Problem::new(op, dtype, None).expect("problem"));
    }
    let mut ranges = Vec::new();
    let mut at = 0;
    for k in 0..1030usize {
        let len = if k % 9 == 4 { 0 } else { (k * 7919) % 29_000 };
        ranges.push(at..at + len);
        at += len;
    }
    let n = at;
    let mut failures = Vec::new();
    for problem in problems {
        let mut check = |label: &str, data: redlab_core::ArrayRef<'_>, selection: Selection<'_>| {
            let job = SegmentJob::new(selection)
                .expect("job")
                .for_problem(&problem);
            if job.strategy() != Strategy::RowWhole {
                failures.push(format!("{problem} {label}: {:?}", job.strategy()));
            }
            let expected = segmented::reference(&problem, data, selection).expect("reference");
            match device.compute_outputs(&problem, data, selection) {
                Ok((values, _)) if values.len() == expected.len() => {
                    let wrong = values
                        .iter()
                        .zip(&expected)
                        .position(|(g, w)| !g.same_as(w));
                    if let Some(k) = wrong {
                        failures.push(format!(
                            "{problem} {label}: output {k}: {} vs {}",
                            values[k], expected[k]
                        ));
                    }
                }
                Ok((values, _)) => failures.push(format!(
                    "{problem} {label}: {} outputs, want {}",
                    values.len(),
                    expected.len()
                )),
                Err(e) => failures.push(format!("{problem} {label}: {e}")),
            }
        };
        for dims in [[1024usize, 8193], [1024, 3 * 8192 + 5]] {
            let count = dims[0] * dims[1];
            let data =
                generate(problem.dtype, count, Distribution::Normal, dims[1] as u64).expect("data");
            let plan = AxisPlan::new(Layout::c_order(&dims), Some(&[1]), false).expect("plan");
            check(&format!("{dims:?}"), data.view(), Selection::Axes(&plan));
        }
        let data = generate(problem.dtype, n, Distribution::Normal, 77).expect("data");
        check("segments", data.view(), Selection::Ranges(&ranges));
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
