//! `redlab run` with shapes, axes and segments, end to end: the result file reads back
//! with the right shape and each value equals the reduction of its own elements; bad
//! shapes, axes and offsets each get one clear error line and exit code 2, and no input
//! is touched.

mod common;

use common::{assert_clean_error, redlab};
use redlab::generate::{generate, Distribution};
use redlab::{DType, Op, Problem};

fn path_str(p: &std::path::Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `redlab bench ARGS --min-time 0 --json F`, asserted to succeed, and the records it
/// wrote.
fn bench_records(args: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("rows.jsonl");
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--min-time", "0", "--json", path_str(&json)]);
    let o = redlab(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(&json)
        .expect("records")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

#[test]
fn row_sums_of_a_generated_matrix_are_written_as_npy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("rows.npy");
    let o = redlab(&[
        "run",
        "--op",
        "sum",
        "--dtype",
        "f32",
        "--shape",
        "4x8193",
        "--axis",
        "-1",
        "--out",
        path_str(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let loaded = redlab::input::load(&out, None).expect("result reads back");
    assert_eq!(loaded.shape, vec![4]);
    let got = loaded.array.view().typed::<f32>().expect("f32").to_vec();
    // `run` generates normal data with seed 1 unless told otherwise.
    let data = generate(DType::F32, 4 * 8193, Distribution::Normal, 1).expect("data");
    let problem = Problem::new(Op::Sum, DType::F32, None).expect("problem");
    for (k, g) in got.iter().enumerate() {
        let row = data.view().slice(k * 8193, (k + 1) * 8193);
        let want = redlab::reference::reduce(&problem, row).expect("reference");
        assert_eq!(
            want.scalar().map(|s| s.bits()),
            Some(g.to_bits() as u64),
            "row {k}"
        );
    }
}

#[test]
fn argmax_along_an_axis_of_a_fortran_npy_gives_indices_within_the_axis() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A 2×3 i32 matrix [[5, 1, 9], [7, 8, 2]] stored in Fortran order.
    let stored: Vec<u8> = [5i32, 7, 1, 8, 9, 2]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let input = dir.path().join("m.npy");
    std::fs::write(
        &input,
        common::npy_with_header(
            "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
            &stored,
        ),
    )
    .expect("write");
    let out = dir.path().join("arg.npy");
    let o = redlab(&[
        "run",
        "--op",
        "argmax",
        "--input",
        path_str(&input),
        "--axis",
        "0",
        "--keepdims",
        "--out",
        path_str(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let loaded = redlab::input::load(&out, None).expect("reads back");
    assert_eq!(loaded.shape, vec![1, 3]);
    assert_eq!(loaded.array.view().typed::<i64>().expect("i64"), &[1, 1, 0]);
}

#[test]
fn bad_shapes_axes_and_offsets_are_one_line_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let offsets = |name: &str, values: &[i64]| {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let path = dir.path().join(name);
        let dict = format!(
            "{{'descr': '<i8', 'fortran_order': False, 'shape': ({},), }}",
            values.len()
        );
        std::fs::write(&path, common::npy_with_header(&dict, &bytes)).expect("write");
        path
    };
    let decreasing = offsets("dec.npy", &[0, 5, 2]);
    let past_end = offsets("past.npy", &[0, 11]);
    let negative = offsets("neg.npy", &[-1, 3]);
    let base = ["run", "--op", "sum", "--dtype", "f32", "--shape", "2x5"];
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [base, extra].concat()
    }
    assert_clean_error(&with(&base, &["--axis", "2"]), "axis 2 is out of range");
    assert_clean_error(&with(&base, &["--axis", "0,-2"]), "given twice");
    assert_clean_error(&with(&base, &["--axis", "x"]), "not an axis number");
    assert_clean_error(
        &with(&base, &["--n", "11"]),
        "holds 10 elements but the input has 11",
    );
    assert_clean_error(
        &with(&base, &["--segments", path_str(&decreasing)]),
        "must not decrease",
    );
    assert_clean_error(
        &with(&base, &["--segments", path_str(&past_end)]),
        "past the end",
    );
    assert_clean_error(
        &with(&base, &["--segments", path_str(&negative)]),
        "negative",
    );
    assert_clean_error(
        &with(&base, &["--axis", "1", "--graph-calls", "5"]),
        "graph timing needs a CUDA device",
    );
    assert_clean_error(
        &["run", "--op", "sum", "--n", "100", "--graph-calls", "5"],
        "along axes or over segments",
    );
    // Maps along axes are graph-timed where a CUDA device compiles them, statistics on a
    // CUDA device (neither on the CPU).
    for (what, message) in [
        (
            ["--map", "x * y"],
            "a CUDA device compiles into its segment kernels",
        ),
        // mean is a sum with a last step, a map here.
        (
            ["--stat", "mean"],
            "a CUDA device compiles into its segment kernels",
        ),
        (["--stat", "var"], "graph timing needs a CUDA device"),
    ] {
        let mut args = vec!["run"];
        args.extend(what);
        args.extend(["--dtype", "f32", "--shape", "6x7", "--axis", "1"]);
        args.extend(["--graph-calls", "5"]);
        assert_clean_error(&args, message);
    }
    assert_clean_error(&with(&base, &["--segment-size", "0"]), "at least 1");
    assert_clean_error(
        &with(&base, &["--segment-size", "2", "--axis", "1"]),
        "take no --axis",
    );
    assert_clean_error(
        &with(&base, &["--axis", "1", "--variant", "reduce2"]),
        "pick their kernel by shape",
    );
    let existing = dir.path().join("exists.npy");
    std::fs::write(&existing, b"keep me").expect("write");
    assert_clean_error(
        &with(&base, &["--axis", "1", "--out", path_str(&existing)]),
        "--force",
    );
    assert_eq!(std::fs::read(&existing).expect("read"), b"keep me");
    assert_clean_error(
        &[
            "run",
            "--op",
            "sum",
            "--input",
            path_str(&decreasing),
            "--axis",
            "0",
            "--out",
            path_str(&decreasing),
        ],
        "same file",
    );
}

/// Whether `redlab devices` lists opencl:0 (a failure when `REDLAB_REQUIRE_OPENCL=1`).
fn opencl_present() -> bool {
    let out = redlab(&["devices", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("devices prints JSON");
    let present = j["devices"]
        .as_array()
        .is_some_and(|d| d.iter().any(|d| d["id"] == "opencl:0"));
    let required = std::env::var("REDLAB_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    assert!(
        present || !required,
        "REDLAB_REQUIRE_OPENCL=1 but there is no opencl:0"
    );
    if !present {
        eprintln!("SKIPPED: no OpenCL device");
    }
    present
}

#[test]
fn opencl_axis_and_segment_results_are_the_cpus_bit_for_bit() {
    if !opencl_present() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&str, &[&str], &str); 4] = [
        ("rows", &["--shape", "37x3000", "--axis", "1"], "row_tiles"),
        (
            "columns",
            &["--shape", "1000x66", "--axis", "0"],
            "column_tiles",
        ),
        (
            "column words",
            &["--shape", "9000x256", "--axis", "0"],
            "column_words",
        ),
        (
            "segments",
            &["--n", "50000", "--segment-size", "33"],
            "short_rows",
        ),
    ];
    for (name, shape, strategy) in cases {
        let mut files = Vec::new();
        for device in ["cpu", "opencl:0"] {
            let out = dir
                .path()
                .join(format!("{name}-{}.npy", device.replace(':', "")));
            let mut args = vec![
                "run",
                "--op",
                "sum",
                "--dtype",
                "f32",
                "--device",
                device,
                "--explain",
            ];
            args.extend_from_slice(shape);
            args.extend_from_slice(&["--out", path_str(&out)]);
            let o = redlab(&args);
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success(),
                "{name} on {device}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                stdout.contains("verified  yes"),
                "{name} on {device}: {stdout}"
            );
            if device != "cpu" {
                assert!(
                    stdout.contains(&format!("strategy: {strategy}")),
                    "{name}: {stdout}"
                );
            }
            files.push(std::fs::read(&out).expect("result file"));
        }
        assert_eq!(files[0], files[1], "{name}: the .npy files differ");
    }
}

#[test]
fn bench_shapes_writes_verified_rows_with_shape_axes_and_strategy() {
    let rows = bench_records(&[
        "--shapes",
        "300x70:0,20x9000:1,4x4x4:0+2",
        "--ops",
        "sum,argmax",
        "--dtypes",
        "f32,i32",
        "--min-reps",
        "2",
    ]);
    assert_eq!(rows.len(), 3 * 2 * 2);
    for row in &rows {
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["variant"], "axis");
        assert!(
            row["strategy"]
                .as_str()
                .is_some_and(|s| s.starts_with("cpu ")),
            "{row}"
        );
        assert!(row["gbps"].as_f64().is_some_and(|g| g > 0.0), "{row}");
    }
    assert_eq!(rows[0]["shape"], serde_json::json!([300, 70]));
    assert_eq!(rows[0]["axes"], serde_json::json!([0]));
    assert_eq!(rows[8]["axes"], serde_json::json!([0, 2]));
    assert_clean_error(
        &["bench", "--shapes", "8x8:5", "--min-reps", "1"],
        "out of range",
    );
}

#[test]
fn bench_shapes_times_maps_along_axes_with_every_output_checked() {
    // On the CPU (the map on the host) and on OpenCL (compiled into the segment kernels,
    // two inputs packed); gathered axes too. Each row is verified output by output.
    let mut devices = vec!["cpu"];
    if opencl_present() {
        devices.push("opencl:0");
    }
    for device in devices {
        let rows = bench_records(&[
            "--shapes",
            "300x70:0,20x9000:1,4x4x4:0+2",
            "--map",
            "x * y",
            "--dtypes",
            "f32,i32",
            "--min-reps",
            "2",
            "--device",
            device,
        ]);
        assert_eq!(rows.len(), 3 * 2, "{device}");
        for row in &rows {
            assert_eq!(row["status"], "ok", "{row}");
            assert_eq!(row["variant"], "axis (mapped)");
            assert!(
                row["map"].as_str().is_some_and(|m| m.contains("x * y")),
                "{row}"
            );
            assert!(row["gbps"].as_f64().is_some_and(|g| g > 0.0), "{row}");
        }
        if device != "cpu" {
            let strategy = rows[0]["strategy"].as_str().unwrap_or_default();
            assert!(strategy.starts_with("the map compiled into"), "{strategy}");
        }
    }
    // A custom combine along axes: every output checked against the element-by-element
    // reference (the bench fails a row that differs).
    let rows = bench_records(&[
        "--shapes",
        "8x8:1,300x70:0",
        "--map",
        "x",
        "--combine",
        "a ^ (b * 3)",
        "--identity",
        "0",
        "--dtypes",
        "i32",
        "--min-reps",
        "1",
    ]);
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["acc"], "i64", "{row}");
    }
}
