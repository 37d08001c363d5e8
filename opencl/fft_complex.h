// The FFT convolution kernels' element types (conv_fft.cl, conv_fft_block.cl): T the real type
// (float or double, IS_FP64 1 for double), T2 its complex numbers as (re, im) pairs, cmul their
// product.
#ifndef FFT_COMPLEX_H
#define FFT_COMPLEX_H
#ifndef T
#define T float
#endif
#ifndef IS_FP64
#define IS_FP64 0
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T2 CAT(T, 2)

inline T2 cmul(T2 a, T2 b) { return a.xx * b + a.yy * b.yx * (T2)(-1, 1); }
#endif
