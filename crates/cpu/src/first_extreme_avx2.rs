//! Argmin and argmax of one row of 4-byte elements (f32, i32, u32) in a single AVX2
//! pass: each of four accumulators keeps, per vector lane, the best order key seen so
//! far and the index where it first appeared, and the lanes are joined at the end by
//! key, ties going to the lower index. Floats also gather a NaN flag on the way; a row
//! that holds a NaN answers with its first NaN, found by a second scan (the rare case).
//!
//! The answer is [`crate::select::select`]'s exactly: the first NaN if there is one,
//! else the first index of the extreme key (so -0.0 below +0.0).
//!
//! Why by hand: the whole-array selection takes two passes per row (the key range, then
//! the first index holding the extreme) and a call or two per row. Against it, on the
//! 2-core development machine (AMD EPYC), argmax along rows of 1024 f32 read 1.23–1.27×
//! as fast, along rows of 64 2.7–3.8×, of 500 1.5× (results/cpu-dev-2core-row-argmax).
//! The lanes are joined with shuffles, not a scalar loop over them: rows of 64 read
//! twice as fast that way. No prefetch: asked for as the pass goes or a row at a time,
//! it made rows of 1024 10–35% slower and rows of 64 twice as slow there (a
//! single-thread probe). On an Intel Xeon, where the whole-array selection's key pass
//! gains from its prefetch, that pass stayed faster along rows of 500 and more, so there
//! the rows this file serves are shorter ([`longest_row`]).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use redlab_core::DType;

/// Elements per step of the loop: four vectors of eight, one per accumulator, so that a
/// step's four compare-and-blend chains run side by side.
pub(crate) const STEP: usize = 32;

/// How the bits of a 4-byte element become its order key (a signed 32-bit integer
/// ordered as the values are; [`crate::select`]'s keys, shifted for unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WordKey {
    /// IEEE binary32: the magnitude bits flipped when negative.
    Float,
    /// i32: its own key.
    Signed,
    /// u32: the top bit flipped, so that signed order is unsigned order.
    Unsigned,
}

impl WordKey {
    /// The key of `dtype`'s elements, for the 4-byte types this file serves.
    pub(crate) fn of(dtype: DType) -> Option<WordKey> {
        match dtype {
            DType::F32 => Some(WordKey::Float),
            DType::I32 => Some(WordKey::Signed),
            DType::U32 => Some(WordKey::Unsigned),
            _ => None,
        }
    }

    /// The key of one element's bits.
    #[inline(always)]
    fn scalar(self, bits: u32) -> i32 {
        let signed = bits as i32;
        match self {
            WordKey::Float => signed ^ (((signed >> 31) as u32) >> 1) as i32,
            WordKey::Signed => signed,
            WordKey::Unsigned => (bits ^ 0x8000_0000) as i32,
        }
    }
}

/// Whether this CPU runs [`first_extreme`].
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The longest rows this pass serves better than the whole-array selection on this CPU.
/// On the AMD development machine it won at every length measured (32 to 4099). On an
/// Intel Xeon with AVX-512 (a GPU machine's host, results/h100-host-row-argmax) it won
/// along rows of 32–100 (1.1–1.95×) but lost along rows of 500–4099 (0.6–1.1×) to the
/// selection's key pass, which prefetches (and gains from it there; AMD lost to it):
/// elsewhere than AMD, rows of 256 or more keep the selection. The bound between 100
/// and 500 was not measured.
pub(crate) fn longest_row() -> usize {
    static LONGEST: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LONGEST.get_or_init(|| if is_amd() { usize::MAX } else { 255 })
}

/// Whether the CPU says it is AMD's (CPUID leaf 0's vendor string).
fn is_amd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let id = __cpuid(0);
        [id.ebx, id.edx, id.ecx] == [0x6874_7541, 0x6974_6e65, 0x444d_4163]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The first index of the smallest (`want_min`) or largest key of `data[start..start +
/// len]`, counted from `start`, or of its first NaN where `key` is [`WordKey::Float`];
/// `None` for an empty row or where [`available`] is false (the caller then takes the
/// whole-array selection). The pass asks for no lines ahead: on the development machine
/// (AMD EPYC) software prefetch, spread over the pass or a row at a time, made it
/// slower (module documentation).
pub(crate) fn first_extreme(
    data: &[u32],
    (start, len): (usize, usize),
    key: WordKey,
    want_min: bool,
) -> Option<usize> {
    if len == 0 || len > i32::MAX as usize || !available() {
        return None;
    }
    let row = &data[start..start + len];
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `available` checked that the CPU has AVX2.
        unsafe {
            Some(match (key, want_min) {
                (WordKey::Float, false) => scan::<false, 0>(row),
                (WordKey::Float, true) => scan::<true, 0>(row),
                (WordKey::Signed, false) => scan::<false, 1>(row),
                (WordKey::Signed, true) => scan::<true, 1>(row),
                (WordKey::Unsigned, false) => scan::<false, 2>(row),
                (WordKey::Unsigned, true) => scan::<true, 2>(row),
            })
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// [`WordKey`] as the const parameter `KIND` of [`scan`] names it.
#[cfg(target_arch = "x86_64")]
const fn kind_of(kind: u8) -> WordKey {
    match kind {
        0 => WordKey::Float,
        1 => WordKey::Signed,
        _ => WordKey::Unsigned,
    }
}

/// The keys of eight elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn keys<const KIND: u8>(bits: __m256i) -> __m256i {
    match kind_of(KIND) {
        WordKey::Float => {
            let flip = _mm256_srli_epi32::<1>(_mm256_srai_epi32::<31>(bits));
            _mm256_xor_si256(bits, flip)
        }
        WordKey::Signed => bits,
        WordKey::Unsigned => _mm256_xor_si256(bits, _mm256_set1_epi32(i32::MIN)),
    }
}

/// Lanes where `(k, i)` beats `(best, at)`: a strictly better key, or an equal key at a
/// lower index (the join of accumulators whose indices interleave).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn beats<const MIN: bool>(k: __m256i, i: __m256i, best: __m256i, at: __m256i) -> __m256i {
    let better = if MIN {
        _mm256_cmpgt_epi32(best, k)
    } else {
        _mm256_cmpgt_epi32(k, best)
    };
    let tie = _mm256_and_si256(_mm256_cmpeq_epi32(k, best), _mm256_cmpgt_epi32(at, i));
    _mm256_or_si256(better, tie)
}

/// The pass itself (see the module documentation).
///
/// # Safety
/// AVX2 must be present; `row` is not empty and shorter than 2^31 elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan<const MIN: bool, const KIND: u8>(row: &[u32]) -> usize {
    let key = kind_of(KIND);
    let n = row.len();
    let body = n / STEP * STEP;
    let mut best_key = key.scalar(row[0]);
    let mut best_at = 0usize;
    let mut nan = _mm256_setzero_si256();
    if body > 0 {
        let words = row.as_ptr() as *const __m256i;
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mut best = [_mm256_setzero_si256(); 4];
        let mut at = [_mm256_setzero_si256(); 4];
        for a in 0..4 {
            // SAFETY: `body >= STEP`, so the row holds these four vectors.
            let bits = unsafe { _mm256_loadu_si256(words.add(a)) };
            best[a] = keys::<KIND>(bits);
            at[a] = _mm256_add_epi32(lanes, _mm256_set1_epi32(8 * a as i32));
            if key == WordKey::Float {
                let v = _mm256_castsi256_ps(bits);
                nan = _mm256_or_si256(
                    nan,
                    _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v)),
                );
            }
        }
        let mut index = at;
        let step = _mm256_set1_epi32(STEP as i32);
        let mut from = STEP;
        while from < body {
            for a in 0..4 {
                index[a] = _mm256_add_epi32(index[a], step);
                // SAFETY: `from + STEP <= body <= n`: the vector is inside the row.
                let bits = unsafe { _mm256_loadu_si256(words.add(from / 8 + a)) };
                let k = keys::<KIND>(bits);
                // Strictly better only: a lane keeps the first index of its best key.
                let better = if MIN {
                    _mm256_cmpgt_epi32(best[a], k)
                } else {
                    _mm256_cmpgt_epi32(k, best[a])
                };
                best[a] = _mm256_blendv_epi8(best[a], k, better);
                at[a] = _mm256_blendv_epi8(at[a], index[a], better);
                if key == WordKey::Float {
                    let v = _mm256_castsi256_ps(bits);
                    nan = _mm256_or_si256(
                        nan,
                        _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v)),
                    );
                }
            }
            from += STEP;
        }
        // Join the accumulators, then the lanes, ties to the lower index.
        for (a, b) in [(0, 1), (2, 3), (0, 2)] {
            let take = beats::<MIN>(best[b], at[b], best[a], at[a]);
            best[a] = _mm256_blendv_epi8(best[a], best[b], take);
            at[a] = _mm256_blendv_epi8(at[a], at[b], take);
        }
        // The lanes' extreme key in every lane, then the lowest index holding it.
        let extreme = |a: __m256i, b: __m256i| {
            if MIN {
                _mm256_min_epi32(a, b)
            } else {
                _mm256_max_epi32(a, b)
            }
        };
        let keys = best[0];
        let mut top = extreme(keys, _mm256_permute2x128_si256::<1>(keys, keys));
        top = extreme(top, _mm256_shuffle_epi32::<0b01_00_11_10>(top));
        top = extreme(top, _mm256_shuffle_epi32::<0b10_11_00_01>(top));
        let held = _mm256_cmpeq_epi32(keys, top);
        let mut first = _mm256_blendv_epi8(_mm256_set1_epi32(i32::MAX), at[0], held);
        first = _mm256_min_epi32(first, _mm256_permute2x128_si256::<1>(first, first));
        first = _mm256_min_epi32(first, _mm256_shuffle_epi32::<0b01_00_11_10>(first));
        first = _mm256_min_epi32(first, _mm256_shuffle_epi32::<0b10_11_00_01>(first));
        best_key = _mm256_cvtsi256_si32(top);
        best_at = _mm256_cvtsi256_si32(first) as usize;
    }
    // The rest, in order, after every index above: strictly better only.
    for (offset, &bits) in row[body..].iter().enumerate() {
        let k = key.scalar(bits);
        if (MIN && k < best_key) || (!MIN && k > best_key) {
            best_key = k;
            best_at = body + offset;
        }
    }
    if key == WordKey::Float {
        let tail_nan = row[body..].iter().any(|&b| f32::from_bits(b).is_nan());
        if tail_nan || _mm256_testz_si256(nan, nan) == 0 {
            return row
                .iter()
                .position(|&b| f32::from_bits(b).is_nan())
                .unwrap_or(best_at);
        }
    }
    best_at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    /// Seeded words with the awkward cases: NaNs of both signs, infinities, signed
    /// zeros and many ties (a small range of values).
    fn awkward(n: usize, seed: u64) -> Vec<f32> {
        crate::test_values::stream(seed)
            .take(n)
            .map(|state| match state % 997 {
                0 => f32::NAN,
                1 => -f32::NAN,
                2 => f32::INFINITY,
                3 => f32::NEG_INFINITY,
                4 => 0.0,
                5 => -0.0,
                r => ((r % 61) as f32 - 30.0) * 0.5,
            })
            .collect()
    }

    #[test]
    fn every_row_answers_as_the_whole_array_selection() {
        if !available() {
            return;
        }
        let values = awkward(40_000, 11);
        for len in [
            1usize, 2, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 1024, 4099,
        ] {
            for start in (0..values.len() - len).step_by(len.max(97) * 3 + 1) {
                let floats = &values[start..start + len];
                let ints: Vec<i32> = floats
                    .iter()
                    .map(|v| {
                        if v.is_finite() {
                            (v * 3.0) as i32
                        } else {
                            i32::MIN + 5
                        }
                    })
                    .collect();
                let uints: Vec<u32> = ints.iter().map(|&v| v as u32).collect();
                for want_min in [false, true] {
                    let want = select(floats, want_min, true).map(|(i, _)| i);
                    // Counted from the row's start within the whole array.
                    let all: &[u32] = bytemuck::cast_slice(&values);
                    let got = first_extreme(all, (start, len), WordKey::Float, want_min);
                    assert_eq!(got, want, "f32 len {len} at {start}, min {want_min}");
                    let want = select(&ints, want_min, true).map(|(i, _)| i);
                    let got = first_extreme(
                        bytemuck::cast_slice(&ints),
                        (0, len),
                        WordKey::Signed,
                        want_min,
                    );
                    assert_eq!(got, want, "i32 len {len} at {start}, min {want_min}");
                    let want = select(&uints, want_min, true).map(|(i, _)| i);
                    let got = first_extreme(&uints, (0, len), WordKey::Unsigned, want_min);
                    assert_eq!(got, want, "u32 len {len} at {start}, min {want_min}");
                }
            }
        }
    }

    #[test]
    fn the_vendor_string_is_read_as_cpuid_gives_it() {
        #[cfg(target_arch = "x86_64")]
        {
            let id = __cpuid(0);
            let vendor: Vec<u8> = [id.ebx, id.edx, id.ecx]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            assert_eq!(is_amd(), vendor == b"AuthenticAMD");
            assert_eq!(longest_row() == usize::MAX, is_amd());
        }
    }

    #[test]
    fn ties_across_accumulators_go_to_the_lowest_index() {
        if !available() {
            return;
        }
        // The largest value at indices 45 (accumulator 1) and 70 (accumulator 0 of the
        // next step) and 200: the first wins, whichever accumulator holds it.
        let mut row: Vec<f32> = (0..256).map(|i| (i % 7) as f32).collect();
        for i in [200, 70, 45] {
            row[i] = 9.0;
        }
        let got = first_extreme(bytemuck::cast_slice(&row), (0, 256), WordKey::Float, false);
        assert_eq!(got, Some(45));
        row[45] = f32::NAN;
        row[150] = -f32::NAN;
        let got = first_extreme(bytemuck::cast_slice(&row), (0, 256), WordKey::Float, true);
        assert_eq!(got, Some(45), "the first NaN wins either way");
        assert_eq!(first_extreme(&[], (0, 0), WordKey::Signed, false), None);
    }
}
