//! The analyzer's preprocessor and parser: any text compiles or gives a positioned error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = redlab_analyzer::compile("fuzz.cl", text, &[], &|_, _| Ok(None));
    }
});
