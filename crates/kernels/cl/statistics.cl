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
// wait) and ST_CLASSES (lane classes per column in stat_columns).
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

#include "canonical_exp.h"

#define ST_WG 256
#define ST_LANES 1024
#define ST_ROWS 8

typedef struct {
    double a; // moments: count; log-sum-exp: max; extremes: kept count
    double b; // moments: mean; log-sum-exp: Σ exp(x − max); extremes: best
    double c; // moments: M2
} st_t;

inline st_t st_empty(void) {
    st_t s;
#if STAT_KIND == 1
    s.a = -(double)INFINITY;
#else
    s.a = 0.0;
#endif
    s.b = 0.0;
    s.c = 0.0;
    return s;
}

// One more element; `inverse` is 1 / (the lane's count after it), the row's reciprocal.
inline void st_push(st_t* s, double x, double inverse) {
#if STAT_KIND == 0 || STAT_KIND == 4
    s->a = s->a + 1.0;
    double d = x - s->b;
    s->b = s->b + ST_MUL(d, inverse);
    s->c = s->c + ST_MUL(d, x - s->b);
#elif STAT_KIND == 1
    (void)inverse;
    // Both exponents, exp(x − max) for a smaller x and exp(max − x) for a larger one (or
    // NaN, which then stays in the sum), are −|x − max|: one exponential, no divergence.
    // Equal elements add exactly 1 (equal infinities would give exp(NaN)).
    // Both sides are computed and one is selected, without a branch, so that a
    // work-item's independent pushes (its lanes, its rows) can overlap their
    // exponentials: each is a chain of dependent f64 steps.
    double e = canonical_exp(-fabs(x - s->a));
    e = x == s->a ? 1.0 : e;
    bool keep = x <= s->a;
    double added = s->b + e;
    double scaled = ST_MUL(s->b, e) + 1.0;
    s->b = keep ? added : scaled;
    s->a = keep ? s->a : x;
#else
    (void)inverse;
    if (!isnan(x)) {
        s->a = s->a + 1.0;
#if STAT_KIND == 2
        // Ties of zeros keep -0.0 (the host's rule), so the order cannot show.
        bool better = x < s->b || (x == s->b && signbit(x) && !signbit(s->b));
#else
        bool better = x > s->b || (x == s->b && !signbit(x) && signbit(s->b));
#endif
        if (s->a == 1.0 || better) {
            s->b = x;
        }
    }
#endif
}

// `lo` holds the lower indices.
inline st_t st_merge(st_t lo, st_t hi) {
#if STAT_KIND == 0 || STAT_KIND == 4
    if (hi.a == 0.0) return lo;
    if (lo.a == 0.0) return hi;
    st_t r;
    r.a = lo.a + hi.a;
    double d = hi.b - lo.b;
    if (lo.a == hi.a) {
        // Equal counts c (every merge of whole lanes, and of lanes holding one element
        // each): c / 2c is exactly 0.5 and c·c / 2c exactly c / 2 (c ≤ 8192 inside a
        // tile, so c·c is exact), so this is the general formula's result bit for bit,
        // without its two divisions: var of 65536 rows of 1024 f32 on the H200 read
        // 851 GB/s with them, 1214 without (results/h200-stat-warp-rows).
        r.b = lo.b + ST_MUL(d, 0.5);
        r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), ST_MUL(lo.a, 0.5));
        return r;
    }
    r.b = lo.b + ST_MUL(d, hi.a / r.a);
    r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), ST_MUL(lo.a, hi.a) / r.a);
    return r;
#elif STAT_KIND == 1
    // Without a branch (see st_push), and the host's merge bit for bit: an empty side
    // (max −∞, sum 0) adds an exact 0 (its exp(−∞) is 0, or it holds the maximum with a
    // sum of 0); equal maxima keep both sums unscaled, the lower side's maximum (−0.0
    // before +0.0); a NaN maximum gives NaN (its bits are not promised).
    st_t r;
    r.c = 0.0;
    double m = lo.a >= hi.a ? lo.a : hi.a;
    // The side holding the maximum keeps its sum (exp(∞ − ∞) would be NaN); the other's
    // (its max − max) is −|lo.a − hi.a| exactly, so one exponential serves both.
    double e = canonical_exp(-fabs(lo.a - hi.a));
    double left = lo.a == m ? lo.b : ST_MUL(lo.b, e);
    double right = hi.a == m ? hi.b : ST_MUL(hi.b, e);
    bool nan = isnan(lo.a) || isnan(hi.a);
    r.a = nan ? (isnan(lo.a) ? lo.a : hi.a) : m;
    r.b = nan ? r.a : left + right;
    return r;
#else
    if (hi.a == 0.0) return lo;
    if (lo.a == 0.0) return hi;
    st_t r = lo;
    r.a = lo.a + hi.a;
#if STAT_KIND == 2
    bool better = hi.b < lo.b || (hi.b == lo.b && signbit(hi.b) && !signbit(lo.b));
#else
    bool better = hi.b > lo.b || (hi.b == lo.b && !signbit(hi.b) && signbit(lo.b));
#endif
    if (better) r.b = hi.b;
    return r;
#endif
}

// st_merge of two non-empty states of the same `count` of elements, `count` a literal
// where it is called (a whole row's subtrees): for the moments, the equal-count branch
// without the count tests, so the same bits with constants the compiler folds; the
// other states have no count to know and merge as usual.
inline st_t st_merge_equal(st_t lo, st_t hi, double count) {
#if STAT_KIND == 0 || STAT_KIND == 4
    st_t r;
    r.a = count + count;
    double d = hi.b - lo.b;
    r.b = lo.b + ST_MUL(d, 0.5);
    r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), count * 0.5);
    return r;
#else
    (void)count;
    return st_merge(lo, hi);
#endif
}

#if (STAT_KIND == 0 || STAT_KIND == 4) && defined(ST_PREFIX_WEIGHTS)
// st_merge where the lanes that hold elements are a prefix of the lanes folded by
// halving (every lane j < len holds ⌈(len − j) / stride⌉ elements): the lower side then
// holds the same count c as the upper one or c + 1, and every count is below 1024 at
// the call sites. The unequal merge's two divisions, c / (2c + 1) and c(c + 1) / (2c + 1),
// depend on c alone: they are read from st_mean_weight and st_m2_weight, which the
// host filled with the same correctly rounded quotients, so the bits are st_merge's.
// On the H200 the divisions were about a third of the instructions of var along rows
// of 300 (results/h200-stat-span-pairs). No branch: an empty upper side (so, by the
// prefix, any empty side) keeps the lower one.
inline st_t st_merge_prefix(st_t lo, st_t hi) {
    double c = hi.a;
    // The count as an index without a conversion: adding 2^52 leaves the integer c in
    // the low bits (on the H200 var and nanmean read 0.2–1.6% more than with a conversion,
    // results/h200-stat-prefix-weights). The mask keeps any state's count in bounds.
    uint k = (uint)as_ulong(c + 4503599627370496.0) & (ST_PREFIX_WEIGHTS - 1u);
    bool equal = lo.a == c;
    double mean_weight = equal ? 0.5 : st_mean_weight[k];
    double m2_weight = equal ? ST_MUL(c, 0.5) : st_m2_weight[k];
    double d = hi.b - lo.b;
    st_t r;
    r.a = lo.a + c;
    r.b = lo.b + ST_MUL(d, mean_weight);
    r.c = lo.c + hi.c + ST_MUL(ST_MUL(d, d), m2_weight);
    return c == 0.0 ? lo : r;
}

// st_merge_prefix for counts of any size (a whole tile's lanes fold up to 8192 elements):
// past the tables, st_merge's divisions, which only the last few merges of a long tile
// reach.
inline st_t st_merge_prefix_large(st_t lo, st_t hi) {
    if (hi.a >= (double)ST_PREFIX_WEIGHTS) return st_merge(lo, hi);
    return st_merge_prefix(lo, hi);
}
#else
#define st_merge_prefix st_merge
#define st_merge_prefix_large st_merge
#endif

// A lane's first element: st_push into an empty state. Log-sum-exp's push would take
// exp(−∞) = 0 there; this gives its result without the exponential: the maximum is x and
// the sum 1 (NaN for NaN, whose bits are not promised).
inline st_t st_first(double x) {
#if STAT_KIND == 1
    st_t s;
    s.a = x;
    s.b = isnan(x) ? x : 1.0;
    s.c = 0.0;
    return s;
#else
    st_t s = st_empty();
    st_push(&s, x, 1.0);
    return s;
#endif
}

// Task `task`'s state, where the host reads it.
inline void st_store(__global double* out, ulong task, st_t s) {
    out[3 * task] = s.a;
    out[3 * task + 1] = s.b;
    out[3 * task + 2] = s.c;
}

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
            hi.a = STAT_KIND == 0 || STAT_KIND == 4 ? s.a : sub_group_shuffle_down(s.a, w);
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
// lanes in order), so the moments merge by st_merge_prefix.
inline void st_fold_store(st_t lane0, st_t lane1, st_t lane2, st_t lane3, ST_LOCAL st_t* level,
                          __global double* out, ulong task, bool full) {
    uint t = get_local_id(0);
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
    if (t == 0) {
        st_store(out, task, s);
    }
}

// Lanes t + 256q (q < 4) push their elements of the staged rows row0 … row0 + rows − 1
// of a tile (the stage holding `count` of them), each its rows in increasing index; the
// four lanes' chains interleave. `full` (a literal): every staged row is whole, so no
// element is tested. `rows`, and `row0` where the callers unroll, are constants.
inline void st_push_staged_rows(st_t* lane, ST_LOCAL const in_t* stage, uint rows, uint row0,
                                uint count, uint t, bool full) {
#pragma unroll
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
    if ((STAT_KIND == 0 || STAT_KIND == 1) && len == ST_ROWS * ST_LANES) {
        st_tile_staged(in, out, task, table[0], len, (long)table[2], stage, level, true);
    } else {
        st_tile_staged(in, out, task, table[0], len, (long)table[2], stage, level, false);
    }
}

#if STAT_KIND == 4
// Each segment of `width` work-items' entries of `sums` (work-item t's at sums[t], the
// `lane`-th of its segment) scanned in place, inclusive (Hillis–Steele). Every work-item
// calls it after writing its entry; the entries are final after it.
inline void st_scan_in_place(ST_LOCAL uint* sums, uint t, uint lane, uint width) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < width; d *= 2) {
        uint before = lane >= d ? sums[t - d] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[t] += before;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// The exclusive prefix sum of the work-group's `mine` in work-item order, and its
// `total`. Every work-item calls it; its first barrier also orders every work-item's
// accesses before it against those after it. With sub-group scans (CUDA's warps): each
// warp scans its own, then warp 0 the warps' totals, three barriers in all; otherwise
// Hillis–Steele in `sums` (ST_WG entries), seventeen. (On the H200 nanmean read 1–3%
// more with the warp scans: 8192×8192 rows 1209 → 1232 GB/s in a graph.)
inline uint st_scan_counts(uint mine, ST_LOCAL uint* sums, uint* total) {
    uint t = get_local_id(0);
#ifdef HAVE_SUBGROUP_SCAN
    uint upto = sub_group_scan_inclusive_add(mine);
    if (t % 32 == 31) sums[t / 32] = upto;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < 32) {
        uint warps = sub_group_scan_inclusive_add(t < ST_WG / 32 ? sums[t] : 0u);
        if (t < ST_WG / 32) sums[t] = warps;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *total = sums[ST_WG / 32 - 1];
    uint before_mine = upto - mine + (t >= 32 ? sums[t / 32 - 1] : 0u);
#else
    sums[t] = mine;
    st_scan_in_place(sums, t, t, ST_WG);
    *total = sums[ST_WG - 1];
    uint before_mine = sums[t] - mine;
#endif
    barrier(CLK_LOCAL_MEM_FENCE); // every work-item has read `sums` before the next call
    return before_mine;
}

// Rows of a tile that stat_kept stages at once, and the parts it stages: stat_tiles'
// by default; the host sets one row and one part where no tile is longer than a row, so
// that the stage is 8 times smaller and more work-groups fit on a multiprocessor.
#ifndef ST_KEPT_ROWS
#define ST_KEPT_ROWS ST_STAGE_ROWS
#endif
#ifndef ST_KEPT_PARTS
#define ST_KEPT_PARTS (ST_ROWS / ST_KEPT_ROWS)
#endif
// Staged elements per work-item in stat_kept's count: a run of neighbouring ones. The
// runs are read from a rotation (t · ST_KEPT_RUN / 32 on), so that a warp's 32 runs fall
// in different banks.
#define ST_KEPT_RUN (ST_KEPT_ROWS * ST_LANES / ST_WG)
#define ST_KEPT_SLOT(k, t) (((k) + (t) * ST_KEPT_RUN / 32) % ST_KEPT_RUN)

// The task of stat_kept's work-group. Over columns (the word after the task table: tiles
// per output, 0 otherwise) the work-groups take the outputs' tiles index by index, so
// that the work-groups on the device at once read the same rows of neighbouring
// columns and share their memory sectors: taken output by output, 32 columns of 2^22
// f32 rows fetched 8 times the bytes they used (a 32-byte sector per 4-byte element).
inline ulong st_kept_task(__global const double* out, ulong tasks) {
    ulong group = get_group_id(0);
    ulong per_output = ((__global const ulong*)(out + 3 * tasks))[3 * tasks];
    if (per_output < 2) {
        return group;
    }
    ulong outputs = tasks / per_output;
    return (group % outputs) * per_output + group / outputs;
}

// nanmean: the tile's values that are not NaN, compacted in order, are its lanes'
// sequence (kept value p goes to lane p mod 1024, row p / 1024). The tile is staged
// ST_KEPT_ROWS rows at a time as stat_tiles stages it (coalesced, asynchronous on CUDA);
// work-item t counts the kept values of its run of ST_KEPT_RUN neighbouring staged
// elements, a scan of the counts places each run, and the kept values are written back
// into the stage in order. Each lane then pushes the part's kept values of its residue in
// increasing position. (The kernel this replaces read each work-item's run straight from
// global memory, twice, with neighbouring work-items 32 elements apart, and the lanes read
// it a third time: on the H200 nanmean of long rows read 72–355 GB/s.)
#if defined(ST_MIN_GROUPS) && !defined(__OPENCL_VERSION__)
__kernel __attribute__((launch_bounds(ST_WG, ST_MIN_GROUPS)))
#else
__kernel __attribute__((reqd_work_group_size(ST_WG, 1, 1)))
#endif
void stat_kept(__global const in_t* in, __global double* out, ulong tasks) {
    __local st_t level[ST_WG];
    __local uint sums[ST_WG];
    __local in_t stage[ST_KEPT_ROWS * ST_LANES] __attribute__((aligned(16)));
    ulong task = st_kept_task(out, tasks);
    uint t = get_local_id(0);
    __global const ulong* table = (__global const ulong*)(out + 3 * tasks) + 3 * task;
    ulong first = table[0];
    ulong len = table[1];
    long step = (long)table[2];
    st_t lane[4];
    for (uint q = 0; q < 4; q++)
        lane[q] = st_empty();
    uint base = 0;     // values kept in the parts before
    bool dense = true; // every value so far is kept: the compacted sequence is the tile
#pragma unroll
    for (uint part = 0; part < ST_KEPT_PARTS; part++) {
        uint row0 = part * ST_KEPT_ROWS;
        ulong begin = (ulong)row0 * ST_LANES;
        if (begin < len) { // the same in the whole work-group, as its barriers need
            ulong rest = len - begin;
            uint count = rest < ST_KEPT_ROWS * ST_LANES ? (uint)rest : ST_KEPT_ROWS * ST_LANES;
            if (part > 0) barrier(CLK_LOCAL_MEM_FENCE); // every lane has read the last part
            st_stage(in + ((long)first + (long)begin * step), step, count, stage, t, ST_WG);
            barrier(CLK_LOCAL_MEM_FENCE);
            // Bit r of `kept`: the run's element r is kept.
            uint kept = 0;
#pragma unroll
            for (uint k = 0; k < ST_KEPT_RUN; k++) {
                uint r = ST_KEPT_SLOT(k, t);
                uint e = t * ST_KEPT_RUN + r;
                if (e < count && !isnan(st_stage_load(stage, e))) kept |= 1u << r;
            }
            uint total;
            uint at = st_scan_counts(popcount(kept), sums, &total);
            if (dense && total == count) {
                // Nothing is dropped, so the sequence is the tile itself and the lanes
                // push the staged rows as stat_tiles' do (the same pushes, without the
                // position arithmetic): data without NaN, the common case, costs one
                // count more than var.
                if (count == ST_KEPT_ROWS * ST_LANES) {
                    st_push_staged_rows(lane, stage, ST_KEPT_ROWS, row0, count, t, true);
                } else {
                    st_push_staged_rows(lane, stage, ST_KEPT_ROWS, row0, count, t, false);
                }
            } else {
                if (total != count) {
                    // Each run is held in registers until every work-item has read its
                    // own, then written back in order.
                    in_t held[ST_KEPT_RUN];
#pragma unroll
                    for (uint k = 0; k < ST_KEPT_RUN; k++) {
                        uint r = ST_KEPT_SLOT(k, t);
                        held[k] = (kept >> r) & 1u ? stage[t * ST_KEPT_RUN + r] : (in_t)0;
                    }
                    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
                    for (uint k = 0; k < ST_KEPT_RUN; k++) {
                        uint r = ST_KEPT_SLOT(k, t);
                        if ((kept >> r) & 1u)
                            stage[at + popcount(kept & ((1u << r) - 1u))] = held[k];
                    }
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
                for (uint q = 0; q < 4; q++) {
                    uint j = t + q * ST_WG;
                    // The part's first kept position of lane j's residue, then every 1024th.
                    for (uint p = base + (j + ST_LANES - base % ST_LANES) % ST_LANES;
                         p < base + total; p += ST_LANES) {
                        st_push(&lane[q], st_stage_load(stage, p - base),
                                1.0 / (double)(p / ST_LANES + 1));
                    }
                }
                dense = false;
            }
            base += total;
        }
    }
    // A whole tile without NaN: every lane holds ST_ROWS values, the merges' counts known.
    if (dense && len == ST_ROWS * ST_LANES) {
        st_fold_store(lane[0], lane[1], lane[2], lane[3], level, out, task, true);
    } else {
        st_fold_store(lane[0], lane[1], lane[2], lane[3], level, out, task, false);
    }
}
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
// Leaves per chunk: 8 elements in flight per work-item.
#define ST_CHUNK (8 / ST_LANE_ROWS)
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
    bool full = (STAT_KIND == 0 || STAT_KIND == 4) && len == ST_SPAN_LANES * ST_LANE_ROWS;
#ifdef HAVE_SUBGROUP_SHUFFLE
    st_t s = ST_SPAN == 32 && full
                 ? st_warp_fold(st_warp_leaves(in, first, len, step, row, t, true),
                               32.0 * ST_LANE_ROWS, 16, true)
                 : st_warp_fold(full ? st_warp_leaves(in, first, len, step, row, t, true)
                                     : st_warp_leaves(in, first, len, step, row, t, false),
                                0.0, ST_SPAN / 2, ST_LANE_ROWS == 1);
#else
    st_t s = full ? st_warp_leaves(in, first, len, step, row, t, true)
                  : st_warp_leaves(in, first, len, step, row, t, false);
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
#endif

#ifdef ST_COLUMNS
#include "stat_columns.h"
#endif

#ifdef ST_THREAD_WIDTH
#include "stat_thread_tiles.h"
#endif
