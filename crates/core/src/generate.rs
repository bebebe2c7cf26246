//! Seeded random inputs: the same `(dtype, n, distribution, seed)` gives the same array on
//! every machine and at every thread count (each fixed-size block has its own stream).

use std::str::FromStr;

use half::{bf16, f16};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;
use serde::Serialize;

use crate::hashed::{self, FromHash};
use crate::{host_memory, with_dtype, DType, Error, HostArray};

/// Elements generated from one random stream; fixed so results never depend on threads.
const BLOCK: usize = 1 << 16;

/// How random inputs are distributed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Floats uniform in [-1, 1); integers uniform over the whole type.
    Uniform,
    /// Floats standard normal; integers a normal with σ = 1000, rounded and clamped.
    Normal,
    /// Small integers: -100..=100 (0..=100 for unsigned types), exact in every type.
    Ints,
    /// Floats uniform in [-1, 1), integers uniform over the whole type, each element a
    /// function of the seed and its index alone ([`crate::hashed`]): any device
    /// generates any part of the array in place.
    Hashed,
}

impl FromStr for Distribution {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "uniform" => Ok(Distribution::Uniform),
            "normal" => Ok(Distribution::Normal),
            "ints" => Ok(Distribution::Ints),
            "hashed" => Ok(Distribution::Hashed),
            other => Err(format!(
                "unknown distribution '{other}' (known: uniform, normal, ints, hashed)"
            )),
        }
    }
}

/// Draws one element of a type from a distribution. (`Hashed` draws from no stream: the
/// fills hand it to [`crate::hashed`] before any stream is made.)
trait Sample: FromHash {
    fn sample(rng: &mut ChaCha8Rng, dist: Distribution) -> Self;
}

macro_rules! impl_sample_int {
    ($($t:ty),*) => {
        $(impl Sample for $t {
            fn sample(rng: &mut ChaCha8Rng, dist: Distribution) -> Self {
                let signed = <$t>::MIN != 0;
                match dist {
                    Distribution::Uniform | Distribution::Hashed => rng.gen::<$t>(),
                    Distribution::Normal => {
                        let x: f64 = rng.sample(StandardNormal);
                        let x = if signed { x * 1000.0 } else { (x * 1000.0).abs() };
                        x.round().clamp(<$t>::MIN as f64, <$t>::MAX as f64) as $t
                    }
                    Distribution::Ints => {
                        let low: i32 = if signed { -100 } else { 0 };
                        rng.gen_range(low..=100) as $t
                    }
                }
            }
        })*
    };
}
impl_sample_int!(i8, u8, i16, u16, i32, u32, i64, u64);

fn sample_f64(rng: &mut ChaCha8Rng, dist: Distribution) -> f64 {
    match dist {
        Distribution::Uniform | Distribution::Hashed => rng.gen_range(-1.0..1.0),
        Distribution::Normal => rng.sample(StandardNormal),
        Distribution::Ints => rng.gen_range(-100i32..=100) as f64,
    }
}

impl Sample for f64 {
    fn sample(rng: &mut ChaCha8Rng, dist: Distribution) -> Self {
        sample_f64(rng, dist)
    }
}
impl Sample for f32 {
    fn sample(rng: &mut ChaCha8Rng, dist: Distribution) -> Self {
        sample_f64(rng, dist) as f32
    }
}
impl Sample for f16 {
    fn sample(rng: &mut ChaCha8Rng, dist: Distribution) -> Self {
        f16::from_f64(sample_f64(rng, dist))
    }
}
impl Sample for bf16 {
    fn sample(rng: &mut ChaCha8Rng, dist: Distribution) -> Self {
        bf16::from_f64(sample_f64(rng, dist))
    }
}

fn fill<T: Sample>(n: usize, dist: Distribution, seed: u64) -> Result<Vec<T>, Error> {
    let mut data: Vec<T> = Vec::new();
    data.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
        what: format!("{n} random {}", T::DTYPE),
        needed: n as u128 * T::DTYPE.size_bytes() as u128,
        available: host_memory::available_bytes().unwrap_or(0) as u128,
    })?;
    host_memory::advise_huge_pages(data.as_ptr().cast(), n * T::DTYPE.size_bytes());
    data.resize(n, T::zeroed());
    if dist == Distribution::Hashed {
        hashed::fill(&mut data, 0, seed);
        return Ok(data);
    }
    data.par_chunks_mut(BLOCK)
        .enumerate()
        .for_each(|(block, chunk)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(block as u64);
            for x in chunk {
                *x = T::sample(&mut rng, dist);
            }
        });
    Ok(data)
}

/// Elements `start .. start + len` of what [`generate`] gives for any length that covers
/// them: each block of the random streams is drawn from its own start, so a process can
/// generate its part of an array without the rest (one process per GPU, each with its
/// shard).
pub fn generate_range(
    dtype: DType,
    start: usize,
    len: usize,
    dist: Distribution,
    seed: u64,
) -> Result<HostArray, Error> {
    let needed = len as u128 * dtype.size_bytes() as u128;
    host_memory::check_fits(&format!("{len} elements of {dtype}"), needed)?;
    with_dtype!(dtype, T => Ok(HostArray::from_vec(fill_range::<T>(start, len, dist, seed)?)))
}

fn fill_range<T: Sample>(
    start: usize,
    len: usize,
    dist: Distribution,
    seed: u64,
) -> Result<Vec<T>, Error> {
    let mut data: Vec<T> = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|_| Error::OutOfMemory {
            what: format!("{len} random {}", T::DTYPE),
            needed: len as u128 * T::DTYPE.size_bytes() as u128,
            available: host_memory::available_bytes().unwrap_or(0) as u128,
        })?;
    data.resize(len, T::zeroed());
    if dist == Distribution::Hashed {
        hashed::fill(&mut data, start as u64, seed);
        return Ok(data);
    }
    // Pieces that each lie inside one block: the first may start inside its block.
    let end = start + len;
    let mut pieces: Vec<(usize, &mut [T])> = Vec::new();
    let mut rest = data.as_mut_slice();
    let mut at = start;
    while at < end {
        let stop = ((at / BLOCK + 1) * BLOCK).min(end);
        let (piece, tail) = rest.split_at_mut(stop - at);
        pieces.push((at, piece));
        rest = tail;
        at = stop;
    }
    pieces.into_par_iter().for_each(|(at, piece)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream((at / BLOCK) as u64);
        // Draw and drop the block's values before this piece.
        for _ in 0..at % BLOCK {
            T::sample(&mut rng, dist);
        }
        for x in piece {
            *x = T::sample(&mut rng, dist);
        }
    });
    Ok(data)
}

/// `n` seeded random elements of `dtype`.
///
/// Fails with [`Error::OutOfMemory`] (never an abort) when the host cannot hold them.
pub fn generate(dtype: DType, n: usize, dist: Distribution, seed: u64) -> Result<HostArray, Error> {
    let needed = n as u128 * dtype.size_bytes() as u128;
    host_memory::check_fits(&format!("{n} elements of {dtype}"), needed)?;
    with_dtype!(dtype, T => Ok(HostArray::from_vec(fill::<T>(n, dist, seed)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_data_and_not_constant() {
        let a = generate(DType::F32, 200_003, Distribution::Normal, 7).expect("fits");
        let b = generate(DType::F32, 200_003, Distribution::Normal, 7).expect("fits");
        let c = generate(DType::F32, 200_003, Distribution::Normal, 8).expect("fits");
        assert_eq!(a.view().bytes(), b.view().bytes());
        assert_ne!(a.view().bytes(), c.view().bytes());
        let values = a.view().typed::<f32>().expect("f32").to_vec();
        assert!(values.iter().any(|&x| x != values[0]));
    }

    #[test]
    fn ranges_equal_the_same_part_of_the_whole_array() {
        let n = 3 * BLOCK + 1234;
        for (dtype, dist) in [
            (DType::F32, Distribution::Normal),
            (DType::I16, Distribution::Normal),
            (DType::F16, Distribution::Normal),
            (DType::F64, Distribution::Hashed),
            (DType::U8, Distribution::Hashed),
        ] {
            let whole = generate(dtype, n, dist, 5).expect("fits");
            let size = dtype.size_bytes();
            for (start, len) in [
                (0, n),
                (1, 10),
                (BLOCK - 3, 7),
                (BLOCK, BLOCK),
                (777, 2 * BLOCK + 5),
                (n - 1, 1),
                (n, 0),
            ] {
                let part = generate_range(dtype, start, len, dist, 5).expect("fits");
                assert_eq!(
                    part.view().bytes(),
                    &whole.view().bytes()[start * size..(start + len) * size],
                    "{dtype} {start}+{len}"
                );
            }
        }
    }

    #[test]
    fn ints_stay_in_range() {
        let a = generate(DType::U8, 10_000, Distribution::Ints, 1).expect("fits");
        assert!(a
            .view()
            .typed::<u8>()
            .expect("u8")
            .iter()
            .all(|&x| x <= 100));
    }

    #[test]
    fn impossible_sizes_are_errors_not_aborts() {
        assert!(matches!(
            generate(DType::F64, usize::MAX / 16, Distribution::Uniform, 1),
            Err(Error::OutOfMemory { .. })
        ));
    }
}
