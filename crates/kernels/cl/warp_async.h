// Warp tiles fed by asynchronous copies into shared memory (WARP_ASYNC stages; CUDA on
// sm_80 and later, synchronous copies elsewhere, e.g. in the simulator). Included by
// warp_tiles.h.
//
// The register-fed warp tiles load WARP_ROWS rows, add them, then load the next rows:
// the loads in flight drop to nothing at every batch and are bounded by the registers
// that hold them (ncu on the H200: 104–255 registers and 12.5–24.5% occupancy, DRAM at
// 88–90% of peak against CUB's 93–94% at 2^28). Here each work-item keeps a ring of
// WARP_ASYNC stages of ASYNC_WORDS 16-byte words in shared memory: before adding stage
// c it waits for that stage only, and right after it reuses the slot for the copy
// WARP_ASYNC stages ahead, which may belong to the warp's next tile or next subtree. So
// WARP_ASYNC stages are always in flight, continuously, and held in shared memory.
//
// The words and their order are exactly warp_tile's (row r, word q of work-item t is
// word (r·LANES/WV + 32q + t) of the tile), so lanes and results are unchanged. A
// work-item reads only ring slots it wrote itself, so no barrier is needed. Only whole
// tiles are copied; the partial last tile of the input, which is also a warp's last,
// runs warp_tile as before.

#define ASYNC_WORDS 2
// Words of a whole tile per work-item, and the stages they take.
#define TILE_WORDS (ROWS * WQ)
#define ASYNC_CHUNKS (TILE_WORDS / ASYNC_WORDS)
// 16-byte words of the work-group's ring: the kernel declares it (a __local array must be
// declared at kernel scope in OpenCL C).
#define ASYNC_RING_WORDS (WARP_ASYNC * ASYNC_WORDS * TILE_WG)
#if ASYNC_RING_WORDS * 16 > 40 * 1024
#error "WARP_ASYNC stages exceed the 40 KiB of shared memory the ring may take"
#endif

// The ring as a parameter: CUDA's shared memory is a plain pointer there (__shared__
// qualifies declarations only), OpenCL's a __local one.
#ifdef __CUDACC__
#define RING_PTR uint4*
#else
#define RING_PTR __local uint4*
#endif

#ifndef HAVE_CP_ASYNC
#define RL_CP_ASYNC16(dst, src) (*(dst) = *(src))
#define RL_ASYNC_COMMIT()
#define RL_ASYNC_WAIT(pending)
#endif

// Starts the copy of stage `g0 / ASYNC_WORDS` of the whole tile `tile` into ring slot
// `slot` of work-item `lid` (warp lane t).
inline void warp_async_issue(RING_PTR ring, uint slot, const __global in_t* in,
                             ulong tile, uint g0, uint t, uint lid) {
    const __global uint4* words = (const __global uint4*)(in + tile * (ulong)TILE) + t;
#pragma unroll
    for (uint a = 0; a < ASYNC_WORDS; a++) {
        uint g = g0 + a;
        RL_CP_ASYNC16(&ring[(slot * ASYNC_WORDS + a) * TILE_WG + lid],
                      &words[(g / WQ) * (LANES / WV) + 32 * (g % WQ)]);
    }
}

// warp_subtrees (warp_tiles.h) with whole tiles read through the ring.
inline void warp_subtrees_async(const __global in_t* in, __global acc_t* out, ulong n,
                                ulong tiles, uint k, ulong subtrees,
                                RING_PTR ring RESULT_PARAM) {
    uint lid = get_local_id(0);
    uint t = lid & 31;
    ulong warps_per_group = TILE_WG / 32;
    ulong warp = get_group_id(0) * warps_per_group + (lid >> 5);
    ulong warps = get_num_groups(0) * warps_per_group;
    ulong span = 1UL << k;
    // The copy cursor: subtree cs, its tile ct, word cg of that tile; it runs
    // WARP_ASYNC stages ahead of the adds, over the same whole tiles in the same order.
    ulong cs = warp, ct = 0;
    uint cg = 0;
#define ASYNC_CURSOR_TILE ((cs << k) + ct)
#define ASYNC_CURSOR_OK (cs < subtrees && (ASYNC_CURSOR_TILE + 1) * (ulong)TILE <= n)
#define ASYNC_ADVANCE()                                      \
    do {                                                     \
        cg += ASYNC_WORDS;                                   \
        if (cg == TILE_WORDS) {                              \
            cg = 0;                                          \
            ct++;                                            \
            if (ct == min(span, tiles - (cs << k))) {        \
                cs += warps;                                 \
                ct = 0;                                      \
            }                                                \
        }                                                    \
    } while (0)
    for (uint slot = 0; slot < WARP_ASYNC; slot++) {
        if (ASYNC_CURSOR_OK) {
            warp_async_issue(ring, slot, in, ASYNC_CURSOR_TILE, cg, t, lid);
            ASYNC_ADVANCE();
        }
        RL_ASYNC_COMMIT();
    }
    // The ring slot of the next stage to add.
    uint slot = 0;
    for (ulong s = warp; s < subtrees; s += warps) {
        ulong first = s << k;
        ulong count = min(span, tiles - first);
        acc_t stack[STACK_DEPTH]; // used by sub-group lane 0 only
        uint depth = 0;
        for (ulong tt = 0; tt < count; tt++) {
            ulong start = (first + tt) * (ulong)TILE;
            acc_t v;
            if (start + TILE <= n) {
                acc_t acc[WQ * WV];
#pragma unroll
                for (uint j = 0; j < WQ * WV; j++)
                    acc[j] = IDENTITY;
#pragma unroll
                for (uint c = 0; c < ASYNC_CHUNKS; c++) {
                    // Every stage committed but the newest WARP_ASYNC − 1 is complete:
                    // this one included.
                    RL_ASYNC_WAIT(WARP_ASYNC - 1);
                    uint4 w[ASYNC_WORDS];
#pragma unroll
                    for (uint a = 0; a < ASYNC_WORDS; a++)
                        w[a] = ring[(slot * ASYNC_WORDS + a) * TILE_WG + lid];
#pragma unroll
                    for (uint a = 0; a < ASYNC_WORDS; a++)
#pragma unroll
                        for (uint i = 0; i < WV; i++) {
                            uint q = (c * ASYNC_WORDS + a) % WQ;
                            acc[q * WV + i] = combine(acc[q * WV + i], WORD_ELEM(w[a], i));
                        }
                    // The slot is read: refill it with the stage WARP_ASYNC ahead.
                    if (ASYNC_CURSOR_OK) {
                        warp_async_issue(ring, slot, in, ASYNC_CURSOR_TILE, cg, t, lid);
                        ASYNC_ADVANCE();
                    }
                    RL_ASYNC_COMMIT();
                    slot = slot + 1 == WARP_ASYNC ? 0 : slot + 1;
                }
                v = warp_fold(acc);
            } else {
                v = warp_tile(in, start, n, t);
            }
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
#undef ASYNC_CURSOR_TILE
#undef ASYNC_CURSOR_OK
#undef ASYNC_ADVANCE
}
