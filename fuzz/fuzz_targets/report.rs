//! The JSON-lines report reader and the HTML report: any records that parse are drawn,
//! whatever their numbers (zero sizes, infinities, absurd rates), without hanging.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redlab_bench::Record;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let records: Vec<Record> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    if !records.is_empty() {
        let _ = redlab_bench::report::html(&records, None, "fuzz");
    }
});
