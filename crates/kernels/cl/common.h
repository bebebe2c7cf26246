// Helpers shared by every kernel. Included after the operator/type declarations and
// the backend prelude, so it may use acc_t, combine() and IDENTITY.

#ifndef WG
#define WG 256
#endif

// A pointer to local memory (the CUDA prelude makes it a plain pointer).
#ifndef LOCAL_PTR
#define LOCAL_PTR __local
#endif

// The first pass reads input elements through lift(); later passes of multi-pass
// strategies read the previous pass's partials. The host builds each kernel file twice.
#ifdef FIRST_PASS
#define SRC_T in_t
#define LOAD(p, i) lift((p), (i))
#else
#define SRC_T acc_t
#define LOAD(p, i) ((p)[(i)])
#endif

// Element i, or the identity past the end (so every work-item takes part in trees).
#define LOAD_OR_IDENTITY(p, i, n) ((i) < (n) ? LOAD(p, i) : IDENTITY)

// Tree over a work-group's scratch array with sequential addressing: active work-items
// stay contiguous, so warps retire whole and local-memory accesses do not conflict.
#define TREE_SEQUENTIAL(s, lid)                                   \
    for (uint stride = WG / 2; stride > 0; stride >>= 1) {        \
        barrier(CLK_LOCAL_MEM_FENCE);                              \
        if ((lid) < stride)                                        \
            (s)[(lid)] = combine((s)[(lid)], (s)[(lid) + stride]); \
    }                                                              \
    barrier(CLK_LOCAL_MEM_FENCE)

// One step of a fully unrolled tree (the SDK's reduce5/reduce6): the work-group size is a
// compile-time constant, so steps that do not exist for WG compile away.
#define TREE_STEP(s, lid, S)                                   \
    if (WG > (S)) {                                            \
        if ((lid) < (S))                                       \
            (s)[(lid)] = combine((s)[(lid)], (s)[(lid) + (S)]);\
        barrier(CLK_LOCAL_MEM_FENCE);                          \
    }
