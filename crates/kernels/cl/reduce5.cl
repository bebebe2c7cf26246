// reduce5 in the same sequence: complete unrolling. The work-group size is a
// compile-time constant (WG), so every step of the tree is written out and the steps
// that do not exist for this size compile away.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t sdata[WG]; // @watch sdata
    uint lid = get_local_id(0);
    ulong i = get_group_id(0) * (WG * 2) + lid;
    sdata[lid] = combine(LOAD_OR_IDENTITY(in, i, n), LOAD_OR_IDENTITY(in, i + WG, n));
    barrier(CLK_LOCAL_MEM_FENCE);
    TREE_STEP(sdata, lid, 512)
    TREE_STEP(sdata, lid, 256)
    TREE_STEP(sdata, lid, 128)
    TREE_STEP(sdata, lid, 64)
    TREE_STEP(sdata, lid, 32)
    TREE_STEP(sdata, lid, 16)
    TREE_STEP(sdata, lid, 8)
    TREE_STEP(sdata, lid, 4)
    TREE_STEP(sdata, lid, 2)
    TREE_STEP(sdata, lid, 1)
    if (lid == 0)
        out[get_group_id(0)] = sdata[0];
}
