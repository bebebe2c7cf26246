// Included by statistics.cl when ST_WARP_ROWS is set. Uses statistics.cl's states,
// pushes, merges and warp fold.

// Tiles of 33 to 1024 elements (one row of the tile, so one element per lane): a segment
// of ST_SPAN neighbouring work-items (2 … 32, a power of two, set by the host so that
// 32·ST_SPAN is the tile's length rounded up to a power of two) per tile, ST_WG / ST_SPAN
// tiles per work-group, work-item t holding lanes t + ST_SPAN·m (m < 32). The lanes from
// 32·ST_SPAN on are empty, and merging an empty side changes nothing, so the canonical
// fold is the fold by halving over the first 32·ST_SPAN lanes. It first joins lanes of
// the same t (widths 16·ST_SPAN … ST_SPAN), which is the aligned pairwise tree over m in
// bit-reversed order: a binary counter computes it as the elements load, in registers
// (every index below is a constant once the leaf loop is unrolled). Then widths
// ST_SPAN/2 … 1 join work-items t and t + w: shuffles where there are any, local memory
// elsewhere. stat_tiles gives such a tile a whole work-group and eight barrier-separated
// merge levels; loads here read neighbouring elements and there is no barrier with
// shuffles. (A whole warp per row of 40, 100 or 300 read 0.30–0.35× torch's speed for
// var on the H200: each work-item walked 32 leaves however few held an element.)
#ifndef ST_SPAN
#define ST_SPAN 32
#endif
#ifndef ST_ROW_PREFETCH
#define ST_ROW_PREFETCH 0
#endif
// The lanes a segment holds: 32 per work-item.
#define ST_SPAN_LANES (32 * ST_SPAN)
// Elements per lane (1 … 8; the host sets up to 3): longer tiles take a whole warp's
// 1024 lanes (the canonical tile's), lane L holding elements L, L + 1024, … pushed in
// order, as stat_tiles' lanes do. (A work-group per tile there folds 1024 lanes through
// barriers, most of its warps idle: var along rows of 2000 read 0.45× torch's speed on
// the H200, 0.71× a warp each; results/h200-stat-lane-rows.)
#ifndef ST_LANE_ROWS
#define ST_LANE_ROWS 1
#endif
#if ST_LANE_ROWS > 1 && ST_SPAN != 32
#error "lanes of several elements need a segment of the tile's 1024 lanes"
#endif
#define ST_WARP 32
#define ST_WARP_LEVELS 5
// Leaves per chunk (a power of two up to 32): 8 elements in flight per work-item.
#ifndef ST_CHUNK
#define ST_CHUNK (8 / ST_LANE_ROWS)
#endif
// Whether each segment's row is staged in local memory first: elements of 4 bytes
// (copied asynchronously on CUDA), and every nanmean row, which is compacted there.
#if STAT_KIND == 4
#if ST_IN_BYTES > 4
#error "nanmean's segments stage a row of elements of at most 4 bytes (8 KiB rows would not fit)"
#endif
#define ST_WARP_STAGED 1
#else
#define ST_WARP_STAGED (ST_STAGE_ROWS == 8 && ST_WIDE && ST_LANE_ROWS == 1)
#endif
#if ST_WARP_STAGED && ST_LANE_ROWS > 1
#error "a staged row holds one element per lane"
#endif

// Leaf `leaf` of the bit-reversed order is lane slot rev5(leaf).
inline uint st_rev5(uint leaf) {
    return ((leaf & 1u) << 4) | ((leaf & 2u) << 2) | (leaf & 4u) | ((leaf & 8u) >> 2) |
           ((leaf & 16u) >> 4);
}

// Work-item t's 32 lanes t + ST_SPAN·m of its segment's tile of `len` elements (element e
// at `first + e·step`, or staged at row[e]; lane L's are L + 1024r, r < ST_LANE_ROWS),
// joined in bit-reversed order by a binary counter as they load. `full` (a literal at
// each call) says len is 32·ST_SPAN·ST_LANE_ROWS: no lane is tested and every count is
// a constant, so the merges' count tests and the pushes' counts fold away.
inline st_t st_warp_leaves(__global const in_t* in, ulong first, ulong len, long step,
                           ST_LOCAL const in_t* row, uint t, bool full) {
    (void)row;
    st_t stack[ST_WARP_LEVELS + 1];
    uint depth = 0;
    // Leaves in chunks of ST_CHUNK: a chunk's loads all go out before its first push.
#pragma unroll
    for (uint base = 0; base < ST_WARP; base += ST_CHUNK) {
        double x[ST_CHUNK][ST_LANE_ROWS];
#pragma unroll
        for (uint u = 0; u < ST_CHUNK; u++) {
#pragma unroll
            for (uint r = 0; r < ST_LANE_ROWS; r++) {
                ulong e = (ulong)t + ST_SPAN * (ulong)st_rev5(base + u) + ST_SPAN_LANES * r;
#if ST_WARP_STAGED
                x[u][r] = full || e < len ? st_stage_load(row, (uint)e) : 0.0;
#else
                x[u][r] = full || e < len ? stat_load(in, (ulong)((long)first + (long)e * step))
                                          : 0.0;
#endif
            }
        }
#pragma unroll
        for (uint u = 0; u < ST_CHUNK; u++) {
            uint leaf = base + u;
            ulong lane = (ulong)t + ST_SPAN * (ulong)st_rev5(leaf);
            st_t node = full || lane < len ? st_first(x[u][0]) : st_empty();
#pragma unroll
            for (uint r = 1; r < ST_LANE_ROWS; r++) {
                if (full || lane + ST_SPAN_LANES * r < len) {
                    st_push(&node, x[u][r], 1.0 / (double)(r + 1));
                }
            }
            // Binary counter: leaf closes one subtree per trailing one bit (older side
            // left); the subtrees closed at level l hold 2^l lanes when `full`.
            uint size = ST_LANE_ROWS;
            for (uint c = leaf; c & 1u; c >>= 1, size *= 2) {
                node = full ? st_merge_equal(stack[--depth], node, (double)size)
                            : st_merge_prefix(stack[--depth], node);
            }
            stack[depth++] = node;
        }
    }
    // 32 leaves: one full subtree remains.
    return stack[0];
}

#if defined(ST_ROW_LEN) && STAT_KIND == 0
#define ST_ROW_KNOWN 1
#else
#define ST_ROW_KNOWN 0
#endif
#if ST_ROW_KNOWN
// Rows of the moments whose length the host compiled in (ST_ROW_LEN, every row of the
// launch the same, at most 1024·ST_LANE_ROWS): every lane holds the first ST_ROW_FULL of
// its rows, and the next one, of ST_ROW_TAIL elements, is held by work-item t's lanes
// t + ST_SPAN·m for m < ST_ROW_MORE where t < (ST_ROW_TAIL − 1) mod ST_SPAN + 1 (`more`),
// for m < ST_ROW_LESS elsewhere. st_warp_leaves' counter, with each subtree's counts in
// both cases beside its state as literals (st_known_join): merges of empty sides vanish
// and the others' weights are constants, where the general walk pays st_merge_prefix's
// table reads and selects on every merge. One call site, so that the compiler inlines it
// and the counts stay literals.
#define ST_ROW_FULL ((ST_ROW_LEN - 1) / ST_SPAN_LANES)
#define ST_ROW_TAIL (ST_ROW_LEN - ST_ROW_FULL * ST_SPAN_LANES)
#define ST_ROW_MORE ((ST_ROW_TAIL + ST_SPAN - 1) / ST_SPAN)
#define ST_ROW_LESS ((ST_ROW_TAIL - 1) / ST_SPAN)
#ifndef ST_ROW_HINTS
#define ST_ROW_HINTS 1
#endif
#if ST_ROW_HINTS && !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && \
    __CUDA_ARCH__ >= 800 && ST_IN_BYTES == 4
// Elements of 4 bytes read straight from global memory (rows of 1025–3072: a lane holds
// two or three): the first half of the walk's leaves reads with L2's evict-last
// priority and the second half with evict-first. The walk reads the row 128 bytes at a
// time in bit-reversed leaf order, so the first half touches every stretch of the row
// and the second half reads the pieces in between; a 64-byte block that a row off the
// 64-byte grid splits between two pieces is then still in L2 when its second piece is
// read, instead of coming from DRAM twice. On an H100 (results/h100-row-hints), var
// along 104858 rows of 2500 f32 read 1.31 → 1.15 GB from DRAM (1.05 GB of input) and
// rows of 2771 read 1.09× as fast in a CUDA graph. Evict-last on the first half alone,
// the second half unhinted, changed nothing or lost (rows of 3000 0.92×).
#define ST_HINTED 1
inline double st_hinted_load(__global const in_t* in, ulong i, bool keep) {
    ulong policy;
    if (keep) {
        asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    } else {
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    }
    uint bits;
    asm volatile("ld.global.L2::cache_hint.b32 %0, [%1], %2;"
                 : "=r"(bits)
                 : "l"(in + i), "l"(policy));
    in_t v;
    memcpy(&v, &bits, 4);
    return (double)v;
}
#else
#define ST_HINTED 0
#endif
inline st_t st_warp_leaves_known(__global const in_t* in, ulong first, long step,
                                 ST_LOCAL const in_t* row, uint t, bool more) {
    (void)row;
    st_t stack[ST_WARP_LEVELS + 1];
    uint count_m[ST_WARP_LEVELS + 1];
    uint count_l[ST_WARP_LEVELS + 1];
#pragma unroll
    for (uint base = 0; base < ST_WARP; base += ST_CHUNK) {
        double x[ST_CHUNK][ST_LANE_ROWS];
#pragma unroll
        for (uint u = 0; u < ST_CHUNK; u++) {
            uint m = st_rev5(base + u);
#pragma unroll
            for (uint r = 0; r < ST_LANE_ROWS; r++) {
                ulong e = (ulong)t + ST_SPAN * (ulong)m + ST_SPAN_LANES * r;
                bool load = r < ST_ROW_FULL ||
                            (r == ST_ROW_FULL && (m < ST_ROW_LESS || (m < ST_ROW_MORE && more)));
#if ST_WARP_STAGED
                x[u][r] = load ? st_stage_load(row, (uint)e) : 0.0;
#elif ST_HINTED
                x[u][r] = load ? st_hinted_load(in, (ulong)((long)first + (long)e * step),
                                                base < ST_WARP / 2)
                               : 0.0;
#else
                x[u][r] = load ? stat_load(in, (ulong)((long)first + (long)e * step)) : 0.0;
#endif
            }
        }
#pragma unroll
        for (uint u = 0; u < ST_CHUNK; u++) {
            uint leaf = base + u;
            uint m = st_rev5(leaf);
            st_known_push(stack, count_m, count_l, leaf, ST_WARP_LEVELS, x[u],
                          ST_ROW_FULL + (m < ST_ROW_MORE ? 1u : 0u),
                          ST_ROW_FULL + (m < ST_ROW_LESS ? 1u : 0u), more);
        }
    }
    return stack[ST_WARP_LEVELS];
}
#endif

#if STAT_KIND == 4
// A segment of a whole warp scans its counts by shuffles where there are any; shorter
// segments (and OpenCL) in local memory.
#if defined(HAVE_SUBGROUP_SCAN) && ST_SPAN == 32
#define ST_SPAN_SCANS_BY_SHUFFLES 1
#else
#define ST_SPAN_SCANS_BY_SHUFFLES 0
#endif
// nanmean: moves the values of a segment's staged row of `len` elements that are not NaN
// to its front, in order, and returns how many there are. That is the row's canonical
// sequence, kept value p being lane p's only element. Work-item t counts its run of 32
// neighbouring elements (read from the rotation t + k on, so that a warp's 32 reads
// fall in 32 banks), a scan over the segment places the runs, and each run, held in
// registers until every work-item has read its own, is written back. Every work-item of
// the work-group calls it: it meets the others at its barriers.
inline uint st_warp_compact(ST_LOCAL in_t* row, uint len, uint t, ST_LOCAL uint* sums) {
    uint kept = 0;
    in_t held[ST_WARP];
#pragma unroll
    for (uint k = 0; k < ST_WARP; k++) {
        uint r = (k + t) % ST_WARP;
        uint e = t * ST_WARP + r;
        bool live = e < len;
        held[k] = live ? row[e] : (in_t)0;
        if (live && !isnan(st_stage_load(row, e))) kept |= 1u << r;
    }
    uint mine = popcount(kept);
#if ST_SPAN_SCANS_BY_SHUFFLES
    (void)sums;
    uint at = sub_group_scan_inclusive_add(mine) - mine;
    uint total = sub_group_reduce_add(mine);
    barrier(CLK_LOCAL_MEM_FENCE); // every run is read before any is written back
#else
    uint lid = get_local_id(0);
    sums[lid] = mine;
    st_scan_in_place(sums, lid, t, ST_SPAN); // its first barrier: every run is read
    uint at = sums[lid] - mine;
    uint total = sums[lid | (ST_SPAN - 1)];
#endif
    if (total != len) { // the same across the segment; nothing to move where all are kept
#pragma unroll
        for (uint k = 0; k < ST_WARP; k++) {
            uint r = (k + t) % ST_WARP;
            if ((kept >> r) & 1u) {
                row[at + popcount(kept & ((1u << r) - 1u))] = held[k];
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}
#endif

#if defined(ST_MIN_GROUPS) && !defined(__OPENCL_VERSION__)
__kernel __attribute__((launch_bounds(ST_WG, ST_MIN_GROUPS)))
#else
__kernel __attribute__((reqd_work_group_size(ST_WG, 1, 1)))
#endif
void stat_warp_rows(__global const in_t* in, __global double* out, ulong tasks) {
#ifndef HAVE_SUBGROUP_SHUFFLE
    __local st_t level[ST_WG];
#endif
#if ST_WARP_STAGED
    __local in_t stage[ST_WG / ST_SPAN][ST_SPAN_LANES] __attribute__((aligned(16)));
#endif
#if STAT_KIND == 4 && !ST_SPAN_SCANS_BY_SHUFFLES
    __local uint sums[ST_WG];
#elif STAT_KIND == 4
    ST_LOCAL uint* sums = 0;
#endif
    uint lid = get_local_id(0);
    uint t = lid % ST_SPAN;
    ulong task = get_group_id(0) * (ST_WG / ST_SPAN) + lid / ST_SPAN;
    bool live = task < tasks;
    __global const ulong* table = (__global const ulong*)(out + 3 * tasks) + 3 * (live ? task : 0);
    ulong first = live ? table[0] : 0;
    ulong len = live ? table[1] : 0;
    long step = live ? (long)table[2] : 0;
#if ST_ROW_PREFETCH && !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && \
    __CUDA_ARCH__ >= 900
    // One bulk prefetch of the segment's whole contiguous row into L2, so that DRAM
    // reads it in address order once: the leaves below read it 128 bytes at a time in
    // bit-reversed order, and a row that does not start on 64 bytes shares each piece's
    // edge with a piece read much later. The host sets it where the rows resident at
    // once fit in L2 (prefetches_rows in statistics.rs says why and where).
    if (live && t == 0 && step == 1) {
        ulong from = ((ulong)(in + first) + 15) & ~15UL;
        ulong to = (ulong)(in + first + len) & ~15UL;
        if (to > from) {
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(from),
                         "r"((uint)(to - from))
                         : "memory");
        }
    }
#endif
#if ST_WARP_STAGED
    // Elements of 4 bytes: each segment's row (≤ 4 KiB) is staged in local memory at
    // once (st_stage), 32 KiB per work-group, before the pushes read it. (2-byte
    // elements, copied without cp.async, read 5% less staged on an H100:
    // results/h100-stat-staged; nanmean stages them too, to compact them.)
    ST_LOCAL in_t* row = stage[lid / ST_SPAN];
    st_stage(in + (long)first, step, (uint)len, row, t, ST_SPAN);
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    ST_LOCAL in_t* row = 0;
#endif
#if STAT_KIND == 4
    // From here the row is its values that are not NaN.
    len = st_warp_compact(row, (uint)len, t, sums);
#endif
    // The moments' counts depend only on the length: a whole row of 32·ST_SPAN takes the
    // copy with constant counts (the same pushes and merges, so the same bits), which
    // cuts the f64 work the kernel is bound by. `full` is the same across a segment; only
    // where a segment is a whole warp does the fold by shuffles take it too (leaving the
    // counts, 32 in every work-item, out of the shuffles), since the warp's shuffles must
    // not sit in branches that its segments take differently.
    bool full = ST_MOMENTS && len == ST_SPAN_LANES * ST_LANE_ROWS;
#if ST_ROW_KNOWN
    st_t known = st_warp_leaves_known(in, first, step, row, t,
                                      t < (ST_ROW_TAIL - 1) % ST_SPAN + 1);
#define ST_LEAVES(whole) known
#else
#define ST_LEAVES(whole) st_warp_leaves(in, first, len, step, row, t, whole)
#endif
#ifdef HAVE_SUBGROUP_SHUFFLE
    st_t s = ST_SPAN == 32 && full
                 ? st_warp_fold(ST_LEAVES(true), 32.0 * ST_LANE_ROWS, 16, true)
                 : st_warp_fold(full ? ST_LEAVES(true) : ST_LEAVES(false), 0.0, ST_SPAN / 2,
                                ST_LANE_ROWS == 1);
#else
    st_t s = full ? ST_LEAVES(true) : ST_LEAVES(false);
    level[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = ST_SPAN / 2; w >= 1; w /= 2) {
        if (t < w) {
            level[lid] = ST_LANE_ROWS == 1 ? st_merge_prefix(level[lid], level[lid + w])
                                           : st_merge_prefix_large(level[lid], level[lid + w]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    s = level[lid];
#endif
    if (t == 0 && live) {
        st_store(out, task, s);
    }
}
