// CUDA translation of the OpenCL C vocabulary the kernel files use, so that the same
// files compile with NVRTC. It plays the part of an OpenCL compiler's built-in
// declarations, which is why it comes before every other section: the operator and
// type declarations are OpenCL C too. Built with `-default-device`, so the kernels'
// plain `inline` helpers become device functions.
//
// What maps to what:
//   work-items      get_local_id/get_group_id/... -> threadIdx/blockIdx/blockDim/gridDim
//   address spaces  __global -> (generic pointer), __local -> __shared__
//   barriers        barrier() -> __syncthreads(); mem_fence(global) -> __threadfence()
//   sub-groups      a sub-group is a warp of 32; collectives are xor-shuffle butterflies;
//                   sub_group_shuffle_down is __shfl_down_sync (HAVE_SUBGROUP_SHUFFLE),
//                   sub_group_scan_inclusive_add of counts __shfl_up_sync (HAVE_SUBGROUP_SCAN)
//   work-groups     work_group_reduce_* -> warp butterflies + one shared slot per warp
//   atomics         atom_add/atomic_cmpxchg/atom_cmpxchg/atomic_inc -> atomicAdd/atomicCAS
//   bit casts       as_int/as_float/... -> a union
//   halves          vload_half -> the PTX conversion cvt.f32.f16 (no headers needed)
//   bits            popcount -> __popc

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
// The bits of an IEEE half; only vload_half reads them.
typedef unsigned short half;

#define __kernel extern "C" __global__
#define __global
#define __local __shared__
// A pointer to local memory. CUDA's pointers are generic, and __local (__shared__) in a
// declaration would make the pointer itself a shared variable.
#define LOCAL_PTR
#define __constant const
// reqd_work_group_size(x, y, z) becomes CUDA's launch bound, which is what it promises.
#define reqd_work_group_size(x, y, z) launch_bounds((x) * (y) * (z))

#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2

#define INFINITY __int_as_float(0x7f800000)
#define LONG_MAX 0x7fffffffffffffffL
#define LONG_MIN (-0x7fffffffffffffffL - 1L)
#define ULONG_MAX 0xffffffffffffffffUL

__device__ inline size_t get_local_id(uint d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }
__device__ inline size_t get_group_id(uint d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
__device__ inline size_t get_local_size(uint d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }
__device__ inline size_t get_num_groups(uint d) { return d == 0 ? gridDim.x : d == 1 ? gridDim.y : gridDim.z; }
__device__ inline size_t get_global_id(uint d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }
__device__ inline size_t get_global_size(uint d) { return get_num_groups(d) * get_local_size(d); }

// A work-group barrier; __syncthreads() also orders the group's global accesses.
__device__ inline void barrier(int flags) { (void)flags; __syncthreads(); }
__device__ inline void mem_fence(int flags) {
    if (flags & CLK_GLOBAL_MEM_FENCE)
        __threadfence();
    else
        __threadfence_block();
}

template <typename To, typename From> __device__ inline To redlab_bits(From x) {
    static_assert(sizeof(To) == sizeof(From), "bit casts keep the size");
    union { From from; To to; } u;
    u.from = x;
    return u.to;
}
#define as_int(x) redlab_bits<int>(x)
#define as_uint(x) redlab_bits<uint>(x)
#define as_float(x) redlab_bits<float>(x)
#define as_long(x) redlab_bits<long>(x)
#define as_ulong(x) redlab_bits<ulong>(x)
#define as_double(x) redlab_bits<double>(x)

template <typename T> __device__ inline bool redlab_isnan(T x) { return x != x; }
#define isnan(x) redlab_isnan(x)

template <typename T> __device__ inline T redlab_min(T a, T b) { return b < a ? b : a; }
template <typename T> __device__ inline T redlab_max(T a, T b) { return a < b ? b : a; }
#define min(a, b) redlab_min(a, b)
#define max(a, b) redlab_max(a, b)
__device__ inline uint popcount(uint x) { return (uint)__popc(x); }

__device__ inline float vload_half(size_t i, const half* p) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[i]));
    return f;
}

__device__ inline long atom_add(volatile long* p, long x) {
    return (long)atomicAdd((unsigned long long*)p, (unsigned long long)x);
}
__device__ inline uint atomic_cmpxchg(volatile uint* p, uint expected, uint desired) {
    return atomicCAS((uint*)p, expected, desired);
}
__device__ inline ulong atom_cmpxchg(volatile ulong* p, ulong expected, ulong desired) {
    return (ulong)atomicCAS((unsigned long long*)p, (unsigned long long)expected,
                            (unsigned long long)desired);
}
__device__ inline uint atomic_inc(volatile uint* p) { return atomicAdd((uint*)p, 1u); }

// Sub-groups are warps.
__device__ inline uint get_sub_group_local_id() { return threadIdx.x & 31u; }
__device__ inline uint get_sub_group_id() { return threadIdx.x >> 5; }
__device__ inline uint get_sub_group_size() { return 32u; }
__device__ inline uint get_num_sub_groups() { return (blockDim.x + 31u) >> 5; }

struct redlab_add { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };
struct redlab_lesser { template <typename T> __device__ T operator()(T a, T b) const { return b < a ? b : a; } };
struct redlab_greater { template <typename T> __device__ T operator()(T a, T b) const { return a < b ? b : a; } };

// Every lane ends with the warp's result, as OpenCL's sub-group collectives promise.
template <typename T, typename F> __device__ inline T redlab_warp_reduce(T x, F f) {
    for (int offset = 16; offset > 0; offset >>= 1)
        x = f(x, __shfl_xor_sync(0xffffffffu, x, offset));
    return x;
}

// Every work-item ends with the group's result. The leading barrier lets a group call
// this twice in a row without overwriting slots still being read.
template <typename T, typename F> __device__ inline T redlab_group_reduce(T x, F f) {
    __shared__ T slot[32];
    x = redlab_warp_reduce(x, f);
    __syncthreads();
    if ((threadIdx.x & 31u) == 0)
        slot[threadIdx.x >> 5] = x;
    __syncthreads();
    T total = slot[0];
    for (uint w = 1; w < get_num_sub_groups(); w++)
        total = f(total, slot[w]);
    return total;
}

// OpenCL's sub_group_shuffle_down for any partial type, one 32-bit word at a time.
#define HAVE_SUBGROUP_SHUFFLE 1
template <typename T> __device__ inline T sub_group_shuffle_down(T x, uint delta) {
    static_assert(sizeof(T) % 4 == 0, "partials are whole 32-bit words");
    union { T value; int words[sizeof(T) / 4]; } u;
    u.value = x;
    for (int k = 0; k < (int)(sizeof(T) / 4); k++)
        u.words[k] = __shfl_down_sync(0xffffffffu, u.words[k], delta);
    return u.value;
}

// OpenCL's sub_group_scan_inclusive_add of counts: a Kogge–Stone scan by shuffles up.
#define HAVE_SUBGROUP_SCAN 1
__device__ inline uint sub_group_scan_inclusive_add(uint x) {
    uint lane = threadIdx.x & 31u;
    for (uint d = 1; d < 32; d *= 2) {
        uint before = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += before;
    }
    return x;
}

#define sub_group_reduce_add(x) redlab_warp_reduce((x), redlab_add())
#define sub_group_reduce_min(x) redlab_warp_reduce((x), redlab_lesser())
#define sub_group_reduce_max(x) redlab_warp_reduce((x), redlab_greater())
#define work_group_reduce_add(x) redlab_group_reduce((x), redlab_add())
#define work_group_reduce_min(x) redlab_group_reduce((x), redlab_lesser())
#define work_group_reduce_max(x) redlab_group_reduce((x), redlab_greater())
