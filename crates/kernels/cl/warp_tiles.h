// One tile of the canonical order per warp, for devices with 32-wide sub-group shuffles
// (CUDA). Included by canonical_one.cl, which uses it from WARP_TILES_FROM tiles on.
//
// Why a warp and not a work-group: the canonical fold halves 1024 lanes down to one, and
// with 16-byte loads every halving step maps onto one place inside a warp. Lane j of the
// tile is owned by sub-group lane t = (j / WV) mod 32, in slot q = j / (32·WV), element
// i = j mod WV of its word, where WV elements fill 16 bytes (4 f32, 2 f64, 8 halves).
// Every work-item therefore owns exactly 32 lanes, and
//   - fold steps w ≥ 32·WV pair slots q and q + w/(32·WV) of the same work-item,
//   - steps WV ≤ w < 32·WV pair work-items t and t + w/WV: a shuffle down,
//   - steps w < WV pair elements of the same word.
// No local memory, no barrier: a warp loads a whole tile as 16-byte words (a warp reads
// 512 contiguous bytes per load instruction), folds it in registers and keeps going,
// while the other warps of the work-group stream their own tiles. Float addition and
// multiplication are commutative, so only the grouping matters, and it is the canonical
// one (docs/canonical-order.md).
//
// WARP_ROWS rows of the tile are in flight per work-item before any is added (0 picks
// by type: register pressure grows with WV·WQ words per row).

// Mapped elements (a user-defined map, IN_IS_MAPPED) have no raw words: each lane owns
// WV elements as if they were one word of the mapped type, and reads them through
// lift() (the map's loads of every input).
#if defined(IN_IS_MAPPED)
#if ACC_BYTES == 4
#define WV 4
#else
#define WV 2
#endif
#if defined(RL_MAP_WORD) && RL_MAP_WORD != WV
#error "the map's word function reads a different number of elements than a warp-tile word"
#endif
#elif IN_BYTES == 2
#define WV 8
#elif IN_BYTES == 4
#define WV 4
#else
#define WV 2
#endif
// 16-byte words per row per work-item.
#define WQ (LANES / (32 * WV))

#ifndef WARP_ROWS
#define WARP_ROWS 0
#endif
#ifndef WARP_PREFETCH
#define WARP_PREFETCH 1
#endif
#if WARP_ROWS == 0
#undef WARP_ROWS
// Four rows (16 words of 16 bytes per work-item) measured fastest for f32 and f64 on
// the H200 without loading ahead (results/h200-cuda-warp-tiles); loading ahead, f64
// takes two (32 words, as f32 at four: results/h200-cuda-prefetch).
#if WARP_PREFETCH && WQ > 8 && !defined(IN_IS_MAPPED)
#define WARP_ROWS 2
#else
#define WARP_ROWS 4
#endif
#endif
#if ROWS % WARP_ROWS != 0
#error "WARP_ROWS must divide the tile's 8 rows"
#endif

// WARP_PREFETCH 1 (the default): a warp issues the loads of its next whole tile's first
// WARP_ROWS rows before it folds the current tile and merges the result, so its loads stay
// in flight through the fold's shuffles and the binary counter instead of stopping at
// every tile boundary. The prefetched words take the registers the row loop uses anyway.
// Loading ahead keeps a row batch live next to the accumulators; beyond 32 words per
// work-item (f64 at four rows) ptxas spills and the kernel runs at a seventh of its
// speed (measured), so it is off there whatever the setting.
#if defined(IN_IS_MAPPED) || WARP_ROWS * WQ > 32
#undef WARP_PREFETCH
#define WARP_PREFETCH 0
#endif

// Words of a partial row loaded together: at most 8, so that the partial tile does
// not need more registers than the whole-tile loop (which would cost occupancy).
#define PARTIAL_WORDS (WQ < 8 ? WQ : 8)

// Element i of a 16-byte word, as a partial.
#if IN_BYTES == 2
#define WORD_PART(word, c) ((c) == 0 ? (word).x : (c) == 1 ? (word).y : (c) == 2 ? (word).z : (word).w)
#define WORD_ELEM(word, i) ((acc_t)value_from_bits16((ushort)(WORD_PART(word, (i) >> 1) >> (((i) & 1) * 16))))
#elif IN_BYTES == 4
#define WORD_ELEM(word, i) ((acc_t)as_float((i) == 0 ? (word).x : (i) == 1 ? (word).y : (i) == 2 ? (word).z : (word).w))
#else
#define WORD_BITS64(a, b) (((ulong)(b) << 32) | (ulong)(a))
#define WORD_ELEM(word, i) ((acc_t)as_double((i) == 0 ? WORD_BITS64((word).x, (word).y) : WORD_BITS64((word).z, (word).w)))
#endif

// Lanes j < w of a work-item's accumulators take lanes j + w.
#define FOLD_IN_ITEM(w)                              \
    for (uint j = 0; j < (w); j++)                   \
        acc[j] = combine(acc[j], acc[j + (w)])
// Each of the word's lanes takes the one d work-items up.
#define FOLD_ACROSS(d)                               \
    for (uint i = 0; i < WV; i++)                    \
        acc[i] = combine(acc[i], sub_group_shuffle_down(acc[i], (d)))

// Lanes of one tile held as work-item t's WQ·WV accumulators (see the top of this file),
// folded by halving; the result is valid in sub-group lane 0.
inline acc_t warp_fold(acc_t acc[WQ * WV]) {
    // Fold steps 512 … 32·WV: slots of the same work-item. Each step is written out:
    // NVRTC keeps the array in registers only when every index is a constant, and it
    // does not unroll a loop whose step halves.
#if WQ >= 16
    FOLD_IN_ITEM(8 * WV);
#endif
#if WQ >= 8
    FOLD_IN_ITEM(4 * WV);
#endif
#if WQ >= 4
    FOLD_IN_ITEM(2 * WV);
#endif
    FOLD_IN_ITEM(WV);
    // 16·WV … WV: work-items t and t + d.
    FOLD_ACROSS(16);
    FOLD_ACROSS(8);
    FOLD_ACROSS(4);
    FOLD_ACROSS(2);
    FOLD_ACROSS(1);
    // WV/2 … 1: elements of one word.
#if WV >= 8
    FOLD_IN_ITEM(4);
#endif
#if WV >= 4
    FOLD_IN_ITEM(2);
#endif
    FOLD_IN_ITEM(1);
    return acc[0];
}

// The tile that starts at element `start`, folded; the result is valid in sub-group lane
// 0 (the other lanes hold partial folds).
inline acc_t warp_tile(const __global in_t* in, ulong start, ulong n, uint t) {
    acc_t acc[WQ * WV];
#pragma unroll
    for (uint j = 0; j < WQ * WV; j++)
        acc[j] = IDENTITY;
#ifdef IN_IS_MAPPED
    if (start + TILE <= n) {
        for (uint r0 = 0; r0 < ROWS; r0 += WARP_ROWS) {
            acc_t v[WARP_ROWS * WQ * WV];
#pragma unroll
            for (uint r = 0; r < WARP_ROWS; r++)
#pragma unroll
                for (uint q = 0; q < WQ; q++)
                {
                    ulong e = start + (ulong)(r0 + r) * LANES + WV * (32 * q + t);
#ifdef RL_MAP_WORD
                    // Whole-word loads of every input (see rl_map_word).
                    rl_map_t m[WV];
                    rl_map_word(in, e, n, m);
#pragma unroll
                    for (uint i = 0; i < WV; i++)
                        v[(r * WQ + q) * WV + i] = (acc_t)m[i];
#else
#pragma unroll
                    for (uint i = 0; i < WV; i++)
                        v[(r * WQ + q) * WV + i] = lift(in, e + i);
#endif
                }
#pragma unroll
            for (uint r = 0; r < WARP_ROWS; r++)
#pragma unroll
                for (uint q = 0; q < WQ; q++)
#pragma unroll
                    for (uint i = 0; i < WV; i++)
                        acc[q * WV + i] = combine(acc[q * WV + i], v[(r * WQ + q) * WV + i]);
        }
    } else {
        for (uint r = 0; r < ROWS; r++) {
            ulong row = start + (ulong)r * LANES;
            if (row >= n)
                break;
            ulong mine = row + WV * t;
#pragma unroll
            for (uint q = 0; q < WQ; q++)
#pragma unroll
                for (uint i = 0; i < WV; i++)
                    if (mine + 32 * WV * q + i < n)
                        acc[q * WV + i] = combine(acc[q * WV + i], lift(in, mine + 32 * WV * q + i));
        }
    }
#else
    if (start + TILE <= n) {
        const __global uint4* words = (const __global uint4*)(in + start) + t;
        for (uint r0 = 0; r0 < ROWS; r0 += WARP_ROWS) {
            uint4 w[WARP_ROWS * WQ];
#pragma unroll
            for (uint r = 0; r < WARP_ROWS; r++)
#pragma unroll
                for (uint q = 0; q < WQ; q++)
                    w[r * WQ + q] = words[(r0 + r) * (LANES / WV) + 32 * q];
#pragma unroll
            for (uint r = 0; r < WARP_ROWS; r++)
#pragma unroll
                for (uint q = 0; q < WQ; q++)
#pragma unroll
                    for (uint i = 0; i < WV; i++)
                        acc[q * WV + i] = combine(acc[q * WV + i], WORD_ELEM(w[r * WQ + q], i));
        }
    } else {
        // A partial last tile: rows past the end hold only the identity, which changes
        // no lane, so they are skipped. A row's whole words are loaded, up to
        // PARTIAL_WORDS at a time, before any is used (loads behind a branch each would
        // wait for the one before); a word that straddles the end is read element-wise.
        for (uint r = 0; r < ROWS; r++) {
            ulong row = start + (ulong)r * LANES;
            if (row >= n)
                break;
            // This work-item's first element in the row.
            ulong mine = row + WV * t;
#pragma unroll
            for (uint q0 = 0; q0 < WQ; q0 += PARTIAL_WORDS) {
                uint4 w[PARTIAL_WORDS];
#pragma unroll
                for (uint q = 0; q < PARTIAL_WORDS; q++)
                    if (mine + 32 * WV * (q0 + q) + WV <= n)
                        w[q] = *(const __global uint4*)(in + mine + 32 * WV * (q0 + q));
#pragma unroll
                for (uint q = 0; q < PARTIAL_WORDS; q++) {
                    ulong e = mine + 32 * WV * (q0 + q);
                    if (e + WV <= n) {
#pragma unroll
                        for (uint i = 0; i < WV; i++)
                            acc[(q0 + q) * WV + i] =
                                combine(acc[(q0 + q) * WV + i], WORD_ELEM(w[q], i));
                    } else {
#pragma unroll
                        for (uint i = 0; i < WV; i++)
                            if (e + i < n)
                                acc[(q0 + q) * WV + i] =
                                    combine(acc[(q0 + q) * WV + i], lift(in, e + i));
                    }
                }
            }
        }
    }
#endif
    return warp_fold(acc);
}

#if WARP_PREFETCH
// Rows r0 … r0 + WARP_ROWS − 1 of the whole tile at `start`, as work-item t's words.
inline void warp_load_rows(const __global in_t* in, ulong start, uint r0, uint t,
                           uint4 w[WARP_ROWS * WQ]) {
    const __global uint4* words = (const __global uint4*)(in + start) + t;
#pragma unroll
    for (uint r = 0; r < WARP_ROWS; r++)
#pragma unroll
        for (uint q = 0; q < WQ; q++)
            w[r * WQ + q] = words[(r0 + r) * (LANES / WV) + 32 * q];
}

// The whole tile at `start`, whose first WARP_ROWS rows are already in `w`, folded; before
// the fold, `w` is refilled with the first rows of the whole tile at `next` when
// `has_next` (the same words warp_tile would load, so the lanes and their order are
// unchanged).
inline acc_t warp_tile_prefetched(const __global in_t* in, ulong start, uint t,
                                  uint4 w[WARP_ROWS * WQ], ulong next, int has_next) {
    acc_t acc[WQ * WV];
#pragma unroll
    for (uint j = 0; j < WQ * WV; j++)
        acc[j] = IDENTITY;
    for (uint r0 = 0; r0 < ROWS; r0 += WARP_ROWS) {
        if (r0 > 0)
            warp_load_rows(in, start, r0, t, w);
#pragma unroll
        for (uint r = 0; r < WARP_ROWS; r++)
#pragma unroll
            for (uint q = 0; q < WQ; q++)
#pragma unroll
                for (uint i = 0; i < WV; i++)
                    acc[q * WV + i] = combine(acc[q * WV + i], WORD_ELEM(w[r * WQ + q], i));
    }
    if (has_next)
        warp_load_rows(in, next, 0, t, w);
    return warp_fold(acc);
}
#endif

// Warps take the aligned subtrees of 2^k tiles in turn across the grid; sub-group lane 0
// merges tile results with the binary counter of canonical_one.cl and writes each root
// to out[1 + s], or straight to out[0] when the whole input is one tile.
inline void warp_subtrees(const __global in_t* in, __global acc_t* out, ulong n, ulong tiles,
                          uint k, ulong subtrees RESULT_PARAM) {
    uint t = get_local_id(0) & 31;
    ulong warps_per_group = TILE_WG / 32;
    ulong warp = get_group_id(0) * warps_per_group + (get_local_id(0) >> 5);
    ulong warps = get_num_groups(0) * warps_per_group;
    ulong span = 1UL << k;
#if WARP_PREFETCH
    // The first rows of this warp's next whole tile, once loaded ahead.
    uint4 w[WARP_ROWS * WQ];
    int primed = 0;
#endif
    for (ulong s = warp; s < subtrees; s += warps) {
        ulong first = s << k;
        ulong count = min(span, tiles - first);
        acc_t stack[STACK_DEPTH]; // used by sub-group lane 0 only
        uint depth = 0;
        for (ulong tt = 0; tt < count; tt++) {
            ulong start = (first + tt) * (ulong)TILE;
#if WARP_PREFETCH
            acc_t v;
            if (start + TILE <= n) {
                if (!primed)
                    warp_load_rows(in, start, 0, t, w);
                // This warp's next tile: the next in this subtree, or the first of its
                // next subtree.
                ulong next = tt + 1 < count ? start + TILE : ((s + warps) << k) * (ulong)TILE;
                primed = (tt + 1 < count || s + warps < subtrees) && next + TILE <= n;
                v = warp_tile_prefetched(in, start, t, w, next, primed);
            } else {
                v = warp_tile(in, start, n, t);
            }
#else
            acc_t v = warp_tile(in, start, n, t);
#endif
            if (t == 0) {
                for (ulong c = tt; c & 1; c >>= 1)
                    v = combine(stack[--depth], v);
                stack[depth++] = v;
            }
        }
        if (t == 0) {
            acc_t x = stack[--depth];
            while (depth > 0)
                x = combine(stack[--depth], x);
            STORE_ROOT(subtrees == 1 ? 0 : 1 + s, x);
        }
    }
}
