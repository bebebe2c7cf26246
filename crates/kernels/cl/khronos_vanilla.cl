// Khronos OpenCL SDK "Reduce" sample, vanilla strategy (seed 004): every pass reads two
// elements per work-item, reduces them in a local-memory tree, and writes one partial
// per group, so each pass divides the size by WG × 2. The host alternates between two
// buffers (double buffering) until one value is left.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t shared[WG];
    uint lid = get_local_id(0);
    ulong first = get_group_id(0) * (WG * 2) + lid;
    shared[lid] = combine(LOAD_OR_IDENTITY(in, first, n), LOAD_OR_IDENTITY(in, first + WG, n));
    TREE_SEQUENTIAL(shared, lid);
    if (lid == 0)
        out[get_group_id(0)] = shared[0];
}
