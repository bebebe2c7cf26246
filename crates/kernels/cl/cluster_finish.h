// Thread-block clusters (CUDA, sm_90 and later): the groups of one cluster run at the
// same time on one GPU processing cluster and can read each other's shared memory
// (distributed shared memory), with a hardware barrier across the cluster. The
// one-launch kernel's order-free path uses them to combine CLUSTER_FINISH group
// partials on chip (canonical_one.cl): only each cluster's first group writes a root
// and takes a ticket, and a grid of one cluster writes the result with no ticket at
// all, which is what the smallest inputs pay most for (a global fence, an atomic and a
// read of the roots back from L2).
//
// Written in inline PTX, like bulk_copy.h, so NVRTC needs no headers. CUDA only.

#ifndef REDLAB_CLUSTER_FINISH_H
#define REDLAB_CLUSTER_FINISH_H

// This group's rank in its cluster.
__device__ inline uint cluster_rank(void) {
    uint r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// Which cluster of the grid this group belongs to, and how many there are (x only:
// the kernel's grid is one-dimensional).
__device__ inline uint cluster_index(void) {
    uint c;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(c));
    return c;
}

__device__ inline uint cluster_count(void) {
    uint c;
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(c));
    return c;
}

// Every thread of every group of the cluster arrives, then waits for all the others.
// Release/acquire: shared-memory writes before it are visible to the whole cluster
// after it. Call from every thread of the group, in converged code.
__device__ inline void cluster_sync_all(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The generic address of `p` (a shared-memory variable of this group) in the group of
// rank `rank` of the same cluster; ordinary loads through it read that group's copy.
template <typename T> __device__ inline T* cluster_map(T* p, uint rank) {
    unsigned long long q;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(q) : "l"((unsigned long long)p), "r"(rank));
    return (T*)q;
}

#endif
