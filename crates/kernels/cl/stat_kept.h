// nanmean's rows longer than a warp's (included by statistics.cl when STAT_KIND is 4):
// the values that are not NaN, compacted in order by scans of the kept flags, become the
// tile's lanes, as the host compacts them. Uses statistics.cl's states and folds.

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

// The exclusive prefix sum of `mine` over ST_WG work-items in order (`t` the caller's
// place among them, `sums` their ST_WG entries), and its `total`. Every work-item of the
// work-group calls it; its first barrier also orders every work-item's accesses before
// it against those after it. With sub-group scans (CUDA's warps): each warp scans its
// own, then the first warp the warps' totals, three barriers in all; otherwise
// Hillis–Steele in `sums`, seventeen. (On the H200 nanmean read 1–3% more with the warp
// scans: 8192×8192 rows 1209 → 1232 GB/s in a graph.)
inline uint st_scan_counts_at(uint mine, ST_LOCAL uint* sums, uint t, uint* total) {
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

// st_scan_counts_at over a work-group of ST_WG.
inline uint st_scan_counts(uint mine, ST_LOCAL uint* sums, uint* total) {
    return st_scan_counts_at(mine, sums, get_local_id(0), total);
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
// Staged elements per work-item in stat_kept's count: a run of neighbouring ones.
#define ST_KEPT_RUN (ST_KEPT_ROWS * ST_LANES / ST_WG)

// The compaction of a staged part, in steps that stat_kept and stat_kept_columns share:
// work-item t takes the run of `run` (a literal where called) neighbouring staged
// elements from t·run, read from a rotation (its k-th read is element
// ST_RUN_SLOT(k, t, run)), so that a warp's 32 runs fall in different banks.
#define ST_RUN_SLOT(k, t, run) (((k) + (t) * (run) / 32) % (run))

// Bit r of the result: element r of work-item t's run is kept (below `count`, not NaN).
inline uint st_kept_bits(ST_LOCAL const in_t* stage, uint count, uint t, uint run) {
    uint kept = 0;
#pragma unroll
    for (uint k = 0; k < run; k++) {
        uint r = ST_RUN_SLOT(k, t, run);
        uint e = t * run + r;
        if (e < count && !isnan(st_stage_load(stage, e))) kept |= 1u << r;
    }
    return kept;
}

// The run's kept elements (bits `kept`) into `held`, registers, until every work-item has
// read its own (a barrier between this and st_kept_place)...
inline void st_kept_hold(in_t* held, ST_LOCAL const in_t* stage, uint kept, uint t, uint run) {
#pragma unroll
    for (uint k = 0; k < run; k++) {
        uint r = ST_RUN_SLOT(k, t, run);
        held[k] = (kept >> r) & 1u ? stage[t * run + r] : (in_t)0;
    }
}

// ... then written back in order from `at`, the run's place among the part's kept values.
inline void st_kept_place(const in_t* held, ST_LOCAL in_t* stage, uint kept, uint at, uint t,
                          uint run) {
#pragma unroll
    for (uint k = 0; k < run; k++) {
        uint r = ST_RUN_SLOT(k, t, run);
        if ((kept >> r) & 1u) stage[at + popcount(kept & ((1u << r) - 1u))] = held[k];
    }
}

// Lanes t + 256q push the part's kept values, compacted at the front of `stage`: the
// tile's kept positions base … base + total − 1, each lane those of its residue mod 1024
// in increasing position (kept value p goes to lane p mod 1024, row p / 1024). The rows
// are unrolled, each position tested, so that every push's reciprocal 1 / (row + 1) is a
// constant: a loop over the lane's positions divided in f64 at every push.
inline void st_push_kept(st_t* lane, ST_LOCAL const in_t* stage, uint base, uint total, uint t) {
    for (uint q = 0; q < 4; q++) {
        uint j = t + q * ST_WG;
#pragma unroll
        for (uint r = 0; r < ST_ROWS; r++) {
            uint p = r * ST_LANES + j;
            if (p >= base && p < base + total) {
                st_push(&lane[q], st_stage_load(stage, p - base), 1.0 / (double)(r + 1));
            }
        }
    }
}

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
            uint kept = st_kept_bits(stage, count, t, ST_KEPT_RUN);
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
                    st_kept_hold(held, stage, kept, t, ST_KEPT_RUN);
                    barrier(CLK_LOCAL_MEM_FENCE);
                    st_kept_place(held, stage, kept, at, t, ST_KEPT_RUN);
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
                st_push_kept(lane, stage, base, total, t);
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
