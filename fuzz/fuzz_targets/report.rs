//! The JSON-lines report reader and the HTML report: any records that parse are drawn,
//! The property itself lives in `redlab::fuzzing::report`, shared with the corpus replay
//! test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redlab::fuzzing::report(data));
