// The read roof: the least work that still reads every byte. Each work-item walks the
// buffer with a grid-sized stride in 16-byte words, XORs them into registers and writes
// one word, so no read can be optimized away. Not a reduction variant: the benchmark's
// yardstick. Bytes past the last whole 16-byte word are not read. Written with scalar
// operations on the vector's fields so that it also compiles as CUDA.

__kernel void roof(__global const uint4* in, __global uint* out, ulong n) {
    ulong stride = get_global_size(0);
    uint a = 0, b = 0, c = 0, d = 0;
    for (ulong i = get_global_id(0); i < n; i += stride) {
        uint4 w = in[i];
        a ^= w.x;
        b ^= w.y;
        c ^= w.z;
        d ^= w.w;
    }
    out[get_global_id(0)] = a ^ b ^ c ^ d;
}
