// Optimization guide, "Reduction": strided accumulation. Work-item k of K reads elements
// k, k+K, k+2K, …, so neighbouring work-items read neighbouring addresses (the loop the
// guide shows the compiler can vectorize). With one work-item per compute unit this is
// the guide's vectorizable version; with many work-items per unit, the version that
// fills every thread context. The host combines the K partials.

__kernel void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    ulong items = get_global_size(0);
    ulong id = get_global_id(0);
    acc_t acc = IDENTITY;
    for (ulong i = id; i < n; i += items)
        acc = combine(acc, LOAD(in, i));
    out[id] = acc;
}
