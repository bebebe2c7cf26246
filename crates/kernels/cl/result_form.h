// result_form (included by seg_result.h, and by canonical_one.cl with SEPARATE_RESULT):
// how a finished accumulator becomes the result stored in the caller's memory, in the
// form the host picks (codec.rs, InPlace::defines): the accumulator's first SEG_RESULT
// bytes, or with SEG_RESULT_KEY the float its order key stands for (narrowed to
// f16/bf16 bits with SEG_RESULT_HALF/SEG_RESULT_BFLOAT), or with SEG_RESULT_INDEX the
// accumulator's index (argmin/argmax). rl_store_form(dst, v) stores one result at dst.
#if SEG_RESULT == 1
#define SEG_RESULT_T uchar
#elif SEG_RESULT == 2
#define SEG_RESULT_T ushort
#elif SEG_RESULT == 4
#define SEG_RESULT_T uint
#else
#define SEG_RESULT_T ulong
#endif
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
#if defined(SEG_RESULT_INDEX)
// argmin/argmax: the result is the index, an i64.
inline void rl_store_form(__global uchar* dst, acc_t v) {
    *(__global ulong*)dst = v.i;
}
#elif defined(SEG_RESULT_BFLOAT)
// bf16 min/max: the f32 holds a bf16 value exactly, so its upper half is the result; a
// NaN is made quiet, as the host's conversion does.
inline void rl_store_form(__global uchar* dst, acc_t v) {
    uint b = (uint)seg_key_bits(v);
    uint nan = (b & 0x7fffffffu) > 0x7f800000u;
    *(__global ushort*)dst = (ushort)((b >> 16) | (nan ? 0x40u : 0u));
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
inline void rl_store_form(__global uchar* dst, acc_t v) {
    *(__global ushort*)dst = seg_narrow((uint)seg_key_bits(v));
}
#else
inline void rl_store_form(__global uchar* dst, acc_t v) {
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
    *(__global SEG_RESULT_T*)dst = bits.result;
}
#endif
