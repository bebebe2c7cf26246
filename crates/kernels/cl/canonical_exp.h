// The canonical exponential (redlab_core::canonical_exp, version 1): the same steps as
// the host's, in the same order, so that log-sum-exp has the same bits on every device.
// Only multiplies, adds, fused multiply-adds, rint and floor, each of which IEEE 754
// fixes exactly (nothing here may be contracted differently: every fused step is an
// explicit fma, and the file that includes this one turns contraction off on OpenCL and
// multiplies with __dmul_rn on CUDA):
//   k = rint(t·log2 e); r = fma(−k, ln2_hi, t); r = fma(−k, ln2_lo, r);
//   p = Horner over 1/13!, 1/12!, …, 1/2!, 1, 1 with one fma each;
//   k1 = floor(k·0.5); result = (p·2^k1)·2^(k − k1);
//   0 below −746 (−∞ included), +∞ above 710, NaN for NaN.

#ifndef REDLAB_CANONICAL_EXP_H
#define REDLAB_CANONICAL_EXP_H

#ifdef __OPENCL_VERSION__
#define CE_MUL(a, b) ((a) * (b))
#else
#define CE_MUL(a, b) __dmul_rn((a), (b))
#endif

// 2^k for an integral k in [−1022, 1023]: k + 1023 in the exponent field.
inline double canonical_pow2(double k) {
    return as_double((long)(k + 1023.0) << 52);
}

inline double canonical_exp(double t) {
    // (Clamped so that the conversion in canonical_pow2 stays defined far outside the
    // range, whose results are replaced below; inside it, k is within ±1100 already.)
    double k = fmin(fmax(rint(CE_MUL(t, 1.4426950408889634)), -1100.0), 1100.0);
    double r = fma(-k, 0.6931471805599453, t);
    r = fma(-k, 2.3190468138462996e-17, r);
    double p = 1.6059043836821613e-10;
    p = fma(p, r, 2.08767569878681e-09);
    p = fma(p, r, 2.505210838544172e-08);
    p = fma(p, r, 2.755731922398589e-07);
    p = fma(p, r, 2.7557319223985893e-06);
    p = fma(p, r, 2.48015873015873e-05);
    p = fma(p, r, 0.0001984126984126984);
    p = fma(p, r, 0.001388888888888889);
    p = fma(p, r, 0.008333333333333333);
    p = fma(p, r, 0.041666666666666664);
    p = fma(p, r, 0.16666666666666666);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    double k1 = floor(CE_MUL(k, 0.5));
    double y = CE_MUL(CE_MUL(p, canonical_pow2(k1)), canonical_pow2(k - k1));
    // Outside [−746, 710] the exponents above leave their field: the limits instead (and
    // NaN, which fails both tests, stays NaN through p).
    y = t < -746.0 ? 0.0 : y;
    return t > 710.0 ? (double)INFINITY : y;
}

#endif
