//! Argmin and argmax of one row (f32, i32, u32, f64, i64 or u64) in a single AVX2 pass:
//! each of four accumulators keeps, per vector lane, the best order key seen so far and
//! the index where it first appeared, and the lanes are joined at the end by key, ties
//! going to the lower index. Floats also gather a NaN flag on the way; a row that holds
//! a NaN answers with its first NaN, found by a second scan (the rare case).
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
//! gains from its prefetch, that pass stayed faster along rows of 500 and more (of 256
//! and more for 8-byte elements), so there the rows this file serves are shorter
//! ([`longest_row`]).
//!
//! 8-byte elements take the same pass with four lanes per vector and 64-bit indices
//! (AVX2 has 64-bit compares but no 64-bit minimum, so every join is a compare and a
//! blend).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use redlab_core::DType;

/// Rows at least this long take the pass: one step of the loop for 4-byte elements
/// (four vectors of eight, one per accumulator, so that a step's four compare-and-blend
/// chains run side by side), two for 8-byte ones.
pub(crate) const SHORTEST_ROW: usize = 32;

/// Proof that this CPU runs AVX2, taken once per run of rows ([`Avx2::detect`]) rather
/// than checked in every row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// `Some` where the CPU has AVX2.
    pub(crate) fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        {
            is_x86_feature_detected!("avx2").then_some(Avx2(()))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }
}

/// How the bits of an element become its order key (a signed integer of the element's
/// width, ordered as the values are; [`crate::select`]'s keys, shifted for unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowKey {
    /// IEEE binary32: the magnitude bits flipped when negative.
    F32,
    /// i32: its own key.
    I32,
    /// u32: the top bit flipped, so that signed order is unsigned order.
    U32,
    /// IEEE binary64, as f32.
    F64,
    /// i64, as i32.
    I64,
    /// u64, as u32.
    U64,
}

impl RowKey {
    /// The key of `dtype`'s elements, for the types this file serves.
    pub(crate) fn of(dtype: DType) -> Option<RowKey> {
        match dtype {
            DType::F32 => Some(RowKey::F32),
            DType::I32 => Some(RowKey::I32),
            DType::U32 => Some(RowKey::U32),
            DType::F64 => Some(RowKey::F64),
            DType::I64 => Some(RowKey::I64),
            DType::U64 => Some(RowKey::U64),
            _ => None,
        }
    }

    /// Bytes per element.
    const fn width(self) -> usize {
        match self {
            RowKey::F32 | RowKey::I32 | RowKey::U32 => 4,
            RowKey::F64 | RowKey::I64 | RowKey::U64 => 8,
        }
    }

    /// Whether the keys come from floats (and a NaN wins).
    const fn float(self) -> bool {
        matches!(self, RowKey::F32 | RowKey::F64)
    }

    /// The const parameter `KIND` of [`scan`] that names `self`.
    #[cfg(target_arch = "x86_64")]
    const fn code(self) -> u8 {
        self as u8
    }

    /// The inverse of [`RowKey::code`].
    #[cfg(target_arch = "x86_64")]
    const fn from_code(code: u8) -> RowKey {
        match code {
            0 => RowKey::F32,
            1 => RowKey::I32,
            2 => RowKey::U32,
            3 => RowKey::F64,
            4 => RowKey::I64,
            _ => RowKey::U64,
        }
    }

    /// The key of one element's bits (the low `width` bytes of `bits`), sign-extended:
    /// a 4-byte key compares with the vector lanes' keys as an `i32` would.
    #[inline(always)]
    fn scalar(self, bits: u64) -> i64 {
        match self {
            RowKey::F32 => {
                let b = bits as u32 as i32;
                (b ^ (((b >> 31) as u32) >> 1) as i32) as i64
            }
            RowKey::I32 => bits as u32 as i32 as i64,
            RowKey::U32 => (bits as u32 ^ 0x8000_0000) as i32 as i64,
            RowKey::F64 => {
                let b = bits as i64;
                b ^ (((b >> 63) as u64) >> 1) as i64
            }
            RowKey::I64 => bits as i64,
            RowKey::U64 => (bits ^ (1 << 63)) as i64,
        }
    }

    /// Whether the element `bits` is a NaN (never, for integers).
    #[inline(always)]
    fn is_nan(self, bits: u64) -> bool {
        match self {
            RowKey::F32 => f32::from_bits(bits as u32).is_nan(),
            RowKey::F64 => f64::from_bits(bits).is_nan(),
            _ => false,
        }
    }
}

/// The longest rows of `key`'s elements this pass serves better than the whole-array
/// selection on this CPU. On the AMD development machine it won at every length
/// measured (32 to 4099; results/cpu-dev-2core-row-argmax, -wide). On an Intel Xeon
/// with AVX-512 (a GPU machine's host) the selection's key pass, which prefetches (and
/// gains from it there; AMD lost to it), stayed faster along longer rows: 4-byte rows
/// won along rows of 32–256 (1.02–1.95×) and lost along rows of 500–4099 (0.6–1.1×;
/// results/h100-host-row-argmax, -wide); 8-byte rows won along rows of 64 in two rounds
/// of three, were level at 100 (0.95–1.12×) and lost from 256 on (0.62–0.85×,
/// results/h100-host-row-argmax-wide). Lengths between those measured were not.
pub(crate) fn longest_row(key: RowKey) -> usize {
    static AMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *AMD.get_or_init(is_amd) {
        usize::MAX
    } else if key.width() == 4 {
        256
    } else {
        100
    }
}

/// Whether the CPU says it is AMD's (CPUID leaf 0's vendor string).
fn is_amd() -> bool {
    vendor() == *b"AuthenticAMD"
}

/// CPUID leaf 0's vendor string (zeros off x86-64).
fn vendor() -> [u8; 12] {
    let mut text = [0u8; 12];
    #[cfg(target_arch = "x86_64")]
    {
        // The string is spread over EBX, EDX and ECX, in that order.
        let id = __cpuid(0);
        for (part, word) in text.chunks_exact_mut(4).zip([id.ebx, id.edx, id.ecx]) {
            part.copy_from_slice(&word.to_le_bytes());
        }
    }
    text
}

/// The first index of the smallest (`want_min`) or largest key of `data[start..start +
/// len]`, counted from `start`, or of its first NaN where `key` is a float's; `None` for
/// an empty row, a 4-byte row of 2^31 elements or more, or elements that are not
/// `key`'s width (the caller then takes the whole-array selection). The pass asks for no
/// lines ahead: on the development machine (AMD EPYC) software prefetch, spread over the
/// pass or a row at a time, made it slower (module documentation).
pub(crate) fn first_extreme<T: bytemuck::Pod>(
    cpu: Avx2,
    data: &[T],
    (start, len): (usize, usize),
    key: RowKey,
    want_min: bool,
) -> Option<usize> {
    if len == 0 || std::mem::size_of::<T>() != key.width() {
        return None;
    }
    if key.width() == 4 && len > i32::MAX as usize {
        return None;
    }
    let row: &[u8] = bytemuck::cast_slice(&data[start..start + len]);
    #[cfg(target_arch = "x86_64")]
    {
        let _ = cpu;
        // SAFETY: `cpu` proves the CPU has AVX2; the row is not empty, and a 4-byte one
        // is shorter than 2^31 elements.
        unsafe {
            Some(match (key, want_min) {
                (RowKey::F32, false) => scan::<false, { RowKey::F32.code() }>(row),
                (RowKey::F32, true) => scan::<true, { RowKey::F32.code() }>(row),
                (RowKey::I32, false) => scan::<false, { RowKey::I32.code() }>(row),
                (RowKey::I32, true) => scan::<true, { RowKey::I32.code() }>(row),
                (RowKey::U32, false) => scan::<false, { RowKey::U32.code() }>(row),
                (RowKey::U32, true) => scan::<true, { RowKey::U32.code() }>(row),
                (RowKey::F64, false) => scan::<false, { RowKey::F64.code() }>(row),
                (RowKey::F64, true) => scan::<true, { RowKey::F64.code() }>(row),
                (RowKey::I64, false) => scan::<false, { RowKey::I64.code() }>(row),
                (RowKey::I64, true) => scan::<true, { RowKey::I64.code() }>(row),
                (RowKey::U64, false) => scan::<false, { RowKey::U64.code() }>(row),
                (RowKey::U64, true) => scan::<true, { RowKey::U64.code() }>(row),
            })
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (cpu, row, want_min);
        None
    }
}

/// Element `i`'s bits (`width` bytes, little-endian as x86-64 stores them).
#[inline(always)]
fn bits_at(row: &[u8], width: usize, i: usize) -> u64 {
    let mut word = [0u8; 8];
    word[..width].copy_from_slice(&row[i * width..(i + 1) * width]);
    u64::from_le_bytes(word)
}

/// The keys of a vector's elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn keys<const KIND: u8>(bits: __m256i) -> __m256i {
    match RowKey::from_code(KIND) {
        RowKey::F32 => {
            let flip = _mm256_srli_epi32::<1>(_mm256_srai_epi32::<31>(bits));
            _mm256_xor_si256(bits, flip)
        }
        RowKey::I32 | RowKey::I64 => bits,
        RowKey::U32 => _mm256_xor_si256(bits, _mm256_set1_epi32(i32::MIN)),
        RowKey::F64 => {
            // No 64-bit arithmetic shift in AVX2: the sign comes from a compare.
            let negative = _mm256_cmpgt_epi64(_mm256_setzero_si256(), bits);
            _mm256_xor_si256(bits, _mm256_srli_epi64::<1>(negative))
        }
        RowKey::U64 => _mm256_xor_si256(bits, _mm256_set1_epi64x(i64::MIN)),
    }
}

/// All ones in the lanes of a vector's elements that are NaN (none for integers).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn nan_lanes<const KIND: u8>(bits: __m256i) -> __m256i {
    match RowKey::from_code(KIND) {
        RowKey::F32 => {
            let v = _mm256_castsi256_ps(bits);
            _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v))
        }
        RowKey::F64 => {
            let v = _mm256_castsi256_pd(bits);
            _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_UNORD_Q>(v, v))
        }
        _ => _mm256_setzero_si256(),
    }
}

/// Lanes where `a > b`, as signed integers of `KIND`'s width.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn greater<const KIND: u8>(a: __m256i, b: __m256i) -> __m256i {
    if RowKey::from_code(KIND).width() == 8 {
        _mm256_cmpgt_epi64(a, b)
    } else {
        _mm256_cmpgt_epi32(a, b)
    }
}

/// Lanes where `a == b`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn equal<const KIND: u8>(a: __m256i, b: __m256i) -> __m256i {
    if RowKey::from_code(KIND).width() == 8 {
        _mm256_cmpeq_epi64(a, b)
    } else {
        _mm256_cmpeq_epi32(a, b)
    }
}

/// `a + b` lane by lane.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add<const KIND: u8>(a: __m256i, b: __m256i) -> __m256i {
    if RowKey::from_code(KIND).width() == 8 {
        _mm256_add_epi64(a, b)
    } else {
        _mm256_add_epi32(a, b)
    }
}

/// `v` in every lane.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn splat<const KIND: u8>(v: i64) -> __m256i {
    if RowKey::from_code(KIND).width() == 8 {
        _mm256_set1_epi64x(v)
    } else {
        _mm256_set1_epi32(v as i32)
    }
}

/// Lane 0, sign-extended.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn first_lane<const KIND: u8>(v: __m256i) -> i64 {
    if RowKey::from_code(KIND).width() == 8 {
        _mm_cvtsi128_si64(_mm256_castsi256_si128(v))
    } else {
        _mm256_cvtsi256_si32(v) as i64
    }
}

/// Lanes where `(k, i)` beats `(best, at)`: a strictly better key, or an equal key at a
/// lower index (the join of accumulators or lanes whose indices interleave).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn beats<const MIN: bool, const KIND: u8>(
    (k, i): (__m256i, __m256i),
    (best, at): (__m256i, __m256i),
) -> __m256i {
    let better = if MIN {
        greater::<KIND>(best, k)
    } else {
        greater::<KIND>(k, best)
    };
    let tie = _mm256_and_si256(equal::<KIND>(k, best), greater::<KIND>(at, i));
    _mm256_or_si256(better, tie)
}

/// `(best, at)` ← `(k, i)` in the lanes where it beats them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn join<const MIN: bool, const KIND: u8>(
    (best, at): (__m256i, __m256i),
    (k, i): (__m256i, __m256i),
) -> (__m256i, __m256i) {
    let take = beats::<MIN, KIND>((k, i), (best, at));
    (
        _mm256_blendv_epi8(best, k, take),
        _mm256_blendv_epi8(at, i, take),
    )
}

/// Every lane ← the winner of the eight 32-bit lanes of `(keys, at)`: the extreme key by
/// minimum or maximum over halves, quarters and eighths, then the lowest index holding
/// it. (Joining key and index together at each step, as [`lanes_join_wide`] must, made
/// rows of 64 f32 up to 1.7× slower on the development machine.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lanes_join_narrow<const MIN: bool>((keys, at): (__m256i, __m256i)) -> (__m256i, __m256i) {
    let extreme = |a: __m256i, b: __m256i| {
        if MIN {
            _mm256_min_epi32(a, b)
        } else {
            _mm256_max_epi32(a, b)
        }
    };
    let mut top = extreme(keys, _mm256_permute2x128_si256::<1>(keys, keys));
    top = extreme(top, _mm256_shuffle_epi32::<0b01_00_11_10>(top));
    top = extreme(top, _mm256_shuffle_epi32::<0b10_11_00_01>(top));
    let held = _mm256_cmpeq_epi32(keys, top);
    let mut first = _mm256_blendv_epi8(_mm256_set1_epi32(i32::MAX), at, held);
    first = _mm256_min_epi32(first, _mm256_permute2x128_si256::<1>(first, first));
    first = _mm256_min_epi32(first, _mm256_shuffle_epi32::<0b01_00_11_10>(first));
    first = _mm256_min_epi32(first, _mm256_shuffle_epi32::<0b10_11_00_01>(first));
    (top, first)
}

/// Every lane ← the winner of the four 64-bit lanes of `pair`, joined by halves then
/// pairs (AVX2 has no 64-bit minimum, so key and index go together through [`join`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lanes_join_wide<const MIN: bool, const KIND: u8>(
    pair: (__m256i, __m256i),
) -> (__m256i, __m256i) {
    let (k, i) = pair;
    let halves = (
        _mm256_permute2x128_si256::<1>(k, k),
        _mm256_permute2x128_si256::<1>(i, i),
    );
    let (k, i) = join::<MIN, KIND>(pair, halves);
    let swapped = (
        _mm256_shuffle_epi32::<0b01_00_11_10>(k),
        _mm256_shuffle_epi32::<0b01_00_11_10>(i),
    );
    join::<MIN, KIND>((k, i), swapped)
}

/// The pass itself (see the module documentation), over the bytes of one row.
///
/// # Safety
/// AVX2 must be present; `row` holds at least one element, and fewer than 2^31 where
/// they are 4 bytes wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan<const MIN: bool, const KIND: u8>(row: &[u8]) -> usize {
    let key = RowKey::from_code(KIND);
    let width = key.width();
    let lanes = 32 / width;
    let step = 4 * lanes;
    let n = row.len() / width;
    let body = n / step * step;
    let mut best_key = match (MIN, width) {
        // The worst key, for rows shorter than a step (the tail loop alone).
        (true, 4) => i32::MAX as i64,
        (false, 4) => i32::MIN as i64,
        (true, _) => i64::MAX,
        (false, _) => i64::MIN,
    };
    let mut best_at = 0usize;
    let mut nan = _mm256_setzero_si256();
    if body > 0 {
        let words = row.as_ptr() as *const __m256i;
        let first = if width == 8 {
            _mm256_setr_epi64x(0, 1, 2, 3)
        } else {
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
        };
        let stride = splat::<KIND>(step as i64);
        // The first step's keys are the accumulators' start, each at its own index. (A
        // start from the worst key, compared like any step, made rows of 32 f32 a
        // quarter slower: one more dependent compare and blend per row.)
        let mut best = [first; 4];
        let mut at = [first; 4];
        for a in 0..4 {
            // SAFETY: `body >= step`, so the row holds these four vectors.
            let bits = unsafe { _mm256_loadu_si256(words.add(a)) };
            best[a] = keys::<KIND>(bits);
            at[a] = add::<KIND>(first, splat::<KIND>((a * lanes) as i64));
            if key.float() {
                nan = _mm256_or_si256(nan, nan_lanes::<KIND>(bits));
            }
        }
        let mut index = at;
        let mut from = step;
        while from < body {
            for a in 0..4 {
                index[a] = add::<KIND>(index[a], stride);
                // SAFETY: `from + step <= body <= n`: the vector is inside the row.
                let bits = unsafe { _mm256_loadu_si256(words.add(from / lanes + a)) };
                let k = keys::<KIND>(bits);
                // Strictly better only: a lane keeps the first index of its best key.
                let better = if MIN {
                    greater::<KIND>(best[a], k)
                } else {
                    greater::<KIND>(k, best[a])
                };
                best[a] = _mm256_blendv_epi8(best[a], k, better);
                at[a] = _mm256_blendv_epi8(at[a], index[a], better);
                if key.float() {
                    nan = _mm256_or_si256(nan, nan_lanes::<KIND>(bits));
                }
            }
            from += step;
        }
        // Join the accumulators, ties to the lower index.
        let mut pair = join::<MIN, KIND>((best[0], at[0]), (best[1], at[1]));
        pair = join::<MIN, KIND>(pair, join::<MIN, KIND>((best[2], at[2]), (best[3], at[3])));
        pair = if width == 4 {
            lanes_join_narrow::<MIN>(pair)
        } else {
            lanes_join_wide::<MIN, KIND>(pair)
        };
        best_key = first_lane::<KIND>(pair.0);
        best_at = first_lane::<KIND>(pair.1) as usize;
    }
    // The rest, in order, after every index above: strictly better only.
    let mut tail_nan = false;
    for i in body..n {
        let bits = bits_at(row, width, i);
        let k = key.scalar(bits);
        if (MIN && k < best_key) || (!MIN && k > best_key) {
            best_key = k;
            best_at = i;
        }
        tail_nan |= key.is_nan(bits);
    }
    if key.float() && (tail_nan || _mm256_testz_si256(nan, nan) == 0) {
        return (0..n)
            .position(|i| key.is_nan(bits_at(row, width, i)))
            .unwrap_or(best_at);
    }
    best_at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::{select, Selectable};

    /// Seeded values with the awkward cases: NaNs of both signs, infinities, signed
    /// zeros and many ties (a small range of values).
    fn awkward(n: usize, seed: u64) -> Vec<f64> {
        crate::test_values::stream(seed)
            .take(n)
            .map(|state| match state % 997 {
                0 => f64::NAN,
                1 => -f64::NAN,
                2 => f64::INFINITY,
                3 => f64::NEG_INFINITY,
                4 => 0.0,
                5 => -0.0,
                r => ((r % 61) as f64 - 30.0) * 0.5,
            })
            .collect()
    }

    /// Integers from `values`: the finite ones scaled, the others near the type's bottom.
    fn integers(values: &[f64]) -> Vec<i64> {
        values
            .iter()
            .map(|v| if v.is_finite() { (v * 3.0) as i64 } else { -5 })
            .collect()
    }

    /// `first_extreme` of every row of `values` of each length, both ways, against
    /// `select` of the row alone, counted from the row's start within the whole array.
    fn check_rows<T: Selectable + bytemuck::Pod>(cpu: Avx2, values: &[T], key: RowKey) {
        for len in [
            1usize, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 1024, 4099,
        ] {
            for start in (0..values.len() - len).step_by(len.max(97) * 3 + 1) {
                for want_min in [false, true] {
                    let want = select(&values[start..start + len], want_min, true).map(|(i, _)| i);
                    let got = first_extreme(cpu, values, (start, len), key, want_min);
                    assert_eq!(got, want, "{key:?} len {len} at {start}, min {want_min}");
                }
            }
        }
    }

    #[test]
    fn every_row_answers_as_the_whole_array_selection() {
        let Some(cpu) = Avx2::detect() else { return };
        let values = awkward(40_000, 11);
        let floats: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let wide = integers(&values);
        check_rows(cpu, &floats, RowKey::F32);
        check_rows(cpu, &values, RowKey::F64);
        let narrow: Vec<i32> = wide.iter().map(|&v| v as i32).collect();
        check_rows(cpu, &narrow, RowKey::I32);
        // Negative integers become the unsigned types' largest values.
        let unsigned: Vec<u32> = narrow.iter().map(|&v| v as u32).collect();
        check_rows(cpu, &unsigned, RowKey::U32);
        // Spread over the whole 64-bit range, so that the top bits decide.
        let spread: Vec<i64> = wide.iter().map(|&v| v.wrapping_mul(1 << 57)).collect();
        check_rows(cpu, &spread, RowKey::I64);
        let unsigned: Vec<u64> = spread.iter().map(|&v| v as u64).collect();
        check_rows(cpu, &unsigned, RowKey::U64);
    }

    #[test]
    fn elements_of_another_width_are_refused() {
        let Some(cpu) = Avx2::detect() else { return };
        let row = [1.0f32; 64];
        assert_eq!(first_extreme(cpu, &row, (0, 64), RowKey::F64, false), None);
        assert_eq!(first_extreme(cpu, &row, (0, 0), RowKey::F32, false), None);
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
            assert_eq!(longest_row(RowKey::F64) == usize::MAX, is_amd());
            assert_eq!(longest_row(RowKey::I32) == usize::MAX, is_amd());
        }
    }

    #[test]
    fn rows_below_zero_and_at_the_worst_key_answer_their_first_extreme() {
        let Some(cpu) = Avx2::detect() else { return };
        // Every element negative, the maximum at 27 and again at 90: lanes that started
        // from a key of zero would never take any of them.
        let mut row: Vec<i32> = (0..130).map(|i| -1000 - (i % 13)).collect();
        row[27] = -3;
        row[90] = -3;
        assert_eq!(
            first_extreme(cpu, &row, (0, 130), RowKey::I32, false),
            Some(27)
        );
        let floats: Vec<f64> = row.iter().map(|&v| v as f64).collect();
        assert_eq!(
            first_extreme(cpu, &floats, (0, 130), RowKey::F64, false),
            Some(27)
        );
        let wide: Vec<i64> = row.iter().map(|&v| v as i64).collect();
        assert_eq!(
            first_extreme(cpu, &wide, (0, 130), RowKey::I64, false),
            Some(27)
        );
        // Rows shorter than a step start from the worst key: all negative, the
        // maximum at 13 of the row (14 of the array).
        let short: Vec<i64> = (0..20)
            .map(|i| if i == 14 { -3 } else { -100 - i })
            .collect();
        assert_eq!(
            first_extreme(cpu, &short, (1, 19), RowKey::I64, false),
            Some(13)
        );
        let short: Vec<f32> = short.iter().map(|&v| v as f32).collect();
        assert_eq!(
            first_extreme(cpu, &short, (1, 19), RowKey::F32, false),
            Some(13)
        );
        // A row that is the worst key throughout answers its first element.
        let bottom = vec![i32::MIN; 70];
        assert_eq!(
            first_extreme(cpu, &bottom, (0, 70), RowKey::I32, false),
            Some(0)
        );
        let top = vec![u64::MAX; 70];
        assert_eq!(
            first_extreme(cpu, &top, (0, 70), RowKey::U64, true),
            Some(0)
        );
        let top = vec![i64::MAX; 70];
        assert_eq!(
            first_extreme(cpu, &top, (3, 40), RowKey::I64, true),
            Some(0)
        );
    }

    #[test]
    fn ties_across_accumulators_go_to_the_lowest_index() {
        let Some(cpu) = Avx2::detect() else { return };
        // The largest value at indices 45 (accumulator 1) and 70 (accumulator 0 of the
        // next step) and 200: the first wins, whichever accumulator holds it.
        let mut row: Vec<f32> = (0..256).map(|i| (i % 7) as f32).collect();
        for i in [200, 70, 45] {
            row[i] = 9.0;
        }
        let got = first_extreme(cpu, &row, (0, 256), RowKey::F32, false);
        assert_eq!(got, Some(45));
        let wide: Vec<f64> = row.iter().map(|&v| v as f64).collect();
        assert_eq!(
            first_extreme(cpu, &wide, (0, 256), RowKey::F64, false),
            Some(45)
        );
        row[45] = f32::NAN;
        row[150] = -f32::NAN;
        let got = first_extreme(cpu, &row, (0, 256), RowKey::F32, true);
        assert_eq!(got, Some(45), "the first NaN wins either way");
        let wide: Vec<f64> = row.iter().map(|&v| v as f64).collect();
        assert_eq!(
            first_extreme(cpu, &wide, (0, 256), RowKey::F64, true),
            Some(45)
        );
    }
}
