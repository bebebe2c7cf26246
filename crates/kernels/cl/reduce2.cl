// NVIDIA SDK reduce2 (seed 002): sequential addressing. The stride halves from WG/2, so
// active work-items are the lowest ids and read consecutive words: no divergence within
// full warps and no bank conflicts. Half the work-items idle from the first step.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t sdata[WG]; // @watch sdata
    uint lid = get_local_id(0);
    sdata[lid] = LOAD_OR_IDENTITY(in, get_global_id(0), n);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            sdata[lid] = combine(sdata[lid], sdata[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = sdata[0];
}
