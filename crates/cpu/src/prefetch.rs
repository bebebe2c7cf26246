//! Software prefetch for the loops that stream an input once.
//!
//! One core reading one sequential stream keeps too few cache-line fills in flight for
//! the memory's latency: on the 2-core development machine (Intel Xeon with AVX-512) a
//! branch-free min/max over 256 MiB of f32 read 7–8 GB/s on one thread, 4 streams read
//! side by side 13–14, and the same single stream with a prefetch of the line 4–8 KiB
//! ahead 15–16 (a standalone probe, best of six reads per variant). So every loop that
//! reads its input front to back once asks for the line [`AHEAD_BYTES`] ahead of the one
//! it is about to use. A prefetch is a hint: it never faults and changes no result.
//! Nothing past the end of the input is asked for, though: a prefetch of an unmapped
//! page costs a page walk each time, and it had doubled the time of a 1000-element sum.

/// How far ahead of the element being read the prefetch asks for a line. 4–8 KiB read
/// fastest in the probe above; 1 KiB was 10% slower and 32 KiB 5–10% slower.
pub const AHEAD_BYTES: usize = 4096;

/// The size of a cache line on the CPUs redlab runs on.
pub const LINE_BYTES: usize = 64;

/// Inputs of at most this many bytes are not prefetched: they are likely in a cache
/// already (a warm benchmark, a caller that just wrote them), where a prefetch per line
/// only takes load slots; with them, summing 2^16 f32 in cache took 7–11 µs instead of
/// 5.6–5.8. 4 MiB is the two cores' L2 on the development machine.
pub const FROM_BYTES: usize = 4 << 20;

/// Whether a stream over `bytes` bytes asks for lines ahead (see [`FROM_BYTES`]).
#[inline(always)]
pub fn worthwhile(bytes: usize) -> bool {
    bytes > FROM_BYTES
}

/// Asks for the cache lines [`AHEAD_BYTES`] past elements `from .. from + count` of
/// `data` (the whole input, which must be larger than [`FROM_BYTES`]; smaller inputs
/// ask for nothing): one prefetch per line those elements span, and none past the end
/// of `data` (a prefetch of an unmapped page costs a page walk each time). Call it once
/// per block of a loop that reads `data[from .. from + count]` next.
#[inline(always)]
pub fn ahead<T>(data: &[T], from: usize, count: usize) {
    if worthwhile(std::mem::size_of_val(data)) {
        within(data, from, count);
    }
}

/// Whether a loop over rows of `len` elements of `data`, which follow each other, should
/// prefetch each row ([`within`]): a large input, and rows of at least a line. Asked
/// once per run of rows, outside the loop. Rows of 32 f32 read 1.4–1.7× faster with a
/// prefetch each; rows of 3 f32, bound by their fold, lost a quarter of their speed to
/// one per row.
#[inline(always)]
pub fn rows_worthwhile<T>(data: &[T], len: usize) -> bool {
    worthwhile(std::mem::size_of_val(data)) && len * std::mem::size_of::<T>() >= LINE_BYTES
}

/// `out[k] ← pick(start(k))` over rows of `len` elements of `data` that follow each other
/// (`start(k)` is row `k`'s first element), each row asking for the lines ahead of it
/// ([`within`]) where [`rows_worthwhile`]. Two loops, so that rows too short for that
/// run one without the test: with the test inside, argmax along rows of 4 f32 read
/// 0.82–0.92× as fast (results/cpu-dev-2core-stat-rows-prefetch).
#[inline(always)]
pub fn each_row<T, O>(
    data: &[T],
    len: usize,
    out: &mut [O],
    start: impl Fn(usize) -> usize,
    pick: impl Fn(usize) -> O,
) {
    if rows_worthwhile(data, len) {
        for (k, slot) in out.iter_mut().enumerate() {
            let at = start(k);
            within(data, at, len);
            *slot = pick(at);
        }
    } else {
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = pick(start(k));
        }
    }
}

/// [`ahead`] for a caller that has already decided the input is worth it ([`worthwhile`]
/// of the whole input): the lines [`AHEAD_BYTES`] past `data[from .. from + count]`, up
/// to the end of `data`.
#[inline(always)]
pub fn within<T>(data: &[T], from: usize, count: usize) {
    let size = std::mem::size_of::<T>();
    let end = std::mem::size_of_val(data);
    let first = from * size + AHEAD_BYTES;
    let last = (first + count * size).min(end);
    let base = data.as_ptr() as usize;
    let mut at = first;
    while at < last {
        line_at(base + at);
        at += LINE_BYTES;
    }
}

/// A read prefetch of the line holding `address` into every cache level.
#[inline(always)]
fn line_at(address: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address; SSE, which
    // provides it, is part of every x86-64 CPU.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
