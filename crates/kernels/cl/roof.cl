// The read roof: the least work that still reads every byte. Each work-item walks the
// buffer with a grid-sized stride in 16-byte words, XORs them into a register and writes
// one word, so no read can be optimized away. Not a reduction variant: the benchmark's
// yardstick. Bytes past the last whole 16-byte word are not read.

__kernel void roof(__global const uint4* in, __global uint* out, ulong n) {
    ulong stride = get_global_size(0);
    uint4 acc = (uint4)(0u);
    for (ulong i = get_global_id(0); i < n; i += stride)
        acc ^= in[i];
    out[get_global_id(0)] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}
