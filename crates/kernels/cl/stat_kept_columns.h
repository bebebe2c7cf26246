// nanmean's tiles of columns, ST_KC of them per work-group (included by statistics.cl
// when STAT_KIND is 4 and the host sets ST_KC): stat_kept's compaction and pushes, with
// each tile taken by ST_WG work-items of the group, but staged together. stat_kept
// stages a column's tile alone, one element of a row per load, so a warp's load touches
// 32 sectors for 32 elements; on an H100 nanmean over 8192² columns with NaN in every
// tile read 369 GB/s that way (results/h100-nanmean-nan-data). Here the host gives
// neighbouring columns at the same tile index to one group (nan_columns::Redo), and the
// group's work-items copy the tiles' elements of a row side by side: a warp's load
// covers ST_KC neighbouring elements of 32 / ST_KC rows. On an H100 with 10% NaN, 4 tiles
// a group and 2 rows staged, 8192² read 459–466 GB/s per call and 4194304×32 493–498
// (results/h100-nanmean-kept-columns-threshold).
//
// Set by redlab_kernels::nan_columns: ST_KC (tiles per work-group, 2 or 4), ST_KC_ROWS
// (rows of a tile staged at once, dividing ST_ROWS) and ST_KC_BUFFERS (1, or 2: the next
// part's copies go out before this part is compacted, asynchronous on CUDA).
#ifndef ST_KC_BUFFERS
#define ST_KC_BUFFERS 1
#endif

#define ST_KC_WG (ST_KC * ST_WG)
// Staged elements of a tile per part, and the stage's pitch between tiles: 8 elements
// more, so that the copies of one warp (ST_KC tiles' neighbouring elements) fall in
// different banks.
#define ST_KC_PART (ST_KC_ROWS * ST_LANES)
#define ST_KC_PITCH (ST_KC_PART + 8)
// Staged elements per work-item in the count (stat_kept.h's runs).
#define ST_KC_RUN (ST_KC_PART / ST_WG)
// The stage and the fold's states take turns in one array of doubles (the fold comes
// after the last part), which keeps the group under CUDA's 48 KiB of static shared
// memory.
#define ST_KC_STAGE_BYTES (ST_KC_BUFFERS * ST_KC * ST_KC_PITCH * ST_IN_BYTES)
#define ST_KC_LEVEL_BYTES (ST_KC_WG * 24)
#define ST_KC_SCRATCH                                                                      \
    ((ST_KC_STAGE_BYTES > ST_KC_LEVEL_BYTES ? ST_KC_STAGE_BYTES : ST_KC_LEVEL_BYTES) / 8 + 1)

// Starts work-item `lid`'s copies of part `part` of tile `tile` (its elements `first +
// e·step`, e < len) into the part's buffer of the stage, and closes them as a group.
inline void st_kc_issue(ST_LOCAL in_t* stage, uint part, uint tile, __global const in_t* in,
                        ulong first, ulong len, long step, uint lid) {
    ST_LOCAL in_t* to = stage + ((part % ST_KC_BUFFERS) * ST_KC + tile) * ST_KC_PITCH;
    ulong begin = (ulong)part * ST_KC_PART;
    for (uint e = lid / ST_KC; e < ST_KC_PART; e += ST_WG) {
        if (begin + e < len) {
            st_copy_one(to + e, in + ((long)first + (long)(begin + e) * step));
        }
    }
    st_copies_commit();
}

// Tasks ST_KC·g … ST_KC·g + ST_KC − 1 of the table are work-group g's (tasks past the
// table's end, and tiles of length 0, hold nothing and store nothing). Tile c of the group
// is work-items c·ST_WG … of it; the copies are spread the other way, work-item i copying
// for tile i mod ST_KC, so that neighbouring work-items copy neighbouring columns.
__kernel __attribute__((reqd_work_group_size(ST_KC_WG, 1, 1)))
void stat_kept_columns(__global const in_t* in, __global double* out, ulong tasks) {
    __local double scratch[ST_KC_SCRATCH] __attribute__((aligned(16)));
    __local uint sums[ST_KC_WG];
    ST_LOCAL in_t* stage = (ST_LOCAL in_t*)scratch;
    uint lid = get_local_id(0);
    uint c = lid / ST_WG;
    uint t = lid % ST_WG;
    __global const ulong* table = (__global const ulong*)(out + 3 * tasks);
    ulong task0 = (ulong)get_group_id(0) * ST_KC;
    ulong task = task0 + c;
    bool live = task < tasks;
    ulong len = live ? table[3 * task + 1] : 0;
    ulong longest = 0;
    for (uint k = 0; k < ST_KC; k++) {
        ulong other = task0 + k < tasks ? table[3 * (task0 + k) + 1] : 0;
        longest = other > longest ? other : longest;
    }
    uint copies_for = lid % ST_KC;
    ulong copy_task = task0 + copies_for;
    bool copy_live = copy_task < tasks;
    ulong copy_first = copy_live ? table[3 * copy_task] : 0;
    ulong copy_len = copy_live ? table[3 * copy_task + 1] : 0;
    long copy_step = copy_live ? (long)table[3 * copy_task + 2] : 0;
    st_t lane[4];
    for (uint q = 0; q < 4; q++)
        lane[q] = st_empty();
    uint base = 0;     // the tile's values kept in the parts before
    bool dense = true; // every value of the tile so far is kept
    // Every work-item stages as many parts as the group's longest tile needs, so the
    // barriers are the whole group's and none is conditional. Unrolled on CUDA, so that
    // each row's reciprocal is a constant; a loop on OpenCL, where PoCL's compiler
    // duplicated the unrolled parts' barrier regions for many minutes.
    uint parts = (uint)((longest + ST_KC_PART - 1) / ST_KC_PART);
#ifdef __OPENCL_VERSION__
    for (uint part = 0; part < parts; part++) {
#else
#pragma unroll
    for (uint part = 0; part < ST_ROWS / ST_KC_ROWS; part++) {
        if (part == parts) break;
#endif
        uint row0 = part * ST_KC_ROWS;
        ulong begin = (ulong)row0 * ST_LANES;
        if (ST_KC_BUFFERS == 1 || part == 0) {
            st_kc_issue(stage, part, copies_for, in, copy_first, copy_len, copy_step, lid);
        }
        if (ST_KC_BUFFERS == 2 && part + 1 < parts) {
            // The next part's copies fill the other buffer, which every work-item
            // finished reading at the barrier that closed the part before.
            st_kc_issue(stage, part + 1, copies_for, in, copy_first, copy_len, copy_step,
                        lid);
            st_copies_wait_all_but_one();
        } else {
            st_copies_wait_all();
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        ST_LOCAL in_t* own = stage + ((part % ST_KC_BUFFERS) * ST_KC + c) * ST_KC_PITCH;
        ulong rest = len > begin ? len - begin : 0;
        uint count = rest < ST_KC_PART ? (uint)rest : ST_KC_PART;
        uint kept = st_kept_bits(own, count, t, ST_KC_RUN);
        uint total;
        uint at = st_scan_counts_at(popcount(kept), sums + c * ST_WG, t, &total);
        // The kept values written back in order, by every tile (the barriers are the
        // group's; a tile that dropped nothing writes each value where it was). Done only
        // by the tiles that dropped some, between the same barriers, PoCL's build gave
        // wrong values.
        in_t held[ST_KC_RUN];
        st_kept_hold(held, own, kept, t, ST_KC_RUN);
        barrier(CLK_LOCAL_MEM_FENCE);
        st_kept_place(held, own, kept, at, t, ST_KC_RUN);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (dense && total == count) {
            // The sequence so far is the tile itself: stat_tiles' pushes.
            if (count == ST_KC_PART) {
                st_push_staged_rows(lane, own, ST_KC_ROWS, row0, count, t, true);
            } else {
                st_push_staged_rows(lane, own, ST_KC_ROWS, row0, count, t, false);
            }
        } else {
            st_push_kept(lane, own, base, total, t);
            dense = false;
        }
        base += total;
        // Every lane has read this part: the next one, or the fold, takes the bytes.
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // The fold with counts tested (the tiles of a group differ in which are whole; the
    // tested merges give the bits of the constant ones, st_merge_prefix).
    st_fold_store_at(lane[0], lane[1], lane[2], lane[3], (ST_LOCAL st_t*)scratch + c * ST_WG, t,
                     out, task, false, live);
}
