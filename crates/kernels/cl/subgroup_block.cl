// Optimization guide, "Reduction": sub-group block loads. Each sub-group reads eight
// consecutive blocks with one intel_sub_group_block_read8 (an 8-wide vector per
// work-item), accumulates them, then reduces across the sub-group and the work-group.
// Needs cl_intel_subgroups and 32-bit input elements (the block read moves uints); it
// only runs as a first pass (it reads input elements, not partials).

#pragma OPENCL EXTENSION cl_intel_subgroups : enable

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    __local acc_t scratch[WG];
    uint lid = get_local_id(0);
    uint sg_size = get_sub_group_size();
    ulong per_group = (ulong)WG * 8;
    ulong base = get_group_id(0) * per_group + (ulong)get_sub_group_id() * sg_size * 8;
    acc_t acc = IDENTITY;
    if (base + sg_size * 8 <= n) {
        // Block read k gives this work-item the bits of element base + k*sg_size + lane.
        uint8 raw = intel_sub_group_block_read8((const __global uint*)(in + base));
        ulong at = base + get_sub_group_local_id();
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s0), at + 0 * sg_size));
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s1), at + 1 * sg_size));
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s2), at + 2 * sg_size));
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s3), at + 3 * sg_size));
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s4), at + 4 * sg_size));
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s5), at + 5 * sg_size));
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s6), at + 6 * sg_size));
        acc = combine(acc, lift_value(AS_IN_FROM_UINT(raw.s7), at + 7 * sg_size));
    } else {
        for (ulong i = base + get_sub_group_local_id(); i < min(base + sg_size * 8, n); i += sg_size)
            acc = combine(acc, LOAD(in, i));
    }
    scratch[lid] = acc;
    TREE_SEQUENTIAL(scratch, lid);
    if (lid == 0)
        out[get_group_id(0)] = scratch[0];
}
