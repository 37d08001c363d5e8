// Shared by the direct convolution kernels (included after scalar_types.h): their arguments in
// the host's order (kernels/conv_direct.py), the calling convention documented in
// conv_basic.cl: the signal x from element x_off of its buffer, n elements; the mask w, m taps
// from element 0; out, L outputs from element 0; pad the offset of output 0's window. And
// their work-group size WG (each kernel says how it uses it).
#ifndef WG
#define WG 64
#endif
#define CONV_ARGS(W_SPACE) __global const T* restrict x, const long x_off, const int n,      \
    W_SPACE const T* restrict w, const int m, const int pad, __global T* restrict out, const int L
