// Bulk asynchronous copies from global into shared memory (CUDA, sm_90 and later),
// completed through a shared-memory barrier (mbarrier) that counts the bytes that have
// landed. One thread starts a copy of up to a whole stage with one instruction; the
// bytes in flight then cost no registers, only the shared memory they land in, which is
// why a kernel can keep far more of them in flight per SM than register loads allow.
//
// Protocol for one stage: the issuing thread arms the stage's barrier with the number of
// bytes it expects (`bulk_expect`), then starts the copy (`bulk_copy`); readers wait for
// the barrier's phase to complete (`bulk_wait`, with the phase's parity: 0 for the first
// fill of the stage, 1 for the second, and so on). Sizes and both addresses must be
// multiples of 16 bytes. CUDA only: OpenCL has no such copy.

#ifndef REDLAB_BULK_COPY_H
#define REDLAB_BULK_COPY_H

// The 32-bit shared-memory address of a generic pointer into shared memory.
__device__ inline uint bulk_shared_address(const void* p) {
    return (uint)__cvta_generic_to_shared(p);
}

// Initializes a barrier that completes a phase when one thread has armed it and the
// armed bytes have landed. Call from one thread, then make it visible to the copy
// engine and to the group (bulk_init_fence, then a barrier).
__device__ inline void bulk_init(ulong* barrier_word) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bulk_shared_address(barrier_word))
                 : "memory");
}

__device__ inline void bulk_init_fence(void) {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arms the barrier's current phase: one arrival, plus `bytes` still to land.
__device__ inline void bulk_expect(ulong* barrier_word, uint bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     bulk_shared_address(barrier_word)),
                 "r"(bytes)
                 : "memory");
}

// Starts copying `bytes` from `source` (global) to `destination` (shared); the bytes count
// against the barrier's phase as they land.
__device__ inline void bulk_copy(void* destination, const void* source, uint bytes,
                                 ulong* barrier_word) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(bulk_shared_address(destination)),
        "l"(source), "r"(bytes), "r"(bulk_shared_address(barrier_word))
        : "memory");
}

// Waits until the barrier's phase of parity `parity` has completed.
__device__ inline void bulk_wait(ulong* barrier_word, uint parity) {
    uint done = 0;
    while (!done) {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}" :
            "=r"(done) : "r"(bulk_shared_address(barrier_word)), "r"(parity) : "memory");
    }
}

#endif
