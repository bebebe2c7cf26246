//! Raw little-endian input: the first byte picks the dtype, the rest is the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redlab_core::DType;

const TYPES: [DType; 11] = [
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

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let dtype = TYPES[pick as usize % TYPES.len()];
    let result = redlab::input::load_bytes("fuzz.bin", rest.to_vec(), Some(dtype));
    // Bytes that start with the .npy magic are read as .npy whatever the name says.
    if rest.starts_with(b"\x93NUMPY") {
        return;
    }
    match result {
        Ok(loaded) => assert_eq!(loaded.array.len() * dtype.size_bytes(), rest.len()),
        Err(_) => assert_ne!(rest.len() % dtype.size_bytes(), 0),
    }
});
