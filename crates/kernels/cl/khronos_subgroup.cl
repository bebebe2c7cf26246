// Khronos OpenCL SDK "Reduce" sample, sub-group built-in strategy (seed 004): each
// sub-group reduces with sub_group_reduce_<op>, its first work-item stores the result in
// local memory, and the first sub-group reduces those. Passes shrink by WG × 2 as in the
// vanilla strategy. Chosen only where the device has cl_khr_subgroups.

#pragma OPENCL EXTENSION cl_khr_subgroups : enable

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t partial[WG];
    ulong first = get_group_id(0) * (WG * 2) + get_local_id(0);
    acc_t mine = combine(LOAD_OR_IDENTITY(in, first, n), LOAD_OR_IDENTITY(in, first + WG, n));
    acc_t sub = SG_REDUCE(mine);
    if (get_sub_group_local_id() == 0)
        partial[get_sub_group_id()] = sub;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_sub_group_id() == 0) {
        acc_t v = get_sub_group_local_id() < get_num_sub_groups() ? partial[get_sub_group_local_id()] : IDENTITY;
        acc_t total = SG_REDUCE(v);
        if (get_local_id(0) == 0)
            out[get_group_id(0)] = total;
    }
}
