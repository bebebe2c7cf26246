//! The size parser: any text is a count or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = redlab_core::size::parse_size(text);
        let _ = redlab_core::size::parse_size_list(text);
    }
});
