// Optimization guide, "Reduction": one work-item per compute unit, each summing one
// contiguous chunk; the host combines the per-unit partials. Contiguous chunks per
// work-item defeat coalescing and vectorization: neighbouring work-items read addresses
// a whole chunk apart.

__kernel void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    ulong items = get_global_size(0);
    ulong id = get_global_id(0);
    ulong chunk = (n + items - 1) / items;
    ulong start = id * chunk;
    ulong end = min(start + chunk, n);
    acc_t acc = IDENTITY;
    for (ulong i = start; i < end; i++)
        acc = combine(acc, LOAD(in, i));
    out[id] = acc;
}
