//! `.npy` header and layout: any bytes are either loaded (and then hold as many elements
//! The property itself lives in `redlab::fuzzing::npy`, shared with the corpus replay
//! test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab::fuzzing::npy(data));
