//! `redlab analyze` end to end: the JSON fields for a variant and for a user's file,
//! the HTML page, and bad input ending as one clear line on stderr.

mod common;

use common::{assert_clean_error, json_of, redlab};
use serde_json::Value as Json;

fn json(args: &[&str]) -> Json {
    json_of(&redlab(args))
}

#[test]
fn a_variant_reports_every_documented_field_and_its_check() {
    let j = json(&[
        "analyze", "reduce1", "--global", "256", "--local", "256", "--json",
    ]);
    for field in [
        "kernel",
        "global_size",
        "local_size",
        "warp_size",
        "branches",
        "divergent_branches",
        "active_lane_ratio",
        "barriers",
        "errors",
        "lines",
    ] {
        assert!(j.get(field).is_some(), "missing {field}");
    }
    assert_eq!(j["kernel"], "reduce");
    assert_eq!(
        (
            j["global_size"].as_u64(),
            j["local_size"].as_u64(),
            j["warp_size"].as_u64()
        ),
        (Some(256), Some(256), Some(32))
    );
    // One group of 256: the golden numbers of reduce1 (see the analyzer's tests).
    assert_eq!(j["bank_conflicts"]["local_load"], 70);
    assert_eq!(j["bank_conflicts"]["local_store"], 35);
    assert_eq!(j["wavefronts"]["local_load"], 95);
    assert_eq!(j["wavefronts"]["local_store"], 55);
    assert_eq!(j["global"]["load_requests"], 8);
    assert_eq!(j["global"]["load_sectors"], 32);
    assert_eq!(j["global"]["store_requests"], 1);
    assert_eq!(j["global"]["store_sectors"], 1);
    assert_eq!(j["divergent_branches"], 6);
    assert_eq!(j["check"]["ok"], true);
    assert_eq!(j["errors"].as_array().map(Vec::len), Some(0));
    let lines = j["lines"].as_array().expect("lines");
    let hot = lines
        .iter()
        .find(|l| {
            l["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("sdata[index] = combine"))
        })
        .expect("the tree step's line");
    assert_eq!(hot["bank_conflicts"]["local_load"], 70);
}

#[test]
fn a_users_file_with_a_race_reports_it_and_draws_pictures() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kernel = dir.path().join("racy.cl");
    std::fs::write(
        &kernel,
        "__kernel void racy(__global const int* in, __global int* out, __local int* s) {\n\
         \x20   uint l = get_local_id(0);\n\
         \x20   s[l] = in[get_global_id(0)]; // @watch s\n\
         \x20   if (l < 16) s[l] += s[l + 16];\n\
         \x20   barrier(CLK_LOCAL_MEM_FENCE);\n\
         \x20   if (l == 0) out[get_group_id(0)] = s[0] + s[1];\n}\n",
    )
    .expect("write");
    let html = dir.path().join("racy.html");
    let path = kernel.to_str().expect("utf-8");
    let out_html = html.to_str().expect("utf-8");
    let o = redlab(&[
        "analyze",
        path,
        "--global",
        "64",
        "--local",
        "32",
        "--arg",
        "in=buffer:int:64:iota",
        "--arg",
        "out=buffer:int:2:zeros",
        "--arg",
        "s=local:int:32",
        "--json",
        "--html",
        out_html,
    ]);
    // Errors found fail the run (exit code 1), after the full report.
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("the kernel has"));
    let j: Json = serde_json::from_slice(&o.stdout).expect("stdout is one JSON object");
    let errors = j["errors"].as_array().expect("errors");
    assert!(
        errors
            .iter()
            .any(|e| e["kind"] == "local_race" && e["line"] == 4),
        "{errors:?}"
    );
    let page = std::fs::read_to_string(&html).expect("page written");
    assert!(
        page.contains("data-view=\"warps\"") && page.contains("Bank maps"),
        "pictures drawn"
    );
    assert_nothing_fetched(&page);
}

#[test]
fn bad_input_is_one_clear_line() {
    assert_clean_error(
        &["analyze", "no-such-thing", "--global", "64"],
        "neither a file nor a variant",
    );
    assert_clean_error(
        &["analyze", "canonical", "--local", "128"],
        "chooses its own work-group size",
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let kernel = dir.path().join("k.cl");
    std::fs::write(
        &kernel,
        "__kernel void k(__global float* a, uint n) {\n  a[0] = n\n}\n",
    )
    .expect("write");
    let path = kernel.to_str().expect("utf-8");
    assert_clean_error(
        &["analyze", path, "--global", "32", "--local", "32"],
        "k.cl:3:1: expected ';'",
    );
    std::fs::write(
        &kernel,
        "__kernel void k(__global float* a, uint n) { a[0] = n; }\n",
    )
    .expect("write");
    assert_clean_error(
        &["analyze", path, "--global", "32", "--local", "32"],
        "no --arg for parameter a",
    );
    assert_clean_error(
        &[
            "analyze",
            path,
            "--global",
            "32",
            "--local",
            "32",
            "--arg",
            "a=buffer:int:4:zeros",
            "--arg",
            "n=4",
        ],
        "parameter a points to float, the buffer holds int",
    );
    assert_clean_error(
        &[
            "analyze",
            path,
            "--global",
            "30",
            "--local",
            "0",
            "--arg",
            "a=buffer:float:4:zeros",
            "--arg",
            "n=4",
        ],
        "every dimension must be at least 1",
    );
}

#[test]
fn the_segment_kernels_run_in_the_simulator_with_their_check() {
    let j = json(&[
        "analyze", "segments", "--shape", "40x33", "--axis", "0", "--op", "sum", "--dtype", "f32",
        "--json",
    ]);
    assert_eq!(j["kernel"], "column_tiles");
    assert_eq!(j["local_size"].as_u64(), Some(1024));
    assert_eq!(j["check"]["ok"], true, "{j}");
    assert_eq!(j["errors"].as_array().map(Vec::len), Some(0));
    // Rows of two tiles: row tiles, then the tree, as two analyzed passes.
    let j = json(&[
        "analyze", "segments", "--shape", "2x9000", "--axis", "1", "--op", "max", "--dtype", "i32",
        "--json",
    ]);
    assert_eq!(j["check"]["ok"], true, "{j}");
    assert_eq!(j["passes"].as_array().map(Vec::len), Some(2), "{j}");
    // Columns of an order-free operator: column_words folding each class as it arrives,
    // over a partial tile.
    let j = json(&[
        "analyze", "segments", "--shape", "300x132", "--axis", "0", "--op", "max", "--dtype",
        "i32", "--json",
    ]);
    assert_eq!(j["kernel"], "column_words", "{j}");
    assert_eq!(j["check"]["ok"], true, "{j}");
    // 8-byte elements of an order-free operator: wide words (two 16-byte loads).
    let j = json(&[
        "analyze", "segments", "--shape", "300x132", "--axis", "0", "--op", "max", "--dtype",
        "f64", "--json",
    ]);
    assert_eq!(j["kernel"], "column_words", "{j}");
    assert_eq!(j["check"]["ok"], true, "{j}");
    assert_clean_error(&["analyze", "segments", "--axis", "0"], "needs --shape");
}

#[test]
fn maps_run_compiled_into_the_segment_kernels_in_the_simulator() {
    // Each shape takes another kernel; column_words and word_rows lift raw words of the
    // input through the map (MAP_BITS), the others lift element by element.
    for (shape, axis, map, combine, dtype, kernel) in [
        ("300x128", "0", "x*x", "sum", "f32", "column_words"),
        ("200x132", "0", "abs(x)", "sum", "f16", "column_words"),
        ("300x40", "0", "x*x", "sum", "f32", "column_words"),
        ("300x8", "0", "x*x", "sum", "f32", "column_words"),
        ("300x70", "0", "x > 0 ? x : 0", "max", "f64", "column_tiles"),
        ("1024x64", "1", "x*2", "sum", "f32", "word_rows"),
        ("64x33", "1", "x*x", "argmax", "f32", "short_rows_wide"),
        ("3x9000", "1", "x & 255", "xor", "i32", "row_tiles"),
        ("300x70", "0", "x * y", "sum", "f32", "column_tiles"),
        (
            "70x300",
            "1",
            "abs(x - y) + z",
            "max",
            "f64",
            "short_rows_wide",
        ),
    ] {
        let j = json(&[
            "analyze",
            "segments",
            "--shape",
            shape,
            "--axis",
            axis,
            "--map",
            map,
            "--combine",
            combine,
            "--dtype",
            dtype,
            "--json",
        ]);
        assert_eq!(j["kernel"], kernel, "{shape} {map}: {j}");
        assert_eq!(j["check"]["ok"], true, "{shape} {map}: {j}");
        assert_eq!(j["errors"].as_array().map(Vec::len), Some(0), "{j}");
        let problem = j["check"]["problem"].as_str().unwrap_or_default();
        assert!(problem.contains(map), "{problem}");
    }
    assert_clean_error(
        &["analyze", "segments", "--shape", "9x8", "--map", "x*i"],
        "index",
    );
    assert_clean_error(
        &[
            "analyze", "segments", "--shape", "9x8", "--map", "x", "--stat", "var",
        ],
        "not both",
    );
}

#[test]
fn custom_combines_and_accumulators_run_in_the_production_kernel() {
    // A custom combine with its identity, as `redlab run` takes it (the negative
    // identity passes as a value, not a flag), and an accumulator for --op and --map.
    for (args, problem) in [
        (
            &[
                "--map",
                "x * x",
                "--combine",
                "a + b",
                "--identity",
                "0",
                "--dtype",
                "f32",
            ][..],
            "combine 'a + b' in f32",
        ),
        (
            &[
                "--map",
                "x",
                "--combine",
                "max(a, b)",
                "--identity",
                "-1e30",
                "--dtype",
                "f32",
            ],
            "combine 'max(a, b)'",
        ),
        (
            &["--op", "sum", "--dtype", "i16", "--acc", "i32"],
            "sum i16→i32",
        ),
        (
            &["--map", "x * 2", "--dtype", "f16", "--acc", "f64"],
            "combine sum f32→f64",
        ),
    ] {
        let mut all = vec!["analyze", "production", "--json"];
        all.extend_from_slice(args);
        let j = json(&all);
        assert_eq!(j["check"]["ok"], true, "{args:?}: {j}");
        let named = j["check"]["problem"].as_str().unwrap_or_default();
        assert!(named.contains(problem), "{args:?}: {named}");
    }
    assert_clean_error(
        &[
            "analyze",
            "production",
            "--op",
            "sum",
            "--dtype",
            "f32",
            "--acc",
            "i32",
        ],
        "cannot accumulate in i32",
    );
}

#[test]
fn the_statistics_kernels_run_in_the_simulator_with_their_check() {
    // Each shape takes another kernel: columns, a warp per short row, a group per tile,
    // NaN-skipping compaction in a segment's staged row and in short columns' lanes,
    // nanmean over longer columns by the moments' columns kernel first (a group per tile
    // only for the tiles with a NaN), and rows gathered on the host first.
    for (shape, axis, stat, kernel) in [
        ("300x70", "0", "var", "stat_columns"),
        ("300x64", "0", "std", "stat_columns"),
        ("70x300", "1", "logsumexp", "stat_warp_rows"),
        ("3x9000", "1", "std", "stat_tiles"),
        ("40x50", "1", "nanmean", "stat_warp_rows"),
        ("50x40", "0", "nanmean", "stat_short"),
        ("3x700", "1", "nanmean", "stat_warp_rows"),
        ("700x3", "0", "nanmean", "stat_columns"),
        ("3x5x7", "0,2", "nanmax", "stat_thread_tiles"),
        ("300x20", "1", "logsumexp", "stat_thread_tiles"),
    ] {
        let j = json(&[
            "analyze", "segments", "--shape", shape, "--axis", axis, "--stat", stat, "--ddof", "1",
            "--json",
        ]);
        assert_eq!(j["kernel"], kernel, "{shape} {stat}: {j}");
        assert_eq!(j["check"]["ok"], true, "{shape} {stat}: {j}");
        assert_eq!(j["errors"].as_array().map(Vec::len), Some(0), "{j}");
    }
    assert_clean_error(
        &["analyze", "segments", "--shape", "4x4", "--stat", "median"],
        "not a statistic",
    );
}

/// With NaN in the seeded input, nanmean over long columns runs its second pass in the
/// simulator too: `stat_kept` for a few tiles, `stat_kept_columns` when a shape is forced;
/// both checked against the CPU, without errors (races, barriers, bounds).
/// nanmean along the columns of 1100×5 in the simulator.
const NANMEAN_COLUMNS: [&str; 8] = [
    "analyze", "segments", "--shape", "1100x5", "--axis", "0", "--stat", "nanmean",
];

#[test]
fn nanmean_with_nan_runs_its_rerun_of_tiles_in_the_simulator() {
    for (forced, rerun) in [(None, "stat_kept"), (Some("4,1"), "stat_kept_columns")] {
        let args = [
            NANMEAN_COLUMNS.as_slice(),
            &["--nan-share", "0.1", "--json"],
        ]
        .concat();
        let mut command = assert_cmd::Command::cargo_bin("redlab").expect("binary is built");
        command.args(args);
        if let Some(shape) = forced {
            command.env("REDLAB_KEPT_COLUMNS", shape);
        }
        let j = json_of(&command.output().expect("binary runs"));
        let kernels: Vec<&str> = j["passes"]
            .as_array()
            .expect("passes")
            .iter()
            .filter_map(|p| p["kernel"].as_str())
            .collect();
        assert_eq!(kernels, ["stat_columns", rerun], "{forced:?}");
        assert_eq!(j["check"]["ok"], true, "{forced:?}: {}", j["check"]);
        assert_eq!(j["errors"].as_array().map(Vec::len), Some(0), "{forced:?}");
    }
    for (share, dtype, needle) in [
        ("1.5", "f32", "between 0 and 1"),
        ("0.1", "i32", "needs a float --dtype"),
    ] {
        assert_clean_error(
            &[
                NANMEAN_COLUMNS.as_slice(),
                &["--dtype", dtype, "--nan-share", share],
            ]
            .concat(),
            needle,
        );
    }
}

#[test]
fn a_global_size_the_group_does_not_divide_runs_non_uniform_groups() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kernel = dir.path().join("sizes.cl");
    std::fs::write(
        &kernel,
        "__kernel void sizes(__global uint* out) {\n\
         \x20   out[get_global_id(0)] = get_local_size(0) * 100 + get_enqueued_local_size(0);\n}\n",
    )
    .expect("write");
    let args = [
        "analyze",
        kernel.to_str().expect("utf-8"),
        "--global",
        "10",
        "--local",
        "4",
        "--arg",
        "out=buffer:u32:11:zeros",
        "--show",
        "out",
    ];
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let j = json(&with_json);
    assert_eq!(j["partial_work_groups"], 1);
    // Groups of 4, 4 and 2; the eleventh element is past the global size.
    let want: Vec<String> = [404, 404, 404, 404, 404, 404, 404, 404, 204, 204, 0]
        .iter()
        .map(|v: &u32| v.to_string())
        .collect();
    assert_eq!(j["buffers"]["out"], serde_json::json!(want));
    let text = redlab(&args);
    assert!(text.status.success());
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("1 work-group at the edge smaller"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
}

#[test]
fn show_prints_a_buffers_final_contents() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kernel = dir.path().join("halves.cl");
    std::fs::write(
        &kernel,
        "__kernel void halves(__global const int* in, __global int* out) {\n\
         \x20   uint i = get_global_id(0);\n\
         \x20   out[i] = rhadd(in[i], 2147483647);\n}\n",
    )
    .expect("write");
    let j = json(&[
        "analyze",
        kernel.to_str().expect("utf-8"),
        "--global",
        "4",
        "--local",
        "4",
        "--arg",
        "in=buffer:i32:4:iota",
        "--arg",
        "out=buffer:i32:4:zeros",
        "--show",
        "out",
        "--json",
    ]);
    // rhadd never overflows: (i + 2^31 - 1 + 1) >> 1 = 2^30 + i/2 rounded down.
    assert_eq!(
        j["buffers"]["out"],
        serde_json::json!(["1073741824", "1073741824", "1073741825", "1073741825"])
    );
    assert_clean_error(
        &[
            "analyze",
            kernel.to_str().expect("utf-8"),
            "--global",
            "4",
            "--local",
            "4",
            "--arg",
            "in=buffer:i32:4:iota",
            "--arg",
            "out=buffer:i32:4:zeros",
            "--show",
            "nope",
        ],
        "no parameter nope",
    );
}

#[test]
fn declared_access_and_unwritten_buffers_are_checked_from_the_command_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kernel = dir.path().join("acc.cl");
    std::fs::write(
        &kernel,
        "__kernel void acc(__global const int* in, __global int* out) {\n\
         \x20   uint i = get_global_id(0);\n\
         \x20   out[i] += in[i];\n}\n",
    )
    .expect("write");
    let path = kernel.to_str().expect("utf-8");
    let run = |out_spec: &str| {
        let o = redlab(&[
            "analyze",
            path,
            "--global",
            "32",
            "--local",
            "32",
            "--arg",
            "in=buffer:i32:32:iota:ro",
            "--arg",
            out_spec,
            "--json",
        ]);
        let j: Json = serde_json::from_slice(&o.stdout).expect("stdout is one JSON object");
        let kinds: Vec<String> = j["errors"]
            .as_array()
            .expect("errors")
            .iter()
            .map(|e| e["kind"].as_str().expect("kind").to_string())
            .collect();
        (o.status.code(), kinds)
    };
    assert_eq!(run("out=buffer:i32:32:zeros:rw"), (Some(0), vec![]));
    assert_eq!(
        run("out=buffer:i32:32:zeros:wo"),
        (Some(1), vec!["access_violation".to_string()])
    );
    assert_eq!(
        run("out=buffer:i32:32:uninit"),
        (Some(1), vec!["uninitialized_global_read".to_string()])
    );
}

#[test]
fn versions_side_by_side_tell_the_documents_story() {
    let dir = tempfile::tempdir().expect("temp dir");
    let html = dir.path().join("compare.html");
    let out_html = html.to_str().expect("utf-8");
    let o = redlab(&[
        "analyze", "reduce1", "reduce2", "--global", "256", "--local", "64", "--json", "--html",
        out_html,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Json = serde_json::from_slice(&o.stdout).expect("stdout is one JSON object");
    let reports = j["reports"].as_array().expect("one report per version");
    assert_eq!(reports.len(), 2);
    let conflicts = |r: &Json| {
        let c = &r["bank_conflicts"];
        c["local_load"].as_u64().expect("loads") + c["local_store"].as_u64().expect("stores")
    };
    // Interleaved addressing with a strided index conflicts; sequential addressing does
    // not (the reference documents' comparison of versions 2 and 3).
    assert!(conflicts(&reports[0]) > 0, "reduce1 has bank conflicts");
    assert_eq!(conflicts(&reports[1]), 0, "reduce2 has none");
    let page = std::fs::read_to_string(&html).expect("page written");
    for name in [
        "reduce1",
        "reduce2",
        "class=\"cols\"",
        "data-view",
        "Bank maps",
    ] {
        assert!(page.contains(name), "the page shows {name}");
    }
    assert_nothing_fetched(&page);
    // Options that take one target are refused with one clear line.
    common::assert_clean_error(
        &["analyze", "reduce1", "reduce2", "--dump", "out"],
        "take one target",
    );
}

#[test]
fn pages_are_small_and_fetch_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut runs: Vec<Vec<&str>> = ["reduce0", "reduce1", "reduce2", "reduce3", "reduce4"]
        .iter()
        .chain(&["reduce5", "reduce6", "two-stage"])
        .map(|v| vec![*v])
        .collect();
    runs.push(vec!["reduce1", "reduce2", "reduce3"]);
    for (k, targets) in runs.iter().enumerate() {
        for local in ["64", "256"] {
            let html = dir.path().join(format!("{k}-{local}.html"));
            let mut args = vec!["analyze"];
            args.extend_from_slice(targets);
            args.extend_from_slice(&["--global", "256", "--local", local, "--html"]);
            args.push(html.to_str().expect("utf-8"));
            let o = redlab(&args);
            assert!(
                o.status.success(),
                "{targets:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let page = std::fs::read_to_string(&html).expect("page written");
            // The pictures travel as data that the inline script draws: a 256-element run
            // stays well under 100 KB (it was 250-300 KB as static SVG, and 560 KB with a
            // rectangle per run).
            assert!(
                page.len() < 100_000,
                "{targets:?}, local {local}: {} bytes",
                page.len()
            );
            assert_nothing_fetched(&page);
            for wanted in ["data-view=\"warps\"", "id=\"info\"", "<details"] {
                assert!(page.contains(wanted), "{targets:?}: the page has {wanted}");
            }
            // The documents' kernels watch their local array: bank maps are drawn.
            let watched = targets[0].starts_with("reduce");
            assert_eq!(page.contains("data-view=\"banks\""), watched, "{targets:?}");
        }
    }
}

/// No URL but the SVG namespace (which loads nothing), and nothing that loads a resource.
fn assert_nothing_fetched(page: &str) {
    let rest = page.replace("http://www.w3.org/2000/svg", "");
    for bad in [
        "http",
        " src=",
        "href=",
        "fetch(",
        "XMLHttpRequest",
        "import(",
        "url(",
    ] {
        assert!(!rest.contains(bad), "the page loads something: {bad}");
    }
}
