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
#if WARP_ROWS == 0
#undef WARP_ROWS
// Four rows (16 words of 16 bytes per work-item) measured fastest for f32 and f64 on
// the H200 (results/h200-cuda-warp-tiles).
#define WARP_ROWS 4
#endif
#if ROWS % WARP_ROWS != 0
#error "WARP_ROWS must divide the tile's 8 rows"
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

// The canonical fold of a work-item's 32 lanes `acc` down to lane 0 of sub-group lane 0.
// Steps 512 … 32·WV pair slots of the same work-item, 16·WV … WV pair work-items t and
// t + d (shuffles), WV/2 … 1 pair elements of one word. Each step is written out: NVRTC
// keeps the array in registers only when every index is a constant, and it does not
// unroll a loop whose step halves.
#if WQ >= 16
#define FOLD_SLOTS_16() FOLD_IN_ITEM(8 * WV)
#else
#define FOLD_SLOTS_16()
#endif
#if WQ >= 8
#define FOLD_SLOTS_8() FOLD_IN_ITEM(4 * WV)
#else
#define FOLD_SLOTS_8()
#endif
#if WQ >= 4
#define FOLD_SLOTS_4() FOLD_IN_ITEM(2 * WV)
#else
#define FOLD_SLOTS_4()
#endif
#if WV >= 8
#define FOLD_WORD_8() FOLD_IN_ITEM(4)
#else
#define FOLD_WORD_8()
#endif
#if WV >= 4
#define FOLD_WORD_4() FOLD_IN_ITEM(2)
#else
#define FOLD_WORD_4()
#endif
#define WARP_FOLD()                                                                       \
    FOLD_SLOTS_16();                                                                      \
    FOLD_SLOTS_8();                                                                       \
    FOLD_SLOTS_4();                                                                       \
    FOLD_IN_ITEM(WV);                                                                     \
    FOLD_ACROSS(16);                                                                      \
    FOLD_ACROSS(8);                                                                       \
    FOLD_ACROSS(4);                                                                       \
    FOLD_ACROSS(2);                                                                       \
    FOLD_ACROSS(1);                                                                       \
    FOLD_WORD_8();                                                                        \
    FOLD_WORD_4();                                                                        \
    FOLD_IN_ITEM(1)

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
    WARP_FOLD();
    return acc[0];
}

// Merges tile result `v` (the `tt`-th of its subtree) into the binary counter `stack`.
#define MERGE_TILE(v, tt)                                                                  \
    do {                                                                                   \
        for (ulong c_ = (tt); c_ & 1; c_ >>= 1)                                            \
            (v) = combine(stack[--depth], (v));                                            \
        stack[depth++] = (v);                                                              \
    } while (0)

// WARP_PIPE: whole tiles stream with the next batch of PIPE_ROWS rows loaded into
// registers before the current batch is added, across tile boundaries too, so that a
// work-item always has one to two batches in flight; warp_tile has a full batch in
// flight and then none while it adds it. Twice the load registers, so a batch is half
// of warp_tile's WARP_ROWS to stay in the same register budget (2 rows for f32, 1 for
// f64).
#if defined(WARP_PIPE) && WARP_PIPE > 0 && !defined(IN_IS_MAPPED)
#define USE_WARP_PIPE 1
#if WQ >= 16
#define PIPE_ROWS 1
#else
#define PIPE_ROWS 2
#endif
#define PIPE_WORDS (PIPE_ROWS * WQ)
#define PIPE_BATCHES (ROWS / PIPE_ROWS)
// Batch b of the stream: rows (b mod PIPE_BATCHES)·PIPE_ROWS … of tile b / PIPE_BATCHES.
#define PIPE_LOAD(dst, b)                                                                  \
    do {                                                                                   \
        const __global uint4* p_ = words + ((b) / PIPE_BATCHES) * (TILE / WV) +            \
                                   ((b) % PIPE_BATCHES) * PIPE_ROWS * (LANES / WV);        \
        for (uint r_ = 0; r_ < PIPE_ROWS; r_++)                                            \
            for (uint q_ = 0; q_ < WQ; q_++)                                               \
                (dst)[r_ * WQ + q_] = p_[r_ * (LANES / WV) + 32 * q_];                     \
    } while (0)

// Full tiles [first, first + count) of a subtree, each folded and merged into `stack`.
inline void warp_tiles_piped(const __global in_t* in, ulong first, ulong count, uint t,
                             acc_t* stack, uint* depth_io) {
    const __global uint4* words = (const __global uint4*)(in + first * (ulong)TILE) + t;
    ulong batches = count * PIPE_BATCHES;
    uint depth = *depth_io;
    uint4 cur[PIPE_WORDS];
    if (batches > 0)
        PIPE_LOAD(cur, 0UL);
    for (ulong tt = 0; tt < count; tt++) {
        acc_t acc[WQ * WV];
#pragma unroll
        for (uint j = 0; j < WQ * WV; j++)
            acc[j] = IDENTITY;
#pragma unroll
        for (uint b = 0; b < PIPE_BATCHES; b++) {
            ulong next = tt * PIPE_BATCHES + b + 1;
            uint4 ahead[PIPE_WORDS];
            bool more = next < batches;
            if (more)
                PIPE_LOAD(ahead, next);
#pragma unroll
            for (uint r = 0; r < PIPE_ROWS; r++)
#pragma unroll
                for (uint q = 0; q < WQ; q++)
#pragma unroll
                    for (uint i = 0; i < WV; i++)
                        acc[q * WV + i] = combine(acc[q * WV + i], WORD_ELEM(cur[r * WQ + q], i));
            if (more) {
#pragma unroll
                for (uint j = 0; j < PIPE_WORDS; j++)
                    cur[j] = ahead[j];
            }
        }
        WARP_FOLD();
        if (t == 0) {
            acc_t v = acc[0];
            MERGE_TILE(v, tt);
        }
    }
    *depth_io = depth;
}
#else
#define USE_WARP_PIPE 0
#endif

// WARP_ASYNC (CUDA only, sm_80 and later): whole tiles stream through a ring of
// WARP_ASYNC shared-memory stages per warp with asynchronous copies (cp.async), so the
// bytes in flight cost no registers: a work-item holds its 32 lanes and nothing else,
// and the copies of the next stages are under way while it adds the current one. The
// register-loaded path above alternates between a burst of WARP_ROWS rows in flight and
// none while it adds them, at one group per SM (its 150–208 registers). A stage is
// WARP_ASYNC_WORDS 16-byte words of one row per work-item; each work-item copies and
// reads back only its own words, so no barrier is needed. The additions are the same,
// in the same order, as warp_tile's.
#if defined(__CUDACC__) && defined(WARP_ASYNC) && WARP_ASYNC >= 2 && !defined(IN_IS_MAPPED)
#define USE_WARP_ASYNC 1
#ifndef WARP_ASYNC_WORDS
#define WARP_ASYNC_WORDS 2
#endif
#if WQ % WARP_ASYNC_WORDS != 0
#error "WARP_ASYNC_WORDS must divide a row's words"
#endif
// Stages per row and per tile.
#define ASYNC_PER_ROW (WQ / WARP_ASYNC_WORDS)
#define ASYNC_PER_TILE (ROWS * ASYNC_PER_ROW)
// 16 bytes from global to shared memory, bypassing L1 (.cg), with the L2 fetching the
// whole 256-byte sector group.
__device__ inline void rl_copy_async(const uint4* shared_dst, const __global uint4* src) {
    uint dst = (uint)__cvta_generic_to_shared(shared_dst);
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ inline void rl_commit_async(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most WARP_ASYNC - 2 groups of copies are still under way.
__device__ inline void rl_wait_async(void) {
    asm volatile("cp.async.wait_group %0;" ::"n"(WARP_ASYNC - 2) : "memory");
}

// Full tiles [first, first + count) of a subtree, each folded and merged into `stack`.
inline void warp_tiles_async(const __global in_t* in, ulong first, ulong count, uint t,
                             acc_t* stack, uint* depth_io) {
    __local uint4 ring[TILE_WG / 32][WARP_ASYNC][WARP_ASYNC_WORDS * 32];
    uint4* mine = ring[get_local_id(0) >> 5][0] + t;
    const __global uint4* words = (const __global uint4*)(in + first * (ulong)TILE) + t;
    ulong stages = count * ASYNC_PER_TILE;
    uint depth = *depth_io;
    // Stage c is row (c mod ASYNC_PER_TILE) / ASYNC_PER_ROW of tile c / ASYNC_PER_TILE,
    // words from (c mod ASYNC_PER_ROW) · WARP_ASYNC_WORDS on, in ring slot c mod WARP_ASYNC.
    // Every call commits one group, empty or not, so that the wait counts stay uniform.
#define ISSUE_STAGE(c, slot)                                                               \
    do {                                                                                   \
        if ((c) < stages) {                                                                \
            ulong k_ = (c) % ASYNC_PER_TILE;                                               \
            const __global uint4* src_ = words + ((c) / ASYNC_PER_TILE) * (TILE / WV) +    \
                                         (k_ / ASYNC_PER_ROW) * (LANES / WV) +             \
                                         32 * WARP_ASYNC_WORDS * (k_ % ASYNC_PER_ROW);     \
            for (uint q_ = 0; q_ < WARP_ASYNC_WORDS; q_++)                                 \
                rl_copy_async(mine + (slot) * (WARP_ASYNC_WORDS * 32) + 32 * q_,           \
                              src_ + 32 * q_);                                             \
        }                                                                                  \
        rl_commit_async();                                                                 \
    } while (0)
    for (uint c = 0; c + 1 < WARP_ASYNC; c++)
        ISSUE_STAGE((ulong)c, c);
    uint slot = 0;
    for (ulong tt = 0; tt < count; tt++) {
        acc_t acc[WQ * WV];
#pragma unroll
        for (uint j = 0; j < WQ * WV; j++)
            acc[j] = IDENTITY;
#pragma unroll
        for (uint k = 0; k < ASYNC_PER_TILE; k++) {
            rl_wait_async();
            const uint4* here = mine + slot * (WARP_ASYNC_WORDS * 32);
#pragma unroll
            for (uint q = 0; q < WARP_ASYNC_WORDS; q++) {
                uint4 w = here[32 * q];
                uint s = (k % ASYNC_PER_ROW) * WARP_ASYNC_WORDS + q;
#pragma unroll
                for (uint i = 0; i < WV; i++)
                    acc[s * WV + i] = combine(acc[s * WV + i], WORD_ELEM(w, i));
            }
            // The slot read one stage ago is free again (only this work-item used it).
            uint refill = slot == 0 ? WARP_ASYNC - 1 : slot - 1;
            ISSUE_STAGE(tt * ASYNC_PER_TILE + k + WARP_ASYNC - 1, refill);
            slot = slot + 1 == WARP_ASYNC ? 0 : slot + 1;
        }
        WARP_FOLD();
        if (t == 0) {
            acc_t v = acc[0];
            MERGE_TILE(v, tt);
        }
    }
#undef ISSUE_STAGE
    *depth_io = depth;
}
#else
#define USE_WARP_ASYNC 0
#endif

// Warps take the aligned subtrees of 2^k tiles in turn across the grid; sub-group lane 0
// merges tile results with the binary counter of canonical_one.cl and writes each root
// to out[1 + s], or straight to out[0] when the whole input is one tile.
inline void warp_subtrees(const __global in_t* in, __global acc_t* out, ulong n, ulong tiles,
                          uint k, ulong subtrees) {
    uint t = get_local_id(0) & 31;
    ulong warps_per_group = TILE_WG / 32;
    ulong warp = get_group_id(0) * warps_per_group + (get_local_id(0) >> 5);
    ulong warps = get_num_groups(0) * warps_per_group;
    ulong span = 1UL << k;
    for (ulong s = warp; s < subtrees; s += warps) {
        ulong first = s << k;
        ulong count = min(span, tiles - first);
        acc_t stack[STACK_DEPTH]; // used by sub-group lane 0 only
        uint depth = 0;
        ulong tt = 0;
#if USE_WARP_ASYNC || USE_WARP_PIPE
        // Every tile but a partial last one streams.
        ulong whole = (first + count) * (ulong)TILE <= n ? count : count - 1;
#if USE_WARP_ASYNC
        warp_tiles_async(in, first, whole, t, stack, &depth);
#else
        warp_tiles_piped(in, first, whole, t, stack, &depth);
#endif
        tt = whole;
#endif
        for (; tt < count; tt++) {
            acc_t v = warp_tile(in, (first + tt) * (ulong)TILE, n, t);
            if (t == 0)
                MERGE_TILE(v, tt);
        }
        if (t == 0) {
            acc_t x = stack[--depth];
            while (depth > 0)
                x = combine(stack[--depth], x);
            out[subtrees == 1 ? 0 : 1 + s] = x;
        }
    }
}
