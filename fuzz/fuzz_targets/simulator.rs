//! The SIMT simulator under a step, time and memory limit: every kernel of any text that
//! The property itself lives in `redlab::fuzzing::simulator`, shared with the corpus replay
//! test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab::fuzzing::simulator(data));
