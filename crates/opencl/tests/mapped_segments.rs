//! User-defined maps along axes and over segments on the first OpenCL device (PoCL in
//! CI): the segment kernels map each raw element as they read it, and every output must
//! equal the host's answer, the map applied per element and then that output's own
//! canonical order (floats bit for bit, integers and selections exactly). The maps are
//! the statistics' (mean, norms, nansum, any/all, count_nonzero) over every type they
//! take, and expressions with each kind of combine; the shapes reach every segment
//! kernel: short and wide rows, word rows, row tiles with the tree, column tiles,
//! column words, a misaligned view, Fortran order, gathered axes and CSR offsets with
//! empty segments. Maps of several inputs (of one type or mixed) read them packed into
//! one buffer, over the same shapes.
//!
//! Without an OpenCL platform the test prints a visible SKIPPED line and passes, unless
//! `REDLAB_REQUIRE_OPENCL=1` (CI sets it).

mod common;

use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::{self, Selection};
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{ArrayRef, DType};
use redlab_expr::custom_outputs::custom_outputs;
use redlab_expr::{host, stats, Reduction};
use redlab_opencl::OpenClDevice;

fn device() -> Option<OpenClDevice> {
    common::device("OpenCL mapped segment tests")
}

/// Shapes (layout, axes) that reach each segment kernel.
fn axis_cases() -> Vec<(&'static str, Layout, Option<Vec<isize>>)> {
    let c = Layout::c_order;
    vec![
        ("rows 3x7", c(&[3, 7]), Some(vec![1])),
        ("word rows 300x32", c(&[300, 32]), Some(vec![1])),
        ("wide rows 11x129", c(&[11, 129]), Some(vec![1])),
        // Full rows of 128–1024 elements: where warps shuffle, short rows of words.
        ("wide rows of words 37x256", c(&[37, 256]), Some(vec![1])),
        ("wide rows of words 9x1024", c(&[9, 1024]), Some(vec![1])),
        ("rows 2x20011 (tree)", c(&[2, 20011]), Some(vec![1])),
        // Rows that end mid-tile, the shape whose integer map sums went wrong on an H200
        // (results/h200-map-bug).
        (
            "rows 33x1031 (partial tiles)",
            c(&[33, 1031]),
            Some(vec![1]),
        ),
        ("rows 4x0", c(&[4, 0]), Some(vec![1])),
        ("columns 257x33", c(&[257, 33]), Some(vec![0])),
        ("column words 1024x132", c(&[1024, 132]), Some(vec![0])),
        (
            "column words 8200x136 (partial tile, tree)",
            c(&[8200, 136]),
            Some(vec![0]),
        ),
        (
            "misaligned view 77x32",
            Layout {
                dims: vec![77, 32],
                strides: vec![32, 1],
                offset: 1,
            },
            Some(vec![1]),
        ),
        (
            "fortran 37x41 axis 1",
            Layout::fortran_order(&[37, 41]),
            Some(vec![1]),
        ),
        (
            "axes 0,2 of 3x5x7 (gathered)",
            c(&[3, 5, 7]),
            Some(vec![0, 2]),
        ),
        ("all axes 9x913", c(&[9, 913]), None),
    ]
}

/// The reductions checked: every statistic over the types it takes, and expressions.
fn reductions() -> Vec<Reduction> {
    let mut all = Vec::new();
    let stat_types: &[(DType, &[&str])] = &[
        (DType::F32, stats::NAMES),
        (DType::F64, &["mean", "norm2", "nansum", "norminf"]),
        (
            DType::I32,
            &["mean", "norm1", "count_nonzero", "any", "all", "sumsq"],
        ),
        (DType::F16, &["mean", "sumsq"]),
        (DType::BF16, &["norm2"]),
        (DType::U8, &["count_nonzero", "nansum"]),
    ];
    for (dtype, names) in stat_types {
        for name in *names {
            all.push(stats::reduction(name, *dtype).expect("statistic builds"));
        }
    }
    let (f32, f64, f16, i32) = (DType::F32, DType::F64, DType::F16, DType::I32);
    for (map, combine, types) in [
        ("x * x", "argmax", &[f32][..]),
        ("sqrt(abs(x)) + 1", "sum", &[f32]),
        ("x > 0.5", "sum", &[f32]),
        ("x * 3 - 1", "min", &[i32]),
        ("x * x", "sum", &[i32]),
        ("x + x", "sum", &[DType::U16]),
        ("x % 7", "xor", &[i32]),
        ("x * y", "sum", &[f32, f32]),
        ("x * y - z", "sum", &[f16, f32, f32]),
        ("abs(x - y)", "max", &[f64, f16]),
        ("x > y ? 1 : 0", "sum", &[i32, f32]),
        ("x * y + z", "argmin", &[f32, f64, i32]),
    ] {
        all.push(
            Reduction::builder(map, combine)
                .build(types)
                .expect("expression builds"),
        );
    }
    all
}

/// The host's answer: the map per element, then each output's canonical reduction.
fn expected(
    reduction: &Reduction,
    inputs: &[ArrayRef<'_>],
    selection: Selection<'_>,
) -> Vec<redlab_core::Value> {
    let mapped = host::map_all(reduction, inputs).expect("maps");
    let problem = reduction.problem().expect("a built-in combine");
    segmented::reference(problem, mapped.view(), selection).expect("reference")
}

#[test]
fn mapped_outputs_match_the_host_bit_for_bit() {
    let Some(device) = device() else { return };
    let mut failures = Vec::new();
    let mut checked = 0;
    for reduction in reductions() {
        let label = reduction.describe();
        // One array per input, each of its own type and seed.
        let inputs = |count: usize, seed: u64| {
            let arrays: Vec<_> = reduction
                .inputs
                .iter()
                .enumerate()
                .map(|(k, &dtype)| {
                    generate(dtype, count, Distribution::Normal, seed + k as u64).expect("data")
                })
                .collect();
            arrays
        };
        let mut check =
            |shape: &str, arrays: &[redlab_core::HostArray], selection: Selection<'_>| {
                let views: Vec<ArrayRef<'_>> = arrays.iter().map(|a| a.view()).collect();
                let want = expected(&reduction, &views, selection);
                match device.compute_mapped_outputs(&reduction, &views, selection) {
                    Ok((got, _)) if got.len() != want.len() => failures.push(format!(
                        "{label} {shape}: {} outputs, want {}",
                        got.len(),
                        want.len()
                    )),
                    Ok((got, _)) => {
                        if let Some(k) = (0..got.len()).find(|&k| !got[k].same_as(&want[k])) {
                            failures.push(format!(
                                "{label} {shape}: output {k}: {} vs {}",
                                got[k], want[k]
                            ));
                        }
                    }
                    Err(e) => failures.push(format!("{label} {shape}: {e}")),
                }
                checked += 1;
            };
        for (shape, layout, axes) in axis_cases() {
            let count = layout.offset + layout.dims.iter().product::<usize>();
            let arrays = inputs(count, 7 + count as u64);
            let plan = AxisPlan::new(layout, axes.as_deref(), false).expect("plan");
            check(shape, &arrays, Selection::Axes(&plan));
        }
        let n = 20_011;
        let arrays = inputs(n, 41);
        for (shape, segments) in [
            (
                "offsets with empty and long segments",
                Segments::Offsets(vec![0, 0, 5, 5, 300, 9000, 9001, n as u64 - 17]),
            ),
            ("fixed 8193", Segments::Fixed(8193)),
        ] {
            let ranges = segments.ranges(n).expect("ranges");
            check(shape, &arrays, Selection::Ranges(&ranges));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} mapped cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn maps_the_kernels_cannot_take_are_refused_with_a_reason() {
    let Some(device) = device() else { return };
    let data = generate(DType::F32, 64, Distribution::Normal, 3).expect("data");
    let ranges = [0..32, 32..64];
    let shorter = generate(DType::F32, 63, Distribution::Normal, 4).expect("data");
    let build = |map: &str, combine: &str, types: &[DType]| {
        let builder = Reduction::builder(map, combine);
        let builder = if combine.contains('a') {
            builder.identity("0")
        } else {
            builder
        };
        builder.build(types).expect("builds")
    };
    let (f32, f64) = (DType::F32, DType::F64);
    let one = [data.view()];
    let two = [data.view(), data.view()];
    let unequal = [data.view(), shorter.view()];
    for (reduction, inputs, says) in [
        (build("x * i", "sum", &[f32]), &one[..], "index"),
        (build("x * y * i", "sum", &[f32, f32]), &two[..], "index"),
        (build("x * i", "a + b", &[f32]), &one[..], "index"),
        (build("x", "sum", &[f64]), &one[..], "the input holds f32"),
        (
            build("x * y", "sum", &[f32, f64]),
            &two[..],
            "built for f64",
        ),
        (
            build("x * y", "sum", &[f32, f32]),
            &unequal[..],
            "equal lengths",
        ),
        (build("x * y", "sum", &[f32, f32]), &one[..], "reads 2"),
    ] {
        let err = device
            .compute_mapped_outputs(&reduction, inputs, Selection::Ranges(&ranges))
            .expect_err("refused");
        assert!(err.to_string().contains(says), "{err}");
    }
}

/// Whole rows (a work-group per output of a few tiles, no tree) under maps: order-free
/// combines, and float sums, whose canonical order the tiles' binary counter must keep
/// (one input read raw, two packed); each row is checked against the 1-D reference of
/// that row alone.
#[test]
fn whole_rows_under_maps_match_the_reference_of_each_row() {
    let Some(device) = device() else { return };
    let (f32, i32) = (DType::F32, DType::I32);
    let reductions = [
        Reduction::builder("x * x", "argmax")
            .build(&[f32])
            .expect("builds"),
        Reduction::builder("x * y", "sum")
            .build(&[f32, f32])
            .expect("builds"),
        Reduction::builder("x * 3 - 1", "min")
            .build(&[i32])
            .expect("builds"),
        Reduction::builder("sqrt(abs(x)) + 1", "sum")
            .build(&[f32])
            .expect("builds"),
    ];
    let (rows, len) = (1024usize, 8192 + 3);
    let mut failures = Vec::new();
    for reduction in &reductions {
        let label = reduction.describe();
        let arrays: Vec<_> = reduction
            .inputs
            .iter()
            .enumerate()
            .map(|(k, &dtype)| {
                generate(dtype, rows * len, Distribution::Normal, 3 + k as u64).expect("data")
            })
            .collect();
        let views: Vec<ArrayRef<'_>> = arrays.iter().map(|a| a.view()).collect();
        let plan = AxisPlan::new(Layout::c_order(&[rows, len]), Some(&[1]), false).expect("plan");
        let got = match device.compute_mapped_outputs(reduction, &views, Selection::Axes(&plan)) {
            Ok((got, _)) => got,
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        for (k, value) in got.iter().enumerate().take(rows) {
            let row_views: Vec<ArrayRef<'_>> = views
                .iter()
                .map(|v| v.slice(k * len, (k + 1) * len))
                .collect();
            let want = redlab_expr::oracle::reduce(reduction, &row_views).expect("reference");
            if !value.same_as(&want) {
                failures.push(format!("{label}: row {k}: {value} vs {want}"));
                break;
            }
        }
        if got.len() != rows {
            failures.push(format!("{label}: {} outputs, want {rows}", got.len()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Custom combines (an expression in `a` and `b`) compiled into the segment kernels, over
/// the shapes that reach each of them and whole rows (1030 rows of 2 tiles), against the
/// host's fold of each output ([`custom_outputs`], held to the element-by-element
/// reference in redlab-expr's tests) bit for bit. Two of the combines are not associative
/// and have a right identity only (`combine(identity, x) != x`), so a kernel that folded
/// in another order or took a lane's first element without combining it into the
/// identity gives other bits.
#[test]
fn custom_combines_match_the_host_bit_for_bit() {
    let Some(device) = device() else { return };
    let (f32, f64, i32) = (DType::F32, DType::F64, DType::I32);
    let custom = |map: &str, combine: &str, identity: &str, types: &[DType]| {
        Reduction::builder(map, combine)
            .identity(identity)
            .build(types)
            .expect("the combine builds")
    };
    let reductions = [
        custom("x", "a ^ (b * 3)", "0", &[i32]),
        custom("x * 2", "a + b * 1.5", "-0.0", &[f32]),
        custom("abs(x - y)", "max(a, b)", "-inf", &[f64, f32]),
        custom("x * y", "a + b", "-0.0", &[f32, f32]),
        // Mapped words of several inputs, with a combine whose identity is on the right
        // only.
        custom("x * y", "a + b * 1.5", "-0.0", &[f32, f32]),
        custom("x & 255", "a + b", "0", &[DType::U32]),
        // Raw words of 2-byte elements into an f32 accumulator (MAP_BITS 2).
        custom("x", "a + b * 1.5", "-0.0", &[DType::F16]),
    ];
    let mut cases = axis_cases();
    cases.push((
        "whole rows 1030x8193",
        Layout::c_order(&[1030, 8193]),
        Some(vec![1]),
    ));
    let mut failures = Vec::new();
    let mut checked = 0;
    for reduction in &reductions {
        let label = reduction.describe();
        let inputs = |count: usize, seed: u64| -> Vec<redlab_core::HostArray> {
            reduction
                .inputs
                .iter()
                .enumerate()
                .map(|(k, &dtype)| {
                    generate(dtype, count, Distribution::Normal, seed + k as u64).expect("data")
                })
                .collect()
        };
        let mut check =
            |shape: &str, arrays: &[redlab_core::HostArray], selection: Selection<'_>| {
                let views: Vec<ArrayRef<'_>> = arrays.iter().map(|a| a.view()).collect();
                let want = custom_outputs(reduction, &views, selection).expect("host");
                match device.compute_mapped_outputs(reduction, &views, selection) {
                    Ok((got, _)) if got.len() != want.len() => failures.push(format!(
                        "{label} {shape}: {} outputs, want {}",
                        got.len(),
                        want.len()
                    )),
                    Ok((got, _)) => {
                        // An empty output's value is the identity, which the device layer
                        // puts there; the kernels write nothing for it.
                        let empty = |k: usize| match selection {
                            Selection::Axes(plan) => plan.segment_len() == 0,
                            Selection::Ranges(ranges) => ranges[k].is_empty(),
                        };
                        if let Some(k) =
                            (0..got.len()).find(|&k| !empty(k) && !got[k].same_as(&want[k]))
                        {
                            failures.push(format!(
                                "{label} {shape}: output {k}: {} vs {}",
                                got[k], want[k]
                            ));
                        }
                    }
                    Err(e) => failures.push(format!("{label} {shape}: {e}")),
                }
                checked += 1;
            };
        for (shape, layout, axes) in &cases {
            let count = layout.offset + layout.dims.iter().product::<usize>();
            let arrays = inputs(count, 19 + count as u64);
            let plan = AxisPlan::new(layout.clone(), axes.as_deref(), false).expect("plan");
            check(shape, &arrays, Selection::Axes(&plan));
        }
        let n = 20_011;
        let arrays = inputs(n, 43);
        let ranges = Segments::Offsets(vec![0, 0, 5, 5, 300, 9000, 9001, n as u64 - 17])
            .ranges(n)
            .expect("ranges");
        check(
            "offsets with empty segments",
            &arrays,
            Selection::Ranges(&ranges),
        );
    }
    assert!(checked >= 5 * 17, "{checked} cases");
    assert!(
        failures.is_empty(),
        "{} of {checked} custom cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
