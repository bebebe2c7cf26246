// seg_result (included by segments.cl): where each output's result goes, and where the
// job's header lies in `out`.
//
// SEG_RESULT (the stream path, crates/cuda/src/stream_outputs.rs): output k's result,
// SEG_RESULT bytes, goes to element k of the caller's array at h[H_RESULT], and `out`
// starts at the header (no results area to read back). The result is the accumulator's
// first bytes, or with SEG_RESULT_KEY the float its order key stands for (narrowed to
// f16/bf16 bits with SEG_RESULT_HALF/SEG_RESULT_BFLOAT), or with SEG_RESULT_INDEX the
// accumulator's index (argmin/argmax), or with SEG_RESULT_POST a mapped statistic's
// `post` of the result. The host picks one (codec.rs, InPlace; mapped.rs).
// Otherwise results are out[k]. seg_put(out, h, k, v) stores output k's result.
#ifdef SEG_RESULT
#if SEG_RESULT == 1
#define SEG_RESULT_T uchar
#elif SEG_RESULT == 2
#define SEG_RESULT_T ushort
#elif SEG_RESULT == 4
#define SEG_RESULT_T uint
#else
#define SEG_RESULT_T ulong
#endif
inline __global ulong* seg_header(__global acc_t* out, ulong outputs) {
    (void)outputs;
    return (__global ulong*)out;
}
#ifdef SEG_RESULT_KEY
// Float min/max hold order keys; the xor that made a key from the float's bits turns it
// back (the host's key_to_bits).
inline acc_t seg_key_bits(acc_t v) {
#if ACC_BYTES == 4
    return v ^ ((v >> 31) & 0x7fffffff);
#else
    return v ^ ((v >> 63) & 0x7fffffffffffffffL);
#endif
}
#endif
#if defined(SEG_RESULT_POST)
// A mapped statistic's `post` (a mean's division, a norm's square root): rl_post from
// section 2 over the output's result, which the accumulator holds as is, and its
// element count, stored as SEG_RESULT_POST_T.
inline ulong seg_len(__global const ulong* h, ulong k);
inline void seg_put(__global acc_t* out, __global const ulong* h, ulong k, acc_t v) {
    (void)out;
    ((__global SEG_RESULT_POST_T*)h[H_RESULT])[k] = (SEG_RESULT_POST_T)rl_post(v, seg_len(h, k));
}
#elif defined(SEG_RESULT_INDEX)
// argmin/argmax: the result is the index within the output, an i64.
inline void seg_put(__global acc_t* out, __global const ulong* h, ulong k, acc_t v) {
    (void)out;
    ((__global ulong*)h[H_RESULT])[k] = v.i;
}
#elif defined(SEG_RESULT_BFLOAT)
// bf16 min/max: the f32 holds a bf16 value exactly, so its upper half is the result; a
// NaN is made quiet, as the host's conversion does.
inline void seg_put(__global acc_t* out, __global const ulong* h, ulong k, acc_t v) {
    (void)out;
    uint b = (uint)seg_key_bits(v);
    uint nan = (b & 0x7fffffffu) > 0x7f800000u;
    ((__global ushort*)h[H_RESULT])[k] = (ushort)((b >> 16) | (nan ? 0x40u : 0u));
}
#elif defined(SEG_RESULT_HALF)
// The f16 bits of an f32 that holds an f16 value exactly (a min or max of them), a NaN
// made quiet with its upper payload kept, as the host's conversion does.
inline ushort seg_narrow(uint b) {
    uint sign = (b >> 16) & 0x8000u;
    uint e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
    if (e == 0xffu)
        return (ushort)(sign | 0x7c00u | (m != 0u ? 0x200u : 0u) | (m >> 13));
    if (e >= 113u) // a normal half: the exponent rebiased from 127 to 15
        return (ushort)(sign | ((e - 112u) << 10) | (m >> 13));
    if (e == 0u)
        return (ushort)sign;
    // A subnormal half, in units of 2^-24: 1.m × 2^(e-127) shifted right exactly.
    return (ushort)(sign | ((m | 0x800000u) >> (126u - e)));
}
inline void seg_put(__global acc_t* out, __global const ulong* h, ulong k, acc_t v) {
    (void)out;
    ((__global ushort*)h[H_RESULT])[k] = seg_narrow((uint)seg_key_bits(v));
}
#else
inline void seg_put(__global acc_t* out, __global const ulong* h, ulong k, acc_t v) {
    (void)out;
    // The low bytes on a little-endian device: the value itself, or the narrow integer
    // kept in a wider word.
    union {
        acc_t acc;
        SEG_RESULT_T result;
    } bits;
#ifdef SEG_RESULT_KEY
    bits.acc = seg_key_bits(v);
#else
    bits.acc = v;
#endif
    ((__global SEG_RESULT_T*)h[H_RESULT])[k] = bits.result;
}
#endif
#else
inline __global ulong* seg_header(__global acc_t* out, ulong outputs) {
    ulong bytes = (outputs * ACC_BYTES + 7) & ~(ulong)7;
    return (__global ulong*)((__global uchar*)out + bytes);
}
#define seg_put(out, h, k, v) ((out)[(k)] = (v))
#endif
