//! Multi-process reductions without a GPU: `redlab run --rank R --world W --rendezvous
//! …` started as W processes on the CPU, over TCP and over a shared folder. Every rank
//! must print the bits (and index) of the one-process run, for float sums, integer
//! minima and argmax, on sizes around tile and subtree boundaries; axis and segment
//! reductions and statistics split by outputs must write the one-process file byte for
//! byte; and bad rank options end as one clear line.

mod common;

use std::process::{Command, Stdio};

use common::{assert_clean_error, json_of, listening_port, redlab};
use serde_json::Value as Json;

/// Starts `world` ranks at `rendezvous` and returns each one's JSON record. A TCP port
/// that another program took between [`listening_port`] choosing it and rank 0 binding
/// it (seen once in CI: "Address already in use") is replaced by a fresh one, twice at
/// most.
fn run_ranks(base: &[&str], world: usize, rendezvous: &str) -> Vec<Json> {
    let mut rendezvous = rendezvous.to_string();
    for _ in 0..3 {
        let outputs = start_ranks(base, world, &rendezvous);
        let port_taken = rendezvous.starts_with("tcp://")
            && outputs
                .iter()
                .any(|o| String::from_utf8_lossy(&o.stderr).contains("Address already in use"));
        if !port_taken {
            return outputs.iter().map(json_of).collect();
        }
        rendezvous = format!("tcp://127.0.0.1:{}", listening_port());
    }
    panic!("three ports in a row were taken");
}

/// Starts `world` ranks at `rendezvous` and waits for every one.
fn start_ranks(base: &[&str], world: usize, rendezvous: &str) -> Vec<std::process::Output> {
    let children: Vec<_> = (0..world)
        .map(|rank| {
            Command::new(env!("CARGO_BIN_EXE_redlab"))
                .args(base)
                .args(["--json", "--threads", "1", "--rendezvous-timeout", "60"])
                .args(["--rank", &rank.to_string(), "--world", &world.to_string()])
                .args(["--rendezvous", rendezvous])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("rank starts")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("rank ends"))
        .collect()
}

#[test]
fn every_rank_prints_the_one_process_bits() {
    let folder = std::env::temp_dir().join(format!("redlab-ranks-{}", std::process::id()));
    let mut round = 0;
    for (op, dtype) in [
        ("sum", "f32"),
        ("sum", "f64"),
        ("min", "i32"),
        ("argmax", "f32"),
    ] {
        for n in ["0", "1", "100003", "262147"] {
            let base = ["run", "--op", op, "--dtype", dtype, "--n", n, "--seed", "7"];
            let single = json_of(&redlab(&[&base[..], &["--json"]].concat()));
            for world in [2, 3] {
                round += 1;
                let rendezvous = if round % 2 == 0 {
                    format!("tcp://127.0.0.1:{}", listening_port())
                } else {
                    format!("file:{}-{round}", folder.display())
                };
                let records = run_ranks(&base, world, &rendezvous);
                let mut covered = 0;
                for (rank, r) in records.iter().enumerate() {
                    let what = format!("{op} {dtype} n={n} rank {rank}/{world} via {rendezvous}");
                    assert_eq!(r["rank"], rank, "{what}");
                    for field in ["value_bits", "index", "empty"] {
                        assert_eq!(r[field], single[field], "{what}: {field}");
                    }
                    let shard = r["shard"].as_array().expect("shard");
                    let (start, end) = (shard[0].as_u64(), shard[1].as_u64());
                    // A rank without subtrees (fewer subtrees than ranks) holds nothing.
                    if start != end {
                        assert_eq!(start, Some(covered), "{what}: shards in rank order");
                        covered = end.expect("end");
                    }
                }
                assert_eq!(
                    covered,
                    n.parse::<u64>().expect("n"),
                    "shards cover the input"
                );
                if rendezvous.starts_with("file:") {
                    let path = rendezvous.trim_start_matches("file:");
                    assert!(
                        !std::path::Path::new(path).exists(),
                        "rank 0 removed {path}"
                    );
                }
            }
        }
    }
}

#[test]
fn ranks_that_make_their_part_in_place_give_the_one_process_bits() {
    let mut devices = vec!["cpu"];
    if redlab::Device::open("opencl:0", None).is_ok() {
        devices.push("opencl:0");
    }
    for device in devices {
        for (op, dtype) in [("sum", "f32"), ("argmin", "f64"), ("max", "i32")] {
            let base = [
                "run", "--op", op, "--dtype", dtype, "--n", "262147", "--seed", "5", "--dist",
                "hashed", "--device", device,
            ];
            let single = json_of(&redlab(&[&base[..], &["--json"]].concat()));
            assert_eq!(single["verified"], true, "{device} {op} {dtype}");
            let rendezvous = format!("tcp://127.0.0.1:{}", listening_port());
            // Made once, reduced three times in place: a kernel time per repeat.
            let repeated = [&base[..], &["--repeat", "3"]].concat();
            for (rank, r) in run_ranks(&repeated, 2, &rendezvous).iter().enumerate() {
                let what = format!("{device} {op} {dtype} rank {rank}");
                assert!(
                    r["generate_on_device_s"].is_number(),
                    "{what}: made in place"
                );
                assert_eq!(
                    r["kernel_runs_s"].as_array().map(Vec::len),
                    Some(3),
                    "{what}: one time per repeat"
                );
                for field in ["value_bits", "index", "empty"] {
                    assert_eq!(r[field], single[field], "{what}: {field}");
                }
            }
        }
    }
}

#[test]
fn bad_rank_options_end_as_one_clear_line() {
    let base = ["run", "--op", "sum", "--dtype", "f32", "--n", "1000"];
    let port = format!("tcp://127.0.0.1:{}", listening_port());
    assert_clean_error(
        &[
            &base[..],
            &["--rank", "2", "--world", "2", "--rendezvous", &port],
        ]
        .concat(),
        "is not one of the 2 ranks",
    );
    assert_clean_error(
        &[
            &base[..],
            &["--rank", "0", "--world", "2", "--rendezvous", "udp://x:1"],
        ]
        .concat(),
        "neither tcp://HOST:PORT nor file:PATH",
    );
    // Nobody at the address: the member gives up at the timeout and says so.
    assert_clean_error(
        &[
            &base[..],
            &["--rank", "1", "--world", "2", "--rendezvous", &port],
            &["--rendezvous-timeout", "0.3"],
        ]
        .concat(),
        "did not answer",
    );
    let port = format!("tcp://127.0.0.1:{}", listening_port());
    let rank0 = ["--rank", "0", "--world", "2", "--rendezvous", &port];
    assert_clean_error(
        &[
            &["run", "--stat", "mean", "--dtype", "f32", "--n", "100"],
            &rank0[..],
        ]
        .concat(),
        "runs in one process",
    );
    assert_clean_error(
        &[
            &[
                "run",
                "--map",
                "x*x",
                "--combine",
                "sum",
                "--dtype",
                "f32",
                "--shape",
                "10x10",
                "--axis",
                "1",
            ],
            &rank0[..],
        ]
        .concat(),
        "user-defined reductions along axes or over segments run in one process",
    );
    assert_clean_error(
        &[
            &base[..],
            &[
                "--rank",
                "0",
                "--world",
                "2",
                "--rendezvous",
                &port,
                "--repeat",
                "3",
            ],
        ]
        .concat(),
        "give --dist hashed",
    );
}

#[test]
fn user_defined_reductions_over_ranks_give_the_one_process_bits() {
    let mut devices = vec!["cpu"];
    if redlab::Device::open("opencl:0", None).is_ok() {
        devices.push("opencl:0");
    }
    let cases: [&[&str]; 6] = [
        // A dot product of two generated inputs: float sum, canonical subtrees.
        &[
            "--map",
            "x*y",
            "--combine",
            "sum",
            "--dtype",
            "f32",
            "--n",
            "100003",
        ],
        // A map that reads the index: each rank's subtrees see their global i.
        &[
            "--map",
            "x*i",
            "--combine",
            "sum",
            "--dtype",
            "f64",
            "--n",
            "70001",
        ],
        // A custom, non-associative combine: roots joined by the expression in tree order.
        &[
            "--map",
            "x",
            "--combine",
            "a + b + (a % 7) * (b % 5)",
            "--identity",
            "0",
            "--dtype",
            "i32",
            "--n",
            "50021",
        ],
        // A selection with global indices, whole runs per rank.
        &[
            "--map",
            "x*x",
            "--combine",
            "argmax",
            "--dtype",
            "f32",
            "--n",
            "65537",
        ],
        // post applied once, to the joined value.
        &[
            "--map",
            "x*x",
            "--combine",
            "sum",
            "--post",
            "sqrt(r)",
            "--dtype",
            "f64",
            "--n",
            "30011",
        ],
        // Nothing to reduce: the empty result on every rank.
        &[
            "--map",
            "x",
            "--combine",
            "sum",
            "--dtype",
            "f32",
            "--n",
            "0",
        ],
    ];
    for device in devices {
        for case in cases {
            let base = [&["run", "--seed", "7", "--device", device][..], case].concat();
            let what = format!("{device} {case:?}");
            let single = json_of(&redlab(&[&base[..], &["--json"]].concat()));
            assert_eq!(single["verified"], true, "{what}: one process");
            let rendezvous = format!("tcp://127.0.0.1:{}", listening_port());
            let ranks = run_ranks(&base, 3, &rendezvous);
            assert_eq!(ranks.len(), 3, "{what}");
            for (rank, r) in ranks.iter().enumerate() {
                for field in ["value_bits", "index", "empty"] {
                    assert_eq!(r[field], single[field], "{what} rank {rank}: {field}");
                }
            }
        }
    }
}

/// Runs `args` in one process and as `world` ranks, each with its own `--out`, and
/// checks that every rank printed the one-process outputs' bits and that rank 0 wrote
/// the same file byte for byte. Returns the ranks' records.
fn ranks_match_one_process(args: &[&str], world: usize, dir: &std::path::Path) -> Vec<Json> {
    let what = format!("{args:?} on {world} ranks");
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let single_out = dir.join(format!("single-{call}.npy"));
    let ranks_out = dir.join(format!("ranks-{call}.npy"));
    let single = json_of(&redlab(
        &[
            args,
            &["--json", "--out", single_out.to_str().expect("utf-8")],
        ]
        .concat(),
    ));
    assert_eq!(single["verified"], true, "{what}: one process");
    let rendezvous = format!("tcp://127.0.0.1:{}", listening_port());
    let records = run_ranks(
        &[args, &["--out", ranks_out.to_str().expect("utf-8")]].concat(),
        world,
        &rendezvous,
    );
    let mut covered = 0;
    for (rank, r) in records.iter().enumerate() {
        assert_eq!(r["rank"], rank, "{what}");
        assert_eq!(r["verified"], true, "{what}: rank {rank}");
        assert_eq!(r["outputs"], single["outputs"], "{what}: rank {rank}");
        assert_eq!(r["out_shape"], single["out_shape"], "{what}: rank {rank}");
        assert_eq!(
            r["values"], single["values"],
            "{what}: rank {rank} shown values"
        );
        for field in ["value_bits", "outputs_digest"] {
            assert_eq!(r[field], records[0][field], "{what}: rank {rank} {field}");
        }
        covered += r["rank_outputs"].as_u64().expect("rank outputs");
    }
    assert_eq!(
        Some(covered),
        single["outputs"].as_u64(),
        "{what}: every output reduced by exactly one rank"
    );
    let one = std::fs::read(&single_out).expect("one-process result");
    let many = std::fs::read(&ranks_out).expect("rank 0 wrote the result");
    assert!(one == many, "{what}: the result files differ");
    records
}

#[test]
fn ranks_split_axis_and_segment_reductions_with_the_one_process_bits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let offsets: Vec<i64> = vec![0, 0, 1, 500, 503, 2048, 2049, 4099, 6000, 10007];
    let bytes: Vec<u8> = offsets.iter().flat_map(|v| v.to_le_bytes()).collect();
    let offsets_path = dir.path().join("offsets.npy");
    let dict = format!(
        "{{'descr': '<i8', 'fortran_order': False, 'shape': ({},), }}",
        offsets.len()
    );
    std::fs::write(&offsets_path, common::npy_with_header(&dict, &bytes)).expect("write");
    let offsets_arg = offsets_path.to_str().expect("utf-8");
    let cases: [&[&str]; 7] = [
        &[
            "--op", "sum", "--dtype", "f32", "--shape", "37x1001", "--axis", "1",
        ],
        &[
            "--op", "max", "--dtype", "i32", "--shape", "1001x37", "--axis", "0",
        ],
        &[
            "--op", "argmax", "--dtype", "f64", "--shape", "5x7x11", "--axis", "0,2",
        ],
        &[
            "--op",
            "sum",
            "--dtype",
            "f64",
            "--n",
            "10007",
            "--segment-size",
            "97",
        ],
        &[
            "--op",
            "sum",
            "--dtype",
            "f32",
            "--n",
            "10007",
            "--segments",
            offsets_arg,
        ],
        &[
            "--stat", "var", "--ddof", "1", "--dtype", "f32", "--shape", "64x300", "--axis", "1",
        ],
        // One output: rank 0 reduces it whole, the others send nothing.
        &["--op", "min", "--dtype", "f32", "--shape", "33x33"],
    ];
    for case in cases {
        for world in [2, 3] {
            let args = [&["run", "--seed", "11"][..], case].concat();
            let records = ranks_match_one_process(&args, world, dir.path());
            if case.contains(&"33x33") {
                assert_eq!(records[0]["rank_outputs"], 1, "{case:?}: rank 0 has it");
            } else {
                // Uneven segments may leave a rank without a run of its own.
                let working = records
                    .iter()
                    .filter(|r| r["rank_outputs"].as_u64() > Some(0))
                    .count();
                assert!(working >= 2, "{case:?}: the outputs are split");
            }
        }
    }
    // An input file every rank reads: each rank takes only its block.
    let input = dir.path().join("input.npy");
    let data: Vec<u8> = (0..60 * 50)
        .flat_map(|k: u32| ((k.wrapping_mul(2654435761) >> 7) as f64 / 3.0 - 1e6).to_le_bytes())
        .collect();
    let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (60, 50), }";
    std::fs::write(&input, common::npy_with_header(dict, &data)).expect("write");
    let input_arg = input.to_str().expect("utf-8");
    for axis in ["0", "1"] {
        ranks_match_one_process(
            &["run", "--op", "sum", "--input", input_arg, "--axis", axis],
            2,
            dir.path(),
        );
    }
}
