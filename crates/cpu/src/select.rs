//! min, max, argmin and argmax.
//!
//! Every element maps to an integer key that orders like the values: integers are their
//! own keys; a float's bits have the magnitude flipped when negative, which orders
//! numbers numerically with -0.0 just below +0.0 (IEEE 754 total order) and puts every
//! NaN outside the range [key(-inf), key(+inf)]. So one branch-free pass of integer
//! min and max over the keys (which vectorizes) both finds the extreme and says whether
//! the chunk holds a NaN. Only then, and only for argmin/argmax, a second pass finds the
//! first index holding the extreme, block by block so it vectorizes too. Chunk answers
//! combine in index order, keeping the left one on ties and the first NaN.

use half::{bf16, f16};
use rayon::prelude::*;
use redlab_core::Element;

use crate::integer::CHUNK;

/// Elements per block of the first-index search.
const FIND_BLOCK: usize = 256;

/// An element with an order key for selection.
pub trait Selectable: Element {
    /// The key type: elements order as their keys do.
    type Key: Ord + Copy + Send + Sync;
    /// The smallest key of a non-NaN value.
    const LOWEST: Self::Key;
    /// The largest key of a non-NaN value.
    const HIGHEST: Self::Key;
    /// The order key.
    fn key(self) -> Self::Key;
    /// The element whose key is `key` (the inverse of [`Selectable::key`]).
    fn from_key(key: Self::Key) -> Self;
}

macro_rules! selectable_int {
    ($($t:ty),*) => {
        $(impl Selectable for $t {
            type Key = $t;
            const LOWEST: $t = <$t>::MIN;
            const HIGHEST: $t = <$t>::MAX;
            #[inline(always)]
            fn key(self) -> $t { self }
            #[inline(always)]
            fn from_key(key: $t) -> $t { key }
        })*
    };
}
selectable_int!(i8, u8, i16, u16, i32, u32, i64, u64);

/// Flips the magnitude bits of negative floats so that signed-integer order equals
/// numeric order.
macro_rules! float_key {
    ($bits:expr, $signed:ty, $unsigned:ty) => {{
        let bits = $bits as $signed;
        bits ^ ((((bits >> (<$signed>::BITS - 1)) as $unsigned) >> 1) as $signed)
    }};
}

macro_rules! selectable_float {
    ($($t:ty => $signed:ty, $unsigned:ty, $neg_inf:expr, $pos_inf:expr);* $(;)?) => {
        $(impl Selectable for $t {
            type Key = $signed;
            const LOWEST: $signed = float_key!($neg_inf, $signed, $unsigned);
            const HIGHEST: $signed = float_key!($pos_inf, $signed, $unsigned);
            #[inline(always)]
            fn key(self) -> $signed {
                float_key!(self.to_bits(), $signed, $unsigned)
            }
            #[inline(always)]
            fn from_key(key: $signed) -> Self {
                // The magnitude flip is its own inverse (it keeps the sign bit).
                <$t>::from_bits(float_key!(key, $signed, $unsigned) as $unsigned)
            }
        })*
    };
}
selectable_float!(
    f16 => i16, u16, 0xfc00u16, 0x7c00u16;
    bf16 => i16, u16, 0xff80u16, 0x7f80u16;
    f32 => i32, u32, 0xff80_0000u32, 0x7f80_0000u32;
    f64 => i64, u64, 0xfff0_0000_0000_0000u64, 0x7ff0_0000_0000_0000u64;
);

/// One chunk's answer: where its winner is, and whether the winner is a NaN.
#[derive(Clone, Copy)]
struct Pick<T: Selectable> {
    index: usize,
    value: T,
    nan: bool,
}

/// The smallest and largest key of a non-empty chunk, in one vectorizable pass, inlined
/// into the caller's loop (short rows choose this way inside their own vector loop).
/// A NaN's key falls outside `[T::LOWEST, T::HIGHEST]`, so the bounds also say whether
/// the chunk holds one.
#[inline(always)]
pub(crate) fn key_bounds<T: Selectable>(chunk: &[T]) -> (T::Key, T::Key) {
    chunk.iter().fold((T::HIGHEST, T::LOWEST), |(lo, hi), &x| {
        let k = x.key();
        (lo.min(k), hi.max(k))
    })
}

/// Whether `x` is a NaN: its key lies outside every number's.
#[inline(always)]
pub(crate) fn is_nan_key<T: Selectable>(x: T) -> bool {
    x.key() < T::LOWEST || x.key() > T::HIGHEST
}

/// Elements per block of the key pass: each block's lines are prefetched ahead
/// ([`crate::prefetch`]) before it is read.
const KEY_BLOCK: usize = 64;

/// [`key_bounds`] over `data[start..start + len]`, read once from memory, compiled for
/// the CPU at hand: [`KEY_BLOCK`] independent lanes per bound, so the loop vectorizes,
/// and where `stream` (a large input, [`crate::prefetch::worthwhile`]) the lines a few
/// KiB ahead prefetched block by block.
// AVX-512 for its 64-bit integer minimum and maximum: with AVX2 alone the keys of f64
// compare and blend, and max f64 of 2^26 read 25.5–26 GB/s where f32 read 28.5–30
// (30.8–30.9 with this build).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn key_range<T: Selectable>(
    data: &[T],
    start: usize,
    len: usize,
    stream: bool,
) -> (T::Key, T::Key) {
    let chunk = &data[start..start + len];
    let mut lo = [T::HIGHEST; KEY_BLOCK];
    let mut hi = [T::LOWEST; KEY_BLOCK];
    let blocks = chunk.chunks_exact(KEY_BLOCK);
    let rest = blocks.remainder();
    for (b, block) in blocks.enumerate() {
        if stream {
            // Within the whole of `data`: a row among rows reads on into the next.
            crate::prefetch::within(data, start + b * KEY_BLOCK, KEY_BLOCK);
        }
        for ((lo, hi), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(block) {
            let k = x.key();
            *lo = (*lo).min(k);
            *hi = (*hi).max(k);
        }
    }
    let (rest_lo, rest_hi) = key_bounds(rest);
    let lo = lo.into_iter().fold(rest_lo, |a, b| a.min(b));
    let hi = hi.into_iter().fold(rest_hi, |a, b| a.max(b));
    (lo, hi)
}

/// The first index whose key is `key` (known to be present), searched block by block
/// with a branch-free test per block so the common case vectorizes.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.1"
))]
fn first_with_key<T: Selectable>(chunk: &[T], key: T::Key) -> Option<usize> {
    for (b, block) in chunk.chunks(FIND_BLOCK).enumerate() {
        if block.iter().fold(false, |hit, &x| hit | (x.key() == key)) {
            return block
                .iter()
                .position(|&x| x.key() == key)
                .map(|i| b * FIND_BLOCK + i);
        }
    }
    None
}

/// The pick of `data[start..start + len]`, its index counted from `offset`.
fn pick_chunk<T: Selectable>(
    data: &[T],
    (start, len): (usize, usize),
    offset: usize,
    (want_min, want_index): (bool, bool),
    stream: bool,
) -> Option<Pick<T>> {
    let chunk = &data[start..start + len];
    chunk.first()?;
    let (lo, hi) = key_range(data, start, len, stream);
    if lo < T::LOWEST || hi > T::HIGHEST {
        let i = chunk.iter().position(|&x| is_nan_key(x))?;
        return Some(Pick {
            index: offset + i,
            value: chunk[i],
            nan: true,
        });
    }
    let best = if want_min { lo } else { hi };
    if !want_index {
        // min/max need only the value, and a key is the value's bits: no second pass.
        return Some(Pick {
            index: offset,
            value: T::from_key(best),
            nan: false,
        });
    }
    let i = first_with_key(chunk, best)?;
    Some(Pick {
        index: offset + i,
        value: chunk[i],
        nan: false,
    })
}

/// Ordered combine: `left` covers lower indices than `right`.
fn better<T: Selectable>(
    left: Option<Pick<T>>,
    right: Option<Pick<T>>,
    want_min: bool,
) -> Option<Pick<T>> {
    match (left, right) {
        (None, r) => r,
        (l, None) => l,
        (Some(l), Some(r)) => {
            if l.nan {
                return Some(l);
            }
            if r.nan {
                return Some(r);
            }
            let right_wins = if want_min {
                r.value.key() < l.value.key()
            } else {
                r.value.key() > l.value.key()
            };
            Some(if right_wins { r } else { l })
        }
    }
}

/// The extreme element of `data` and its first index (exact when `want_index`), or
/// `None` when empty.
pub fn select<T: Selectable>(data: &[T], want_min: bool, want_index: bool) -> Option<(usize, T)> {
    select_in(data, 0, data.len(), want_min, want_index)
}

/// [`select`] of `data[start..start + len]`, the index counted from `start`. On a large
/// `data` the key pass prefetches past the range into the rest of `data`, as a row among
/// rows reads on into the next ([`crate::prefetch`]).
pub(crate) fn select_in<T: Selectable>(
    data: &[T],
    start: usize,
    len: usize,
    want_min: bool,
    want_index: bool,
) -> Option<(usize, T)> {
    let stream = crate::prefetch::worthwhile(std::mem::size_of_val(data));
    let wants = (want_min, want_index);
    let pick = if len <= CHUNK || !crate::fork::on_pool() {
        pick_chunk(data, (start, len), 0, wants, stream)
    } else {
        (0..len.div_ceil(CHUNK))
            .into_par_iter()
            .map(|k| {
                let from = k * CHUNK;
                let part = (from, CHUNK.min(len - from));
                pick_chunk(data, (start + part.0, part.1), from, wants, stream)
            })
            .reduce(|| None, |l, r| better(l, r, want_min))
    };
    pick.map(|p| (p.index, p.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_order_numerically_with_negative_zero_first() {
        let ordered = [
            f32::NEG_INFINITY,
            -2.5,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            3.0,
            f32::INFINITY,
        ];
        for pair in ordered.windows(2) {
            assert!(pair[0].key() < pair[1].key(), "{:?}", pair);
        }
        let halves = [
            f16::NEG_INFINITY,
            f16::from_f32(-1.0),
            f16::NEG_ZERO,
            f16::ZERO,
            f16::ONE,
        ];
        for pair in halves.windows(2) {
            assert!(pair[0].key() < pair[1].key());
        }
    }
}
