//! Integer sum, product and bitwise reductions.
//!
//! Every element is widened to 64 bits (sign- or zero-extended) and combined with
//! wrapping arithmetic; truncating the 64-bit result to a narrower accumulator is exact
//! because wrapping arithmetic commutes with truncation. The operations are associative
//! and commutative, so the result is exact whatever the split; the split is fixed anyway.
//! Inside a chunk, 32 independent accumulators let the loop vectorize.

use rayon::prelude::*;
use redlab_core::num::IntElement;

/// Independent accumulators per chunk.
const INT_LANES: usize = 32;

/// Elements per parallel task.
pub const CHUNK: usize = 1 << 16;

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.1"))]
fn fold_chunk<T: IntElement>(
    chunk: &[T],
    init: u64,
    f: impl Fn(u64, u64) -> u64 + Copy,
    stream: bool,
) -> u64 {
    let mut lanes = [init; INT_LANES];
    let rows = chunk.chunks_exact(INT_LANES);
    let rest = rows.remainder();
    for (r, row) in rows.enumerate() {
        if stream {
            // A large input read once: the lines a few KiB ahead (crate::prefetch).
            crate::prefetch::within(chunk, r * INT_LANES, INT_LANES);
        }
        for (lane, &x) in lanes.iter_mut().zip(row) {
            *lane = f(*lane, x.to_u64_bits());
        }
    }
    for (lane, &x) in lanes.iter_mut().zip(rest) {
        *lane = f(*lane, x.to_u64_bits());
    }
    lanes.into_iter().fold(init, f)
}

/// Folds `data` with `f` (identity `init`) over 64-bit words, in parallel.
pub fn fold<T: IntElement>(
    data: &[T],
    init: u64,
    f: impl Fn(u64, u64) -> u64 + Copy + Send + Sync,
) -> u64 {
    let stream = crate::prefetch::worthwhile(std::mem::size_of_val(data));
    if data.len() <= CHUNK || !crate::fork::on_pool() {
        return fold_chunk(data, init, f, stream);
    }
    data.par_chunks(CHUNK)
        .map(|chunk| fold_chunk(chunk, init, f, stream))
        .reduce(|| init, f)
}
