//! The lab's tools end to end: `redlab tune` writes a database that `auto` then reads
//! (on PoCL where OpenCL is present; `REDLAB_REQUIRE_OPENCL=1` makes its absence a
//! failure), `run --explain` says why, `bench --report` writes a self-contained page,
//! and `--device auto` falls back to the CPU with a reason where there is no CUDA GPU.

use std::process::Output;

use assert_cmd::Command;
use serde_json::Value as Json;

fn redlab(args: &[&str], tuning_dir: &std::path::Path) -> Output {
    Command::cargo_bin("redlab")
        .expect("binary is built")
        .env("REDLAB_TUNING_DIR", tuning_dir)
        .args(args)
        .output()
        .expect("binary runs")
}

/// Fails with the command's stderr unless it succeeded.
fn assert_succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn opencl_present(dir: &std::path::Path) -> bool {
    let out = redlab(&["devices", "--json"], dir);
    let j: Json = serde_json::from_slice(&out.stdout).expect("devices prints JSON");
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
fn tune_writes_a_database_that_auto_then_uses() {
    let dir = tempfile::tempdir().expect("temp dir");
    if !opencl_present(dir.path()) {
        return;
    }
    let out = redlab(
        &[
            "tune",
            "--device",
            "opencl:0",
            "--ops",
            "max",
            "--dtypes",
            "i32",
            "--sizes",
            "4099",
            "--budget",
            "2",
            "--variants",
            "production,two-stage",
            "--out-dir",
            dir.path().to_str().expect("utf-8"),
        ],
        dir.path(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read_dir(dir.path().join("opencl"))
        .expect("opencl folder")
        .next()
        .expect("one file")
        .expect("entry")
        .path();
    let db: Json =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("database")).expect("JSON");
    let entries = db["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "{db}");
    assert_eq!(
        (
            entries[0]["op"].as_str(),
            entries[0]["dtype"].as_str(),
            entries[0]["n"].as_u64()
        ),
        (Some("max"), Some("i32"), Some(4099))
    );
    assert!(entries[0]["gbps"].as_f64().is_some_and(|g| g > 0.0));
    assert!(db["command"].as_str().is_some_and(|c| c.contains("tune")));
    // The database sits where `auto` looks first.
    let out = redlab(
        &[
            "run",
            "--op",
            "max",
            "--dtype",
            "i32",
            "--n",
            "5000",
            "--device",
            "opencl:0",
            "--explain",
            "--json",
        ],
        dir.path(),
    );
    let j: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let explain: Vec<&str> = j["explain"]
        .as_array()
        .expect("explain")
        .iter()
        .filter_map(Json::as_str)
        .collect();
    assert!(
        explain
            .iter()
            .any(|l| l.contains("from your tuning database")),
        "{explain:?}"
    );
    assert_eq!(j["verified"], true);
    // `bench --variants auto` times that same choice and says which it was.
    let records = dir.path().join("auto.jsonl");
    let out = redlab(
        &[
            "bench",
            "--device",
            "opencl:0",
            "--variants",
            "auto",
            "--ops",
            "max",
            "--dtypes",
            "i32",
            "--sizes",
            "5000",
            "--min-reps",
            "2",
            "--min-time",
            "0",
            "--quiet",
            "--json",
            records.to_str().expect("utf-8"),
        ],
        dir.path(),
    );
    assert_succeeded(&out);
    let row: Json = serde_json::from_str(
        std::fs::read_to_string(&records)
            .expect("records")
            .lines()
            .next()
            .expect("one row"),
    )
    .expect("JSON");
    assert_eq!(row["variant"], "auto");
    assert_eq!(row["status"], "ok");
    let choice = row["auto_choice"].as_str().expect("auto_choice");
    let tuned = entries[0]["variant"].as_str().expect("tuned variant");
    assert!(
        choice.starts_with(tuned),
        "{choice} is not the tuned {tuned}"
    );
    // Another size tuned with --merge-from keeps the first entry, and the two ranges
    // meet between them.
    let merged_dir = dir.path().join("merged");
    let out = redlab(
        &[
            "tune",
            "--device",
            "opencl:0",
            "--ops",
            "max",
            "--dtypes",
            "i32",
            "--sizes",
            "65536",
            "--budget",
            "2",
            "--variants",
            "production",
            "--merge-from",
            file.to_str().expect("utf-8"),
            "--out-dir",
            merged_dir.to_str().expect("utf-8"),
        ],
        dir.path(),
    );
    assert_succeeded(&out);
    let merged_file = merged_dir
        .join("opencl")
        .join(file.file_name().expect("name"));
    let merged: Json =
        serde_json::from_str(&std::fs::read_to_string(&merged_file).expect("merged database"))
            .expect("JSON");
    let sizes: Vec<(u64, u64)> = merged["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["n"].as_u64().expect("n"),
                e["n_max"].as_u64().expect("n_max"),
            )
        })
        .collect();
    let middle = ((4099.0f64 * 65536.0).sqrt()) as u64;
    assert_eq!(sizes, vec![(4099, middle), (65536, u64::MAX)], "{merged}");
    // A database that is not one is refused before any tuning.
    let out = redlab(
        &[
            "tune",
            "--device",
            "opencl:0",
            "--merge-from",
            records.to_str().expect("utf-8"),
            "--out-dir",
            merged_dir.to_str().expect("utf-8"),
        ],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a tuning database"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn retuning_with_merge_from_times_the_previous_entry_too() {
    let dir = tempfile::tempdir().expect("temp dir");
    if !opencl_present(dir.path()) {
        return;
    }
    // A budget too small for any sampling: only the defaults, and, when merging, the
    // previous entry's configuration are timed.
    let tune = |out_dir: &std::path::Path, merge: Option<&std::path::Path>| {
        let mut args = vec![
            "tune",
            "--device",
            "opencl:0",
            "--ops",
            "max",
            "--dtypes",
            "i32",
            "--sizes",
            "4099",
            "--budget",
            "0.001",
            "--variants",
            "production",
            "--out-dir",
            out_dir.to_str().expect("utf-8"),
        ];
        if let Some(m) = merge {
            args.extend(["--merge-from", m.to_str().expect("utf-8")]);
        }
        let out = redlab(&args, dir.path());
        assert_succeeded(&out);
        let file = std::fs::read_dir(out_dir.join("opencl"))
            .expect("written")
            .next()
            .expect("one database")
            .expect("entry")
            .path();
        let db: Json =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
        (file, db)
    };
    let (first, mut db) = tune(&dir.path().join("first"), None);
    assert_eq!(db["entries"][0]["tried"], 1, "{db}");
    // The previous entry asks for another configuration; re-tuning must time it.
    db["entries"][0]["params"] = serde_json::json!({ "UNROLL": 4 });
    std::fs::write(&first, db.to_string()).expect("rewrite");
    let (_, merged) = tune(&dir.path().join("merged"), Some(&first));
    let entry = &merged["entries"][0];
    assert_eq!(entry["tried"], 2, "{merged}");
    let params = entry["params"].to_string();
    assert!(params == "{}" || params == r#"{"UNROLL":4}"#, "{params}");
}

#[test]
fn bench_report_is_one_self_contained_page_with_charts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("report.html");
    let out = redlab(
        &[
            "bench",
            "--ops",
            "sum,max",
            "--dtypes",
            "f32",
            "--sizes",
            "2^10,2^14",
            "--min-reps",
            "2",
            "--min-time",
            "0",
            "--report",
            page.to_str().expect("utf-8"),
            "--quiet",
        ],
        dir.path(),
    );
    assert_succeeded(&out);
    let html = std::fs::read_to_string(&page).expect("report written");
    assert!(html.matches("<svg").count() >= 4, "charts for each problem");
    assert!(html.contains("bandwidth against size") && html.contains("read roof"));
    assert!(!html.contains("<script"));
    let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(html.matches("http").count(), namespaces, "nothing to fetch");
}

#[test]
fn bench_report_has_a_section_per_shape() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("shapes.html");
    let out = redlab(
        &[
            "bench",
            "--shapes",
            "64x96:1,64x96:0,6x7x8:0+2",
            "--ops",
            "sum,max",
            "--dtypes",
            "f32",
            "--min-reps",
            "2",
            "--min-time",
            "0",
            "--report",
            page.to_str().expect("utf-8"),
            "--quiet",
        ],
        dir.path(),
    );
    assert_succeeded(&out);
    let html = std::fs::read_to_string(&page).expect("report written");
    for heading in [
        "<h2>64×96, axis 1</h2>",
        "<h2>64×96, axis 0</h2>",
        "<h2>6×7×8, axes 0, 2</h2>",
    ] {
        assert!(html.contains(heading), "{heading} missing");
    }
    assert_eq!(html.matches("<svg").count(), 3, "one chart per shape");
    // Shapes share their element count: no chart against n mixes them.
    assert!(!html.contains("bandwidth against size"));
    // Each row says what ran it.
    assert!(html.contains("cpu short rows") && html.contains("cpu columns"));
}

#[test]
fn report_rebuilds_the_page_from_records_and_rejects_other_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let records = dir.path().join("rows.jsonl");
    let out = redlab(
        &[
            "bench",
            "--ops",
            "sum",
            "--dtypes",
            "i32",
            "--sizes",
            "2^10,2^12",
            "--min-reps",
            "2",
            "--min-time",
            "0",
            "--json",
            records.to_str().expect("utf-8"),
            "--quiet",
        ],
        dir.path(),
    );
    assert_succeeded(&out);
    let page = dir.path().join("page.html");
    let out = redlab(
        &[
            "report",
            records.to_str().expect("utf-8"),
            "--out",
            page.to_str().expect("utf-8"),
        ],
        dir.path(),
    );
    assert_succeeded(&out);
    assert!(std::fs::read_to_string(&page)
        .expect("page")
        .contains("sum i32: bandwidth against size"));
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"not\": \"a record\"}\n").expect("write");
    let out = redlab(
        &[
            "report",
            bad.to_str().expect("utf-8"),
            "--out",
            page.to_str().expect("utf-8"),
            "--force",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.jsonl:1: not a bench record"));
}

#[test]
fn device_auto_explains_its_choice() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = redlab(
        &[
            "run", "--op", "sum", "--dtype", "f32", "--n", "1000", "--device", "auto",
        ],
        dir.path(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_succeeded(&out);
    assert!(text.starts_with("device auto: "), "{text}");
    assert!(text.contains("verified  yes"), "{text}");
}

#[test]
fn tuning_the_cpu_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = redlab(&["tune", "--device", "cpu"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("runs one strategy per problem"), "{err}");
}

#[test]
fn an_unknown_tuning_objective_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = redlab(
        &["tune", "--device", "cpu", "--objective", "fastest"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--objective") && err.contains("graph"),
        "{err}"
    );
}
