// Elementwise binary and unary operations over broadcast, strided operands (NumPy ufunc loops).
//
//   out[i] = (OUT_T) OP((CT) a[i], (CT) b[i])      for every multi-index i of `shape`
//
// Operands are addressed like opencl/copy.cl: element offset + sum_d i_d * stride_d over up to
// 8 dimensions (stride 0 broadcasts). Integers are computed in the unsigned type of the same
// width (CT), so add/subtract/multiply wrap exactly like NumPy's instead of hitting C's
// undefined signed overflow. The conversions are NumPy's (numpy_cast.h), also for an
// `out=` of another type.
//
// Floating results equal NumPy's bit for bit (x86-64, the reference):
//   - negative is -x (so -(+0.0) is -0.0; 0 - x would give +0.0);
//   - maximum(x, y) is x when x is NaN or x > y, else y; minimum likewise with x < y: NaN
//     propagates, and of two equal values (-0.0 and +0.0) the second is returned, as NumPy's
//     maxps/minps loops do;
//   - float division is rounded correctly (OpenCL allows 2.5 ulp): where the device has fp64
//     the quotient is taken in double and rounded once to float, which is exact rounding for
//     a 24-bit quotient (53 >= 2*24 + 2).
//
// Parameters:
//   A_T, B_T, OUT_T  element types; CT the compute type (the ufunc loop's, unsigned for ints)
//   OP               1 add, 2 subtract, 3 multiply, 4 true divide, 5 maximum, 6 minimum,
//                    7 negative (unary: b is ignored)
//   IS_FLOAT         1 when CT is a floating type (maximum/minimum propagate NaN, as NumPy)
//   UNARY            1 for unary operations
#ifndef A_T
#define A_T float
#endif
#ifndef B_T
#define B_T A_T
#endif
#ifndef CT
#define CT A_T
#endif
#ifndef OUT_T
#define OUT_T CT
#endif
#ifndef OP
#define OP 1
#endif
#ifndef IS_FLOAT
#define IS_FLOAT 1
#endif
#ifndef UNARY
#define UNARY 0
#endif

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define NP_CAST_SRC A_T
#define NP_CAST_DST CT
#define NP_CAST_NAME load_a
#include "numpy_cast.h"
#define NP_CAST_SRC B_T
#define NP_CAST_DST CT
#define NP_CAST_NAME load_b
#include "numpy_cast.h"
#define NP_CAST_SRC CT
#define NP_CAST_DST OUT_T
#define NP_CAST_NAME store_out
#include "numpy_cast.h"

inline CT apply(const CT x, const CT y)
{
#if OP == 1
    return x + y;
#elif OP == 2
    return x - y;
#elif OP == 3
#if IS_FLOAT
    return x * y;
#else
    return (x + 0u) * y;  // uchar/ushort would be promoted to int, where overflow is undefined
#endif
#elif OP == 4
#if NP_KIND(CT) == NP_FLOATING && NP_BITS(CT) == 32 && defined(cl_khr_fp64)
    return (CT)((double)x / (double)y);
#else
    return x / y;
#endif
#elif OP == 5
#if IS_FLOAT
    return (isnan(x) || x > y) ? x : y;
#else
    return x > y ? x : y;
#endif
#elif OP == 6
#if IS_FLOAT
    return (isnan(x) || x < y) ? x : y;
#else
    return x < y ? x : y;
#endif
#elif OP == 7
    return -x;
#else
#error "unknown OP"
#endif
}

__kernel void elementwise(const long n, const long8 shape,
                          __global const A_T* restrict a, const long a_off, const long8 a_stride,
                          __global const B_T* restrict b, const long b_off, const long8 b_stride,
                          __global OUT_T* out, const long out_off, const long8 out_stride)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    const long shp[8] = {shape.s0, shape.s1, shape.s2, shape.s3, shape.s4, shape.s5, shape.s6, shape.s7};
    const long as[8] = {a_stride.s0, a_stride.s1, a_stride.s2, a_stride.s3,
                        a_stride.s4, a_stride.s5, a_stride.s6, a_stride.s7};
    const long bs[8] = {b_stride.s0, b_stride.s1, b_stride.s2, b_stride.s3,
                        b_stride.s4, b_stride.s5, b_stride.s6, b_stride.s7};
    const long os[8] = {out_stride.s0, out_stride.s1, out_stride.s2, out_stride.s3,
                        out_stride.s4, out_stride.s5, out_stride.s6, out_stride.s7};
    long rem = i, ai = a_off, bi = b_off, oi = out_off;
    for (int d = 7; d >= 0; --d) {
        const long q = rem / shp[d];  // not % and /: see opencl/copy.cl
        const long idx = rem - q * shp[d];
        rem = q;
        ai += idx * as[d];
        bi += idx * bs[d];
        oi += idx * os[d];
    }
#if UNARY
    out[oi] = store_out(apply(load_a(a[ai]), (CT)0));
#else
    out[oi] = store_out(apply(load_a(a[ai]), load_b(b[bi])));
#endif
}
