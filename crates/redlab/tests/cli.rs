//! The `redlab` binary end to end: devices, run (generated, .npy and raw inputs), bench,
//! and every bad-input case ending as one clear line on stderr with a non-zero exit.

use std::path::Path;

use half::f16;
use redlab::generate::{generate, Distribution};
use redlab::{reference, ArrayRef, DType, Op, Problem};
use serde_json::Value as Json;

mod common;

use common::{assert_clean_error, json_of, npy_with_header, redlab};

/// Builds `.npy` bytes: magic, version 1.0, the header dict padded to 64, the data.
fn npy_bytes(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let shape_text = match shape {
        [] => "()".to_string(),
        [one] => format!("({one},)"),
        many => format!(
            "({})",
            many.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let order = if fortran { "True" } else { "False" };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape_text}, }}");
    npy_with_header(&dict, data)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("temp file");
    path.display().to_string()
}

fn reference_of<T: redlab::Element>(op: Op, data: &[T]) -> redlab::Value {
    let problem = Problem::new(op, T::DTYPE, None).expect("valid");
    reference::reduce(&problem, ArrayRef::from_slice(data)).expect("reference")
}

fn bits_of(json: &Json) -> u64 {
    let text = json["value_bits"].as_str().expect("value_bits");
    u64::from_str_radix(text.trim_start_matches("0x"), 16).expect("hex")
}

#[test]
fn devices_lists_the_cpu_and_says_why_other_backends_are_missing() {
    let report = json_of(&redlab(&["devices", "--json"]));
    assert_eq!(report["devices"][0]["id"], "cpu");
    let missing: Vec<&str> = report["unavailable"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|u| u["backend"].as_str())
        .collect();
    assert!(missing.contains(&"cuda"));
    let opencl_devices = report["devices"]
        .as_array()
        .expect("list")
        .iter()
        .filter(|d| d["backend"] == "opencl")
        .count();
    // OpenCL is either listed with its devices or explained, never silently absent.
    assert!(
        (opencl_devices > 0) != missing.contains(&"opencl"),
        "{report}"
    );
    for u in report["unavailable"].as_array().expect("list") {
        assert!(u["reason"].as_str().is_some_and(|r| !r.is_empty()));
    }
    let text = redlab(&["devices"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("cpu"));
}

#[test]
fn run_reports_the_reference_value_with_every_field() {
    for (op, dtype, n) in [
        ("sum", "f32", "1000003"),
        ("argmax", "i16", "2^17"),
        ("prod", "f64", "1e3"),
        ("xor", "u64", "64Ki"),
    ] {
        let out = json_of(&redlab(&[
            "run", "--op", op, "--dtype", dtype, "--n", n, "--seed", "9", "--repeat", "3", "--json",
        ]));
        for field in [
            "op", "dtype", "acc", "n", "device", "value", "seconds", "gbps", "verified",
        ] {
            assert!(out.get(field).is_some(), "{op} {dtype}: missing {field}");
        }
        assert_eq!(out["verified"], true);
        let dtype: DType = dtype.parse().expect("dtype");
        let op: Op = op.parse().expect("op");
        let count = out["n"].as_u64().expect("n") as usize;
        let data = generate(dtype, count, Distribution::Normal, 9).expect("fits");
        let problem = Problem::new(op, dtype, None).expect("valid");
        let expected = reference::reduce(&problem, data.view()).expect("reference");
        assert_eq!(
            bits_of(&out),
            expected.scalar().expect("value").bits(),
            "{op} {dtype}"
        );
        assert_eq!(out["index"].as_u64(), expected.index());
    }
}

#[test]
fn float_sums_are_identical_at_any_thread_count() {
    let bits: Vec<u64> = ["1", "2", "3", "8"]
        .iter()
        .map(|t| {
            bits_of(&json_of(&redlab(&[
                "run",
                "--op",
                "sum",
                "--dtype",
                "f32",
                "--n",
                "3000017",
                "--dist",
                "uniform",
                "--threads",
                t,
                "--json",
            ])))
        })
        .collect();
    assert!(bits.iter().all(|&b| b == bits[0]), "{bits:?}");
}

#[test]
fn empty_inputs_give_identities_or_a_typed_empty_result() {
    let sum = json_of(&redlab(&[
        "run", "--op", "sum", "--dtype", "f32", "--n", "0", "--json",
    ]));
    assert_eq!(sum["value_bits"], "0x00000000");
    let min = json_of(&redlab(&[
        "run", "--op", "min", "--dtype", "i32", "--n", "0", "--json",
    ]));
    assert_eq!(min["empty"], true);
    assert!(min["value"].is_null());
}

#[test]
fn npy_files_in_every_layout_match_the_reference() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A 3 × 4 f64 array, values distinct, saved C-ordered and Fortran-ordered.
    let logical: Vec<f64> = (0..12).map(|i| ((i * 7) % 12) as f64 - 5.5).collect();
    let c_bytes: Vec<u8> = logical.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut f_bytes = Vec::new();
    for col in 0..4 {
        for row in 0..3 {
            f_bytes.extend(logical[row * 4 + col].to_le_bytes());
        }
    }
    let c_path = write(
        dir.path(),
        "c.npy",
        &npy_bytes("<f8", false, &[3, 4], &c_bytes),
    );
    let f_path = write(
        dir.path(),
        "f.npy",
        &npy_bytes("<f8", true, &[3, 4], &f_bytes),
    );
    let expected_index = reference_of(Op::ArgMin, &logical).index();
    for path in [&c_path, &f_path] {
        let out = json_of(&redlab(&[
            "run", "--op", "argmin", "--input", path, "--json",
        ]));
        assert_eq!(out["index"].as_u64(), expected_index, "{path}");
        let sum = json_of(&redlab(&["run", "--op", "sum", "--input", path, "--json"]));
        assert_eq!(
            bits_of(&sum),
            reference_of(Op::Sum, &logical)
                .scalar()
                .expect("sum")
                .bits()
        );
    }

    // Big-endian int32 in three dimensions.
    let ints: Vec<i32> = (0..60).map(|i| (i * 37 % 61) - 30).collect();
    let be: Vec<u8> = ints.iter().flat_map(|x| x.to_be_bytes()).collect();
    let be_path = write(
        dir.path(),
        "be.npy",
        &npy_bytes(">i4", false, &[3, 4, 5], &be),
    );
    let out = json_of(&redlab(&[
        "run", "--op", "sum", "--input", &be_path, "--json",
    ]));
    assert_eq!(
        out["value"].as_i64(),
        Some(ints.iter().map(|&x| x as i64).sum())
    );
    assert_eq!(out["acc"], "i64");

    // f16, a 0-d array, and an empty one.
    let halves: Vec<f16> = (0..1000)
        .map(|i| f16::from_f32(i as f32 * 0.25 - 100.0))
        .collect();
    let h_bytes: Vec<u8> = halves.iter().flat_map(|x| x.to_le_bytes()).collect();
    let h_path = write(
        dir.path(),
        "h.npy",
        &npy_bytes("<f2", false, &[1000], &h_bytes),
    );
    let out = json_of(&redlab(&[
        "run", "--op", "sum", "--input", &h_path, "--json",
    ]));
    assert_eq!(
        bits_of(&out),
        reference_of(Op::Sum, &halves).scalar().expect("sum").bits()
    );
    let scalar_path = write(
        dir.path(),
        "s.npy",
        &npy_bytes("<u2", false, &[], &513u16.to_le_bytes()),
    );
    let out = json_of(&redlab(&[
        "run",
        "--op",
        "max",
        "--input",
        &scalar_path,
        "--json",
    ]));
    assert_eq!(out["value"].as_u64(), Some(513));
    let empty_path = write(dir.path(), "e.npy", &npy_bytes("<i8", false, &[0, 3], &[]));
    let out = json_of(&redlab(&[
        "run",
        "--op",
        "sum",
        "--input",
        &empty_path,
        "--json",
    ]));
    assert_eq!(out["value"].as_i64(), Some(0));
}

#[test]
fn raw_files_need_a_dtype_and_are_read_little_endian() {
    let dir = tempfile::tempdir().expect("temp dir");
    let values: Vec<u32> = (0..5001u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
    let path = write(dir.path(), "data.bin", &bytes);
    let out = json_of(&redlab(&[
        "run", "--op", "xor", "--dtype", "u32", "--input", &path, "--json",
    ]));
    assert_eq!(
        out["value"].as_u64(),
        Some(values.iter().fold(0, |a, &b| a ^ b) as u64)
    );
    // The input file is left as it was.
    assert_eq!(std::fs::read(&path).expect("still there"), bytes);
}

#[test]
fn bad_inputs_fail_with_one_clear_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let good = npy_bytes("<f4", false, &[4], &[0u8; 16]);
    let truncated = write(d, "short.npy", &good[..good.len() - 3]);
    let text = write(d, "text.npy", b"hello, not numbers\n");
    let complex = write(d, "c.npy", &npy_bytes("<c8", false, &[2], &[0u8; 16]));
    let boolean = write(d, "b.npy", &npy_bytes("|b1", false, &[2], &[0u8, 1]));
    let strings = write(d, "u.npy", &npy_bytes("<U3", false, &[1], &[0u8; 12]));
    let objects = write(d, "o.npy", &npy_bytes("|O", false, &[1], &[0u8; 8]));
    let f4 = write(d, "f4.npy", &good);
    let raw = write(d, "odd.bin", &[1u8, 2, 3, 4, 5]);
    let missing = d.join("nowhere.npy").display().to_string();

    assert_clean_error(&["run", "--op", "sum", "--input", &missing], "cannot read");
    assert_clean_error(
        &["run", "--op", "sum", "--input", &text],
        "not a valid .npy",
    );
    assert_clean_error(&["run", "--op", "sum", "--input", &truncated], "truncated");
    assert_clean_error(&["run", "--op", "sum", "--input", &complex], "complex");
    assert_clean_error(&["run", "--op", "sum", "--input", &boolean], "bool");
    assert_clean_error(&["run", "--op", "sum", "--input", &strings], "strings");
    assert_clean_error(&["run", "--op", "sum", "--input", &objects], "object");
    assert_clean_error(
        &["run", "--op", "sum", "--dtype", "f64", "--input", &f4],
        "--dtype says f64",
    );
    assert_clean_error(&["run", "--op", "sum", "--input", &raw], "needs --dtype");
    assert_clean_error(
        &["run", "--op", "sum", "--dtype", "i32", "--input", &raw],
        "whole number",
    );
    assert_clean_error(
        &["run", "--op", "xor", "--dtype", "f32", "--n", "10"],
        "integer types only",
    );
    assert_clean_error(
        &["run", "--op", "xor", "--input", &f4],
        "integer types only",
    );
    assert_clean_error(
        &["run", "--op", "sum", "--dtype", "f64", "--n", "2^60"],
        "memory",
    );
    assert_clean_error(
        &["run", "--op", "sum", "--dtype", "complex64", "--n", "10"],
        "unknown type",
    );
    assert_clean_error(
        &["run", "--op", "median", "--dtype", "f32", "--n", "10"],
        "unknown operator",
    );
    assert_clean_error(
        &[
            "run", "--op", "sum", "--dtype", "f64", "--acc", "f32", "--n", "10",
        ],
        "cannot accumulate",
    );
    assert_clean_error(
        &["run", "--op", "sum", "--dtype", "f32", "--n", "1.5"],
        "invalid size",
    );
    assert_clean_error(&["run", "--op", "sum", "--n", "10"], "--dtype");
    assert_clean_error(&["run", "--op", "sum", "--dtype", "f32"], "required");
    assert_clean_error(
        &[
            "run", "--op", "sum", "--dtype", "f32", "--n", "5", "--device", "cuda:0",
        ],
        "cuda",
    );
    assert_clean_error(
        &[
            "run", "--op", "sum", "--dtype", "f32", "--n", "5", "--device", "tpu",
        ],
        "unknown device",
    );
    assert_clean_error(
        &[
            "run",
            "--op",
            "sum",
            "--dtype",
            "f32",
            "--n",
            "5",
            "--threads",
            "0",
        ],
        "thread",
    );
}

#[test]
fn bench_writes_verified_rows_with_roof_and_skips_what_cannot_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json_path = dir.path().join("bench.jsonl");
    let output = redlab(&[
        "bench",
        "--ops",
        "sum,argmax,xor",
        "--dtypes",
        "f32,u8",
        "--sizes",
        "0,1,4097,2^16+1",
        "--cache",
        "warm",
        "--min-reps",
        "3",
        "--min-time",
        "0",
        "--json",
        json_path.to_str().expect("utf-8 path"),
    ]);
    // "2^16+1" is not a size: the whole command must fail cleanly before measuring.
    assert_eq!(output.status.code(), Some(2));
    let output = redlab(&[
        "bench",
        "--ops",
        "sum,argmax,xor",
        "--dtypes",
        "f32,u8",
        "--sizes",
        "0,1,4097,65537",
        "--cache",
        "warm",
        "--min-reps",
        "3",
        "--min-time",
        "0",
        "--json",
        json_path.to_str().expect("utf-8 path"),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: Vec<Json> = std::fs::read_to_string(&json_path)
        .expect("records")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(rows.len(), 3 * 2 * 4);
    for row in &rows {
        let expected = if row["op"] == "xor" && row["dtype"] == "f32" {
            "skipped"
        } else {
            "ok"
        };
        assert_eq!(row["status"], expected, "{row}");
        if expected == "ok" {
            assert!(row["median_s"].as_f64().is_some_and(|s| s >= 0.0));
            if row["n"].as_u64() > Some(0) {
                assert!(row["roof_gbps"].as_f64().is_some_and(|g| g > 0.0), "{row}");
                assert!(
                    row["roof_fraction"].as_f64().is_some_and(|f| f > 0.0),
                    "{row}"
                );
            }
            assert!(row["reps"].as_u64().is_some_and(|r| r >= 3));
        } else {
            assert!(row["reason"]
                .as_str()
                .is_some_and(|r| r.contains("integer types only")));
        }
    }
}

#[test]
fn run_param_needs_a_named_variant_that_has_it() {
    let base = ["run", "--op", "sum", "--dtype", "f32", "--n", "100"];
    let named = [&base[..], &["--variant", "production"]].concat();
    assert_clean_error(
        &[&base[..], &["--param", "WARP_ROWS=2"]].concat(),
        "add --variant",
    );
    assert_clean_error(
        &[&named[..], &["--param", "BOGUS=1"]].concat(),
        "has no parameter BOGUS",
    );
    assert_clean_error(
        &[&named[..], &["--param", "GROUPS_PER_CU=0"]].concat(),
        "is outside",
    );
}
