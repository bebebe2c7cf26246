//! A group of devices (`cpu:0,0`, `opencl:0,0` here; `cuda:0,1` on a GPU machine) gives
//! the one-device result bit for bit: floats in the canonical order, integers and
//! selections exactly, argmin/argmax with global indices, for every operator on sizes
//! around tile and subtree boundaries; arrays made on the devices themselves (`hashed`)
//! give the host's bits too; axis and segment reductions split by outputs, and
//! user-defined reductions (maps reading the index, custom combines too) split by
//! subtrees, and statistics split by outputs, give the one device's bits.

use redlab::generate::{generate, Distribution};
use redlab::{DType, Device, Op, Problem, Statistic};

fn groups() -> Vec<&'static str> {
    let mut g = vec!["cpu:0,0", "cpu:0,0,0"];
    let required = std::env::var("REDLAB_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    match Device::open("opencl:0", None) {
        Ok(_) => g.push("opencl:0,0,0"),
        Err(e) => {
            assert!(
                !required,
                "REDLAB_REQUIRE_OPENCL=1 but OpenCL is not usable: {e}"
            );
            eprintln!("SKIPPED: the OpenCL group ({e})");
        }
    }
    g
}

#[test]
fn groups_of_devices_give_the_one_device_bits() {
    let cpu = Device::open("cpu", None).expect("cpu");
    for name in groups() {
        let group = Device::open(name, None).expect("group opens");
        assert!(group.info().details.iter().any(|(k, _)| k == "members"));
        for dtype in [DType::F32, DType::F64, DType::I32, DType::U8] {
            for n in [0, 1, 8191, 8193, 3 * 65_536 + 17, 1 << 20] {
                let data = generate(dtype, n, Distribution::Normal, 3).expect("data");
                for op in Op::ALL {
                    let Ok(problem) = Problem::new(op, dtype, None) else {
                        continue;
                    };
                    let want = cpu.reduce(&problem, data.view()).expect("cpu").value;
                    let got = group
                        .reduce(&problem, data.view())
                        .unwrap_or_else(|e| panic!("{name} {problem} n={n}: {e}"))
                        .value;
                    assert!(
                        got.same_as(&want),
                        "{name} {problem} n={n}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn axis_and_segment_reductions_on_a_group_give_the_one_device_bits() {
    use redlab::segmented::Selection;
    use redlab::shape::{AxisPlan, Layout, Segments};
    let cpu = Device::open("cpu", None).expect("cpu");
    // Views: C and Fortran order, three axes, rows reversed (a negative stride with an
    // offset), an empty axis, and every axis reduced (one output).
    let reversed = Layout {
        dims: vec![20, 517],
        strides: vec![-517, 1],
        offset: 19 * 517,
    };
    let views: Vec<(Layout, Option<Vec<isize>>)> = vec![
        (Layout::c_order(&[37, 1000]), Some(vec![1])),
        (Layout::c_order(&[37, 1000]), Some(vec![0])),
        (Layout::fortran_order(&[300, 41]), Some(vec![0])),
        (Layout::c_order(&[5, 7, 300]), Some(vec![0, 2])),
        (Layout::c_order(&[5, 7, 300]), Some(vec![1])),
        (reversed, Some(vec![1])),
        (Layout::c_order(&[0, 10]), Some(vec![1])),
        (Layout::c_order(&[3, 9]), None),
    ];
    // Segments of random lengths, empty ones among them.
    let mut offsets = vec![0u64];
    for k in 0..300u64 {
        let len = k * 7919 % 613 * u64::from(k % 5 != 0);
        offsets.push(offsets.last().copied().unwrap_or(0) + len);
    }
    let n_segmented = *offsets.last().unwrap_or(&0) as usize;
    for name in groups() {
        let group = Device::open(name, None).expect("group opens");
        for (dtype, op) in [
            (DType::F32, Op::Sum),
            (DType::F64, Op::Sum),
            (DType::F32, Op::ArgMax),
            (DType::I32, Op::Min),
        ] {
            let problem = Problem::new(op, dtype, None).expect("valid");
            let check = |data: &redlab::HostArray, selection: Selection<'_>, what: &str| {
                let (want, _) = cpu
                    .reduce_outputs(&problem, data.view(), selection)
                    .expect("cpu");
                let (got, _) = group
                    .reduce_outputs(&problem, data.view(), selection)
                    .unwrap_or_else(|e| panic!("{name} {problem} {what}: {e}"));
                assert_eq!(got.len(), want.len(), "{name} {problem} {what}");
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        g.same_as(w),
                        "{name} {problem} {what} output {k}: {g} vs {w}"
                    );
                }
            };
            for (layout, axes) in &views {
                let n = layout.span().map_or(0, |r| r.end);
                let data = generate(dtype, n, Distribution::Normal, 5).expect("data");
                let plan = AxisPlan::new(layout.clone(), axes.as_deref(), false).expect("plan");
                check(
                    &data,
                    Selection::Axes(&plan),
                    &format!("{layout:?} axes {axes:?}"),
                );
            }
            let data = generate(dtype, n_segmented, Distribution::Normal, 6).expect("data");
            let ranges = Segments::Offsets(offsets.clone())
                .ranges(n_segmented)
                .expect("ranges");
            check(&data, Selection::Ranges(&ranges), "segments");
        }
        // Statistics split the same way.
        for stat in [
            Statistic::Var { ddof: 1.0 },
            Statistic::LogSumExp,
            Statistic::NanMean,
        ] {
            for (layout, axes) in &views {
                let n = layout.span().map_or(0, |r| r.end);
                let data = generate(DType::F32, n, Distribution::Normal, 7).expect("data");
                let plan = AxisPlan::new(layout.clone(), axes.as_deref(), false).expect("plan");
                let want = cpu
                    .statistic(stat, data.view(), Selection::Axes(&plan))
                    .expect("cpu");
                let got = group
                    .statistic(stat, data.view(), Selection::Axes(&plan))
                    .unwrap_or_else(|e| panic!("{name} {stat:?} {layout:?}: {e}"));
                assert_eq!(got.len(), want.len());
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        g.same_as(w),
                        "{name} {stat:?} {layout:?} output {k}: {g} vs {w}"
                    );
                }
            }
        }
    }
}

/// A user-defined reduction: map, combine, identity, post, and both inputs' type.
type Case<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>, DType);

/// Every group's result for each case, at sizes around tile and subtree boundaries,
/// equals the CPU's bit for bit.
fn assert_groups_match_the_cpu(cases: &[Case<'_>]) {
    let cpu = Device::open("cpu", None).expect("cpu");
    for name in groups() {
        let group = Device::open(name, None).expect("group opens");
        for &(map, combine, identity, post, dtype) in cases {
            let mut builder = redlab::Reduction::builder(map, combine);
            if let Some(id) = identity {
                builder = builder.identity(id);
            }
            if let Some(p) = post {
                builder = builder.post(p);
            }
            let r = builder.build(&[dtype, dtype]).expect("builds");
            for n in [0, 1, 8193, 3 * 65_536 + 17, (1 << 20) + 3] {
                let x = generate(dtype, n, Distribution::Normal, 8).expect("data");
                let y = generate(dtype, n, Distribution::Normal, 9).expect("data");
                let inputs = [x.view(), y.view()];
                let want = cpu.reduce_mapped(&r, &inputs).expect("cpu").value;
                let got = group
                    .reduce_mapped(&r, &inputs)
                    .unwrap_or_else(|e| panic!("{name} {} n={n}: {e}", r.describe()))
                    .value;
                assert!(
                    got.same_as(&want),
                    "{name} {} n={n}: {got} vs {want}",
                    r.describe()
                );
            }
        }
    }
}

#[test]
fn user_defined_reductions_on_a_group_give_the_one_device_bits() {
    assert_groups_match_the_cpu(&[
        ("x * y", "sum", None, None, DType::F32),
        ("x * x", "sum", None, Some("sqrt(r)"), DType::F64),
        ("abs(x - y)", "max", None, None, DType::F32),
        ("x * x", "argmax", None, None, DType::F32),
        ("x > y", "sum", None, None, DType::F32),
        ("x * 3 - y", "xor", None, None, DType::I32),
        // The index: each member's slice reads the whole array's i.
        ("x * i", "sum", None, None, DType::F32),
        ("i % 5 == 3 ? x : y", "sum", None, None, DType::F64),
        ("i", "xor", None, None, DType::I32),
        ("i % 7 == 1 ? x : -x", "argmax", None, None, DType::F32),
    ]);
}

#[test]
fn custom_combines_on_a_group_give_the_one_device_bits() {
    assert_groups_match_the_cpu(&[
        ("x", "max(a, b)", Some("-inf"), None, DType::F32),
        ("x * y", "a + b", Some("0"), Some("r / n"), DType::F64),
        ("x * i", "a + b", Some("0"), None, DType::F32),
        // Not associative: a different tree would show.
        (
            "x",
            "a + b + (a % 7) * (b % 5)",
            Some("0"),
            None,
            DType::I32,
        ),
    ]);
}

#[test]
fn bad_group_names_are_errors() {
    assert!(Device::open("cuda:0,", None).is_err());
}

#[test]
fn arrays_made_on_each_device_give_the_hosts_bits() {
    let mut names = groups();
    names.insert(0, "cpu");
    if names.contains(&"opencl:0,0,0") {
        names.push("opencl:0");
    }
    for name in names {
        let device = Device::open(name, None).expect("opens");
        for dtype in [DType::F32, DType::F64, DType::I32, DType::F16] {
            for n in [0, 1, 8191, 8193, 3 * 65_536 + 17, (1 << 20) + 1] {
                let data = generate(dtype, n, Distribution::Hashed, 4).expect("data");
                for op in [Op::Sum, Op::Max, Op::ArgMin] {
                    let problem = Problem::new(op, dtype, None).expect("valid");
                    let want = redlab::reference::reduce(&problem, data.view()).expect("reference");
                    let made = redlab::generated::reduce_hashed(&device, &problem, n, 4, 2)
                        .unwrap_or_else(|e| panic!("{name} {problem} n={n}: {e}"));
                    assert!(
                        made.value.same_as(&want),
                        "{name} {problem} n={n}: {} vs {want}",
                        made.value
                    );
                    let streamed =
                        redlab::generated::reference_hashed(&problem, n, 4).expect("host");
                    assert!(
                        streamed.same_as(&want),
                        "{problem} n={n}: {streamed} vs {want}"
                    );
                    let shares: usize = made.devices.iter().map(|d| d.elements).sum();
                    assert_eq!(shares, n, "{name}: every element belongs to one device");
                    assert_eq!(made.kernel_runs().len(), 2, "{name}: a time per repeat");
                }
            }
        }
    }
}

#[test]
fn a_group_explains_its_split_and_its_members_strategy() {
    use redlab::segmented::Selection;
    use redlab::shape::{AxisPlan, Layout};
    let group = Device::open("cpu:0,0", None).expect("group opens");
    let plan = AxisPlan::new(Layout::c_order(&[300, 1001]), Some(&[1]), false).expect("plan");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("valid");
    let text = group.explain_outputs(&problem, Selection::Axes(&plan));
    assert!(text.contains("split over the 2 members"), "{text}");
    assert!(text.contains("cpu short rows"), "{text}");
}
