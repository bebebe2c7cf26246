//! Device-event timing of one waited-for call at a time, shared by the examples that
//! time calls as a framework's per-call timing sees them.

use cudarc::driver::{result, sys};

/// Median device-event microseconds of one call of `call` on `stream`, waited for each
/// time, with `before` run (untimed) ahead of every call.
pub fn event_per_call(
    stream: sys::CUstream,
    calls: usize,
    mut before: impl FnMut(),
    mut call: impl FnMut(),
) -> f64 {
    let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
    let (start, end) = (
        result::event::create(flags).expect("event"),
        result::event::create(flags).expect("event"),
    );
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        before();
        // SAFETY: events and stream of the current context.
        unsafe {
            result::event::record(start, stream).expect("record");
            call();
            result::event::record(end, stream).expect("record");
            result::event::synchronize(end).expect("wait");
            times.push(f64::from(result::event::elapsed(start, end).expect("elapsed")) * 1e3);
        }
    }
    times.sort_by(f64::total_cmp);
    times[calls / 2]
}
