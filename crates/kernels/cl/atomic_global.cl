// Optimization guide, "Reduction": the naive parallel reduction. Every work-item adds its
// element into one global location with an atomic update; contention serializes it.
// Integer sums use the native 64-bit atomic add, as the guide's fetch_add does; every
// other operator becomes a compare-and-swap loop around combine() (atomic_combine.h).

#include "atomic_combine.h"

__kernel void reduce(__global const SRC_T* in, __global acc_t* out, ulong n) {
    ulong i = get_global_id(0);
    if (i < n)
        atomic_combine(out, LOAD(in, i));
}
