// Counter-based inputs made on the device: element i of the `hashed` distribution is a
// function of (seed, i) alone, so each device writes its own part of an array in place,
// as many elements as its memory holds, with no transfer. The same function as the
// host's (redlab_core::hashed): SplitMix64 of seed + (i + 1)·γ, values from its top
// bits, every one exact in its type so that conversions agree bit for bit.
//
// Parameters (set by redlab_kernels::generate for the element type):
//   GEN_KIND  0 unsigned pattern of GEN_BITS bits (every integer type), 1 f32, 2 f64,
//             3 f16 and 4 bf16 (both stored as 16-bit patterns);
//   GEN_BITS  the element's width in bits.

#ifndef GEN_KIND
#define GEN_KIND 1
#endif
#ifndef GEN_BITS
#define GEN_BITS 32
#endif

#if GEN_KIND == 1
typedef float gen_t;
#elif GEN_KIND == 2
typedef double gen_t;
#elif GEN_BITS == 8
typedef uchar gen_t;
#elif GEN_BITS == 16
typedef ushort gen_t;
#elif GEN_BITS == 32
typedef uint gen_t;
#else
typedef ulong gen_t;
#endif

inline ulong hashed_bits(ulong seed, ulong index) {
    ulong z = seed + (index + 1) * 0x9E3779B97F4A7C15UL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

inline gen_t hashed_value(ulong b) {
#if GEN_KIND == 1
    return (float)((int)(b >> 40) - (1 << 23)) * 0x1p-23f;
#elif GEN_KIND == 2
    return (double)((long)(b >> 11) - (1L << 52)) * 0x1p-52;
#elif GEN_KIND == 3
    // v·2^-10 is exact in f32 and in f16: move the f32 fields into f16's.
    uint f = as_uint((float)((int)(b >> 53) - (1 << 10)) * 0x1p-10f);
    uint exponent = (f >> 23) & 0xFFu;
    uint sign = (f >> 16) & 0x8000u;
    return (gen_t)(exponent == 0u ? sign : sign | ((exponent - 112u) << 10) | ((f >> 13) & 0x3FFu));
#elif GEN_KIND == 4
    // v·2^-7 has at most 8 significant bits: bf16 is f32's upper half, exactly.
    return (gen_t)(as_uint((float)((int)(b >> 56) - (1 << 7)) * 0x1p-7f) >> 16);
#else
    return (gen_t)(b >> (64 - GEN_BITS));
#endif
}

// Writes elements start .. start + n of the array to out[0 .. n), the grid striding.
__kernel void generate_hashed(__global gen_t* out, ulong start, ulong n, ulong seed) {
    ulong stride = get_global_size(0);
    for (ulong k = get_global_id(0); k < n; k += stride) {
        out[k] = hashed_value(hashed_bits(seed, start + k));
    }
}
