//! min, max, argmin and argmax.
//!
//! Each chunk first asks whether it holds a NaN (a branch-free OR that vectorizes); if so
//! its answer is its first NaN. Otherwise floats are compared through an integer key that
//! orders them numerically with -0.0 below +0.0 (the IEEE 754 total order restricted to
//! non-NaN values), so the min/max loop is an integer min/max that vectorizes, and the
//! first index holding the extreme is found by a second pass over the cached chunk.
//! Chunk answers are combined in index order, keeping the left one on ties.

use half::{bf16, f16};
use rayon::prelude::*;
use redlab_core::Element;

use crate::integer::CHUNK;

/// An element with an order key for selection.
pub trait Selectable: Element {
    /// The key type: integers order as their keys do.
    type Key: Ord + Copy + Send;
    /// The order key (meaningless for NaN).
    fn key(self) -> Self::Key;
    /// Whether this is NaN (always false for integers).
    fn nan(self) -> bool;
}

macro_rules! selectable_int {
    ($($t:ty),*) => {
        $(impl Selectable for $t {
            type Key = $t;
            #[inline(always)]
            fn key(self) -> $t { self }
            #[inline(always)]
            fn nan(self) -> bool { false }
        })*
    };
}
selectable_int!(i8, u8, i16, u16, i32, u32, i64, u64);

/// Flips the magnitude bits of negative floats so that signed-integer order equals
/// numeric order, with -0.0 just below +0.0.
macro_rules! selectable_float {
    ($($t:ty => $signed:ty, $unsigned:ty, $bits:expr);* $(;)?) => {
        $(impl Selectable for $t {
            type Key = $signed;
            #[inline(always)]
            fn key(self) -> $signed {
                let bits = $bits(self) as $signed;
                bits ^ ((((bits >> (<$signed>::BITS - 1)) as $unsigned) >> 1) as $signed)
            }
            #[inline(always)]
            fn nan(self) -> bool { self.is_nan() }
        })*
    };
}
selectable_float!(
    f16 => i16, u16, f16::to_bits;
    bf16 => i16, u16, bf16::to_bits;
    f32 => i32, u32, f32::to_bits;
    f64 => i64, u64, f64::to_bits;
);

/// One chunk's answer: where its winner is, and whether the winner is a NaN.
#[derive(Clone, Copy)]
struct Pick<T: Selectable> {
    index: usize,
    value: T,
    nan: bool,
}

fn pick_chunk<T: Selectable>(chunk: &[T], offset: usize, want_min: bool) -> Option<Pick<T>> {
    let first = *chunk.first()?;
    let has_nan = chunk.iter().fold(false, |acc, &x| acc | x.nan());
    if has_nan {
        let i = chunk.iter().position(|&x| x.nan())?;
        return Some(Pick {
            index: offset + i,
            value: chunk[i],
            nan: true,
        });
    }
    let start = first.key();
    let best = if want_min {
        chunk.iter().fold(start, |acc, &x| acc.min(x.key()))
    } else {
        chunk.iter().fold(start, |acc, &x| acc.max(x.key()))
    };
    let i = chunk.iter().position(|&x| x.key() == best)?;
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

/// The extreme element of `data` and its first index, or `None` when empty.
pub fn select<T: Selectable>(data: &[T], want_min: bool) -> Option<(usize, T)> {
    let pick = if data.len() <= CHUNK {
        pick_chunk(data, 0, want_min)
    } else {
        data.par_chunks(CHUNK)
            .enumerate()
            .map(|(k, chunk)| pick_chunk(chunk, k * CHUNK, want_min))
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
