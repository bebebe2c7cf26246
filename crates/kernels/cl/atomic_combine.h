// Atomic combine into one global partial: the native 64-bit atomic add for integer
// sums, a compare-and-swap loop around combine() for everything else. acc_t must be 4
// or 8 bytes (argmin/argmax partials are 16 and have no atomic form).

#if ACC_BYTES == 8
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define ATOM_BITS ulong
#define AS_BITS(x) as_ulong(x)
#define FROM_BITS(x) AS_ACC64(x)
#define CAS(p, old, new) atom_cmpxchg((volatile __global ulong*)(p), (old), (new))
#else
#define ATOM_BITS uint
#define AS_BITS(x) as_uint(x)
#define FROM_BITS(x) AS_ACC32(x)
#define CAS(p, old, new) atomic_cmpxchg((volatile __global uint*)(p), (old), (new))
#endif

inline void atomic_combine(__global acc_t* target, acc_t x) {
#if defined(OP_SUM) && defined(VALUE_IS_INTEGER)
    atom_add((volatile __global long*)target, (long)x);
#else
    ATOM_BITS seen = AS_BITS(*target);
    for (;;) {
        ATOM_BITS want = AS_BITS(combine(FROM_BITS(seen), x));
        ATOM_BITS was = CAS(target, seen, want);
        if (was == seen)
            break;
        seen = was;
    }
#endif
}
