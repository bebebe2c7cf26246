// Optimization guide, "Reduction": blocked accesses. Each work-item reduces one
// contiguous block of the group's range, stores its partial in shared local memory, and
// the group finishes it in one of three ways chosen by FINISH:
//   1 (serial): work-item 0 walks the local partials in order;
//   2 (tree):   a local tree;
//   3 (atomic): each group's result is combined into out[0] with an atomic update.
// Blocks are contiguous per work-item, so this is the access pattern a CPU prefers and a
// GPU does not (neighbouring work-items read a block apart).

#ifndef FINISH
#define FINISH 2
#endif

#if FINISH == 3
#include "atomic_combine.h"
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t scratch[WG];
    uint lid = get_local_id(0);
    ulong items = get_global_size(0);
    ulong block = (n + items - 1) / items;
    ulong start = get_global_id(0) * block;
    ulong end = min(start + block, n);
    acc_t acc = IDENTITY;
    for (ulong i = start; i < end; i++)
        acc = combine(acc, LOAD(in, i));
    scratch[lid] = acc;
#if FINISH == 1
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        acc_t total = scratch[0];
        for (uint k = 1; k < WG; k++)
            total = combine(total, scratch[k]);
        out[get_group_id(0)] = total;
    }
#else
    TREE_SEQUENTIAL(scratch, lid);
    if (lid == 0) {
#if FINISH == 3
        atomic_combine(out, scratch[0]);
#else
        out[get_group_id(0)] = scratch[0];
#endif
    }
#endif
}
