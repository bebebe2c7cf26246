//! `.npy` header and layout: any bytes are either loaded (and then hold as many elements
//! as the shape says) or refused with an error; never a panic, hang or huge allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(loaded) = redlab::input::load_bytes("fuzz.npy", data.to_vec(), None) {
        let count: u64 = loaded.shape.iter().product();
        assert_eq!(count, loaded.array.len() as u64);
    }
    let _ = redlab::input::npy_header::parse(data);
});
