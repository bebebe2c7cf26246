// NVIDIA SDK reduce1 (seed 002): interleaved addressing with a strided index. Work-item
// lid handles index 2*s*lid, so active work-items are contiguous (no divergence inside
// a warp until few remain), but the stride 2*s between their local-memory addresses
// makes them collide on the same banks.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t sdata[WG]; // @watch sdata
    uint lid = get_local_id(0);
    sdata[lid] = LOAD_OR_IDENTITY(in, get_global_id(0), n);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < WG; s *= 2) {
        uint index = 2 * s * lid;
        if (index < WG)
            sdata[index] = combine(sdata[index], sdata[index + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = sdata[0];
}
