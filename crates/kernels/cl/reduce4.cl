// reduce4 in the same sequence: unroll the last warp. Once 32 or fewer work-items are
// active they all sit in one warp, and the loop's bookkeeping is replaced by six
// straight-line steps. The original drops the barriers there (warp-synchronous code on
// `volatile` memory); that is undefined in OpenCL and broken on GPUs with independent
// thread scheduling, so here each unrolled step keeps its barrier and only the loop
// control is removed. The work-item test stays outside, so the barriers are uniform.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t sdata[WG]; // @watch sdata
    uint lid = get_local_id(0);
    ulong i = get_group_id(0) * (WG * 2) + lid;
    sdata[lid] = combine(LOAD_OR_IDENTITY(in, i, n), LOAD_OR_IDENTITY(in, i + WG, n));
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 32; s >>= 1) {
        if (lid < s)
            sdata[lid] = combine(sdata[lid], sdata[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#define LAST_WARP_STEP(S)                                      \
    if ((S) < WG && lid < (S))                                 \
        sdata[lid] = combine(sdata[lid], sdata[lid + (S)]);    \
    barrier(CLK_LOCAL_MEM_FENCE)
    LAST_WARP_STEP(32);
    LAST_WARP_STEP(16);
    LAST_WARP_STEP(8);
    LAST_WARP_STEP(4);
    LAST_WARP_STEP(2);
    LAST_WARP_STEP(1);
    if (lid == 0)
        out[get_group_id(0)] = sdata[0];
}
