// Optimization guide, "Reduction": a tree inside each work-group over one element per
// work-item, halving the active work-items each step, one partial per group. The host
// finishes the partials, or (multi-stage) the tree runs again over them until few remain.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t scratch[WG];
    uint lid = get_local_id(0);
    scratch[lid] = LOAD_OR_IDENTITY(in, get_global_id(0), n);
    TREE_SEQUENTIAL(scratch, lid);
    if (lid == 0)
        out[get_group_id(0)] = scratch[0];
}
