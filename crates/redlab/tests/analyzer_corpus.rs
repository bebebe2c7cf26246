//! The analyzer's corpus (`crates/analyzer/corpus/*.cl`): small kernels, one per bug
//! class and per OpenCL C construct, each carrying its expected verdict, run through
//! `redlab analyze` as a user would. A kernel file says how to run it and what must
//! come out:
//!
//! - `// run: ARGS` — the command-line arguments after the file;
//! - `// <- KIND` at the end of a line — an error of that kind is expected there; the
//!   errors found must be exactly these (none marked: the kernel must come out clean,
//!   exit 0; some marked: exit 1);
//! - `// expect NAME: V V …` — the buffer's final contents (`--show NAME`);
//! - `// refused: TEXT` — the run must end as one clear error line containing TEXT.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::redlab;
use redlab_analyzer::metrics::FindingKind;
use serde_json::Value as Json;

/// What a corpus file expects.
struct Case {
    path: PathBuf,
    args: Vec<String>,
    errors: BTreeSet<(String, u64)>,
    buffers: Vec<(String, Vec<String>)>,
    refused: Option<String>,
}

fn read_case(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).expect("corpus file");
    let mut case = Case {
        path: path.to_path_buf(),
        args: Vec::new(),
        errors: BTreeSet::new(),
        buffers: Vec::new(),
        refused: None,
    };
    for (k, line) in text.lines().enumerate() {
        if let Some(args) = line.strip_prefix("// run:") {
            case.args = args.split_whitespace().map(str::to_string).collect();
        } else if let Some(rest) = line.strip_prefix("// expect ") {
            let (name, values) = rest.split_once(':').expect("// expect NAME: values");
            let values = values.split_whitespace().map(str::to_string).collect();
            case.buffers.push((name.trim().to_string(), values));
        } else if let Some(text) = line.strip_prefix("// refused:") {
            case.refused = Some(text.trim().to_string());
        } else if let Some((_, kind)) = line.split_once("// <- ") {
            case.errors.insert((kind.trim().to_string(), k as u64 + 1));
        }
    }
    assert!(!case.args.is_empty(), "{}: no // run: line", path.display());
    case
}

fn corpus() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../analyzer/corpus");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cl"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read_case(p)).collect()
}

fn check(case: &Case) -> Result<(), String> {
    let name = case.path.display().to_string();
    let mut args = vec!["analyze".to_string(), name.clone()];
    args.extend(case.args.iter().cloned());
    for (buffer, _) in &case.buffers {
        args.extend(["--show".to_string(), buffer.clone()]);
    }
    args.push("--json".to_string());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = redlab(&refs);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if let Some(text) = &case.refused {
        return if out.status.code() == Some(2)
            && stderr.lines().count() == 1
            && stderr.contains(text.as_str())
        {
            Ok(())
        } else {
            Err(format!(
                "{name}: wanted one error line with '{text}', got {:?}: {stderr}",
                out.status.code()
            ))
        };
    }
    let want_code = if case.errors.is_empty() { 0 } else { 1 };
    if out.status.code() != Some(want_code) {
        return Err(format!(
            "{name}: exit {:?}, wanted {want_code}: {stderr}",
            out.status.code()
        ));
    }
    let j: Json = serde_json::from_slice(&out.stdout).map_err(|e| format!("{name}: {e}"))?;
    let found: BTreeSet<(String, u64)> = j["errors"]
        .as_array()
        .ok_or_else(|| format!("{name}: no errors array"))?
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or("?").to_string(),
                e["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    if found != case.errors {
        return Err(format!(
            "{name}: found {found:?}, expected {:?}",
            case.errors
        ));
    }
    for (buffer, want) in &case.buffers {
        let got: Vec<String> = j["buffers"][buffer]
            .as_array()
            .ok_or_else(|| format!("{name}: no buffer {buffer} in the report"))?
            .iter()
            .map(|v| v.as_str().unwrap_or("?").to_string())
            .collect();
        if &got != want {
            return Err(format!("{name}: {buffer} is {got:?}, expected {want:?}"));
        }
    }
    Ok(())
}

#[test]
fn every_corpus_kernel_gets_its_verdict() {
    let cases = corpus();
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
    // The corpus holds an erroneous kernel for every kind of error the simulator finds,
    // and clean kernels whose results are checked.
    let marked: BTreeSet<&str> = cases
        .iter()
        .flat_map(|c| c.errors.iter().map(|(k, _)| k.as_str()))
        .collect();
    for kind in FindingKind::ALL {
        let name = serde_json::to_value(kind).expect("kind");
        let name = name.as_str().expect("a string");
        assert!(marked.contains(name), "no corpus kernel finds {name}");
    }
    let checked_clean = cases
        .iter()
        .filter(|c| c.errors.is_empty() && c.refused.is_none() && !c.buffers.is_empty())
        .count();
    assert!(
        checked_clean >= 10,
        "{checked_clean} clean kernels with checked results"
    );
}

#[test]
fn a_wrong_expectation_fails() {
    // The runner itself: a clean kernel marked with an error, or given a wrong
    // result, is reported, so a verdict cannot pass by accident.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.cl");
    std::fs::write(
        &path,
        "// run: --global 2 --local 2 --arg out=buffer:int:2:zeros\n\
         __kernel void k(__global int* out) { out[get_global_id(0)] = 3; } // <- local_race\n",
    )
    .expect("write");
    assert!(check(&read_case(&path)).is_err());
    std::fs::write(
        &path,
        "// run: --global 2 --local 2 --arg out=buffer:int:2:zeros\n\
         // expect out: 3 4\n\
         __kernel void k(__global int* out) { out[get_global_id(0)] = 3; }\n",
    )
    .expect("write");
    let err = check(&read_case(&path)).expect_err("3 3 is not 3 4");
    assert!(err.contains("expected"), "{err}");
}
