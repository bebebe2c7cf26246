//! The segment kernels' functions for one job, from one of two builds of the same
//! source. `column_words` is unrolled over a tile's 16 lane pairs and 8 rows for every
//! row count it loads without tests, which makes it most of the module: for `abs(x)` max
//! over i32, 2.2 of 2.4 MB of PTX, and on the 2-core development machine 2.7 s of NVRTC
//! and 4.1 s of ptxas against 0.3 s and 0.3 s without it. On an H200 a Python call's
//! first reduction along an axis for a new expression took 7–10 s before this split.
//! Jobs that do not launch it (rows, segments, `column_tiles`) load the build without
//! it (`SEG_SKIP_COLUMN_WORDS`); only column jobs read as words pay for the full build.

use cudarc::driver::sys;
use redlab_kernels::segments::{COLUMN_WORD_ENTRIES, ENTRY_POINTS, SKIP_COLUMN_WORDS};
use redlab_kernels::RunError;

use crate::modules::ModuleCache;

/// The functions of [`ENTRY_POINTS`], in that order, from `source` built for `arch`:
/// the whole module where `column_words` is true, else the module without
/// [`COLUMN_WORD_ENTRIES`], whose places hold null handles (a job that does not launch
/// them never reads them; a launch of one would be refused by the driver, not run).
pub(crate) fn segment_functions(
    modules: &ModuleCache,
    source: &str,
    arch: &str,
    column_words: bool,
) -> Result<Vec<sys::CUfunction>, RunError> {
    if column_words {
        return modules.functions(source, arch, &ENTRY_POINTS);
    }
    let kept: Vec<usize> = (0..ENTRY_POINTS.len())
        .filter(|entry| !COLUMN_WORD_ENTRIES.contains(entry))
        .collect();
    let names: Vec<&str> = kept.iter().map(|&entry| ENTRY_POINTS[entry]).collect();
    let found = modules.prefixed_functions(SKIP_COLUMN_WORDS, source, arch, &names)?;
    let mut functions = vec![std::ptr::null_mut(); ENTRY_POINTS.len()];
    for (&entry, function) in kept.iter().zip(found) {
        functions[entry] = function;
    }
    Ok(functions)
}
