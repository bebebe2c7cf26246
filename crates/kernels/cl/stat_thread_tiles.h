// Statistics of tiles of at most 32 elements, a work-item each (included by statistics.cl
// when ST_THREAD_WIDTH is set). Uses statistics.cl's states, first pushes and merges.
//
// A tile this short has one element per lane, and its fold by halving over ST_THREAD_WIDTH
// lanes (the lanes past them are empty, and merging an empty side changes nothing) is the
// aligned pairwise tree over the lanes in bit-reversed order, which a binary counter
// computes in registers as the elements arrive. One work-item folding a whole tile keeps
// every work-item busy at every step: stat_short gives each tile a work-item per lane, so
// its fold's five steps over tiles of 32 run with half, a quarter … of the warp idle,
// and log-sum-exp's merges each take an exponential (on the H200 its rows of 32 read 187
// GB/s there against 1130 along rows of 8192).
//
// nanmean (STAT_KIND 4) runs here only staged: each work-item first moves its tile's
// values that are not NaN to the front of its own staged row.
//
// ST_THREAD_STAGED (set by the host where every tile is a run of neighbouring elements,
// and the stage fits): the work-group's 256 tiles are first copied lane by lane into
// local memory, so that neighbouring work-items copy neighbouring elements; each
// work-item then reads its own tile there (rows ST_THREAD_WIDTH + 1 elements apart, an
// odd number of words for 4-byte elements, so the 32 work-items of a warp reading the
// same lane of 32 tiles hit 32 banks). Elsewhere (columns: neighbouring tiles start at
// neighbouring elements) each work-item loads its own tile's elements, and neighbouring
// work-items load neighbouring elements already.

#if ST_THREAD_WIDTH == 1
#define ST_THREAD_BITS 0
#elif ST_THREAD_WIDTH == 2
#define ST_THREAD_BITS 1
#elif ST_THREAD_WIDTH == 4
#define ST_THREAD_BITS 2
#elif ST_THREAD_WIDTH == 8
#define ST_THREAD_BITS 3
#elif ST_THREAD_WIDTH == 16
#define ST_THREAD_BITS 4
#else
#define ST_THREAD_BITS 5
#endif
#define ST_THREAD_ROW (ST_THREAD_WIDTH + 1)

// The lane of leaf `leaf` in the bit-reversed order over ST_THREAD_WIDTH lanes (a
// constant once the leaf loop is unrolled).
inline uint st_thread_lane(uint leaf) {
    uint lane = 0;
    for (uint b = 0; b < ST_THREAD_BITS; b++) {
        lane |= ((leaf >> b) & 1u) << (ST_THREAD_BITS - 1 - b);
    }
    return lane;
}

// Element `lane` of the work-item's tile: staged, read from local memory when its leaf
// comes (so no register holds it before; slots past the tile were never written, and
// are not read); otherwise from the x[] loaded up front (every load in flight at once).
#if ST_THREAD_STAGED
#define ST_THREAD_ELEMENT(lane) ((lane) < len ? st_stage_load(stage, row + (lane)) : 0.0)
#else
#define ST_THREAD_ELEMENT(lane) x[lane]
#endif

// The tile's state: a binary counter over the leaves (older side left); a leaf at or
// past `len` is empty. `full` (a literal at each call) says len is ST_THREAD_WIDTH: no
// lane is tested and the moments merge with known counts (st_merge_equal: the same
// bits). The elements are stage[row + lane] where staged, x[lane] elsewhere.
inline st_t st_thread_fold(ST_LOCAL const in_t* stage, uint row, const double* x, uint len,
                           bool full) {
    (void)stage;
    (void)row;
    (void)x;
    st_t stack[ST_THREAD_BITS + 1];
    uint depth = 0;
#pragma unroll
    for (uint leaf = 0; leaf < ST_THREAD_WIDTH; leaf++) {
        uint lane = st_thread_lane(leaf);
        st_t node = full || lane < len ? st_first(ST_THREAD_ELEMENT(lane)) : st_empty();
        // The subtrees closed at level l hold 2^l elements when `full`.
        uint size = 1;
        for (uint c = leaf; c & 1u; c >>= 1, size *= 2) {
            node = full ? st_merge_equal(stack[--depth], node, (double)size)
                        : st_merge_prefix(stack[--depth], node);
        }
        stack[depth++] = node;
    }
    return stack[0];
}

__kernel __attribute__((reqd_work_group_size(ST_WG, 1, 1)))
void stat_thread_tiles(__global const in_t* in, __global double* out, ulong tasks) {
    uint t = get_local_id(0);
    ulong base = (ulong)get_group_id(0) * ST_WG;
    ulong task = base + t;
    __global const ulong* table = (__global const ulong*)(out + 3 * tasks);
#if ST_THREAD_STAGED
    __local in_t stage[ST_WG * ST_THREAD_ROW];
    // Slot k·ST_WG + t of the group's elements, tile by tile and lane by lane; on CUDA
    // sm_80+ each an asynchronous copy (st_copy_one), so that all of them are in flight
    // at once without holding registers.
    for (uint k = 0; k < ST_THREAD_WIDTH; k++) {
        uint slot = k * ST_WG + t;
        uint tile = slot / ST_THREAD_WIDTH;
        uint lane = slot % ST_THREAD_WIDTH;
        if (base + tile < tasks) {
            __global const ulong* entry = table + 3 * (base + tile);
            if (lane < entry[1]) {
                st_copy_one(stage + tile * ST_THREAD_ROW + lane, in + (long)entry[0] + (long)lane);
            }
        }
    }
    st_copies_commit();
    st_copies_wait_all();
    barrier(CLK_LOCAL_MEM_FENCE);
    uint row = t * ST_THREAD_ROW;
#endif
    if (task >= tasks) {
        return;
    }
    uint len = (uint)table[3 * task + 1];
#if ST_THREAD_STAGED
    const double* x = 0;
#if STAT_KIND == 4
    // nanmean: the tile's values that are not NaN, moved to the front of its own staged
    // row in order, are its sequence (kept value p is lane p's only element). No other
    // work-item reads or writes the row after the barrier above.
    uint kept = 0;
    for (uint e = 0; e < len; e++) {
        in_t v = stage[row + e];
        if (!isnan(st_stage_load(stage, row + e))) {
            stage[row + kept++] = v;
        }
    }
    len = kept;
#endif
#else
#if STAT_KIND == 4
#error "nanmean's thread tiles compact their staged rows (ST_THREAD_STAGED)"
#endif
    ST_LOCAL const in_t* stage = 0;
    uint row = 0;
    ulong first = table[3 * task];
    long step = (long)table[3 * task + 2];
    double x[ST_THREAD_WIDTH];
#pragma unroll
    for (uint lane = 0; lane < ST_THREAD_WIDTH; lane++) {
        x[lane] = lane < len ? stat_load(in, (ulong)((long)first + (long)lane * step)) : 0.0;
    }
#endif
    st_t s = len == ST_THREAD_WIDTH ? st_thread_fold(stage, row, x, len, true)
                                    : st_thread_fold(stage, row, x, len, false);
    st_store(out, task, s);
}
