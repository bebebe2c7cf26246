//! The size parser: any text is a count or an error.
//! The property itself lives in `redlab::fuzzing::size`, shared with the corpus replay
//! test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab::fuzzing::size(data));
