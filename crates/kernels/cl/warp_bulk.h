// Warp tiles fed by bulk asynchronous copies (CUDA, sm_90 and later): the rows of a
// warp's whole tiles land in a ring of shared-memory slots, one bulk copy per row, and
// the warp folds them from there. Included by canonical_one.cl after warp_tiles.h, whose
// lane ownership, fold and binary counter it shares, so the result is the same bits.
//
// Why: the register path (warp_tiles.h) holds a warp's loads in flight in registers next
// to its 32 (f32) or 64 (f64) accumulator registers, so one or two groups fit an SM and
// the bytes in flight per SM are bounded by registers; it read 3% below CUB's sum at
// 2^28 f32 on the H200. Bytes in flight through a bulk copy cost shared memory only:
// WARP_BULK_ROWS rows per warp, eight warps per group (128 KiB per group for f32 at 4
// rows), with one thread per warp issuing the copies.
//
// The ring: a warp's whole-tile rows form one stream (its subtrees in turn, their tiles,
// each tile's 8 rows). Lane 0 keeps the next WARP_BULK_ROWS rows of the stream in flight;
// after the warp has read slot i, lane 0 starts the copy of the row WARP_BULK_ROWS further
// on into it. The partial last tile, if any, is read by warp_tile() from global memory.
// The group's dynamic shared memory holds the rings, then one barrier word per slot;
// its size is exported to the host as `redlab_dynamic_shared_bytes`
// (crates/cuda/src/modules.rs sets the launch attribute from it).

#include "bulk_copy.h"

// 16-byte words of one tile row.
#define ROW_WORDS (LANES * IN_BYTES / 16)
#define BULK_WARPS (TILE_WG / 32)
#define BULK_RING_WORDS (BULK_WARPS * WARP_BULK_ROWS * ROW_WORDS)

#define BULK_DYNAMIC_BYTES (BULK_RING_WORDS * 16 + BULK_WARPS * WARP_BULK_ROWS * 8)
// What the host reads after loading the module: the dynamic shared memory the kernel
// needs, and the smallest input that uses it (smaller inputs launch without it).
extern "C" __device__ const uint redlab_dynamic_shared_bytes = BULK_DYNAMIC_BYTES;
extern "C" __device__ const ulong redlab_dynamic_shared_from =
    (ulong)(WARP_TILES_FROM - 1) * TILE + 1;

// Whether this launch was given the rings' memory.
inline int bulk_rings_given(void) {
    uint bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes >= BULK_DYNAMIC_BYTES;
}

// A position in a warp's stream of whole-tile rows: subtree s, its tile tt, row r.
typedef struct {
    ulong s;
    ulong tt;
    uint r;
} bulk_cursor;

// Whether the cursor is on a row of a whole tile (the stream's end otherwise).
inline int bulk_whole(bulk_cursor c, ulong n, ulong tiles, uint k, ulong subtrees) {
    if (c.s >= subtrees)
        return 0;
    ulong tile = (c.s << k) + c.tt;
    return tile < tiles && (tile + 1) * (ulong)TILE <= n;
}

// The next row of the stream (subtrees of 2^k tiles, `warps` apart).
inline bulk_cursor bulk_next(bulk_cursor c, ulong tiles, uint k, ulong warps) {
    if (++c.r < ROWS)
        return c;
    c.r = 0;
    ulong first = c.s << k;
    ulong count = min(1UL << k, tiles - first);
    if (++c.tt < count)
        return c;
    c.tt = 0;
    c.s += warps;
    return c;
}

// Starts the copy of the row under `c` into `slot`.
inline void bulk_fill(const __global in_t* in, bulk_cursor c, uint k, uint4* slot,
                      ulong* landed) {
    ulong element = (((c.s << k) + c.tt) * (ulong)ROWS + c.r) * (ulong)LANES;
    bulk_expect(landed, ROW_WORDS * 16);
    bulk_copy(slot, in + element, ROW_WORDS * 16, landed);
}

// warp_subtrees() with whole tiles read from the ring.
inline void warp_subtrees_bulk(const __global in_t* in, __global acc_t* out, ulong n,
                               ulong tiles, uint k, ulong subtrees RESULT_PARAM) {
    extern __shared__ __align__(128) uint4 bulk_rings[];
    uint t = get_local_id(0) & 31;
    uint warp_in_group = get_local_id(0) >> 5;
    ulong warp = get_group_id(0) * BULK_WARPS + warp_in_group;
    ulong warps = get_num_groups(0) * BULK_WARPS;
    uint4* ring = bulk_rings + warp_in_group * WARP_BULK_ROWS * ROW_WORDS;
    ulong* landed = (ulong*)(bulk_rings + BULK_RING_WORDS) + warp_in_group * WARP_BULK_ROWS;
    if (t == 0) {
        for (uint i = 0; i < WARP_BULK_ROWS; i++)
            bulk_init(&landed[i]);
        bulk_init_fence();
    }
    __syncwarp();
    // The producer runs WARP_BULK_ROWS rows ahead of the reader.
    bulk_cursor ahead = {warp, 0, 0};
    if (t == 0) {
        for (uint i = 0; i < WARP_BULK_ROWS && bulk_whole(ahead, n, tiles, k, subtrees); i++) {
            bulk_fill(in, ahead, k, ring + i * ROW_WORDS, &landed[i]);
            ahead = bulk_next(ahead, tiles, k, warps);
        }
    }
    // Rows read so far: slot and barrier phase of the next one.
    uint taken = 0;
    ulong span = 1UL << k;
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
                for (uint r = 0; r < ROWS; r++, taken++) {
                    uint slot = taken % WARP_BULK_ROWS;
                    bulk_wait(&landed[slot], (taken / WARP_BULK_ROWS) & 1);
                    const uint4* row = ring + slot * ROW_WORDS + t;
                    uint4 w[WQ];
#pragma unroll
                    for (uint q = 0; q < WQ; q++)
                        w[q] = row[32 * q];
                    // Every lane has its words before the slot is filled again.
                    __syncwarp();
                    if (t == 0 && bulk_whole(ahead, n, tiles, k, subtrees)) {
                        bulk_fill(in, ahead, k, ring + slot * ROW_WORDS, &landed[slot]);
                        ahead = bulk_next(ahead, tiles, k, warps);
                    }
#pragma unroll
                    for (uint q = 0; q < WQ; q++)
#pragma unroll
                        for (uint i = 0; i < WV; i++)
                            acc[q * WV + i] = combine(acc[q * WV + i], WORD_ELEM(w[q], i));
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
}
