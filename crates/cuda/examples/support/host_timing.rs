//! Host time per call of calls issued back to back, shared by the examples that measure
//! what a pipelined caller pays on the host for each driver call.

use std::time::Instant;

use cudarc::driver::result;

/// Host microseconds per call of `f`, issued `calls` times back to back after one
/// warm-up call; the context is synchronized before and after, outside the time.
pub fn host_per_call(calls: usize, mut f: impl FnMut()) -> f64 {
    f();
    result::ctx::synchronize().expect("synchronize");
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    let host = start.elapsed().as_secs_f64() / calls as f64;
    result::ctx::synchronize().expect("synchronize");
    host * 1e6
}

/// [`host_per_call`] over `batches` batches: the sorted microseconds per call.
#[allow(dead_code)] // not every example that shares this file takes batches
pub fn host_batches(batches: usize, calls: usize, mut f: impl FnMut()) -> Vec<f64> {
    let mut times: Vec<f64> = (0..batches).map(|_| host_per_call(calls, &mut f)).collect();
    times.sort_by(f64::total_cmp);
    times
}
