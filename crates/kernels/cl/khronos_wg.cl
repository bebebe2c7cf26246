// Khronos OpenCL SDK "Reduce" sample, work-group built-in strategy (seed 004): the same
// passes as the vanilla strategy (÷ WG × 2 each), with the local tree replaced by
// work_group_reduce_<op>. Chosen only where the device reports work-group collective
// functions; the sample queries the same capability.

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    ulong first = get_group_id(0) * (WG * 2) + get_local_id(0);
    acc_t mine = combine(LOAD_OR_IDENTITY(in, first, n), LOAD_OR_IDENTITY(in, first + WG, n));
    acc_t total = WG_REDUCE(mine);
    if (get_local_id(0) == 0)
        out[get_group_id(0)] = total;
}
