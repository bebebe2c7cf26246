//! Raw little-endian input: the first byte picks the dtype, the rest is the file.
//! The property itself lives in `redlab::fuzzing::raw`, shared with the corpus replay
//! test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab::fuzzing::raw(data));
