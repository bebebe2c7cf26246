// NVIDIA SDK reduce0 (seed 002): interleaved addressing with a divergent branch. At step
// s only work-items whose id is a multiple of 2s work, and the test `lid % (2*s)` leaves
// them scattered across every warp, so each warp runs both ways of the branch.
// One element per work-item; the host reruns it over the partials until one is left.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t sdata[WG]; // @watch sdata
    uint lid = get_local_id(0);
    sdata[lid] = LOAD_OR_IDENTITY(in, get_global_id(0), n);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < WG; s *= 2) {
        if (lid % (2 * s) == 0)
            sdata[lid] = combine(sdata[lid], sdata[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = sdata[0];
}
