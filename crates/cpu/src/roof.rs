//! The CPU read roof: the least work that still reads every byte, on every thread.
//!
//! XOR of 64-bit words into 32 independent lanes: one cheap vector op per load, so the
//! loop runs at memory speed, and on inputs larger than the caches the lines a few KiB
//! ahead are prefetched as the reductions do ([`crate::prefetch`]). With prefetches, 16
//! lanes (two lines per prefetch step) read 30–34 GB/s on the 2-core development
//! machine, below max i32 (105% of that roof); 32 lanes and the AVX-512 build read
//! 34–36. The folded word goes through `black_box` so the reads cannot be optimized
//! away.

use rayon::prelude::*;

const ROOF_LANES: usize = 32;
const ROOF_CHUNK_WORDS: usize = 1 << 15;

/// Bytes per parallel task; inputs this small are read on the calling thread.
pub const CHUNK_BYTES: usize = ROOF_CHUNK_WORDS * 8;

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn xor_words(words: &[u64], stream: bool) -> u64 {
    let mut lanes = [0u64; ROOF_LANES];
    let rows = words.chunks_exact(ROOF_LANES);
    let rest = rows.remainder();
    for (r, row) in rows.enumerate() {
        if stream {
            // As the reductions of large inputs do (crate::prefetch): the roof must read
            // at least as fast as any of them.
            crate::prefetch::within(words, r * ROOF_LANES, ROOF_LANES);
        }
        for (lane, &w) in lanes.iter_mut().zip(row) {
            *lane ^= w;
        }
    }
    lanes.iter().chain(rest).fold(0, |a, &b| a ^ b)
}

/// Reads every byte of `data` once, in parallel; returns a value that depends on all.
pub fn stream_read(data: &[u8]) -> u64 {
    // SAFETY-free split: the aligned middle as words, the ragged ends as bytes.
    let (head, words, tail) = bytemuck::pod_align_to::<u8, u64>(data);
    let stream = crate::prefetch::worthwhile(data.len());
    let middle = if crate::fork::on_pool() {
        words
            .par_chunks(ROOF_CHUNK_WORDS)
            .map(|chunk| xor_words(chunk, stream))
            .reduce(|| 0, |a, b| a ^ b)
    } else {
        words
            .chunks(ROOF_CHUNK_WORDS)
            .map(|chunk| xor_words(chunk, stream))
            .fold(0, |a, b| a ^ b)
    };
    head.iter().chain(tail).fold(middle, |a, &b| a ^ b as u64)
}
