//! Custom combines along axes and over segments on the host: every output must give the
//! bits of the scalar reference ([`oracle::reduce`]) over that output's elements alone,
//! as a 1-D array of their own. The combines include ones that are not associative and
//! whose identity is a right identity only (`a ^ (b * 3)`, `a + b * 1.5`), so an output
//! folded in any other order, or a lane started from its first element instead of
//! `combine(identity, x)`, gives other bits. Shapes reach short and long rows (tiles and
//! the tree), columns, gathered axes and segments with empty ones.

use redlab_core::generate::{generate, Distribution};
use redlab_core::segmented::Selection;
use redlab_core::shape::{AxisPlan, Layout, Segments};
use redlab_core::{ArrayRef, DType, HostArray, Value};
use redlab_expr::custom_outputs::custom_outputs;
use redlab_expr::{oracle, Reduction};

fn custom(
    map: &str,
    combine: &str,
    identity: &str,
    acc: Option<DType>,
    types: &[DType],
) -> Reduction {
    let builder = Reduction::builder(map, combine).identity(identity);
    let builder = match acc {
        Some(acc) => builder.acc(acc),
        None => builder,
    };
    builder.build(types).expect("the combine builds")
}

fn reductions() -> Vec<Reduction> {
    let (f32, f64, i32) = (DType::F32, DType::F64, DType::I32);
    vec![
        custom("x", "a ^ (b * 3)", "0", Some(DType::I64), &[i32]),
        custom("x * 2", "a + b * 1.5", "-0.0", None, &[f32]),
        custom("abs(x - y)", "max(a, b)", "-inf", None, &[f64, f32]),
        custom("x & 255", "a + b", "0", Some(DType::U64), &[DType::U32]),
        custom("x", "a + b", "-0.0", None, &[f32]),
        // An f64 input combined where it is, through a select of several steps.
        custom("x", "abs(a) > abs(b) ? a : b", "0", None, &[f64]),
    ]
}

/// The scalar reference over output `k`'s elements, each input gathered on its own.
fn alone(reduction: &Reduction, inputs: &[HostArray], selection: Selection<'_>, k: usize) -> Value {
    // Each input's elements copied into 8-byte words, so any type is aligned.
    let own: Vec<(DType, Vec<u64>, usize)> = inputs
        .iter()
        .map(|input| {
            let mut scratch = Vec::new();
            let view = selection.view(input.view(), k, &mut scratch).expect("view");
            let mut words = vec![0u64; view.bytes().len().div_ceil(8)];
            bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..view.bytes().len()]
                .copy_from_slice(view.bytes());
            (view.dtype(), words, view.bytes().len())
        })
        .collect();
    let views: Vec<ArrayRef<'_>> = own
        .iter()
        .map(|(dtype, words, len)| {
            ArrayRef::from_bytes(*dtype, &bytemuck::cast_slice::<u64, u8>(words)[..*len])
                .expect("view")
        })
        .collect();
    oracle::reduce(reduction, &views).expect("reference")
}

#[test]
fn every_output_is_the_reference_of_its_own_elements() {
    let c = Layout::c_order;
    let axis_cases = vec![
        ("rows 3x7", c(&[3, 7]), Some(vec![1])),
        ("rows 300x32", c(&[300, 32]), Some(vec![1])),
        ("rows 11x1000", c(&[11, 1000]), Some(vec![1])),
        ("rows 3x20011 (tiles, tree)", c(&[3, 20011]), Some(vec![1])),
        ("rows 4x0", c(&[4, 0]), Some(vec![1])),
        // Short rows back to back fold in batches of 1024 rows of 16: three batches, the
        // last one partial; rows of one element; two reduced axes that make one run.
        ("rows 2500x16", c(&[2500, 16]), Some(vec![1])),
        ("rows 9x1", c(&[9, 1]), Some(vec![1])),
        ("axes 1,2 of 6x4x8", c(&[6, 4, 8]), Some(vec![1, 2])),
        // Views: rows back to back from an offset, and rows with a gap between them.
        (
            "rows of a view 50x16 from 5",
            Layout {
                dims: vec![50, 16],
                strides: vec![16, 1],
                offset: 5,
            },
            Some(vec![1]),
        ),
        (
            "rows of a view 40x16 with gaps",
            Layout {
                dims: vec![40, 16],
                strides: vec![20, 1],
                offset: 2,
            },
            Some(vec![1]),
        ),
        ("columns 257x33", c(&[257, 33]), Some(vec![0])),
        // Columns fold side by side in blocks of 64 outputs: a block's partial rows of
        // lanes, a last short block, tiles joined by the tree, a view whose rows are
        // longer than its columns, and a middle axis.
        ("columns 1500x130", c(&[1500, 130]), Some(vec![0])),
        (
            "columns 20011x3 (tiles, tree)",
            c(&[20011, 3]),
            Some(vec![0]),
        ),
        (
            "columns of a view 1030x70",
            Layout {
                dims: vec![1030, 70],
                strides: vec![75, 1],
                offset: 3,
            },
            Some(vec![0]),
        ),
        ("axis 1 of 4x300x9", c(&[4, 300, 9]), Some(vec![1])),
        (
            "fortran 37x41",
            Layout::fortran_order(&[37, 41]),
            Some(vec![1]),
        ),
        ("axes 0,2 of 3x5x7", c(&[3, 5, 7]), Some(vec![0, 2])),
        ("all axes 9x913", c(&[9, 913]), None),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for reduction in reductions() {
        let label = reduction.describe();
        let arrays = |n: usize, seed: u64| -> Vec<HostArray> {
            reduction
                .inputs
                .iter()
                .enumerate()
                .map(|(k, &dtype)| {
                    generate(dtype, n, Distribution::Normal, seed + k as u64).expect("data")
                })
                .collect()
        };
        let mut check = |shape: &str, inputs: &[HostArray], selection: Selection<'_>| {
            let views: Vec<ArrayRef<'_>> = inputs.iter().map(|a| a.view()).collect();
            let got = custom_outputs(&reduction, &views, selection).expect("reduces");
            assert_eq!(got.len(), selection.outputs(), "{label} {shape}");
            for (k, value) in got.iter().enumerate() {
                let want = alone(&reduction, inputs, selection, k);
                if !value.same_as(&want) {
                    failures.push(format!("{label} {shape}: output {k}: {value} vs {want}"));
                    break;
                }
            }
            checked += 1;
        };
        for (shape, layout, axes) in &axis_cases {
            let n = layout.offset
                + layout
                    .dims
                    .iter()
                    .zip(&layout.strides)
                    .map(|(&d, &s)| (d.max(1) - 1) * s as usize)
                    .sum::<usize>()
                + 1;
            let inputs = arrays(n, 11 + n as u64);
            let plan = AxisPlan::new(layout.clone(), axes.as_deref(), false).expect("plan");
            check(shape, &inputs, Selection::Axes(&plan));
        }
        let n = 20_011;
        let inputs = arrays(n, 5);
        for (shape, segments) in [
            (
                "offsets with empty segments",
                Segments::Offsets(vec![0, 0, 5, 5, 300, 9000, 9001, n as u64 - 17]),
            ),
            ("fixed 8193", Segments::Fixed(8193)),
            ("fixed 16 (short, back to back)", Segments::Fixed(16)),
        ] {
            // Fixed segments cover a whole number of them, so the short ones are even.
            let covered = match segments {
                Segments::Fixed(len) => n / len * len,
                _ => n,
            };
            let ranges = segments.ranges(covered).expect("ranges");
            check(shape, &inputs, Selection::Ranges(&ranges));
        }
    }
    assert!(checked > 40, "{checked} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_outputs_of_a_built_in_combine_are_refused() {
    let x = generate(DType::F32, 10, Distribution::Normal, 1).expect("data");
    let sum = Reduction::builder("x", "sum")
        .build(&[DType::F32])
        .expect("builds");
    let ranges = [0..4, 4..10];
    let err = custom_outputs(&sum, &[x.view()], Selection::Ranges(&ranges)).expect_err("refused");
    assert!(err.to_string().contains("not a custom combine"), "{err}");
}

#[test]
fn maps_that_read_the_index_see_it_in_the_whole_inputs() {
    // `i` is an element's flat index in the inputs, not its place in its output, so these
    // outputs are not 1-D reductions of their elements; the element-by-element reference
    // over the same selection holds them.
    let reduction = custom("(x + i) % 7", "a ^ (b * 3)", "0", None, &[DType::I32]);
    let c = Layout::c_order;
    for (layout, axes) in [
        (c(&[5, 20011]), vec![1]),
        (c(&[301, 29]), vec![0]),
        (c(&[3, 5, 7]), vec![0, 2]),
    ] {
        let n = layout.dims.iter().product::<usize>();
        let x = generate(DType::I32, n, Distribution::Normal, 3).expect("data");
        let plan = AxisPlan::new(layout, Some(&axes), false).expect("plan");
        let selection = Selection::Axes(&plan);
        let got = custom_outputs(&reduction, &[x.view()], selection).expect("reduces");
        let want = oracle::custom_outputs(&reduction, &[x.view()], selection).expect("reference");
        assert_eq!(got.len(), want.len());
        for (k, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(a.same_as(b), "{axes:?} output {k}: {a} vs {b}");
        }
    }
}
