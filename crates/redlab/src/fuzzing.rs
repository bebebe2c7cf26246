//! The properties the fuzz targets check, one function per target, shared by the
//! coverage-guided targets under `fuzz/` and by the test that replays their corpora with
//! the stable toolchain. Each takes arbitrary bytes and panics only when a property
//! fails: the code under test must turn every input into a value or an error.

use std::time::{Duration, Instant};

use redlab_analyzer::memory::{Buffer, Memory};
use redlab_analyzer::sim::{self, Arg, LaunchConfig};
use redlab_analyzer::types::{Scalar, Space, Type};
use redlab_analyzer::value::Value;
use redlab_core::DType;

/// `.npy` header and layout: bytes either load, holding as many elements as the shape
/// says, or are refused.
pub fn npy(data: &[u8]) {
    if let Ok(loaded) = crate::input::load_bytes("fuzz.npy", data.to_vec(), None) {
        // An empty axis empties the array, whatever the product of the others.
        let count = if loaded.shape.contains(&0) {
            0
        } else {
            loaded.shape.iter().product::<u64>()
        };
        assert_eq!(count, loaded.array.len() as u64);
    }
    let _ = crate::input::npy_header::parse(data);
}

/// Every dtype, for [`raw`] to pick from with its first byte.
const RAW_TYPES: [DType; 11] = [
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

/// Raw input: the first byte picks the dtype, the rest is the file, which loads exactly
/// when it is a whole number of elements.
pub fn raw(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let dtype = RAW_TYPES[pick as usize % RAW_TYPES.len()];
    let result = crate::input::load_bytes("fuzz.bin", rest.to_vec(), Some(dtype));
    // Bytes that start with the .npy magic are read as .npy whatever the name says.
    if rest.starts_with(b"\x93NUMPY") {
        return;
    }
    match result {
        Ok(loaded) => assert_eq!(loaded.array.len() * dtype.size_bytes(), rest.len()),
        Err(_) => assert_ne!(rest.len() % dtype.size_bytes(), 0),
    }
}

/// The size parser: any text is a count or an error.
pub fn size(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = redlab_core::size::parse_size(text);
        let _ = redlab_core::size::parse_size_list(text);
    }
}

/// The expression language: any text, as a map, a combine, an identity or a post,
/// builds a reduction or gives an error, and one that builds evaluates on a few
/// elements without panicking.
pub fn expression(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    use redlab_core::DType;
    let two = [DType::F32, DType::I32];
    if let Ok(r) = redlab_expr::Reduction::builder(text, "sum").build(&two) {
        let x = [1.5f32, -0.0, f32::NAN, 3.0e38];
        let y = [7i32, i32::MIN, 0, -1];
        let inputs = [
            redlab_core::ArrayRef::from_slice(&x),
            redlab_core::ArrayRef::from_slice(&y),
        ];
        let _ = redlab_expr::oracle::reduce(&r, &inputs);
    }
    let _ = redlab_expr::Reduction::builder("x", text)
        .identity(text)
        .post(text)
        .build(&[DType::F64]);
}

/// The analyzer's preprocessor and parser: any text compiles or gives an error.
pub fn opencl_c(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = redlab_analyzer::compile("fuzz.cl", text, &[], &|_, _| Ok(None));
    }
}

/// The simulator: every kernel of text that compiles runs over two groups of 32, with
/// 1 KiB buffers for its pointers, 256 bytes for local pointers and 3 for its scalars,
/// under 200 000 steps, 2 s and 64 MiB, and stops within a few seconds of the deadline.
pub fn simulator(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(compiled) = redlab_analyzer::compile("fuzz.cl", text, &[], &|_, _| Ok(None)) else {
        return;
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
    // The deadline is looked at every few thousand steps: allow for the last stretch.
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// The JSON-lines report reader and the HTML report: records that parse are drawn,
/// whatever their numbers.
pub fn report(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let records: Vec<redlab_bench::Record> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    if !records.is_empty() {
        let _ = redlab_bench::report::html(&records, None, "fuzz");
    }
}
