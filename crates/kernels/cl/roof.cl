// The read roof: the least work that still reads every byte, as fast as the device can.
// Each work-item walks the buffer with a grid-sized stride in 16-byte words, XORs them
// into registers and writes one word, so no read can be optimized away. Not a reduction
// variant: the benchmark's yardstick, so it must be at least as fast as any reduction
// that reads the same bytes. Bytes past the last whole 16-byte word are not read.
// Written with scalar operations on the vector's fields so that it also compiles as
// CUDA.
//
// Parameters (the CUDA backend times every combination on each device and keeps the
// fastest; OpenCL uses the defaults):
//   ROOF_UNROLL  independent 16-byte loads in flight per work-item per iteration;
//   ROOF_HINT    CUDA cache hint of the loads: 0 none, 1 streaming (evict first, __ldcs),
//                2 read-only path (__ldg);
//   ROOF_SEGMENTS 0: the whole grid strides over the buffer; 1: each work-group streams
//                its own contiguous segment (the even-share layout of library
//                reductions, kinder to DRAM pages on some devices).

#ifndef ROOF_UNROLL
#define ROOF_UNROLL 4
#endif
#ifndef ROOF_HINT
#define ROOF_HINT 0
#endif
#ifndef ROOF_SEGMENTS
#define ROOF_SEGMENTS 0
#endif

#if defined(__CUDACC__) && ROOF_HINT == 1
#define ROOF_LOAD(p) __ldcs(p)
#elif defined(__CUDACC__) && ROOF_HINT == 2
#define ROOF_LOAD(p) __ldg(p)
#else
#define ROOF_LOAD(p) (*(p))
#endif

__kernel void roof(__global const uint4* in, __global uint* out, ulong n) {
#if ROOF_SEGMENTS
    // Work-group g reads words [g·per, (g+1)·per), its work-items side by side.
    ulong per = (n + get_num_groups(0) - 1) / get_num_groups(0);
    ulong begin = get_group_id(0) * per;
    ulong end = begin + per < n ? begin + per : n;
    ulong stride = get_local_size(0);
    ulong i = begin + get_local_id(0);
#else
    ulong end = n;
    ulong stride = get_global_size(0);
    ulong i = get_global_id(0);
#endif
    uint a = 0, b = 0, c = 0, d = 0;
    // Whole rounds: ROOF_UNROLL loads issued before any is used.
    for (; i + (ROOF_UNROLL - 1) * stride < end; i += ROOF_UNROLL * stride) {
        uint4 w[ROOF_UNROLL];
#pragma unroll
        for (int k = 0; k < ROOF_UNROLL; k++) {
            w[k] = ROOF_LOAD(in + i + k * stride);
        }
#pragma unroll
        for (int k = 0; k < ROOF_UNROLL; k++) {
            a ^= w[k].x;
            b ^= w[k].y;
            c ^= w[k].z;
            d ^= w[k].w;
        }
    }
    // The rest, one word at a time.
    for (; i < end; i += stride) {
        uint4 w = ROOF_LOAD(in + i);
        a ^= w.x;
        b ^= w.y;
        c ^= w.z;
        d ^= w.w;
    }
    out[get_global_id(0)] = a ^ b ^ c ^ d;
}
