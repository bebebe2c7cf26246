//! The analyzer's preprocessor and parser: any text compiles or gives a positioned error.
//! The property itself lives in `redlab::fuzzing::opencl_c`, shared with the corpus replay
//! test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab::fuzzing::opencl_c(data));
