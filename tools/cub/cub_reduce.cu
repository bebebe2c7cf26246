// The CUB comparator of `redlab bench --compare cub`: times cub::DeviceReduce on the same
// sizes and types under the same conditions as redlab's own rows — inputs rotated over
// enough buffers to exceed 8× the L2 (cold), CUDA events around each call, temporary
// storage allocated once outside the timing, and a captured graph of back-to-back calls.
//
// Build: nvcc -O3 -std=c++17 -arch=native -o redlab-cub tools/cub/cub_reduce.cu
// Usage: redlab-cub OP DTYPE N REPS GRAPH_CALLS
//   OP: sum | min | max; DTYPE: i32 (sum into i64) | f32 | f64 | f16 | bf16 (halves: sum
//   only, through cub::DeviceReduce::TransformReduce into an f32 accumulator, which is
//   what redlab's f16/bf16 sums compute)
// Prints one JSON object: per-call median/min/max seconds, seconds per call in a graph,
// buffers rotated, and the value of the first buffer (for a sanity check).

#include <cub/device/device_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cub/version.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/limits>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            std::fprintf(stderr, "redlab-cub: %s failed: %s\n", #call,                  \
                         cudaGetErrorString(err_));                                     \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

// Seeded pseudo-random fill on the device (a hash of the index), so no input is
// constant and nothing is copied from the host.
template <typename T> __global__ void fill(T* out, size_t n, unsigned long long seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 29;
        if constexpr (std::is_integral_v<T>) {
            out[i] = (T)(int)(x >> 40) - (1 << 23);      // i32: ±2^23
        } else {
            double u = (double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;  // [-1, 1)
            if constexpr (std::is_floating_point_v<T>) {
                out[i] = (T)u;
            } else {
                out[i] = T((float)u);  // halves convert from float
            }
        }
    }
}

struct Timing {
    std::vector<double> per_call;
    double graph_per_call = 0;
    std::string value;
};

// One CUB call: a plain reduction, or (halves) a transform-reduce that widens each element
// to the accumulator first.
template <typename In, typename Out, typename Op> struct PlainReduce {
    Op op;
    Out init;
    cudaError_t operator()(void* temp, size_t& bytes, const In* in, Out* out, size_t n,
                           cudaStream_t stream) const {
        return cub::DeviceReduce::Reduce(temp, bytes, in, out, (int64_t)n, op, init, stream);
    }
};

struct Widen {
    template <typename H> __host__ __device__ float operator()(H h) const { return (float)h; }
};

template <typename In> struct WidenedSum {
    cudaError_t operator()(void* temp, size_t& bytes, const In* in, float* out, size_t n,
                           cudaStream_t stream) const {
        return cub::DeviceReduce::TransformReduce(temp, bytes, in, out, (int64_t)n,
                                                  ::cuda::std::plus<>{}, Widen{}, 0.0f, stream);
    }
};

template <typename In, typename Out, typename Reducer>
Timing measure(size_t n, int reps, int graph_calls, Reducer reduce, size_t windows) {
    std::vector<In*> inputs(windows);
    for (auto& p : inputs) {
        CHECK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(In)));
    }
    for (size_t w = 0; w < windows; w++) {
        fill<<<1024, 256>>>(inputs[w], n, 1234567ull + w);
    }
    CHECK(cudaGetLastError());
    Out* out;
    CHECK(cudaMalloc(&out, sizeof(Out)));
    size_t temp_bytes = 0;
    CHECK(reduce(nullptr, temp_bytes, inputs[0], out, n, 0));
    void* temp;
    CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    auto call = [&](size_t w) {
        CHECK(reduce(temp, temp_bytes, inputs[w % windows], out, n, stream));
    };
    Timing t;
    for (int k = 0; k < 3; k++) call(k);  // warm-up
    CHECK(cudaStreamSynchronize(stream));
    for (int k = 0; k < reps; k++) {
        CHECK(cudaEventRecord(start, stream));
        call(k);
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        t.per_call.push_back(ms * 1e-3);
    }
    // Graph: graph_calls back-to-back reductions, rotating inputs, replayed once warm.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < graph_calls; k++) call(k);
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaEventRecord(start, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    t.graph_per_call = ms * 1e-3 / graph_calls;
    // The value over the first buffer.
    call(0);
    Out host;
    CHECK(cudaMemcpyAsync(&host, out, sizeof(Out), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    char text[64];
    if constexpr (std::is_integral_v<Out>) {
        std::snprintf(text, sizeof text, "%lld", (long long)host);
    } else {
        std::snprintf(text, sizeof text, "%.17g", (double)host);
    }
    t.value = text;
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    for (auto p : inputs) CHECK(cudaFree(p));
    CHECK(cudaFree(out));
    CHECK(cudaFree(temp));
    CHECK(cudaStreamDestroy(stream));
    return t;
}

template <typename In, typename Out>
Timing by_op(const std::string& op, size_t n, int reps, int graph_calls, size_t windows) {
    using Plus = ::cuda::std::plus<>;
    using Min = ::cuda::minimum<>;
    using Max = ::cuda::maximum<>;
    if (op == "sum")
        return measure<In, Out>(n, reps, graph_calls, PlainReduce<In, Out, Plus>{Plus{}, Out(0)},
                                windows);
    if (op == "min")
        return measure<In, Out>(
            n, reps, graph_calls,
            PlainReduce<In, Out, Min>{Min{}, ::cuda::std::numeric_limits<Out>::max()}, windows);
    if (op == "max")
        return measure<In, Out>(
            n, reps, graph_calls,
            PlainReduce<In, Out, Max>{Max{}, ::cuda::std::numeric_limits<Out>::lowest()}, windows);
    std::fprintf(stderr, "redlab-cub: unknown op %s (sum, min, max)\n", op.c_str());
    std::exit(2);
}

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: redlab-cub OP DTYPE N REPS GRAPH_CALLS\n");
        return 2;
    }
    std::string op = argv[1], dtype = argv[2];
    size_t n = std::strtoull(argv[3], nullptr, 10);
    int reps = std::atoi(argv[4]), graph_calls = std::atoi(argv[5]);
    if (reps < 1 || graph_calls < 1) {
        std::fprintf(stderr, "redlab-cub: REPS and GRAPH_CALLS must be positive\n");
        return 2;
    }
    int device;
    CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    size_t elem = dtype == "f64" ? 8 : (dtype == "f16" || dtype == "bf16") ? 2 : 4;
    // Rotate over enough buffers that they exceed 8x the L2, as redlab's cold rows do.
    size_t footprint = 8ull * prop.l2CacheSize;
    size_t windows = std::max<size_t>(1, (footprint + n * elem - 1) / std::max<size_t>(n * elem, 1));
    Timing t;
    if (dtype == "i32") {
        // redlab sums i32 into i64; min/max stay i32.
        t = op == "sum" ? by_op<int, long long>(op, n, reps, graph_calls, windows)
                        : by_op<int, int>(op, n, reps, graph_calls, windows);
    } else if (dtype == "f32") {
        t = by_op<float, float>(op, n, reps, graph_calls, windows);
    } else if (dtype == "f64") {
        t = by_op<double, double>(op, n, reps, graph_calls, windows);
    } else if (dtype == "f16" || dtype == "bf16") {
        if (op != "sum") {
            std::fprintf(stderr, "redlab-cub: %s covers only sum\n", dtype.c_str());
            return 2;
        }
        t = dtype == "f16"
                ? measure<__half, float>(n, reps, graph_calls, WidenedSum<__half>{}, windows)
                : measure<__nv_bfloat16, float>(n, reps, graph_calls, WidenedSum<__nv_bfloat16>{},
                                                windows);
    } else {
        std::fprintf(stderr, "redlab-cub: unknown dtype %s (i32, f32, f64, f16, bf16)\n", dtype.c_str());
        return 2;
    }
    std::vector<double> s = t.per_call;
    std::sort(s.begin(), s.end());
    double median = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
    std::printf("{\"comparator\":\"cub\",\"cub_version\":%d,\"device\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\","
                "\"n\":%zu,\"reps\":%d,\"median_s\":%.9g,\"min_s\":%.9g,\"max_s\":%.9g,"
                "\"graph_s\":%.9g,\"graph_calls\":%d,\"windows\":%zu,\"value\":\"%s\"}\n",
                CUB_VERSION, prop.name, op.c_str(),
                dtype.c_str(), n, reps, median, s.front(), s.back(), t.graph_per_call, graph_calls,
                windows, t.value.c_str());
    return 0;
}
