//! Seeded inputs shared by the CPU crate's unit tests: one xorshift stream, and values
//! with the repeats, signed zeros, infinities and NaN that merges must get right.

/// A seeded xorshift64 stream (never zero, whatever the seed).
pub fn stream(seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    std::iter::repeat_with(move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    })
}

/// `n` seeded values with repeats, zeros of both signs, infinities and (when `nan`) NaN
/// among values in [−30, 30).
pub fn awkward(n: usize, seed: u64, nan: bool) -> Vec<f64> {
    stream(seed)
        .take(n)
        .map(|state| match state % 97 {
            0 => f64::INFINITY,
            1 => f64::NEG_INFINITY,
            2 if nan => f64::NAN,
            3..=9 => 3.0,
            10 => 0.0,
            11 => -0.0,
            _ => (state >> 11) as f64 / (1u64 << 53) as f64 * 60.0 - 30.0,
        })
        .collect()
}

/// `n` seeded finite values in [−30, 30), with repeats and zeros of both signs: long
/// rows of [`awkward`] values almost all hold an infinity, which hides every other
/// element's part in the result.
pub fn finite(n: usize, seed: u64) -> Vec<f64> {
    awkward(n, seed, false)
        .into_iter()
        .map(|x| if x.is_finite() { x } else { 7.25 })
        .collect()
}
