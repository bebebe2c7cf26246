// The read roof through bulk asynchronous copies (CUDA, sm_90): the other way to stream
// a buffer, for the roof's calibration to set against register loads (roof.cl). Bytes in
// flight sit in shared memory instead of registers, so a block keeps BULK_STAGES stages
// of BULK_STAGE_BYTES in flight while its threads read the stage that landed.
//
// Block b takes stages b, b + G, b + 2G, ... of the buffer (G blocks). Thread 0 keeps
// every stage slot filled: when the block has read a slot, it starts the copy of the
// stage BULK_STAGES rounds ahead into it. Every thread XORs its share of each landed
// stage into a register and writes one word at the end, so no copy is left unread.
// Bytes past the last whole 16-byte word are not read, as in roof.cl.

#include "bulk_copy.h"

#ifndef BULK_STAGES
#define BULK_STAGES 4
#endif
#ifndef BULK_STAGE_BYTES
#define BULK_STAGE_BYTES 8192
#endif

#define BULK_STAGE_WORDS (BULK_STAGE_BYTES / 16)

// Starts the copy of stage `chunk` (of `n` words at `in`) into `slot`.
__device__ inline void roof_bulk_fill(const uint4* in, ulong n, ulong chunk, uint4* slot,
                                      ulong* barrier_word) {
    ulong first = chunk * BULK_STAGE_WORDS;
    ulong words = n - first < BULK_STAGE_WORDS ? n - first : BULK_STAGE_WORDS;
    bulk_expect(barrier_word, (uint)(words * 16));
    bulk_copy(slot, in + first, (uint)(words * 16), barrier_word);
}

__kernel void roof_bulk(__global const uint4* in, __global uint* out, ulong n) {
    __shared__ __align__(128) uint4 stage[BULK_STAGES][BULK_STAGE_WORDS];
    __shared__ __align__(8) ulong landed[BULK_STAGES];
    ulong chunks = (n + BULK_STAGE_WORDS - 1) / BULK_STAGE_WORDS;
    ulong groups = get_num_groups(0);
    uint lid = get_local_id(0);
    if (lid == 0) {
        for (int s = 0; s < BULK_STAGES; s++) {
            bulk_init(&landed[s]);
        }
        bulk_init_fence();
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        for (int s = 0; s < BULK_STAGES; s++) {
            ulong chunk = get_group_id(0) + s * groups;
            if (chunk < chunks) {
                roof_bulk_fill(in, n, chunk, stage[s], &landed[s]);
            }
        }
    }
    uint a = 0, b = 0, c = 0, d = 0;
    uint round = 0;
    for (ulong chunk = get_group_id(0); chunk < chunks; chunk += groups, round++) {
        uint s = round % BULK_STAGES;
        bulk_wait(&landed[s], (round / BULK_STAGES) & 1);
        ulong first = chunk * BULK_STAGE_WORDS;
        ulong words = n - first < BULK_STAGE_WORDS ? n - first : BULK_STAGE_WORDS;
        for (ulong i = lid; i < words; i += get_local_size(0)) {
            uint4 w = stage[s][i];
            a ^= w.x;
            b ^= w.y;
            c ^= w.z;
            d ^= w.w;
        }
        // Every thread has read the slot before it is filled again.
        barrier(CLK_LOCAL_MEM_FENCE);
        ulong next = chunk + BULK_STAGES * groups;
        if (lid == 0 && next < chunks) {
            roof_bulk_fill(in, n, next, stage[s], &landed[s]);
        }
    }
    out[get_global_id(0)] = a ^ b ^ c ^ d;
}
