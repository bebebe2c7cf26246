// The production kernel: canonical order v1 (docs/canonical-order.md) in one launch at
// every size. Float sums and products equal the CPU backend's bit for bit.
//
// The tiles are those of canonical.cl (1024 lanes × 8 rows, work-item t owning lanes t,
// t+256, t+512, t+768; fold by halving). The aligned pairwise tree over tile results is
// cut at a level k chosen from n alone, the smallest with at most MAX_PARTIALS nodes:
// each node at that level is the root of an aligned subtree of 2^k tiles. Work-groups
// walk subtrees (group g takes g, g + groups, …); inside one, work-item 0 merges tile
// results with a binary counter (tile t closes one complete subtree per trailing one
// bit of t), which builds exactly the aligned tree, and a partial subtree at the end is
// closed from the top (what padding with IDENTITY gives, without the padding).
//
// Each group then writes its roots to out[1 + s], fences, and takes a ticket; the group
// that takes the last ticket builds the tree above level k, writes the result to out[0]
// and resets the ticket counter, so the next launch (or a replayed graph) starts clean.
// Layout of `out`: result, MAX_PARTIALS roots, then the counter. One tile, or one group
// on the streaming path, writes out[0] directly and takes no ticket.
//
// On CUDA, f32/f64 sums and products of few or many tiles run one tile per warp instead
// of one per group (warp_tiles.h; WARP_TILES_UPTO, WARP_TILES_FROM below).
//
// Problems whose result does not depend on the order (integers, selections, bitwise
// operators: everything but float sums and products) take a plain streaming path instead:
// each group walks chunks of TILE_WG × UNROLL elements with a grid-sized stride, UNROLL
// coalesced loads in flight per work-item and no barrier until the end (order_free.h,
// with argmin/argmax scanning order keys), then writes one partial; the same last-group
// finish combines them. Its result is the canonical one
// anyway, since these operators have only one answer.
//
// Where sub-group shuffles exist (CUDA), the fold below w = 32 and the final tree run in
// registers, which leaves three barriers per tile; the tile's lanes alternate between
// two local arrays, so no barrier is needed before the next tile writes its lanes.
// With PREFETCH, the raw elements of the next tile are loaded before the current one is
// folded (not for halves, whose conversion reads memory). PREFETCH, UNROLL and the
// groups per compute unit are tuning parameters.

#define LANES 1024
#define ROWS 8
#define TILE (LANES * ROWS)
#define TILE_WG 256
#ifndef MAX_PARTIALS
#define MAX_PARTIALS 2048
#endif
// Enough for any 64-bit tile count.
#define STACK_DEPTH 64
// A user-defined combine (OP_CUSTOM) always takes the canonical path: its result may
// depend on the order, and the canonical order is the one every backend shares.
#if !(defined(VALUE_IS_FLOAT) && (defined(OP_SUM) || defined(OP_PROD))) && !defined(OP_CUSTOM)
#define ORDER_FREE 1
#endif
#ifndef UNROLL
#define UNROLL 32
#endif
// On CUDA, order-free reductions of 1-, 2- and 4-byte elements load whole chunks as
// 16-byte words (ORDER_FREE_WORDS 1, tunable; UNROLL counts elements, so
// UNROLL × IN_BYTES / 16 words in flight; order_free.h).
#ifndef ORDER_FREE_WORDS
#define ORDER_FREE_WORDS 1
#endif
#if !(defined(ORDER_FREE) && defined(HAVE_SUBGROUP_SHUFFLE) && !defined(IN_IS_MAPPED) && \
      ((IN_BYTES == 4 && defined(AS_IN_FROM_UINT) && UNROLL % 4 == 0) || \
       (IN_BYTES == 2 && UNROLL % 8 == 0) || (IN_BYTES == 1 && UNROLL % 16 == 0)))
#undef ORDER_FREE_WORDS
#define ORDER_FREE_WORDS 0
#endif
#ifndef PREFETCH
#define PREFETCH 1
#endif
// Warp tiles fold with operands in either order (fine for + and ×, not for a custom
// combine, which never takes them).
// Where sub-groups are 32-wide warps with shuffles, f32 and f64 sums and products of at
// most WARP_TILES_UPTO tiles or at least WARP_TILES_FROM tiles run one tile per warp
// (warp_tiles.h) instead of one per work-group (0: never). Up to 8 tiles, one group
// holds them all and needs no ticket; from a few hundred tiles on, warps without
// barriers stream faster. In between, a work-group per tile spreads the input over
// more SMs with more loads in flight per byte, which is what mid-sized inputs need.
// Halves (f16, bf16: 16-byte words of 8 lanes) take warp tiles only for inputs of at
// most HALF_WARP_TILES_UPTO tiles (0, the default: never); from the streaming sizes on
// the work-group kernel's vector path measured faster. The host builds the halves' warp
// path only into launches that take it (crates/kernels/src/driver.rs, `launch_params`):
// a kernel's registers are its hungriest path's, and built in, the warp path's had
// halved the halves' work-group path from 2^22 on. f32/f64 modules keep both paths
// (built alone, their work-group path measured slower: see `launch_params`).
#ifndef WARP_TILES_FROM
#define WARP_TILES_FROM 512
#endif
#ifndef WARP_TILES_UPTO
#define WARP_TILES_UPTO 8
#endif
#ifndef HALF_WARP_TILES_UPTO
#define HALF_WARP_TILES_UPTO 0
#endif
#if IN_BYTES == 2 && !defined(IN_IS_MAPPED)
#undef WARP_TILES_FROM
#define WARP_TILES_FROM 0
#undef WARP_TILES_UPTO
#define WARP_TILES_UPTO HALF_WARP_TILES_UPTO
#endif
// SEPARATE_RESULT (the stream path, crates/cuda/src/stream_call.rs): the result's first
// SEPARATE_RESULT bytes go to a fourth argument, the caller's result, while the roots and
// the ticket stay in `out`, a scratch buffer kept per stream whose ticket the last group
// resets. One launch then does the whole call: no zeroing before it and no copy after.
// Otherwise the result is out[0]. STORE_ROOT(slot, v) writes slot 0 (the result) or a
// subtree root.
#ifdef SEPARATE_RESULT
#define RESULT_PARAM , __global uchar* result
#define RESULT_ARG , result
inline void rl_write_result(__global uchar* result, acc_t v) {
    const uchar* bytes = (const uchar*)&v;
    for (uint i = 0; i < SEPARATE_RESULT; i++)
        result[i] = bytes[i];
}
// RESULT_POST (whole-array statistics on the stream path, mapped.rs `whole_to_result`):
// the result stored is rl_post from section 2 over the reduced value and the element
// count `n` (every STORE_ROOT sits where the kernel's `n` is in scope), as a
// RESULT_POST_T, so a mean's division or a norm's square root needs no second launch.
// SEG_RESULT (results that are not the accumulator's own bytes: argmin/argmax, float
// min/max held as order keys): stored in the form result_form.h describes.
#ifdef RESULT_POST_T
#define RL_STORE_RESULT(v) (*(__global RESULT_POST_T*)result = (RESULT_POST_T)rl_post((v), n))
#elif defined(SEG_RESULT)
#include "result_form.h"
#define RL_STORE_RESULT(v) rl_store_form(result, (v))
#else
#define RL_STORE_RESULT(v) rl_write_result(result, (v))
#endif
#define STORE_ROOT(slot, v)                                                                \
    do {                                                                                   \
        ulong slot_ = (slot);                                                              \
        acc_t v_ = (v);                                                                    \
        if (slot_ == 0)                                                                    \
            RL_STORE_RESULT(v_);                                                           \
        else                                                                               \
            out[slot_] = v_;                                                               \
    } while (0)
#else
#define RESULT_PARAM
#define RESULT_ARG
#define STORE_ROOT(slot, v) (out[(slot)] = (v))
#endif
#if defined(HAVE_SUBGROUP_SHUFFLE) && (WARP_TILES_FROM > 0 || WARP_TILES_UPTO > 0) && \
    !defined(ORDER_FREE) && (IN_BYTES >= 2 || defined(IN_IS_MAPPED)) && !defined(OP_CUSTOM)
#define USE_WARP_TILES 1
#include "warp_tiles.h"
#else
#define USE_WARP_TILES 0
#endif
// CLUSTER_FINISH > 1: on sm_90 and later, groups form thread-block clusters of that many,
// which combine their partials through distributed shared memory (cluster_finish.h).
// - Order-free path: only each cluster's first group writes a root and takes a ticket.
//   The host launches a grid of exactly one cluster (crates/kernels/src/driver.rs),
//   which writes the result and takes no ticket; the kernel stays correct for any
//   number of clusters.
// - Canonical path: where the input has at most CLUSTER_FINISH tiles, the host launches
//   one cluster, whose groups fold a tile each and combine the results on chip
//   (cluster_tiles.h): no roots in global memory and no ticket. Otherwise the grid is a
//   whole number of clusters and the usual paths and finish run.
// 0: every group writes its own root.
#ifndef CLUSTER_FINISH
#define CLUSTER_FINISH 0
#endif
#if CLUSTER_FINISH > 1 && defined(HAVE_SUBGROUP_SHUFFLE) && !defined(OP_CUSTOM) && \
    defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define USE_CLUSTER_FINISH 1
#include "cluster_finish.h"
#define KERNEL_CLUSTER __attribute__((cluster_dims(CLUSTER_FINISH, 1, 1)))
#ifndef ORDER_FREE
#define USE_CLUSTER_TILES 1
#endif
#else
#define USE_CLUSTER_FINISH 0
#define KERNEL_CLUSTER
#endif
// WARP_BULK_ROWS > 0: on sm_90 and later, warp tiles from WARP_TILES_FROM tiles on read
// their whole tiles through bulk copies into a ring of that many rows per warp in
// dynamic shared memory (warp_bulk.h), capped so the group's rings fit beside its static
// shared memory; without the memory (a launch that gives none) the register path runs.
#ifndef WARP_BULK_ROWS
#define WARP_BULK_ROWS 0
#endif
#if USE_WARP_TILES && WARP_BULK_ROWS > 0 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && \
    !defined(IN_IS_MAPPED) && WARP_TILES_FROM > 0
#define USE_WARP_BULK 1
#define BULK_ROWS_FIT (225280 / ((TILE_WG / 32) * (LANES * IN_BYTES + 8)))
#if WARP_BULK_ROWS > BULK_ROWS_FIT
#undef WARP_BULK_ROWS
#define WARP_BULK_ROWS BULK_ROWS_FIT
#endif
#include "warp_bulk.h"
#else
#define USE_WARP_BULK 0
#endif
// Whole tiles of float sums can load 4 consecutive elements per work-item and row as one
// word (8 bytes for halves, 16 for f32, two of 16 for f64), then transpose through local
// memory into the canonical lane ownership. VEC_LOADS: 0 never, 1 for halves only, 2
// always. Measured on the H100 (results/h100-cuda/tune-vec.jsonl): halves gain 18–24% at
// 2^24–2^28; f32 gains at 2^24 but loses 3% at 2^28; f64 loses half its speed.
#ifndef VEC_LOADS
#define VEC_LOADS 1
#endif
#if (VEC_LOADS == 2 || (VEC_LOADS == 1 && IN_BYTES == 2)) && !defined(ORDER_FREE) && \
    !defined(IN_IS_MAPPED)
#if IN_BYTES == 2
typedef uint2 raw_t;
#define RAW_LOAD(p) (*(const __global uint2*)(p))
#define RAW_ELEM(word, q) value_from_bits16((ushort)(((q) < 2 ? (word).x : (word).y) >> (((q) & 1) * 16)))
#elif IN_BYTES == 4
typedef uint4 raw_t;
#define RAW_LOAD(p) (*(const __global uint4*)(p))
#define RAW_ELEM(word, q) ((val_t)as_float((q) == 0 ? (word).x : (q) == 1 ? (word).y : (q) == 2 ? (word).z : (word).w))
#else
typedef struct { uint4 lo, hi; } raw_t;
inline raw_t raw_load8(const __global in_t* p) {
    raw_t r;
    r.lo = ((const __global uint4*)p)[0];
    r.hi = ((const __global uint4*)p)[1];
    return r;
}
#define RAW_LOAD(p) raw_load8(p)
#define RAW_BITS64(a, b) (((ulong)(b) << 32) | (ulong)(a))
#define RAW_ELEM(word, q) ((val_t)as_double((q) == 0 ? RAW_BITS64((word).lo.x, (word).lo.y) : (q) == 1 ? RAW_BITS64((word).lo.z, (word).lo.w) : (q) == 2 ? RAW_BITS64((word).hi.x, (word).hi.y) : RAW_BITS64((word).hi.z, (word).hi.w)))
#endif
// Lane 4a + b lives at b * TRANSPOSE_PITCH + a: both the stores (by a) and the loads
// (lanes t + 256q) hit 32 different banks.
#define TRANSPOSE_PITCH 264
#define USE_VEC 1
#else
#define USE_VEC 0
#endif
#if USE_VEC && defined(USE_CLUSTER_TILES)
// One tile's lanes from words, for a tile that may end early (one cluster's tiles; the
// tile holds at least one element): work-item lid loads elements 4·lid … 4·lid+3 of
// each row as one word, and the four lane sums go back to the canonical ownership
// (l[q] = lane lid + 256·q) through local memory. Each lane adds its rows in order from
// IDENTITY, the scalar path's sequence. Call from the whole group.
//
// Rows are whole (every word in), the one partial row (words in, the word that holds
// the end element by element, IDENTITY past it), or empty. Whole and empty rows are
// the same for the whole group, so only the partial row has per-element checks, and all
// of its loads are issued with the whole rows' before any is added. An empty row is
// skipped instead of adding IDENTITY to every lane: x + (−0) and x × 1 are x for every
// value an earlier combine can leave (a NaN there is already quiet), so the bits are
// the same. At half a tile of f16 on the H200 a check and a divergent block per row had
// made it slower than a whole tile (1.79 against 1.66 µs in a graph); this form takes
// 1.43 (results/h200-half-partial-rows).
inline void vec_tile_lanes(const __global in_t* in, ulong n, ulong tile_start, acc_t l[4],
                           LOCAL_PTR acc_t* transposed) {
    uint lid = get_local_id(0);
    // Elements of this tile (1 … TILE) fit 32 bits; `whole` rows hold every word.
    uint left = (uint)min(n - tile_start, (ulong)TILE);
    uint whole = left / LANES;
    const __global in_t* at = in + tile_start + 4 * lid;
    raw_t words[ROWS];
    for (uint r = 0; r < ROWS; r++)
        if (r < whole)
            words[r] = RAW_LOAD(at + r * LANES);
    // The partial row's four elements (IDENTITY past the end).
    acc_t tail[4] = {IDENTITY, IDENTITY, IDENTITY, IDENTITY};
    uint e = whole * LANES + 4 * lid;
    if (whole < ROWS) {
        if (e + 4 <= left) {
            raw_t word = RAW_LOAD(at + whole * LANES);
            for (uint q = 0; q < 4; q++)
                tail[q] = RAW_ELEM(word, q);
        } else {
            for (uint q = 0; q < 4; q++)
                if (e + q < left)
                    tail[q] = lift(in, tile_start + e + q);
        }
    }
    acc_t v[4] = {IDENTITY, IDENTITY, IDENTITY, IDENTITY};
    for (uint r = 0; r < ROWS; r++) {
        if (r < whole) {
            v[0] = combine(v[0], RAW_ELEM(words[r], 0));
            v[1] = combine(v[1], RAW_ELEM(words[r], 1));
            v[2] = combine(v[2], RAW_ELEM(words[r], 2));
            v[3] = combine(v[3], RAW_ELEM(words[r], 3));
        }
    }
    if (whole < ROWS)
        for (uint q = 0; q < 4; q++)
            v[q] = combine(v[q], tail[q]);
    for (uint q = 0; q < 4; q++)
        transposed[q * TRANSPOSE_PITCH + lid] = v[q];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint q = 0; q < 4; q++)
        l[q] = transposed[(lid & 3) * TRANSPOSE_PITCH + (lid >> 2) + 64 * q];
}
#endif
// Halves convert while they load, so they cannot be held raw; mapped elements (a
// user-defined map over several inputs) exist only through lift().
#if PREFETCH && !defined(IN_IS_HALF) && !defined(IN_IS_MAPPED)
#define PREFETCH_RAW 1
#else
#define PREFETCH_RAW 0
#endif

// ATOMIC_FINISH (tunable; CUDA, order-free integer sums, min, max and bitwise ops, not
// with clusters): each group combines its partial into one accumulator with a native
// atomic instead of writing a root, and the last group takes that one value instead of
// building the tree over every group's root. These atomics are exact in any order. The
// accumulator lies 8 bytes after the ticket in `out` and holds an unsigned key whose
// identity is 0 (min as the complement of the order key, and as the complement of the
// bits), so the zeroed scratch is ready and the last group leaves it so with one
// exchange; no launch has to set it first.
#ifndef ATOMIC_FINISH
#define ATOMIC_FINISH 0
#endif
#if !(defined(ORDER_FREE) && defined(__CUDACC__) && !USE_CLUSTER_FINISH && \
      (ACC_BYTES == 4 || ACC_BYTES == 8) &&                                    \
      (defined(OP_SUM) || defined(OP_MIN) || defined(OP_MAX) || defined(OP_AND) || \
       defined(OP_OR) || defined(OP_XOR)))
#undef ATOMIC_FINISH
#define ATOMIC_FINISH 0
#endif
#if ATOMIC_FINISH
#if ACC_BYTES == 8
typedef unsigned long long rl_key_t;
#else
typedef unsigned int rl_key_t;
#endif
// Flipping the sign bit of a signed accumulator makes the unsigned order its order.
#define RL_SIGN ((acc_t)-1 < (acc_t)0 ? (rl_key_t)1 << (8 * ACC_BYTES - 1) : (rl_key_t)0)
inline void rl_atomic_combine(__global rl_key_t* slot, acc_t v) {
    rl_key_t bits = (rl_key_t)v;
#if defined(OP_SUM)
    atomicAdd(slot, bits);
#elif defined(OP_MAX)
    atomicMax(slot, bits ^ RL_SIGN);
#elif defined(OP_MIN)
    atomicMax(slot, ~(bits ^ RL_SIGN));
#elif defined(OP_AND)
    atomicOr(slot, ~bits);
#elif defined(OP_OR)
    atomicOr(slot, bits);
#else
    atomicXor(slot, bits);
#endif
}
inline acc_t rl_atomic_value(rl_key_t key) {
#if defined(OP_MAX)
    return (acc_t)(key ^ RL_SIGN);
#elif defined(OP_MIN)
    return (acc_t)(~key ^ RL_SIGN);
#elif defined(OP_AND)
    return (acc_t)~key;
#else
    return (acc_t)key;
#endif
}
#endif

#ifdef HAVE_SUBGROUP_SHUFFLE
// One tile's 1024 lanes, work-item lid holding lanes lid + 256·q in l[q], folded by
// halving: the steps 512 and 256 inside the work-item, those down to 64 through `lanes`
// (one barrier each), the rest in warp 0's registers. The result is valid in work-item
// 0. Call from the whole group; the next call may reuse `lanes` without a barrier only
// if it alternates with another array.
inline acc_t group_fold_tile(LOCAL_PTR acc_t* lanes, acc_t l[4]) {
    uint lid = get_local_id(0);
    lanes[lid] = combine(combine(l[0], l[2]), combine(l[1], l[3]));
    for (uint w = TILE_WG / 2; w >= 64; w >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < w)
            lanes[lid] = combine(lanes[lid], lanes[lid + w]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    acc_t v = IDENTITY;
    if (lid < 32) {
        v = combine(lanes[lid], lanes[lid + 32]);
        for (uint w = 16; w > 0; w >>= 1)
            v = combine(v, sub_group_shuffle_down(v, w));
    }
    return v;
}
#endif
#ifdef USE_CLUSTER_TILES
#include "cluster_tiles.h"
#endif
#ifdef ORDER_FREE
#include "order_free.h"
#endif

// Section 2 may mark the input restrict (inputs read by address, whose table of
// addresses the compiler may then keep in registers).
#ifndef RL_IN_RESTRICT
#define RL_IN_RESTRICT
#endif

__kernel KERNEL_CLUSTER __attribute__((reqd_work_group_size(TILE_WG, 1, 1)))
void reduce(__global const in_t* RL_IN_RESTRICT in, __global acc_t* out, ulong n RESULT_PARAM) {
    __local acc_t lanes[2][TILE_WG];
#ifdef HAVE_SUBGROUP_SHUFFLE
    __local acc_t level[TILE_WG / 32];
#else
    __local acc_t level[MAX_PARTIALS];
#endif
    __local uint is_last;
#if USE_CLUSTER_FINISH && defined(ORDER_FREE)
    __local acc_t cluster_partial;
#endif
#if USE_VEC
    __local acc_t transposed[4 * TRANSPOSE_PITCH];
#endif
#if defined(RL_TABLE_IN_REGISTERS) && defined(RL_MAP_INPUTS)
    // Inputs read by address (CUDA): the table of addresses copied once into a private
    // array, which the compiler keeps in registers, so that no element's load waits for
    // its address from global memory (codegen.rs, InputLayout::Addressed).
    ulong rl_table[RL_MAP_INPUTS];
    for (uint q = 0; q < RL_MAP_INPUTS; q++)
        rl_table[q] = ((__global const ulong*)in)[q];
    in = (__global const in_t*)rl_table;
#endif
    uint lid = get_local_id(0);
    ulong tiles = (n + TILE - 1) / TILE;
    uint k = 0;
    while (((tiles + ((1UL << k) - 1)) >> k) > MAX_PARTIALS)
        k++;
    ulong span = 1UL << k;
    ulong subtrees = (tiles + span - 1) >> k;
    ulong groups = get_num_groups(0);
    __global uint* counter = (__global uint*)(out + 1 + MAX_PARTIALS);
#if ATOMIC_FINISH
    __global rl_key_t* atomic_slot = (__global rl_key_t*)((__global uchar*)counter + 8);
#endif

#ifdef ORDER_FREE
    (void)span;
    ulong roots = groups;
    {
        acc_t acc = order_free_walk(in, n, lid, groups);
#ifdef HAVE_SUBGROUP_SHUFFLE
        for (uint d = 16; d > 0; d >>= 1)
            acc = combine(acc, sub_group_shuffle_down(acc, d));
        if ((lid & 31) == 0)
            lanes[0][lid >> 5] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 32) {
            acc_t u = lid < TILE_WG / 32 ? lanes[0][lid] : IDENTITY;
            for (uint d = 4; d > 0; d >>= 1)
                u = combine(u, sub_group_shuffle_down(u, d));
#if USE_CLUSTER_FINISH
            if (lid == 0)
                cluster_partial = u;
        }
        // The cluster's first group combines the partials in rank order; the others
        // keep their shared memory alive until it has read them (the second barrier),
        // then leave. From here on the clusters stand in for the groups.
        cluster_sync_all();
        uint rank = cluster_rank();
        ulong clusters = cluster_count();
        if (rank == 0 && lid == 0) {
            acc_t v = cluster_partial;
            for (uint r = 1; r < CLUSTER_FINISH; r++)
                v = combine(v, *cluster_map(&cluster_partial, r));
            STORE_ROOT(clusters == 1 ? 0 : 1 + cluster_index(), v);
        }
        cluster_sync_all();
        if (rank != 0 || clusters == 1)
            return;
        groups = clusters;
        roots = clusters;
#else
            // A single group has the result already: no roots, no ticket.
            if (lid == 0) {
#if ATOMIC_FINISH
                if (groups > 1)
                    rl_atomic_combine(atomic_slot, u);
                else
#endif
                    STORE_ROOT(groups == 1 ? 0 : 1 + get_group_id(0), u);
            }
        }
        if (groups == 1)
            return;
#endif
#else
        lanes[0][lid] = acc;
        for (uint w = TILE_WG / 2; w > 0; w >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < w)
                lanes[0][lid] = combine(lanes[0][lid], lanes[0][lid + w]);
        }
        if (lid == 0)
            out[1 + get_group_id(0)] = lanes[0][0];
#endif
    }
#else
    ulong roots = subtrees;
    // Which of the two lane arrays the next tile uses, alternating across subtrees too.
    uint p = 0;
#ifdef USE_CLUSTER_TILES
    // One cluster over at most CLUSTER_FINISH tiles (the host's choice, whatever the
    // warp-tile settings): its groups fold them on chip and write the result.
    if (cluster_count() == 1 && tiles <= CLUSTER_FINISH) {
        cluster_tiles(in, out, n, tiles, lanes[0] CLUSTER_TRANSPOSED_ARG RESULT_ARG);
        return;
    }
#endif
#if USE_WARP_BULK
    if (WARP_TILES_FROM > 0 && tiles >= WARP_TILES_FROM && bulk_rings_given())
        warp_subtrees_bulk(in, out, n, tiles, k, subtrees RESULT_ARG);
    else
#endif
#if USE_WARP_TILES
    if ((WARP_TILES_FROM > 0 && tiles >= WARP_TILES_FROM) || tiles <= WARP_TILES_UPTO)
        warp_subtrees(in, out, n, tiles, k, subtrees RESULT_ARG);
    else
#endif
    for (ulong s = get_group_id(0); s < subtrees; s += groups) {
        ulong first = s << k;
        ulong count = min(span, tiles - first);
        acc_t stack[STACK_DEPTH]; // used by work-item 0 only
        uint depth = 0;
#if PREFETCH_RAW && !USE_VEC
        in_t cur[ROWS * 4], next[ROWS * 4];
        {
            ulong b = first * (ulong)TILE + lid;
            for (uint j = 0; j < ROWS * 4; j++) {
                ulong i = b + (ulong)(j >> 2) * LANES + (j & 3) * 256;
                cur[j] = i < n ? in[i] : (in_t)0;
            }
        }
#endif
        for (ulong t = 0; t < count; t++) {
            ulong base = (first + t) * (ulong)TILE + lid;
            p ^= 1;
            acc_t l[4] = {IDENTITY, IDENTITY, IDENTITY, IDENTITY};
#if USE_VEC
            ulong tile_start = (first + t) * (ulong)TILE;
            if (tile_start + TILE <= n) {
                // Work-item lid owns lanes 4·lid … 4·lid+3 while loading.
                raw_t words[ROWS];
                for (uint r = 0; r < ROWS; r++)
                    words[r] = RAW_LOAD(in + tile_start + (ulong)r * LANES + 4 * lid);
                acc_t v[4] = {IDENTITY, IDENTITY, IDENTITY, IDENTITY};
                for (uint r = 0; r < ROWS; r++) {
                    v[0] = combine(v[0], RAW_ELEM(words[r], 0));
                    v[1] = combine(v[1], RAW_ELEM(words[r], 1));
                    v[2] = combine(v[2], RAW_ELEM(words[r], 2));
                    v[3] = combine(v[3], RAW_ELEM(words[r], 3));
                }
                for (uint q = 0; q < 4; q++)
                    transposed[q * TRANSPOSE_PITCH + lid] = v[q];
                barrier(CLK_LOCAL_MEM_FENCE);
                // Back to the canonical ownership: lanes lid + 256·q.
                for (uint q = 0; q < 4; q++)
                    l[q] = transposed[(lid & 3) * TRANSPOSE_PITCH + (lid >> 2) + 64 * q];
            } else {
                // (Words here too, as in vec_tile_lanes, made a halves' last tile faster
                // but the whole-tile path 7–28% slower from 2^18 on, in the same module:
                // results/h200-half-cluster-words/with-last-tile.)
                for (uint r = 0; r < ROWS; r++) {
                    ulong row = base + (ulong)r * LANES;
                    for (uint q = 0; q < 4; q++)
                        l[q] = combine(l[q], row + q * 256 < n ? lift(in, row + q * 256) : IDENTITY);
                }
            }
#elif PREFETCH_RAW
            if (t + 1 < count) {
                for (uint j = 0; j < ROWS * 4; j++) {
                    ulong i = base + TILE + (ulong)(j >> 2) * LANES + (j & 3) * 256;
                    next[j] = i < n ? in[i] : (in_t)0;
                }
            }
            for (uint j = 0; j < ROWS * 4; j++) {
                ulong i = base + (ulong)(j >> 2) * LANES + (j & 3) * 256;
                l[j & 3] = combine(l[j & 3], i < n ? lift_value(cur[j], i) : IDENTITY);
            }
            // The last tile has no next one: nothing was loaded to move.
            if (t + 1 < count) {
                for (uint j = 0; j < ROWS * 4; j++)
                    cur[j] = next[j];
            }
#else
            for (uint r = 0; r < ROWS; r++) {
                ulong row = base + (ulong)r * LANES;
                for (uint q = 0; q < 4; q++)
                    l[q] = combine(l[q], row + q * 256 < n ? lift(in, row + q * 256) : IDENTITY);
            }
#endif
#ifdef HAVE_SUBGROUP_SHUFFLE
            acc_t v = group_fold_tile(lanes[p], l);
            if (lid == 0) {
                for (ulong c = t; c & 1; c >>= 1)
                    v = combine(stack[--depth], v);
                stack[depth++] = v;
            }
#else
            lanes[p][lid] = combine(combine(l[0], l[2]), combine(l[1], l[3]));
            for (uint w = TILE_WG / 2; w > 0; w >>= 1) {
                barrier(CLK_LOCAL_MEM_FENCE);
                if (lid < w)
                    lanes[p][lid] = combine(lanes[p][lid], lanes[p][lid + w]);
            }
            if (lid == 0) {
                acc_t v = lanes[p][0];
                for (ulong c = t; c & 1; c >>= 1)
                    v = combine(stack[--depth], v);
                stack[depth++] = v;
            }
#endif
        }
        if (lid == 0) {
            acc_t x = stack[--depth];
            while (depth > 0)
                x = combine(stack[--depth], x);
            STORE_ROOT(subtrees == 1 ? 0 : 1 + s, x);
        }
    }
    // One tile: whoever folded it wrote the result; no roots, no ticket.
    if (subtrees == 1)
        return;
#endif

    if (groups > 1) {
        // Every work-item that wrote roots publishes them, and the group has finished
        // writing, before work-item 0 takes the group's ticket.
        // The barriers order global memory too: OpenCL makes one work-item's global
        // writes visible to the others of its group only through a barrier that says
        // so (the roots of this group, written by several work-items, are read by all).
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0)
            is_last = atomic_inc(counter) == (uint)(groups - 1);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (!is_last)
            return;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
#if ATOMIC_FINISH
        if (lid == 0) {
            STORE_ROOT(0, rl_atomic_value(atomicExch(atomic_slot, (rl_key_t)0)));
            *counter = 0;
        }
        return;
#endif
    } else {
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }

#ifdef HAVE_SUBGROUP_SHUFFLE
    // MAX_PARTIALS / TILE_WG consecutive roots per work-item (the tree's lowest levels),
    // then shuffles for the levels inside a warp and once more across the eight warps'
    // nodes.
    {
#define ROOTS_PER_ITEM (MAX_PARTIALS / TILE_WG)
        ulong b = ROOTS_PER_ITEM * (ulong)lid;
        acc_t r[ROOTS_PER_ITEM];
        for (uint j = 0; j < ROOTS_PER_ITEM; j++)
            r[j] = b + j < roots ? out[1 + b + j] : IDENTITY;
        // Written out level by level so that r stays in registers (see warp_tiles.h).
#if ROOTS_PER_ITEM >= 2
        for (uint j = 0; j < ROOTS_PER_ITEM; j += 2)
            r[j] = combine(r[j], r[j + 1]);
#endif
#if ROOTS_PER_ITEM >= 4
        for (uint j = 0; j < ROOTS_PER_ITEM; j += 4)
            r[j] = combine(r[j], r[j + 2]);
#endif
#if ROOTS_PER_ITEM >= 8
        for (uint j = 0; j < ROOTS_PER_ITEM; j += 8)
            r[j] = combine(r[j], r[j + 4]);
#endif
#if ROOTS_PER_ITEM >= 16
#error "MAX_PARTIALS / TILE_WG above 8 needs another level here"
#endif
        acc_t v = r[0];
        for (uint d = 1; d < 32; d <<= 1)
            v = combine(v, sub_group_shuffle_down(v, d));
        if ((lid & 31) == 0)
            level[lid >> 5] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 32) {
            acc_t u = lid < TILE_WG / 32 ? level[lid] : IDENTITY;
            for (uint d = 1; d < TILE_WG / 32; d <<= 1)
                u = combine(u, sub_group_shuffle_down(u, d));
            if (lid == 0) {
                STORE_ROOT(0, u);
                *counter = 0;
            }
        }
    }
#else
    uint width = 1;
    while (width < roots)
        width <<= 1;
    for (uint i = lid; i < width; i += TILE_WG)
        level[i] = i < roots ? out[1 + i] : IDENTITY;
    for (uint w = 1; w < width; w <<= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = lid * 2 * w; i < width; i += TILE_WG * 2 * w)
            level[i] = combine(level[i], level[i + w]);
    }
    if (lid == 0) {
        STORE_ROOT(0, level[0]);
        *counter = 0;
    }
#endif
}
