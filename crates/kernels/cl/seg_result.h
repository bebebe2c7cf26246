// seg_result (included by segments.cl): where each output's result goes, and where the
// job's header lies in `out`.
//
// SEG_RESULT (the stream path, crates/cuda/src/stream_outputs.rs): output k's result,
// SEG_RESULT bytes, goes to element k of the caller's array at h[H_RESULT], and `out`
// starts at the header (no results area to read back). The result is stored in the
// form result_form.h describes (the accumulator's bytes, a float from its order key,
// narrowed or not, or an index), or with SEG_RESULT_POST a mapped statistic's `post` of
// the result. The host picks one (codec.rs, InPlace; mapped.rs).
// Otherwise results are out[k]. seg_put(out, h, k, v) stores output k's result.
#ifdef SEG_RESULT
#include "result_form.h"
inline __global ulong* seg_header(__global acc_t* out, ulong outputs) {
    (void)outputs;
    return (__global ulong*)out;
}
#if defined(SEG_RESULT_POST)
// A mapped statistic's `post` (a mean's division, a norm's square root): rl_post from
// section 2 over the output's result, which the accumulator holds as is, and its
// element count, stored as SEG_RESULT_POST_T.
inline ulong seg_len(__global const ulong* h, ulong k);
inline void seg_put(__global acc_t* out, __global const ulong* h, ulong k, acc_t v) {
    (void)out;
    ((__global SEG_RESULT_POST_T*)h[H_RESULT])[k] = (SEG_RESULT_POST_T)rl_post(v, seg_len(h, k));
}
#else
// Element k of the caller's array, in the form result_form.h stores.
inline void seg_put(__global acc_t* out, __global const ulong* h, ulong k, acc_t v) {
    (void)out;
    rl_store_form((__global uchar*)h[H_RESULT] + k * SEG_RESULT, v);
}
#endif
#else
inline __global ulong* seg_header(__global acc_t* out, ulong outputs) {
    ulong bytes = (outputs * ACC_BYTES + 7) & ~(ulong)7;
    return (__global ulong*)((__global uchar*)out + bytes);
}
#define seg_put(out, h, k, v) ((out)[(k)] = (v))
#endif
