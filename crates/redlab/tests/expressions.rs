//! `redlab run --map` end to end: the documented examples verify on the CPU and on the
//! OpenCL device (PoCL in CI) with the same bits; .npy inputs are read in order; bad
//! expressions, types and inputs each get one clear error line and exit code 2, with the
//! column of a bad token, and no input file is touched.

mod common;

use common::{assert_clean_error, json_of, redlab};

fn opencl_present() -> bool {
    let required = std::env::var("REDLAB_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    let o = redlab(&["devices", "--json"]);
    let present = String::from_utf8_lossy(&o.stdout).contains("\"opencl:0\"");
    assert!(
        present || !required,
        "REDLAB_REQUIRE_OPENCL=1 but no OpenCL device"
    );
    if !present {
        eprintln!("SKIPPED: OpenCL part of the expression CLI test");
    }
    present
}

#[test]
fn examples_verify_and_give_the_same_bits_on_cpu_and_opencl() {
    let examples: &[&[&str]] = &[
        &["--map", "x*y", "--dtype", "f32", "--n", "100003"],
        &[
            "--map", "x*x", "--post", "sqrt(r)", "--dtype", "f64", "--n", "65537",
        ],
        &["--map", "x > 0.5", "--dtype", "f32", "--n", "8193"],
        &["--map", "abs(x - y)", "--dtype", "f32", "--n", "31"],
        &[
            "--map",
            "abs(x)",
            "--combine",
            "max",
            "--dtype",
            "f32",
            "--n",
            "1025",
        ],
        &[
            "--map",
            "x*x",
            "--combine",
            "argmax",
            "--dtype",
            "f32",
            "--n",
            "4097",
        ],
    ];
    let gpu = opencl_present();
    for args in examples {
        let mut cpu_args = vec!["run", "--json"];
        cpu_args.extend_from_slice(args);
        let cpu = json_of(&redlab(&cpu_args));
        assert_eq!(cpu["verified"], true, "{args:?}: {cpu}");
        assert_eq!(cpu["bitwise_reference"], true, "{args:?}: {cpu}");
        if gpu {
            let mut gpu_args = cpu_args.clone();
            gpu_args.extend_from_slice(&["--device", "opencl:0"]);
            let dev = json_of(&redlab(&gpu_args));
            assert_eq!(dev["value_bits"], cpu["value_bits"], "{args:?}");
            assert_eq!(dev["index"], cpu["index"], "{args:?}");
        }
    }
}

#[test]
fn npy_inputs_are_read_in_order_and_left_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, values: &[f32]| {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let bytes = common::npy_with_header(
            &format!(
                "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
                values.len()
            ),
            &data,
        );
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).expect("writes");
        (path, bytes)
    };
    let (a, a_bytes) = write("a.npy", &[1.0, 2.0, 3.0]);
    let (b, b_bytes) = write("b.npy", &[4.0, 5.0, 6.0]);
    let (c, _) = write("c.npy", &[1.0, 2.0]);
    let s = |p: &std::path::Path| p.to_str().expect("utf-8").to_string();
    let o = json_of(&redlab(&[
        "run",
        "--json",
        "--map",
        "x - 2 * y",
        "--input",
        &s(&a),
        "--input",
        &s(&b),
    ]));
    assert_eq!(o["value"], -24.0);
    assert_clean_error(
        &[
            "run",
            "--map",
            "x * y",
            "--input",
            &s(&a),
            "--input",
            &s(&c),
        ],
        "input 2 (y) has 2 elements but input 1 (x) has 3",
    );
    assert_clean_error(
        &["run", "--map", "x * y", "--input", &s(&a)],
        "'y' is input 2 but the reduction has 1 input",
    );
    assert_eq!(std::fs::read(&a).expect("reads"), a_bytes);
    assert_eq!(std::fs::read(&b).expect("reads"), b_bytes);
}

#[test]
fn bad_expressions_get_one_line_with_the_column() {
    let base = ["run", "--dtype", "f32", "--n", "100"];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    assert_clean_error(
        &with(&["--map", "x * * y"]),
        "map: column 5: expected a value, found '*'",
    );
    assert_clean_error(
        &with(&["--map", "sqrt(x"]),
        "map: column 7: expected ',' or ')' in the call of sqrt",
    );
    assert_clean_error(
        &with(&["--map", "x", "--combine", "xor"]),
        "xor is defined for integer types only, not f32",
    );
    assert_clean_error(
        &with(&["--map", "x ^ 2"]),
        "'^' is defined for integers only",
    );
    assert_clean_error(
        &with(&["--map", "x", "--combine", "a + b"]),
        "needs --identity",
    );
    assert_clean_error(
        &with(&[
            "--map",
            "x",
            "--combine",
            "a+b",
            "--identity",
            "0",
            "--device",
            "cpu",
            "--post",
            "r +",
        ]),
        "post: column 4",
    );
    assert_clean_error(&with(&["--map", "median(x)"]), "unknown function 'median'");
}

#[test]
fn maps_along_an_axis_equal_the_reference_of_each_row() {
    use redlab::segmented::Selection;
    use redlab::shape::{AxisPlan, Layout};
    use redlab::{DType, Device, Reduction};
    let (rows, cols) = (37, 1031);
    let gen = |seed| {
        redlab::generate::generate(
            DType::F32,
            rows * cols,
            redlab::generate::Distribution::Normal,
            seed,
        )
        .expect("data")
    };
    let (x, y) = (gen(3), gen(4));
    let dot = Reduction::builder("x * y - i % 3", "sum")
        .build(&[DType::F32, DType::F32])
        .expect("builds");
    let plan = AxisPlan::new(Layout::c_order(&[rows, cols]), Some(&[1]), false).expect("plan");
    let mut devices = vec![Device::open("cpu", None).expect("cpu")];
    if opencl_present() {
        devices.push(Device::open("opencl:0", None).expect("opencl"));
    }
    for device in &devices {
        let got = device
            .reduce_mapped_outputs(&dot, &[x.view(), y.view()], Selection::Axes(&plan))
            .expect("reduces");
        assert_eq!(got.len(), rows);
        for (r, value) in got.iter().enumerate() {
            // Row r alone, with the index i of the whole array: the map sees global indices.
            let xs = x.view().slice(r * cols, (r + 1) * cols);
            let ys = y.view().slice(r * cols, (r + 1) * cols);
            let shifted = Reduction::builder(&format!("x * y - (i + {}) % 3", r * cols), "sum")
                .build(&[DType::F32, DType::F32])
                .expect("builds");
            let want = redlab_expr::oracle::reduce(&shifted, &[xs, ys]).expect("reference");
            assert!(
                value.same_as(&want),
                "{} row {r}: {value} vs {want}",
                device.info().id
            );
        }
    }
}

#[test]
fn statistics_along_an_axis_write_the_reference_values_on_every_device() {
    use redlab::{DType, Value};
    let dir = tempfile::tempdir().expect("temp dir");
    let (rows, cols) = (6, 1001);
    let data = redlab::generate::generate(
        DType::F32,
        rows * cols,
        redlab::generate::Distribution::Normal,
        1,
    )
    .expect("data");
    let mut devices = vec!["cpu"];
    if opencl_present() {
        devices.push("opencl:0");
    }
    for stat in ["mean", "norm2", "norm1", "norminf", "count_nonzero", "any"] {
        let mut files = Vec::new();
        for device in &devices {
            let out = dir
                .path()
                .join(format!("{stat}-{}.npy", device.replace(':', "")));
            let o = redlab(&[
                "run",
                "--stat",
                stat,
                "--dtype",
                "f32",
                "--shape",
                "6x1001",
                "--axis",
                "1",
                "--device",
                device,
                "--out",
                out.to_str().expect("utf-8"),
            ]);
            assert!(
                o.status.success(),
                "{stat} on {device}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            files.push(std::fs::read(&out).expect("written"));
            let loaded = redlab::input::load(&out, None).expect("reads back");
            assert_eq!(loaded.shape, vec![rows as u64]);
            let reduction = redlab_expr::stats::reduction(stat, DType::F32).expect("builds");
            for r in 0..rows {
                let row = data.view().slice(r * cols, (r + 1) * cols);
                let want = redlab_expr::oracle::reduce(&reduction, &[row]).expect("reference");
                let Value::Scalar(want) = want else {
                    panic!("{stat}: {want}")
                };
                let got = loaded.array.view().slice(r, r + 1);
                assert_eq!(
                    got.bytes(),
                    &want.bits().to_le_bytes()[..want.dtype().size_bytes()],
                    "{stat} row {r} on {device}"
                );
            }
        }
        assert!(
            files.windows(2).all(|w| w[0] == w[1]),
            "{stat}: devices wrote different bytes"
        );
    }
    common::assert_clean_error(
        &["run", "--stat", "median", "--dtype", "f32", "--n", "10"],
        "unknown statistic 'median'",
    );
}

#[test]
fn maps_along_axes_run_in_the_opencl_segment_kernels() {
    if !opencl_present() {
        return;
    }
    // Maps not read by `i`: the segment kernels map as they read (one 2- or 4-byte input
    // as raw words, so columns take column_words; several inputs packed into one
    // buffer, float sums of them as each input's words, column_words too); maps of `i`:
    // mapped on the host first. Either way every output is checked against the host's
    // mapped values.
    for (map, dtype, compiled, kernel) in [
        ("x * x", "f32", true, "column_words"),
        ("abs(x)", "f16", true, "column_words"),
        ("x + 1", "f64", true, "column_tiles"),
        ("x * y", "f32", true, "column_words"),
        ("x * y", "i32", true, "column_tiles"),
        ("x * i", "f32", false, "column_words"),
    ] {
        let o = redlab(&[
            "run", "--map", map, "--dtype", dtype, "--shape", "1024x132", "--axis", "0",
            "--device", "opencl:0", "--json",
        ]);
        assert!(
            o.status.success(),
            "{map}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let j = json_of(&o);
        assert_eq!(j["verified"], true, "{map}: {j}");
        let strategy = j["strategy"].as_str().expect("strategy");
        assert_eq!(
            strategy.starts_with("the map compiled into the segment kernels"),
            compiled,
            "{map}: {strategy}"
        );
        assert!(strategy.contains(kernel), "{map}: {strategy}");
    }
}

#[test]
fn custom_combines_along_axes_verify_and_write_the_same_bits_on_every_device() {
    // Every output is checked against the element-by-element reference; the files the
    // CPU (host fold) and the OpenCL device (segment kernels) write must be equal.
    let dir = tempfile::tempdir().expect("temp dir");
    let gpu = opencl_present();
    for (k, (map, combine, identity, dtype, shape)) in [
        (
            "x",
            "a ^ (b * 3)",
            "0",
            "i32",
            &["--shape", "300x1000", "--axis", "1"][..],
        ),
        (
            "x * 2",
            "a + b * 1.5",
            "-0.0",
            "f32",
            &["--shape", "3x20011", "--axis", "1"],
        ),
        (
            "abs(x)",
            "max(a, b)",
            "-inf",
            "f64",
            &["--shape", "257x33", "--axis", "0"],
        ),
        (
            "x + i",
            "a + b",
            "0",
            "i32",
            &["--n", "10000", "--segment-size", "777"],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let identity = format!("--identity={identity}");
        let mut written = Vec::new();
        let devices: &[&str] = if gpu { &["cpu", "opencl:0"] } else { &["cpu"] };
        for device in devices {
            let out = dir
                .path()
                .join(format!("{k}-{}.npy", device.replace(':', "")));
            let out_text = out.to_str().expect("path").to_string();
            let mut args = vec![
                "run",
                "--map",
                map,
                "--combine",
                combine,
                &identity,
                "--dtype",
                dtype,
                "--device",
                device,
                "--json",
                "--out",
                &out_text,
            ];
            args.extend_from_slice(shape);
            let j = json_of(&redlab(&args));
            assert_eq!(j["verified"], true, "{map} {combine} on {device}: {j}");
            assert_eq!(j["op"], "custom", "{j}");
            let strategy = j["strategy"].as_str().expect("strategy");
            let compiled = *device != "cpu" && !map.contains('i');
            assert_eq!(
                strategy.starts_with("map and combine compiled into the segment kernels"),
                compiled,
                "{map} on {device}: {strategy}"
            );
            written.push(std::fs::read(&out).expect("written"));
        }
        assert!(
            written.windows(2).all(|w| w[0] == w[1]),
            "{map} {combine}: the devices wrote different files"
        );
    }
}
