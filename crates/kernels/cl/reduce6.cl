// reduce6 in the same sequence: many elements per work-item. A fixed grid walks the
// input with a grid-sized stride, two elements per step, so each work-item does a long
// sequential accumulation before the (fully unrolled) tree: the tree's cost is spread
// over many elements and one pass usually leaves only as many partials as groups.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t sdata[WG]; // @watch sdata
    uint lid = get_local_id(0);
    ulong grid = (ulong)WG * 2 * get_num_groups(0);
    acc_t acc = IDENTITY;
    for (ulong i = get_group_id(0) * (WG * 2) + lid; i < n; i += grid) {
        acc = combine(acc, LOAD(in, i));
        if (i + WG < n)
            acc = combine(acc, LOAD(in, i + WG));
    }
    sdata[lid] = acc;
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
