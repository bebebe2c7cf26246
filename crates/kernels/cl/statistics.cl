// Statistics whose accumulator holds several numbers, one canonical tile per work-group:
// the variance's moments (count, mean, M2), log-sum-exp's (max, Σ exp(x − max)), and
// the NaN-skipping extremes (kept count, best). The same steps, in the same order and in
// f64, as the host's redlab_cpu::statistics (docs/canonical-order.md, "Statistics"):
// lane j of a tile takes elements j, j + 1024, … in increasing index (Welford's update
// for the moments, with one reciprocal per row), then the 1024 lanes are folded by
// halving, the lower-index side first. Each work-group writes its tile's state; the host
// joins the tiles of each output in the aligned pairwise tree, as the CPU does.
//
// No multiply may be fused with an add (the host never fuses): OpenCL turns contraction
// off, CUDA multiplies with __dmul_rn.
//
// Set by redlab_kernels::statistics: STAT_KIND (0 moments, 1 log-sum-exp, 2 NaN-skipping
// minimum, 3 maximum, 4 moments of the values that are not NaN), in_t, stat_load
// (element i of the input as a double), st_stage_load (the same of a staged copy in
// local memory), ST_STAGE_ROWS (rows of a tile staged at once), ST_WIDE (1 for
// elements of 4 bytes or more, which CUDA copies asynchronously) and ST_IN_BYTES (the
// element's size); per kernel,
// ST_MIN_GROUPS (on CUDA, the work-groups the compiler must fit on an SM, which bounds
// the registers: these kernels wait on loads, and more resident warps hide more of the
// wait; where ptxas spills under the bound, the host runs the build without it) and
// ST_CLASSES (lane classes per column in stat_columns).
//
// out: the states (3 doubles per task), then the task table (3 ulongs per task: the
// element offset of the tile's first element, its length ≤ 8192, and the signed step
// between its elements in the buffer).

#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#define ST_MUL(a, b) ((a) * (b))
// Local memory passed to a helper (CUDA's pointers are generic).
#define ST_LOCAL __local
#else
#define ST_MUL(a, b) __dmul_rn((a), (b))
#define ST_LOCAL
#endif

#ifndef STAT_KIND
#define STAT_KIND 0
#endif
// Kinds as 0/1 flags, for directives and for tests in code (a `||` of constants there
// makes OpenCL compilers warn): whose whole tiles stat_tiles stages with constant counts (the moments, 0, and
// log-sum-exp, 1), and whose state is the moments (var, 0, and nanmean, 4).
#if STAT_KIND == 0 || STAT_KIND == 1
#define ST_TILES_KNOW_COUNTS 1
#else
#define ST_TILES_KNOW_COUNTS 0
#endif
#if STAT_KIND == 0 || STAT_KIND == 4
#define ST_MOMENTS 1
#else
#define ST_MOMENTS 0
#endif

#include "canonical_exp.h"

#define ST_WG 256
#define ST_LANES 1024
#define ST_ROWS 8

#include "stat_state.h"

// Lane j of a tile over its rows e = r·1024 + j < len, in increasing index. Every row is
// loaded before the first push: with a push (and its branches) between loads, each load
// waited for the one before.
inline st_t st_lane(__global const in_t* in, ulong first, ulong len, long step, uint j) {
    double x[ST_ROWS];
    for (uint r = 0; r < ST_ROWS; r++) {
        ulong e = (ulong)r * ST_LANES + j;
        x[r] = e < len ? stat_load(in, (ulong)((long)first + (long)e * step)) : 0.0;
    }
    st_t s = st_empty();
    for (uint r = 0; r < ST_ROWS; r++) {
        if ((ulong)r * ST_LANES + j < len)
            st_push(&s, x[r], 1.0 / (double)(r + 1));
    }
    return s;
}

// Copies `count` elements, `step` apart from `from`, into stage[0 … count), `worker` of
// `workers` taking every workers-th element (or 16-byte chunk); the caller then waits at a
// barrier. On CUDA (sm_80 and later) the copies are asynchronous (cp.async): the bytes in
// flight hold no registers, so a work-group has its whole stage in flight at once, where
// register loads kept a few elements per work-item in flight (the statistics kernels
// waited on loads with DRAM far from its peak). Contiguous 16-byte-aligned runs copy 16
// bytes per instruction, other 4- and 8-byte elements one each; 2-byte elements, and
// OpenCL, load and store.
inline void st_stage(__global const in_t* from, long step, uint count, ST_LOCAL in_t* stage,
                     uint worker, uint workers) {
#if !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (sizeof(in_t) >= 4) {
        uint done = 0;
        if (step == 1 && ((ulong)from & 15) == 0) {
            const uint per = 16 / sizeof(in_t);
            uint chunks = count / per;
            for (uint c = worker; c < chunks; c += workers) {
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                                 (uint)__cvta_generic_to_shared(stage + c * per)),
                             "l"(from + c * per)
                             : "memory");
            }
            done = chunks * per;
        }
        for (uint e = done + worker; e < count; e += workers) {
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(
                             (uint)__cvta_generic_to_shared(stage + e)),
                         "l"(from + (long)e * step), "n"((int)sizeof(in_t))
                         : "memory");
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
        return;
    }
#endif
    for (uint e = worker; e < count; e += workers) {
        stage[e] = from[(long)e * step];
    }
}

// One element into a work-item's own slot of local memory: asynchronous on CUDA sm_80+
// for elements of 4 or 8 bytes (complete after st_copies_wait_all_but_one of a later
// group), a load and a store elsewhere.
inline void st_copy_one(ST_LOCAL in_t* slot, __global const in_t* from) {
#if !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (sizeof(in_t) >= 4) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(
                         (uint)__cvta_generic_to_shared(slot)),
                     "l"(from), "n"((int)sizeof(in_t))
                     : "memory");
        return;
    }
#endif
    *slot = *from;
}

// Closes the group of copies started since the last one.
inline void st_copies_commit(void) {
#if !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// 16 bytes into local memory, both 16-byte aligned: asynchronous like st_copy_one.
inline void st_copy_word(ST_LOCAL in_t* slot, __global const in_t* from) {
#if !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                     (uint)__cvta_generic_to_shared(slot)),
                 "l"(from)
                 : "memory");
#else
    *(ST_LOCAL uint4*)slot = *(__global const uint4*)from;
#endif
}

// Waits for every copy this work-item started.
inline void st_copies_wait_all(void) {
#if !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Waits for every group of this work-item's copies but the newest.
inline void st_copies_wait_all_but_one(void) {
#if !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}

#ifdef HAVE_SUBGROUP_SHUFFLE
// The last steps of a fold by halving (widths top … 1, top at most 16) across segments
// of 2·top neighbouring states of a warp, by shuffles; work-item 0 of each segment ends
// with its result (the others read across the segment's end and hold nothing useful).
// With `each` (a literal) > 0, every work-item holds the moments of `each` elements (a
// whole tile): the counts are then known, and stay out of the shuffles and the merges'
// tests; 0 where the counts are not known, and the lanes that hold elements are a prefix
// of those folded (st_merge_prefix). `small` (a literal): they hold fewer than 1024.
inline st_t st_warp_fold(st_t s, double each, uint top, bool small) {
    if (each > 0.0) {
        // Unrolled, so that the counts are constants at every step. (The other loop stays
        // rolled: unrolled, log-sum-exp's merges with their exp read 6-7% less.)
#pragma unroll
        for (uint w = top; w >= 1; w /= 2) {
            st_t hi;
            // The moments' count is known and not read; log-sum-exp's maximum is.
            hi.a = ST_MOMENTS ? s.a : sub_group_shuffle_down(s.a, w);
            hi.b = sub_group_shuffle_down(s.b, w);
            hi.c = sub_group_shuffle_down(s.c, w);
            s = st_merge_equal(s, hi, each * (double)(top / w));
        }
        return s;
    }
    for (uint w = top; w >= 1; w /= 2) {
        st_t hi;
        hi.a = sub_group_shuffle_down(s.a, w);
        hi.b = sub_group_shuffle_down(s.b, w);
        hi.c = sub_group_shuffle_down(s.c, w);
        s = small ? st_merge_prefix(s, hi) : st_merge_prefix_large(s, hi);
    }
    return s;
}
#endif

// Folds a work-item's four lanes t, t + 256, t + 512, t + 768 with the work-group's by
// halving: widths 512 and 256 inside the work-item, then through local memory down to a
// warp, then (where there are shuffles) inside warp 0 without barriers; work-item 0
// writes the tile's state. `full` (a literal): every lane holds ST_ROWS elements, so
// the merges' counts are constants. Otherwise lane j holds ⌈(len − j) / 1024⌉ of the
// tile's `len` elements (every tile's values, and nanmean's compacted ones, fill the
// lanes in order), so the moments merge by st_merge_prefix. `level` holds ST_WG states,
// `t` is the work-item's place among the tile's ST_WG (a work-group of several tiles
// folds each in its own `level`, every work-item meeting the same barriers), and only
// with `store` is the state written.
inline void st_fold_store_at(st_t lane0, st_t lane1, st_t lane2, st_t lane3,
                             ST_LOCAL st_t* level, uint t, __global double* out, ulong task,
                             bool full, bool store) {
    // A whole tile's lanes hold ST_ROWS elements each, a work-item's level 4 lanes' worth.
    const double each = 4.0 * ST_ROWS;
    level[t] = full ? st_merge_equal(st_merge_equal(lane0, lane2, ST_ROWS),
                                     st_merge_equal(lane1, lane3, ST_ROWS), 2.0 * ST_ROWS)
                    : st_merge_prefix(st_merge_prefix(lane0, lane2),
                                      st_merge_prefix(lane1, lane3));
    barrier(CLK_LOCAL_MEM_FENCE);
#ifdef HAVE_SUBGROUP_SHUFFLE
    const uint last_shared = 32;
#else
    const uint last_shared = 1;
#endif
    if (full) {
        // Unrolled for constant counts (as in st_warp_fold, the other loop stays rolled).
#pragma unroll
        for (uint width = ST_WG / 2; width >= last_shared; width /= 2) {
            if (t < width) {
                level[t] = st_merge_equal(level[t], level[t + width], each * (ST_WG / 2 / width));
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    } else {
        for (uint width = ST_WG / 2; width >= last_shared; width /= 2) {
            if (t < width) {
                level[t] = st_merge_prefix_large(level[t], level[t + width]);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    st_t s = level[t];
#ifdef HAVE_SUBGROUP_SHUFFLE
    if (t < 32) {
        s = full ? st_warp_fold(s, each * ST_WG / 32, 16, false)
                 : st_warp_fold(s, 0.0, 16, false);
    }
#endif
    if (t == 0 && store) {
        st_store(out, task, s);
    }
}

// st_fold_store_at for a work-group of one tile.
inline void st_fold_store(st_t lane0, st_t lane1, st_t lane2, st_t lane3, ST_LOCAL st_t* level,
                          __global double* out, ulong task, bool full) {
    st_fold_store_at(lane0, lane1, lane2, lane3, level, get_local_id(0), out, task, full, true);
}

// Lanes t + 256q (q < 4) push their elements of the staged rows row0 … row0 + rows − 1
// of a tile (the stage holding `count` of them), each its rows in increasing index; the
// four lanes' chains interleave. `full` (a literal): every staged row is whole, so no
// element is tested. `rows`, and `row0` where the callers unroll, are constants.
inline void st_push_staged_rows(st_t* lane, ST_LOCAL const in_t* stage, uint rows, uint row0,
                                uint count, uint t, bool full) {
#ifndef __OPENCL_VERSION__
#pragma unroll
#endif
    for (uint r = 0; r < rows; r++) {
#pragma unroll
        for (uint q = 0; q < 4; q++) {
            uint at = r * ST_LANES + t + q * ST_WG;
            if (full || at < count) {
                if (row0 == 0 && r == 0)
                    lane[q] = st_first(st_stage_load(stage, at));
                else
                    st_push(&lane[q], st_stage_load(stage, at), 1.0 / (double)(row0 + r + 1));
            }
        }
    }
}

// The tile's lanes over its `len` values (value e at `first + e·step`), staged in local
// memory ST_STAGE_ROWS rows at a time, each lane pushing its rows in increasing index;
// then folded by halving, and work-item 0 writes the state: the canonical tile's pushes
// and merges in their order (docs/canonical-order.md), so the host's bits. `full` (a
// literal; the moments of a whole tile of 8192) tests no element and merges with known
// counts (st_merge_equal).
inline void st_tile_staged(__global const in_t* in, __global double* out, ulong task,
                           ulong first, ulong len, long step, ST_LOCAL in_t* stage,
                           ST_LOCAL st_t* level, bool full) {
    uint t = get_local_id(0);
    st_t lane[4];
    for (uint q = 0; q < 4; q++)
        lane[q] = st_empty();
    // A constant number of stages, unrolled, so that every row's reciprocal is a constant;
    // every barrier is reached unconditionally (a stage past the tile copies nothing).
#pragma unroll
    for (uint part = 0; part < ST_ROWS / ST_STAGE_ROWS; part++) {
        uint row0 = part * ST_STAGE_ROWS;
        if (part > 0) barrier(CLK_LOCAL_MEM_FENCE); // every work-item has read the last stage
        ulong begin = (ulong)row0 * ST_LANES;
        ulong rest = len > begin ? len - begin : 0;
        uint count = rest < ST_STAGE_ROWS * ST_LANES ? (uint)rest : ST_STAGE_ROWS * ST_LANES;
        st_stage(in + ((long)first + (long)begin * step), step, count, stage, t, ST_WG);
        barrier(CLK_LOCAL_MEM_FENCE);
        st_push_staged_rows(lane, stage, ST_STAGE_ROWS, row0, count, t, full);
    }
    st_fold_store(lane[0], lane[1], lane[2], lane[3], level, out, task, full);
}

#if defined(ST_MIN_GROUPS) && !defined(__OPENCL_VERSION__)
__kernel __attribute__((launch_bounds(ST_WG, ST_MIN_GROUPS)))
#else
__kernel __attribute__((reqd_work_group_size(ST_WG, 1, 1)))
#endif
void stat_tiles(__global const in_t* in, __global double* out, ulong tasks) {
    __local st_t level[ST_WG];
    ulong task = get_group_id(0);
    __global const ulong* table = (__global const ulong*)(out + 3 * tasks) + 3 * task;
    // Every statistic stages its tile (log-sum-exp too: with the platform's exp behind a
    // branch it read 4–9% less staged, with one canonical exp per element 5–8% more,
    // results/h100-lse-staged). 16-byte aligned: the contiguous rows' asynchronous
    // copies write 16 bytes at a time.
    __local in_t stage[ST_STAGE_ROWS * ST_LANES] __attribute__((aligned(16)));
    ulong len = table[1];
    // The moments of a whole tile take the copy with known counts (the same bits, less
    // f64 work); the choice is the same in the whole work-group, as its barriers need.
    // Log-sum-exp's whole tiles take it too: no element is tested, so a work-item's
    // pushes form one block whose exponentials the compiler can overlap.
    if (ST_TILES_KNOW_COUNTS && len == ST_ROWS * ST_LANES) {
        st_tile_staged(in, out, task, table[0], len, (long)table[2], stage, level, true);
    } else {
        st_tile_staged(in, out, task, table[0], len, (long)table[2], stage, level, false);
    }
}

#if STAT_KIND == 4
#include "stat_kept.h"
#ifdef ST_KC
#include "stat_kept_columns.h"
#endif
#endif

#ifdef ST_WIDTH
// Tiles of at most ST_WIDTH (≤ 256, a power of two) elements: ST_WG / ST_WIDTH tiles per
// work-group, one element per lane. The full fold's first steps would merge only empty
// lanes (every lane from ST_WIDTH on is empty, and merging an empty side changes
// nothing), so folding the ST_WIDTH lanes by halving is the canonical fold itself.
__kernel __attribute__((reqd_work_group_size(ST_WG, 1, 1)))
void stat_short(__global const in_t* in, __global double* out, ulong tasks) {
    __local st_t level[ST_WG];
    uint t = get_local_id(0);
    uint lane = t % ST_WIDTH;
    ulong task = get_group_id(0) * (ST_WG / ST_WIDTH) + t / ST_WIDTH;
    st_t s = st_empty();
    ulong len = 0;
#if STAT_KIND == 4
    // nanmean: the tile's values that are not NaN, compacted in order, are its lanes, as
    // the host compacts them (stat_kept does the same for longer tiles with a whole
    // work-group per tile: on the H200 2^20 rows of 32 read 5 GB/s there). Each lane's
    // place is an inclusive scan of the kept flags over the tile's lanes.
    __local uint place[ST_WG];
    __local double kept_values[ST_WG];
    double x = 0.0;
    bool keep = false;
    if (task < tasks) {
        __global const ulong* table = (__global const ulong*)(out + 3 * tasks) + 3 * task;
        if (lane < table[1]) {
            x = stat_load(in, (ulong)((long)table[0] + (long)lane * (long)table[2]));
            keep = !isnan(x);
        }
    }
    place[t] = keep ? 1u : 0u;
    st_scan_in_place(place, t, lane, ST_WIDTH);
    if (keep) {
        kept_values[t - lane + place[t] - 1] = x;
    }
    len = place[t - lane + ST_WIDTH - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane < len) {
        st_push(&s, kept_values[t], 1.0);
    }
#else
    if (task < tasks) {
        __global const ulong* table = (__global const ulong*)(out + 3 * tasks) + 3 * task;
        len = table[1];
        if (lane < len) {
            s = st_first(stat_load(in, (ulong)((long)table[0] + (long)lane * (long)table[2])));
        }
    }
#endif
    // (Tiles of at most 32 elements but nanmean's take stat_thread_tiles, whose
    // work-items fold a tile each; the moments' shuffle fold that was here for them
    // went with it.)
    level[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint width = ST_WIDTH / 2; width >= 1; width /= 2) {
        if (lane < width) {
            level[t] = st_merge_prefix(level[t], level[t + width]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && task < tasks) {
        st_store(out, task, level[t]);
    }
}
#endif

#ifdef ST_WARP_ROWS
#include "stat_warp_rows.h"
#endif

#ifdef ST_COLUMNS
#include "stat_columns.h"
#endif

#ifdef ST_THREAD_WIDTH
#include "stat_thread_tiles.h"
#endif
