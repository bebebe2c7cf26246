//! The expression language: any text builds a reduction or gives an error, and what
//! builds evaluates. The property lives in `redlab::fuzzing::expression`, shared with
//! the corpus replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab::fuzzing::expression(data));
