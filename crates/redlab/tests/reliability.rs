//! Regression tests of hostile and damaged input: every case ends as one clear line on
//! stderr with exit code 2 (or, where the input is valid, as the right answer), within a
//! time limit, and no file the user gave is changed.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;

mod common;

use common::{assert_clean_failure, json_of, npy_with_header};

/// Runs `redlab` with `args` in `dir`, killed after a minute (a hang fails the test).
fn redlab_in(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("redlab")
        .expect("binary is built")
        .current_dir(dir)
        .env("REDLAB_TUNING_DIR", dir)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("binary runs")
}

/// Asserts exit code 2, one stderr line naming `needle`, and that every file in `keep`
/// has the bytes it had before.
fn assert_refused(dir: &Path, args: &[&str], needle: &str, keep: &[&Path]) {
    let before: Vec<Option<Vec<u8>>> = keep.iter().map(|p| std::fs::read(p).ok()).collect();
    let output = redlab_in(dir, args);
    assert_clean_failure(args, &output, needle);
    for (path, old) in keep.iter().zip(before) {
        assert_eq!(std::fs::read(path).ok(), old, "{} changed", path.display());
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("temp file");
    path
}

fn s(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn npy_shapes_that_overflow_are_refused_in_either_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // 2^32 · 2^32 wraps to 0 in 64 bits; · 12 would wrap a 128-bit product of a longer
    // shape too. Both orders, and a product that wraps to a small count.
    for (name, order, shape) in [
        ("c.npy", "False", "(4294967296, 4294967296)"),
        ("f.npy", "True", "(4294967296, 4294967296, 3)"),
        (
            "w.npy",
            "False",
            "(18446744073709551615, 18446744073709551615, 18446744073709551615, 12)",
        ),
    ] {
        let dict = format!("{{'descr': '<f4', 'fortran_order': {order}, 'shape': {shape}, }}");
        let path = write(d, name, &npy_with_header(&dict, &[0u8; 48]));
        assert_refused(
            d,
            &["run", "--op", "sum", "--input", s(&path)],
            "overflows",
            &[&path],
        );
    }
}

#[test]
fn npy_shapes_with_an_empty_axis_are_empty_whatever_the_others() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // The product of the other axes overflows 64 bits; the array is still empty.
    let dict =
        "{'descr': '<i4', 'fortran_order': True, 'shape': (1099511627776, 1099511627776, 0), }";
    let path = write(d, "z.npy", &npy_with_header(dict, &[]));
    let json = json_of(&redlab_in(
        d,
        &["run", "--op", "sum", "--input", s(&path), "--json"],
    ));
    assert_eq!(json["n"], 0);
}

#[test]
fn npy_headers_nested_deeply_are_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let braces = format!("{}{}", "{".repeat(20), "}".repeat(20));
    let brackets = format!(
        "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (1,)}}",
        "[".repeat(30),
        "]".repeat(30)
    );
    for (name, dict) in [("b.npy", braces), ("l.npy", brackets)] {
        let path = write(d, name, &npy_with_header(&dict, &[0u8; 4]));
        let started = std::time::Instant::now();
        assert_refused(
            d,
            &["run", "--op", "sum", "--input", s(&path)],
            "header",
            &[&path],
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

#[test]
fn npy_dtype_spellings_numpy_loads_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let ints: Vec<i32> = vec![7, -3, 1_000_000, 42, -99_999];
    let int_bytes: Vec<u8> = ints.iter().flat_map(|v| v.to_le_bytes()).collect();
    let floats: Vec<f32> = vec![1.5, -2.25, 8.0, 0.125];
    let float_bytes: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
    for (descr, data, expected) in [
        ("=i4", &int_bytes, "900047"),
        ("i4", &int_bytes, "900047"),
        ("<i", &int_bytes, "900047"),
        ("int32", &int_bytes, "900047"),
        ("float32", &float_bytes, "7.375"),
        ("f4", &float_bytes, "7.375"),
    ] {
        let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (5,), }}");
        let dict = if descr.contains('f') {
            dict.replace("(5,)", "(4,)")
        } else {
            dict
        };
        let path = write(d, "x.npy", &npy_with_header(&dict, data));
        let json = json_of(&redlab_in(
            d,
            &["run", "--op", "sum", "--input", s(&path), "--json"],
        ));
        assert_eq!(
            json["value"].to_string().trim_matches('"'),
            expected,
            "{descr}"
        );
    }
}

#[test]
fn special_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let fifo = d.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    fn run(input: &str) -> Vec<&str> {
        vec!["run", "--op", "sum", "--dtype", "i32", "--input", input]
    }
    assert_refused(d, &run(s(&fifo)), "FIFO", &[]);
    assert_refused(d, &run("/dev/zero"), "character device", &[]);
    assert_refused(d, &run("/proc/self/status"), "size of 0", &[]);
    assert_refused(d, &run(s(d)), "is a directory", &[]);
    // The OS's reason appears once.
    let missing = d.join("missing.npy");
    let out = redlab_in(d, &run(s(&missing)));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
}

#[test]
fn thread_counts_and_variants_are_checked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let gen = ["run", "--op", "sum", "--dtype", "i32", "--n", "1000"];
    let with = |extra: &[&'static str]| [&gen[..], extra].concat();
    assert_refused(d, &with(&["--threads", "100000"]), "threads", &[]);
    assert_refused(d, &with(&["--variant", "all"]), "one variant", &[]);
    assert_refused(
        d,
        &[
            "bench", "--ops", "sum", "--dtypes", "i32", "--sizes", "1000", "--param", "bogus=1",
        ],
        "--param",
        &[],
    );
}

#[test]
fn analyzer_sizes_and_parameters_are_checked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    assert_refused(
        d,
        &["analyze", "reduce1", "--global", "512", "--local", "0"],
        "--local",
        &[],
    );
    assert_refused(
        d,
        &["analyze", "reduce1", "--global", "512", "--param", "WG=0"],
        "WG",
        &[],
    );
    assert_refused(
        d,
        &["analyze", "reduce1", "--param", "bogus=4"],
        "no parameter bogus",
        &[],
    );
    assert_refused(
        d,
        &[
            "analyze",
            "reduce1",
            "--global",
            "4294967296x4294967296x4294967296",
        ],
        "2^32 work-items",
        &[],
    );
    assert_refused(
        d,
        &["analyze", "reduce1", "--global", "0"],
        "at least 1",
        &[],
    );
    assert_refused(
        d,
        &["analyze", "reduce1", "--banks", "100000000"],
        "banks",
        &[],
    );
}

/// A kernel file around `body`, analyzed over one group of 32.
fn analyze_kernel(d: &Path, name: &str, text: &str, extra: &[&str]) -> (PathBuf, Output) {
    let path = write(d, name, text.as_bytes());
    let mut args = vec![
        "analyze",
        s(&path),
        "--global",
        "32",
        "--local",
        "32",
        "--arg",
        "out=buffer:float:32:zeros",
    ];
    args.extend_from_slice(extra);
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = redlab_in(d, &refs);
    (path, out)
}

fn kernel(body: &str) -> String {
    format!("__kernel void k(__global float* out) {{\n{body}\n}}\n")
}

fn assert_kernel_refused(d: &Path, text: &str, needle: &str, extra: &[&str]) {
    let (path, out) = analyze_kernel(d, "k.cl", text, extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{needle}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{needle}: {stderr}");
    assert!(stderr.contains(needle), "'{needle}' not in: {stderr}");
    assert!(path.exists());
}

#[test]
fn analyzer_arrays_and_memory_are_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    assert_kernel_refused(
        d,
        &kernel("__local float a[-1]; out[0] = 1.0f;"),
        "not positive",
        &[],
    );
    assert_kernel_refused(
        d,
        &kernel("__local float a[1 << 30]; a[0] = 1.0f; out[0] = a[0];"),
        "memory limit",
        &[],
    );
    assert_kernel_refused(
        d,
        &kernel("__local float a[1L << 40][1L << 40]; out[0] = 1.0f;"),
        "GiB",
        &[],
    );
    assert_kernel_refused(
        d,
        &kernel("float p[1 << 26]; p[0] = 1.0f; out[0] = p[0];"),
        "memory limit",
        &[],
    );
    let (_, out) = analyze_kernel(
        d,
        "b.cl",
        "__kernel void k(__global float* in, __global float* out) { out[0] = in[0]; }",
        &["--arg", "in=buffer:float:2^40:random"],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("memory limit"));
}

#[test]
fn analyzer_deep_nesting_is_an_error_not_a_stack_overflow() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let cases = [
        format!("out[0] = {}1{};", "(".repeat(2000), ")".repeat(2000)),
        format!("{}out[0] = 1.0f;", "if (1) ".repeat(5000)),
        format!("{}out[0] = 1.0f;{}", "{".repeat(10_000), "}".repeat(10_000)),
        format!("out[0] = {}1;", "(float)".repeat(10_000)),
        format!("out[0] = {}1;", "1 ? ".repeat(10_000).replace('?', "? 1 :")),
        format!("out[0] = {}1;", "-".repeat(100_000)),
        format!("out[0] = 1{};", " + 1".repeat(100_000)),
    ];
    for body in cases {
        assert_kernel_refused(d, &kernel(&body), "nested deeper", &[]);
    }
}

#[test]
fn analyzer_preprocessor_is_bounded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    assert_kernel_refused(d, "#include \"/dev/zero\"\n", "not a regular file", &[]);
    let mut bomb = String::from("#define A0 x x\n");
    for k in 1..40 {
        bomb.push_str(&format!("#define A{k} A{} A{}\n", k - 1, k - 1));
    }
    bomb.push_str(&kernel("A39"));
    assert_kernel_refused(d, &bomb, "tokens", &[]);
    // 4,000 chained definitions: refused quickly at the nesting bound.
    let mut chain = String::from("#define D0 1.0f\n");
    for k in 1..4000 {
        chain.push_str(&format!("#define D{k} D{}\n", k - 1));
    }
    chain.push_str(&kernel("out[0] = D3999;"));
    let started = std::time::Instant::now();
    assert_kernel_refused(d, &chain, "nested deeper", &[]);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn analyzer_long_programs_and_endless_loops_finish() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // 80,000 statements: linear time (a report that looked each line's text up from the
    // top of the file took about 50 s here, quadratic in the lines). Each work-item
    // updates its own element (one shared element would be a global race, reported).
    let body = "out[get_local_id(0)] += 1.0f;\n".repeat(80_000);
    let started = std::time::Instant::now();
    let (_, out) = analyze_kernel(d, "long.cl", &kernel(&body), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // An endless loop stops at the time limit with a clear error.
    let started = std::time::Instant::now();
    assert_kernel_refused(
        d,
        &kernel("for (;;) { out[0] += 1.0f; }"),
        "time limit",
        &["--max-seconds", "2"],
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // With the default limits, a loop one work-item never leaves stops within seconds
    // (it ran for minutes when only the total step count limited it).
    let started = std::time::Instant::now();
    assert_kernel_refused(
        d,
        &kernel("if (get_local_id(0) == 5) { while (out[1] < 2.0f) { out[5] += 1.0f; } }"),
        "without finishing (an endless loop? raise --max-warp-steps)",
        &[],
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn outputs_never_overwrite_inputs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let records = write(d, "r.jsonl", b"{\"not\": \"a record\"}\n");
    assert_refused(
        d,
        &["report", s(&records), "--out", s(&records)],
        "same file",
        &[&records],
    );
    let page = write(d, "page.html", b"my own page");
    assert_refused(
        d,
        &["report", s(&records), "--out", s(&page)],
        "--force",
        &[&page],
    );
    let kernel_file = write(d, "k.cl", kernel("out[0] = 1.0f;").as_bytes());
    assert_refused(
        d,
        &[
            "analyze",
            s(&kernel_file),
            "--global",
            "32",
            "--local",
            "32",
            "--html",
            s(&kernel_file),
        ],
        "same file",
        &[&kernel_file],
    );
    let header = write(d, "h.cl", b"#define ONE 1.0f\n");
    let including = write(
        d,
        "i.cl",
        format!("#include \"h.cl\"\n{}", kernel("out[0] = ONE;")).as_bytes(),
    );
    assert_refused(
        d,
        &[
            "analyze",
            s(&including),
            "--global",
            "32",
            "--local",
            "32",
            "--arg",
            "out=buffer:float:32:zeros",
            "--html",
            s(&header),
            "--force",
        ],
        "--html output",
        &[&header, &including],
    );
    let both = d.join("both");
    assert_refused(
        d,
        &[
            "bench",
            "--sizes",
            "1000",
            "--json",
            s(&both),
            "--report",
            s(&both),
        ],
        "same file",
        &[],
    );
    assert!(!both.exists());
    let foreign = write(d, "data.bin", &[1, 2, 3, 4]);
    assert_refused(
        d,
        &["bench", "--sizes", "1000", "--json", s(&foreign)],
        "JSON lines",
        &[&foreign],
    );
}

/// A short bench of i32 sums over `sizes`, appending its records to `records`.
fn quick_bench(d: &Path, sizes: &str, records: &Path) {
    let args = [
        "bench",
        "--ops",
        "sum",
        "--dtypes",
        "i32",
        "--sizes",
        sizes,
        "--min-reps",
        "2",
        "--min-time",
        "0",
        "--json",
        s(records),
        "--quiet",
    ];
    let out = redlab_in(d, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bench_appends_records_on_a_fresh_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let records = write(d, "r.jsonl", b"{\"earlier\": true}");
    quick_bench(d, "1000", &records);
    let text = std::fs::read_to_string(&records).expect("records");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "{\"earlier\": true}");
    assert!(lines.len() >= 2);
    for line in &lines[1..] {
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(record["n"], 1000);
    }
}

#[test]
fn report_of_empty_rows_finishes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let records = d.join("r.jsonl");
    quick_bench(d, "0,1000", &records);
    // A hand-edited record of n = 0 with a positive rate drew a log axis from 0.
    let text = std::fs::read_to_string(&records).expect("records");
    let mut first: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("a row")).expect("json");
    first["n"] = 0.into();
    first["gbps"] = 12.5.into();
    let edited = write(d, "edited.jsonl", format!("{first}\n{text}").as_bytes());
    let page = d.join("p.html");
    let out = redlab_in(d, &["report", s(&edited), "--out", s(&page)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(page.exists());
}

#[test]
fn a_strategy_with_its_own_float_order_is_verified_by_the_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let devices = redlab_in(d, &["devices", "--json"]);
    let listing = String::from_utf8_lossy(&devices.stdout);
    if !listing.contains("opencl:0") {
        assert!(
            std::env::var("REDLAB_REQUIRE_OPENCL").is_err(),
            "REDLAB_REQUIRE_OPENCL is set but there is no OpenCL device"
        );
        return;
    }
    let out = redlab_in(
        d,
        &[
            "run",
            "--op",
            "sum",
            "--dtype",
            "f32",
            "--n",
            "1000003",
            "--device",
            "opencl:0",
            "--variant",
            "reduce2",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("verified  yes"), "{stdout}");
}
