// Statistics along columns (included by statistics.cl when ST_COLUMNS is set): many
// neighbouring strided outputs side by side, so that every load reads neighbouring
// elements of one row. Uses statistics.cl's states, pushes, merges and copy helpers.

// Columns: 32 neighbouring outputs (one per warp lane, so every load reads 32 neighbouring
// elements of one row) × 8 lane classes per work-group, all at the same tile index.
// Work-item (output o, class w) takes the tile's lanes j = w + 8k, k = 0 … 127: the
// canonical fold by halving joins those lanes among themselves first (widths 512 … 8), and
// that fold is the aligned pairwise tree over k in bit-reversed order, which a binary
// counter computes while the lanes stream in; the 8 classes are then folded by halving
// (widths 4, 2, 1) through local memory. The word after the task table is the number of
// tiles per output (every output has the same).
#ifndef ST_CLASSES
#define ST_CLASSES 8
#endif
#define ST_COLS (ST_WG / ST_CLASSES)
// Rows of a lane the kernel provides for (1, 2, 4 or 8: the host's column_lane_rows),
// each leaf pushing that many; a tile longer than ST_COL_ROWS·1024 is never given.
#ifndef ST_COL_ROWS
#define ST_COL_ROWS ST_ROWS
#endif
// Whether the lanes stream through shared memory (st_column_quad) or load straight into
// registers (st_column_direct). The host asks for the direct loads (ST_COL_DIRECT) for the
// moments' columns of one row a lane: on the H200, var along 500×65536 and 1000×65536
// read 8% more that way, and columns of 1500–8192 rows 11–32% less
// (results/h200-columns-direct).
#ifndef ST_COL_DIRECT
#define ST_COL_DIRECT 0
#endif
#define ST_COL_STAGED (STAT_KIND != 1 && ST_WIDE && !ST_COL_DIRECT)
// log2 of the lanes per class (ST_LANES / ST_CLASSES).
#if ST_CLASSES == 8
#define ST_LEVELS 7
#elif ST_CLASSES == 16
#define ST_LEVELS 6
#elif ST_CLASSES == 32
#define ST_LEVELS 5
#endif

// Leaf `leaf` of the bit-reversed order over a class's lanes is class position rev(leaf).
inline uint st_rev_levels(uint leaf) {
#if !defined(__OPENCL_VERSION__) && defined(__CUDA_ARCH__)
    return __brev(leaf) >> (32 - ST_LEVELS);
#else
    uint k = 0;
    for (uint b = 0; b < ST_LEVELS; b++) {
        k |= ((leaf >> b) & 1u) << (ST_LEVELS - 1 - b);
    }
    return k;
#endif
}

// log2 of the leaves a class walks in a tile of `len` elements. Lanes j ≥ len hold
// nothing, so only a class's first ⌈len / ST_CLASSES⌉ lanes k can hold elements (class
// 0's count, the largest), and every merge of the halving fold at a width of at least P,
// that count rounded up to a power of two, takes an empty upper side, which keeps the
// lower one bit for bit (st_merge). The fold over k < P alone is therefore the same tree,
// walked as leaves L < P with lane k = rev(L << (ST_LEVELS − levels)). A column of 300
// rows walked 128 leaves a class where 38 hold elements. `least`: the fewest levels the
// caller's chunks and units take. `len` is the group's (its columns have the same
// tiles), so every work-item of the group walks as many leaves and meets the same
// barriers.
//
// The host sets ST_COL_SKIP to 0 where every tile of the launch fills every lane (tiles of
// at least 1024 elements). The unstaged fold (log-sum-exp, 2-byte elements) then walks all
// its leaves with constant levels and no test for an empty side: with levels at run time,
// NVRTC rematerialized the canonical exp's constants inside the loop (38 more
// instructions per four leaves), and log-sum-exp along 1500×32768 read 6% less on an H100.
// The staged fold keeps the run-time walk everywhere: var along 1500×32768 read 3% less
// with the constant one (results/h100-columns-whole).
#ifndef ST_COL_SKIP
#define ST_COL_SKIP 1
#endif
#define ST_COL_WALK (ST_COL_SKIP || ST_COL_STAGED)
inline uint st_column_levels(ulong len, uint least) {
    ulong lanes = len < (ulong)ST_LANES ? len : (ulong)ST_LANES;
    ulong used = (lanes + ST_CLASSES - 1) / ST_CLASSES;
    uint levels = least;
    while (levels < ST_LEVELS && ((ulong)1 << levels) < used) {
        levels++;
    }
    return levels;
}

// Whether `s` holds no element: a count of 0, or log-sum-exp's sum of 0 (a lane that
// holds elements sums at least 1, or NaN).
inline bool st_column_empty(st_t s) {
#if STAT_KIND == 1
    return s.b == 0.0;
#else
    return s.a == 0.0;
#endif
}

// `merge(lo, hi)` where the lanes that hold elements are a prefix of the halving order
// (so an empty `lo` has an empty `hi`), branching past the merge where `hi` is empty:
// it keeps `lo` bit for bit. The columns of a warp share their lane classes and tile
// lengths, so the branch is the same in the whole warp (but for NaN-only lanes of
// nanmean, which only diverge). A tile of 300 rows has 38 of 64 leaves per class
// filled: the others' merges cost issue slots with the branch-free forms.
#define st_column_join(merge, lo, hi) \
    (ST_COL_WALK && st_column_empty(hi) ? (lo) : merge((lo), (hi)))

#if ST_COL_STAGED
// Columns of the statistics that wait on loads, over elements of 4 or 8 bytes (2-byte
// ones, copied without cp.async, read 13% less this way on an H100; log-sum-exp's 6–8%
// less, results/h100-lse-staged), stream their lanes through shared memory:
// each work-item copies the elements of its next ST_COL_LEAVES leaves (ST_COL_ROWS rows
// each, the same elements per chunk whatever the rows: 16 of 4 bytes, 8 of 8) into
// its own slots while it updates from the previous ones (two buffers; on CUDA sm_80+
// asynchronous copies, so the bytes in flight hold no registers). The slots are the
// work-item's own, so no barrier is needed: slot (buffer, leaf u, row r) of work-item t
// is element ((buffer·ST_COL_LEAVES + u)·ST_COL_ROWS + r)·ST_WG + t, and neighbouring
// work-items touch neighbouring words.
#define ST_COL_LEAVES (ST_STAGE_ROWS * 2 / ST_COL_ROWS)
#define ST_COL_SLOT(b, u, r) ((((b) * ST_COL_LEAVES + (u)) * ST_COL_ROWS + (r)) * ST_WG)

// Starts copying the rows of leaves chunk·ST_COL_LEAVES … of lane class w into buffer b.
inline void st_columns_issue(__global const in_t* in, ulong first, ulong len, long step, uint w,
                             uint chunk, uint b, ST_LOCAL in_t* slots, uint t, uint shift) {
    for (uint u = 0; u < ST_COL_LEAVES; u++) {
        uint j = w + ST_CLASSES * st_rev_levels((chunk * ST_COL_LEAVES + u) << shift);
        for (uint r = 0; r < ST_COL_ROWS; r++) {
            ulong e = (ulong)r * ST_LANES + j;
            if (e < len) {
                st_copy_one(slots + ST_COL_SLOT(b, u, r) + t, in + ((long)first + (long)e * step));
            }
        }
    }
    st_copies_commit();
}

// The same slots filled by the whole work-group, 16 bytes per copy, where its ST_COLS
// columns lie side by side in 16-byte words (every column live, the first one and the
// row step 16-byte aligned): the elements the slots of one (buffer, leaf, row) take, for
// classes w = 0 … ST_CLASSES − 1 and columns o = 0 … ST_COLS − 1, are ST_CLASSES
// consecutive rows of ST_COLS neighbouring elements, so copy c of a chunk moves elements
// 16c/size … of the chunk's slots. Per element copied the work-item issues a quarter
// (f32) or half (f64) of a copy instead of one, with one 64-bit address each; var along
// the columns of 8192×8192 f32 spent its issue slots on those (ncu on an H100: 13 cycles
// between a warp's issues, DRAM at 60%). The caller waits for all its copies and meets the
// others at a barrier before reading, so only one chunk is in flight during the updates.
// That barrier sits behind `by_rows`, which every work-item of the group computes from
// the same words, so all of them reach it or none does (PoCL and the analyzer run it in
// the tests; compute-sanitizer's synccheck is clean on it, results/h200-stat-columns).
#define ST_WORD (16 / ST_IN_BYTES)
inline void st_columns_issue_rows(__global const in_t* in, ulong first, ulong len, long step,
                                  uint chunk, uint b, ST_LOCAL in_t* slots, uint t,
                                  uint shift) {
    // This work-item's copies all cover the same column and class (ST_WG divides the
    // elements of a row of slots), rows ST_WORD apart in (leaf, row) order.
    uint at = t * ST_WORD;
    uint o = at % ST_COLS;
    uint w = (at % ST_WG) / ST_COLS;
    __global const in_t* base = in + ((long)first + (long)o + (long)w * step);
#pragma unroll
    for (uint k = 0; k < ST_COL_LEAVES * ST_COL_ROWS / ST_WORD; k++) {
        uint row = at / ST_WG + k * ST_WORD; // leaf u · ST_COL_ROWS + row r
        uint u = row / ST_COL_ROWS;
        uint r = row % ST_COL_ROWS;
        ulong e = (ulong)r * ST_LANES + w +
                  ST_CLASSES * st_rev_levels((chunk * ST_COL_LEAVES + u) << shift);
        if (e < len) {
            st_copy_word(slots + ST_COL_SLOT(b, u, r) + (at % ST_WG),
                         base + (long)(e - w) * step);
        }
    }
}

// Leaf `leaf` of work-item (column o, class w): lane j = w + ST_CLASSES·rev(leaf << shift)
// of the tile, its rows pushed in order from the staged slots. At the first leaf of each
// of the `chunks` chunks the next chunk's copies go out (by_rows: after the group's
// barrier). `full`: the tile has all its rows, so no row is tested and the counts fold
// into constants.
inline st_t st_column_leaf(__global const in_t* in, ulong first, ulong len, long step, uint w,
                           uint t, uint leaf, bool full, bool by_rows, ulong group_first,
                           ulong group_len, long group_step, ST_LOCAL in_t* slots,
                           uint shift, uint chunks) {
    uint u = leaf % ST_COL_LEAVES;
    uint b = (leaf / ST_COL_LEAVES) & 1u;
    uint next = leaf / ST_COL_LEAVES + 1;
    if (u == 0 && by_rows) {
        // This chunk landed for every work-item, and every work-item is done with the
        // last one, whose buffer the next chunk takes.
        st_copies_wait_all();
        barrier(CLK_LOCAL_MEM_FENCE);
        if (next < chunks) {
            st_columns_issue_rows(in, group_first, group_len, group_step, next, next & 1u,
                                  slots, t, shift);
        }
    } else if (u == 0) {
        // The next chunk goes out before this one is waited for.
        if (next < chunks) {
            st_columns_issue(in, first, len, step, w, next, next & 1u, slots, t, shift);
        } else {
            st_copies_commit(); // an empty group keeps the count of groups in flight
        }
        st_copies_wait_all_but_one();
    }
    st_t node = st_empty();
    if (full) {
#pragma unroll
        for (uint r = 0; r < ST_COL_ROWS; r++)
            st_push(&node, st_stage_load(slots + ST_COL_SLOT(b, u, r), t), 1.0 / (double)(r + 1));
    } else {
        uint j = w + ST_CLASSES * st_rev_levels(leaf << shift);
#pragma unroll
        for (uint r = 0; r < ST_COL_ROWS; r++) {
            if ((ulong)r * ST_LANES + j < len) {
                st_push(&node, st_stage_load(slots + ST_COL_SLOT(b, u, r), t),
                        1.0 / (double)(r + 1));
            }
        }
    }
    return node;
}

// Leaves 4·quad … 4·quad + 3 of work-item (column o, class w) merged as the tree's aligned
// subtree of four, in registers. A partial tile's lanes that hold elements are a prefix,
// so its merges read the unequal counts' weights from the tables (st_merge_prefix); a
// full tile's counts are equal constants.
inline st_t st_column_quad(__global const in_t* in, ulong first, ulong len, long step, uint w,
                           uint t, uint quad, bool full, bool by_rows, ulong group_first,
                           ulong group_len, long group_step, ST_LOCAL in_t* slots,
                           uint shift, uint chunks) {
    st_t pair = st_empty(), node = st_empty();
#pragma unroll
    for (uint q = 0; q < 4; q++) {
        st_t one = st_column_leaf(in, first, len, step, w, t, 4 * quad + q, full, by_rows,
                                  group_first, group_len, group_step, slots, shift, chunks);
        if (q == 0) {
            node = one;
        } else if (q == 1) {
            node = full ? st_merge(node, one) : st_column_join(st_merge_prefix, node, one);
        } else if (q == 2) {
            pair = one;
        } else {
            st_t upper = full ? st_merge(pair, one) : st_column_join(st_merge_prefix, pair, one);
            node = full ? st_merge(node, upper) : st_column_join(st_merge_prefix, node, upper);
        }
    }
    return node;
}
#endif

// Leaves per step of the binary counter below: the staged statistics take them four at a
// time (st_column_quad); the others (log-sum-exp, whose exp needs the registers, 2-byte
// elements, and ST_COL_DIRECT) eight rows' worth at a time, loaded before the first push
// (st_column_direct): one leaf of eight rows (four leaves at a time read 3–4% less for
// log-sum-exp on an H200, results/h200-stat-columns), or eight leaves of one row.
#if ST_COL_STAGED
#define ST_UNIT_LEVELS 2
#elif ST_COL_ROWS == 1
#define ST_UNIT_LEVELS 3
#elif ST_COL_ROWS == 2
#define ST_UNIT_LEVELS 2
#elif ST_COL_ROWS == 4
#define ST_UNIT_LEVELS 1
#else
#define ST_UNIT_LEVELS 0
#endif

#if !ST_COL_STAGED
#define ST_DIRECT_LEAVES (1 << ST_UNIT_LEVELS)
// Leaves ST_DIRECT_LEAVES·unit … of work-item (column o, class w), each of ST_COL_ROWS
// rows, every element loaded before the first push, merged as the tree's aligned subtree
// (neighbouring leaves first, as the binary counter pairs them). A lane's first element
// is st_first (log-sum-exp's without the exponential).
inline st_t st_column_direct(__global const in_t* in, ulong first, ulong len, long step,
                             uint w, uint unit, uint shift) {
    double x[ST_DIRECT_LEAVES * ST_COL_ROWS];
    uint lane[ST_DIRECT_LEAVES];
#pragma unroll
    for (uint u = 0; u < ST_DIRECT_LEAVES; u++) {
        lane[u] = w + ST_CLASSES * st_rev_levels((unit * ST_DIRECT_LEAVES + u) << shift);
#pragma unroll
        for (uint r = 0; r < ST_COL_ROWS; r++) {
            ulong e = (ulong)r * ST_LANES + lane[u];
            x[u * ST_COL_ROWS + r] =
                e < len ? stat_load(in, (ulong)((long)first + (long)e * step)) : 0.0;
        }
    }
    st_t node[ST_DIRECT_LEAVES];
#pragma unroll
    for (uint u = 0; u < ST_DIRECT_LEAVES; u++) {
        node[u] = lane[u] < len ? st_first(x[u * ST_COL_ROWS]) : st_empty();
#pragma unroll
        for (uint r = 1; r < ST_COL_ROWS; r++) {
            if ((ulong)r * ST_LANES + lane[u] < len)
                st_push(&node[u], x[u * ST_COL_ROWS + r], 1.0 / (double)(r + 1));
        }
    }
#pragma unroll
    for (uint width = 1; width < ST_DIRECT_LEAVES; width *= 2) {
#pragma unroll
        for (uint u = 0; u < ST_DIRECT_LEAVES; u += 2 * width) {
            node[u] = st_merge_prefix(node[u], node[u + width]);
        }
    }
    return node[0];
}
#endif

#if defined(ST_COL_LEN) && ST_MOMENTS && !ST_COL_STAGED && ST_COL_ROWS == 1
#define ST_COL_KNOWN 1
#else
#define ST_COL_KNOWN 0
#endif
#if ST_COL_KNOWN
// Columns of the moments whose length the host compiled in (ST_COL_LEN, every column of
// the launch the same, at most 1024 rows, so one element a lane): which lanes of a class
// hold an element, and so every count of the fold, is then known when compiled. The
// walk below is the binary counter of st_column_class, unrolled, with each subtree's
// count beside its state as a literal: merges with an empty side vanish, and the others'
// quotients fold into constants. That is st_merge bit for bit: for equal counts c, c / 2c
// is exactly 0.5 and c·c / 2c exactly c / 2, the equal branch's weights. The generic walk
// tests every count at run time and reads the unequal merges' weights from tables; on an
// H100 var along 300×65536 f32 read 972 GB/s that way and 2192–2203 this way
// (results/h100-columns-known).
//
// Leaves per chunk: at least half of the walked leaves hold an element (below), so a chunk
// has 16–32 loads in flight.
#define ST_KNOWN_CHUNK 32

// The fold of a class whose lanes k < ST_KNOWN_MORE hold an element if `more`, else
// k < ST_KNOWN_LESS (a warp is one class, so `more` never diverges), lane k at
// `base + k·class_step`: the 2^levels leaves of the walk, levels the fewest with
// 2^levels ≥ ST_KNOWN_MORE (leaf L holds lane k = rev(L) over `levels` bits, and the
// lanes past 2^levels only ever join as empty upper sides). Every element of a chunk of
// leaves is loaded before the chunk's first merge. One call site, so that the compiler
// inlines it and every count is a literal.
#define ST_KNOWN_MORE ((ST_COL_LEN + ST_CLASSES - 1) / ST_CLASSES)
#define ST_KNOWN_LESS ((ST_COL_LEN - 1) / ST_CLASSES)
inline st_t st_column_known(__global const in_t* in, long base, long class_step, bool more) {
    uint levels = 0;
    while ((1u << levels) < ST_KNOWN_MORE) {
        levels++;
    }
    uint shift = ST_LEVELS - levels;
    uint chunk_leaves = (1u << levels) < ST_KNOWN_CHUNK ? (1u << levels) : ST_KNOWN_CHUNK;
    st_t stack[ST_LEVELS + 1];
    uint count_m[ST_LEVELS + 1];
    uint count_l[ST_LEVELS + 1];
#pragma unroll
    for (uint chunk = 0; chunk < (1u << levels) / chunk_leaves; chunk++) {
        double x[ST_KNOWN_CHUNK];
#pragma unroll
        for (uint u = 0; u < chunk_leaves; u++) {
            uint k = st_rev_levels((chunk * chunk_leaves + u) << shift);
            bool load = k < ST_KNOWN_LESS || (k < ST_KNOWN_MORE && more);
            x[u] = load ? stat_load(in, (ulong)(base + (long)k * class_step)) : 0.0;
        }
#pragma unroll
        for (uint u = 0; u < chunk_leaves; u++) {
            uint leaf = chunk * chunk_leaves + u;
            uint k = st_rev_levels(leaf << shift);
            st_known_push(stack, count_m, count_l, leaf, ST_LEVELS, &x[u],
                          k < ST_KNOWN_MORE ? 1u : 0u, k < ST_KNOWN_LESS ? 1u : 0u, more);
        }
    }
    return stack[levels];
}
#endif

// The counter's and the classes' merges. Tiles of eight rows a lane are mostly whole, and
// their merges test the counts (selecting the tables' weights there read 4–7% less,
// results/h200-stat-columns-prefix). Shorter columns are never whole but at 1024·ST_COL_ROWS
// rows, and take the tables: a class holds at most 128 leaves of at most four rows, so the
// counter's upper sides hold at most 256 elements; the classes' fold reaches more.
#if ST_COL_ROWS < ST_ROWS
#define ST_COL_MERGE st_merge_prefix
#define ST_COL_MERGE_LARGE st_merge_prefix_large
#else
#define ST_COL_MERGE st_merge
#define ST_COL_MERGE_LARGE st_merge
#endif

// The 2^levels leaves of work-item (column o, class w), leaf L holding lane
// w + ST_CLASSES·rev(L << shift), folded into the class's state. The staged statistics
// take leaves four at a time, as the tree's aligned subtrees of four (held in registers),
// then a binary counter over those: the same tree as a counter over the leaves, with a
// quarter of the stack's traffic (a stack indexed at run time lives in local memory). A
// full tile has every row, so its quads test none and their counts fold into constants
// (a second copy of the quad, `full` constant). `levels` is ST_LEVELS where the launch's
// tiles fill every lane and the fold is unstaged (ST_COL_WALK, above).
inline st_t st_column_class(__global const in_t* in, ulong first, ulong len, long step, uint w,
                            uint levels, uint shift
#if ST_COL_STAGED
                            ,
                            uint t, bool by_rows, ulong group_first, ulong group_len,
                            long group_step, ST_LOCAL in_t* slots
#endif
) {
    st_t stack[ST_LEVELS - ST_UNIT_LEVELS + 1];
    uint filled = 0; // bit l: stack[l] holds a finished subtree of 2^l leaves
#if ST_COL_STAGED
    bool full = len >= ST_COL_ROWS * ST_LANES;
    uint chunks = (1u << levels) / ST_COL_LEAVES;
#endif
    for (uint unit = 0; unit < (1u << levels) >> ST_UNIT_LEVELS; unit++) {
#if ST_COL_STAGED
        st_t node = full ? st_column_quad(in, first, len, step, w, t, unit, true, by_rows,
                                          group_first, group_len, group_step, slots, shift,
                                          chunks)
                         : st_column_quad(in, first, len, step, w, t, unit, false, by_rows,
                                          group_first, group_len, group_step, slots, shift,
                                          chunks);
#elif ST_UNIT_LEVELS
        st_t node = st_column_direct(in, first, len, step, w, unit, shift);
#else
        st_t node =
            st_lane(in, first, len, step, w + ST_CLASSES * st_rev_levels(unit << shift));
#endif
        // Binary counter: carry while the level is occupied (the older side is lower).
        uint l = 0;
        while (filled & (1u << l)) {
            node = st_column_join(ST_COL_MERGE, stack[l], node);
            filled &= ~(1u << l);
            l++;
        }
        stack[l] = node;
        filled |= 1u << l;
    }
    // 2^levels leaves: exactly one full subtree remains, at the top level.
    return stack[levels - ST_UNIT_LEVELS];
}

__kernel __attribute__((reqd_work_group_size(ST_WG, 1, 1)))
void stat_columns(__global const in_t* in, __global double* out, ulong tasks) {
    __local st_t level[ST_WG];
#if ST_COL_STAGED
    __local in_t slots[2 * ST_COL_LEAVES * ST_COL_ROWS * ST_WG] __attribute__((aligned(16)));
#endif
    __global const ulong* table = (__global const ulong*)(out + 3 * tasks);
    ulong per_output = table[3 * tasks];
    uint t = get_local_id(0);
    uint o = t % ST_COLS;
    uint w = t / ST_COLS;
    ulong block = get_group_id(0) / per_output;
    ulong tile = get_group_id(0) % per_output;
    ulong output = block * ST_COLS + o;
    ulong task = output * per_output + tile;
    bool live = task < tasks;
    ulong first = live ? table[3 * task] : 0;
    ulong len = live ? table[3 * task + 1] : 0;
    long step = live ? (long)table[3 * task + 2] : 0;
    // The group's first column is always live (the host sizes the grid by columns).
    ulong group_task = block * ST_COLS * per_output + tile;
    ulong group_len = table[3 * group_task + 1];
    uint least = ST_UNIT_LEVELS;
#if ST_COL_STAGED
    while ((1u << least) < ST_COL_LEAVES) {
        least++; // whole chunks of staged leaves
    }
#endif
#if ST_COL_WALK
    uint levels = st_column_levels(group_len, least);
#else
    uint levels = ST_LEVELS;
#endif
    uint shift = ST_LEVELS - levels;
#if ST_COL_STAGED
    // The group's columns side by side (the host plans them so) and its own first column:
    // whole 16-byte words when every column is live and both the first element and the
    // row step are 16-byte aligned (the same answer in every work-item of the group).
    ulong group_first = table[3 * group_task];
    long group_step = (long)table[3 * group_task + 2];
    bool by_rows = (block * ST_COLS + ST_COLS - 1) * per_output + tile < tasks &&
                   ((ulong)(in + group_first) & 15) == 0 &&
                   (((ulong)group_step * ST_IN_BYTES) & 15) == 0;
    if (by_rows) {
        st_columns_issue_rows(in, group_first, group_len, group_step, 0, 0, slots, t, shift);
    } else {
        st_columns_issue(in, first, len, step, w, 0, 0, slots, t, shift);
    }
#endif
#if ST_COL_KNOWN
    // A class w holds lanes w + ST_CLASSES·k, k < ⌈(ST_COL_LEN − w) / ST_CLASSES⌉: one
    // more in the first (ST_COL_LEN − 1) mod ST_CLASSES + 1 classes. Work-items past the
    // last column load element 0 (first and step are 0 there).
    (void)levels;
    (void)shift;
    long base = (long)first + (long)w * step;
    long class_step = (long)ST_CLASSES * step;
    level[t] = st_column_known(in, base, class_step, w < (ST_COL_LEN - 1) % ST_CLASSES + 1);
#elif ST_COL_STAGED
    level[t] = st_column_class(in, first, len, step, w, levels, shift, t, by_rows, group_first,
                               group_len, group_step, slots);
#else
    level[t] = st_column_class(in, first, len, step, w, levels, shift);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint width = ST_CLASSES / 2; width >= 1; width /= 2) {
        if (w < width) {
            level[t] = ST_COL_MERGE_LARGE(level[t], level[t + width * ST_COLS]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (w == 0 && live) {
        st_store(out, task, level[t]);
    }
}
