//! Replays the fuzzers' corpora (`fuzz/corpus/<target>`) with the stable toolchain, so
//! every input the coverage-guided runs kept is checked again on each change, on every
//! machine that runs the tests: each ends as a value or an error, never a panic, and
//! within the limits the fuzz targets use.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::sim::{self, Arg, LaunchConfig};
use redlab_analyzer::types::{Scalar, Space, Type};
use redlab_analyzer::value::Value;
use redlab_core::DType;

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

#[test]
fn npy_corpus_loads_or_is_refused() {
    let mut loaded = 0;
    for (path, bytes) in corpus("npy") {
        if let Ok(l) = redlab::input::load_bytes("fuzz.npy", bytes, None) {
            let count: u64 = l.shape.iter().product();
            assert_eq!(count, l.array.len() as u64, "{}", path.display());
            loaded += 1;
        }
    }
    assert!(loaded > 0, "no corpus file loaded");
}

#[test]
fn raw_corpus_loads_whole_elements() {
    let types = [
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::F32,
        DType::F64,
    ];
    for (path, bytes) in corpus("raw") {
        let Some((&pick, rest)) = bytes.split_first() else {
            continue;
        };
        let dtype = types[pick as usize % types.len()];
        let result = redlab::input::load_bytes("fuzz.bin", rest.to_vec(), Some(dtype));
        if rest.starts_with(b"\x93NUMPY") {
            continue;
        }
        match result {
            Ok(l) => assert_eq!(l.array.len() * dtype.size_bytes(), rest.len()),
            Err(_) => assert_ne!(rest.len() % dtype.size_bytes(), 0, "{}", path.display()),
        }
    }
}

#[test]
fn size_corpus_parses_or_is_refused() {
    for (_, bytes) in corpus("size") {
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let _ = redlab_core::size::parse_size(text);
            let _ = redlab_core::size::parse_size_list(text);
        }
    }
}

#[test]
fn opencl_c_corpus_compiles_or_is_refused() {
    for (_, bytes) in corpus("opencl_c") {
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let _ = redlab_analyzer::compile("fuzz.cl", text, &[], &|_, _| Ok(None));
        }
    }
}

#[test]
fn simulator_corpus_runs_within_its_limits() {
    for (path, bytes) in corpus("simulator") {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let Ok(compiled) = redlab_analyzer::compile("fuzz.cl", text, &[], &|_, _| Ok(None))
        else {
            continue;
        };
        let started = Instant::now();
        let mut cfg = LaunchConfig::linear(64, 32);
        cfg.max_steps = 200_000;
        cfg.max_memory = 64 << 20;
        cfg.deadline = Some(started + Duration::from_secs(2));
        for kernel in compiled.program.kernels() {
            let mut mem = Memory::default();
            let args: Vec<Arg> = kernel
                .params
                .iter()
                .map(|p| match &p.ty {
                    Type::Pointer(_, Some(Space::Local)) => Arg::Local(256),
                    Type::Pointer(..) => {
                        mem.global.push(Buffer::new(&p.name, vec![1u8; 1024]));
                        Arg::Global((mem.global.len() - 1) as u32)
                    }
                    _ => Arg::Scalar(Value::int(Scalar::Int, 3)),
                })
                .collect();
            let _ = sim::launch(
                &compiled.program,
                &compiled.files,
                &kernel.name,
                &args,
                &mut mem,
                &cfg,
            );
        }
        // The deadline is checked every few thousand steps: allow for the last stretch.
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{} ran {:?}",
            path.display(),
            started.elapsed()
        );
    }
}

#[test]
fn report_corpus_draws_whatever_it_parses() {
    for (_, bytes) in corpus("report") {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let records: Vec<redlab_bench::Record> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if !records.is_empty() {
            let _ = redlab_bench::report::html(&records, None, "fuzz");
        }
    }
}
