//! Replays the fuzzers' corpora (`fuzz/corpus/<target>`) with the stable toolchain and
//! overflow checks on, so every input the coverage-guided runs kept is checked again on
//! each change, on every machine that runs the tests, against the same properties
//! (`redlab::fuzzing`).

use std::path::{Path, PathBuf};

/// The inputs of one target's corpus; the corpus must exist and be non-empty.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut inputs: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .map(|path| {
            let bytes = std::fs::read(&path).expect("readable");
            (path, bytes)
        })
        .collect();
    inputs.sort();
    assert!(inputs.len() > 10, "{target}: corpus too small");
    inputs
}

/// Runs `check` on every input of `target`'s corpus, naming the input that fails.
fn replay(target: &str, check: fn(&[u8])) {
    for (path, bytes) in corpus(target) {
        let outcome = std::panic::catch_unwind(|| check(&bytes));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
    }
}

#[test]
fn npy_corpus() {
    replay("npy", redlab::fuzzing::npy);
}

#[test]
fn raw_corpus() {
    replay("raw", redlab::fuzzing::raw);
}

#[test]
fn size_corpus() {
    replay("size", redlab::fuzzing::size);
}

#[test]
fn expression_corpus() {
    replay("expression", redlab::fuzzing::expression);
}

#[test]
fn opencl_c_corpus() {
    replay("opencl_c", redlab::fuzzing::opencl_c);
}

#[test]
fn simulator_corpus() {
    replay("simulator", redlab::fuzzing::simulator);
}

#[test]
fn report_corpus() {
    replay("report", redlab::fuzzing::report);
}
