// reduce3 in the same sequence: first add during load. Each group covers 2*WG elements
// and every work-item combines two of them while loading, so no work-item idles in the
// first step and half as many groups are launched.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t sdata[WG]; // @watch sdata
    uint lid = get_local_id(0);
    ulong i = get_group_id(0) * (WG * 2) + lid;
    sdata[lid] = combine(LOAD_OR_IDENTITY(in, i, n), LOAD_OR_IDENTITY(in, i + WG, n));
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            sdata[lid] = combine(sdata[lid], sdata[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = sdata[0];
}
