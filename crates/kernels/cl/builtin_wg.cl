// Built-in work-group reduction. The optimization guide's "built-in reduction object"
// (SYCL's reduction) has no OpenCL C counterpart; the nearest built-in is the OpenCL C
// 2.0 work-group collective work_group_reduce_<op>, used here and in the Khronos SDK
// sample. Each work-item accumulates a grid-stride slice, the group reduces with the
// built-in, and the host (or a second pass) combines the group partials.
// Defined for sum, min and max over integer and float values; float min/max are not
// offered because the built-in does not propagate NaN as redlab's min/max do.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    ulong stride = get_global_size(0);
    acc_t acc = IDENTITY;
    for (ulong i = get_global_id(0); i < n; i += stride)
        acc = combine(acc, LOAD(in, i));
    acc_t total = WG_REDUCE(acc);
    if (get_local_id(0) == 0)
        out[get_group_id(0)] = total;
}
