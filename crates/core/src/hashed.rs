//! Counter-based random inputs: element `i` of a `hashed` array is a function of
//! `(seed, i)` alone, so any device can generate any part of an array in place, in any
//! order, with no stream state to carry — the way arrays larger than one device's memory
//! are made where they live (`generate.cl` is the same function for OpenCL and CUDA).
//!
//! The hash is SplitMix64: `z = seed + (i + 1) · γ`, then its two xor-shift-multiply
//! rounds. Values are drawn from the hash's top bits so that every one of them is exact
//! in its type, which keeps the host and device conversions identical:
//!
//! | type | value |
//! |---|---|
//! | f64 | `(top 53 bits − 2^52) · 2^-52`, in [-1, 1) |
//! | f32 | `(top 24 bits − 2^23) · 2^-23`, in [-1, 1) |
//! | f16 | `(top 11 bits − 2^10) · 2^-10`, in [-1, 1) |
//! | bf16 | `(top 8 bits − 2^7) · 2^-7`, in [-1, 1) |
//! | integers | the top bits, reinterpreted: uniform over the whole type |

use half::{bf16, f16};
use rayon::prelude::*;

use crate::Element;

/// SplitMix64's increment (the golden ratio in 64-bit fixed point).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The 64 random bits of element `index`.
#[inline]
pub fn bits(seed: u64, index: u64) -> u64 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An element type made from the hash's bits.
pub trait FromHash: Element {
    /// The value for the 64 bits `b`.
    fn from_hash(b: u64) -> Self;
}

macro_rules! from_hash_int {
    ($($t:ty => $u:ty),*) => {
        $(impl FromHash for $t {
            #[inline]
            fn from_hash(b: u64) -> Self {
                // The top bits, as an unsigned pattern of the type's width.
                (b >> (64 - <$u>::BITS)) as $u as $t
            }
        })*
    };
}
from_hash_int!(i8 => u8, u8 => u8, i16 => u16, u16 => u16, i32 => u32, u32 => u32,
    i64 => u64, u64 => u64);

impl FromHash for f64 {
    #[inline]
    fn from_hash(b: u64) -> Self {
        ((b >> 11) as i64 - (1 << 52)) as f64 * f64::powi(2.0, -52)
    }
}

impl FromHash for f32 {
    #[inline]
    fn from_hash(b: u64) -> Self {
        ((b >> 40) as i32 - (1 << 23)) as f32 * f32::powi(2.0, -23)
    }
}

impl FromHash for f16 {
    #[inline]
    fn from_hash(b: u64) -> Self {
        // Exact in f32 and in f16 (11 significant bits), so the conversion is exact.
        f16::from_f32(((b >> 53) as i32 - (1 << 10)) as f32 * f32::powi(2.0, -10))
    }
}

impl FromHash for bf16 {
    #[inline]
    fn from_hash(b: u64) -> Self {
        bf16::from_f32(((b >> 56) as i32 - (1 << 7)) as f32 * f32::powi(2.0, -7))
    }
}

/// Fills `out` with elements `start ..` of the `hashed` array of `seed`, in parallel.
pub fn fill<T: FromHash>(out: &mut [T], start: u64, seed: u64) {
    /// Elements per parallel task.
    const CHUNK: usize = 1 << 16;
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let first = start + (c * CHUNK) as u64;
            for (k, x) in chunk.iter_mut().enumerate() {
                *x = T::from_hash(bits(seed, first + k as u64));
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bits_are_splitmix64s_published_outputs() {
        // SplitMix64 seeded with 1234567: its first outputs, as the reference
        // implementation prints them.
        assert_eq!(bits(1234567, 0), 6457827717110365317);
        assert_eq!(bits(1234567, 1), 3203168211198807973);
        assert_eq!(bits(1234567, 2), 9817491932198370423);
    }

    #[test]
    fn floats_cover_minus_one_to_one_and_are_exact_in_their_type() {
        let mut seen_negative = false;
        let mut seen_positive = false;
        for i in 0..100_000 {
            let b = bits(9, i);
            let x = f32::from_hash(b);
            assert!((-1.0..1.0).contains(&x));
            seen_negative |= x < -0.9;
            seen_positive |= x > 0.9;
            assert_eq!(f64::from(x), f64::from(f32::from_bits(x.to_bits())));
            let h = f16::from_hash(b);
            assert_eq!(f16::from_f32(h.to_f32()), h);
            assert!((-1.0..1.0).contains(&h.to_f32()));
            let d = f64::from_hash(b);
            assert!((-1.0..1.0).contains(&d));
        }
        assert!(seen_negative && seen_positive);
    }

    #[test]
    fn parts_equal_the_whole_and_integers_use_the_top_bits() {
        let mut whole = vec![0i32; 300_007];
        fill(&mut whole, 0, 5);
        let mut part = vec![0i32; 70_001];
        fill(&mut part, 123_456, 5);
        assert_eq!(&whole[123_456..123_456 + 70_001], &part[..]);
        assert_eq!(whole[7], (bits(5, 7) >> 32) as u32 as i32);
        assert!(whole.iter().any(|&x| x < 0) && whole.iter().any(|&x| x > 0));
    }
}
