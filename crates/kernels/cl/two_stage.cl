// Optimization guide, "Reduction": two-stage tree. Stage one launches a fixed number of
// groups; each work-item first accumulates a grid-stride slice, then the group reduces
// in a local tree. Stage two is the same kernel with one group over stage one's
// partials. Two launches whatever the size.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t scratch[WG];
    uint lid = get_local_id(0);
    ulong stride = get_global_size(0);
    acc_t acc = IDENTITY;
    for (ulong i = get_global_id(0); i < n; i += stride)
        acc = combine(acc, LOAD(in, i));
    scratch[lid] = acc;
    TREE_SEQUENTIAL(scratch, lid);
    if (lid == 0)
        out[get_group_id(0)] = scratch[0];
}
