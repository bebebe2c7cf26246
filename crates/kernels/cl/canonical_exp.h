// The canonical exponential (redlab_core::canonical_exp, version 1): the same steps as
// the host's, in the same order, so that log-sum-exp has the same bits on every device.
// Only multiplies, adds, fused multiply-adds and integer steps, each of which IEEE 754
// (or two's complement) fixes exactly (nothing here may be contracted differently: every
// fused step is an explicit fma, and CE_MUL is __dmul_rn on CUDA; the file that includes
// this one turns contraction off on OpenCL):
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

// 2^k for an integer k in [−1022, 1023]: k + 1023 in the exponent field.
inline double canonical_pow2(int k) {
    return as_double((ulong)(k + 1023) << 52);
}

inline double canonical_exp(double t) {
    // rint(t·log2 e) without a conversion: adding 1.5·2^52 rounds to an integer (to
    // even) and leaves it in the low bits of the sum; subtracting gives it as a double.
    // This equals rint wherever |t·log2 e| < 2^51, well past the range below; float to
    // integer conversions ran at a fraction of the f64 rate (log-sum-exp of rows of 32
    // read 24% less with rint, floor and two conversions per exp on an H100).
    double shifted = CE_MUL(t, 1.4426950408889634) + 6755399441055744.0;
    double k = shifted - 6755399441055744.0;
    int ki = (int)as_long(shifted);
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
    // k1 = floor(k / 2) (the division of an even number is exact).
    int k1 = (ki - (ki & 1)) / 2;
    double y = CE_MUL(CE_MUL(p, canonical_pow2(k1)), canonical_pow2(ki - k1));
    // Outside [−746, 710] the exponents above leave their field: the limits instead (and
    // NaN, which fails both tests, stays NaN through p).
    y = t < -746.0 ? 0.0 : y;
    return t > 710.0 ? (double)INFINITY : y;
}

#endif
