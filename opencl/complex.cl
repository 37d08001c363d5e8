// NumPy's complex ufunc loops (numpy/_core/src/umath/loops.c.src) on strided operands of up to
// 8 dimensions: one work-item an element of the C-contiguous result, each operand read at its
// own strides (0 along broadcast axes), as a complex number (A_COMPLEX / B_COMPLEX 1) or a real
// one (imaginary part 0), or as a scalar argument (A_SCALAR / B_SCALAR 1). Products and sums are
// NumPy's formulas, uncontracted (no fused multiply-add), so results are NumPy's bits; division
// is NumPy's Smith algorithm, its branches and its zero divisor included.
//
// Parameters:
//   T          the real type of the computation (float, or double with IS_FP64 1)
//   A_T, B_T   the operands' storage types (float, double, float2 or double2)
//   A_COMPLEX, B_COMPLEX  1: that operand is complex
//   A_SCALAR, B_SCALAR    1: that operand is the kernel's scalar argument, not an array
//   NIN        1 or 2 operands
//   OP         ADD SUB MUL DIV EQ NE (two operands), NEG POS CONJ ABS SQUARE ISNAN ISINF ISFINITE
//   OUT_T      the result's storage type: T2 (complex), T (ABS) or uchar (comparisons, tests)
//   NDIM       the dimensions of the result's layout (1 to 8)
//   ABS_DOUBLE 1: float magnitudes computed in double (glibc's hypotf, NumPy's bits)
#pragma OPENCL FP_CONTRACT OFF
#ifndef A_T
#define A_T float2
#endif
#ifndef B_T
#define B_T float2
#endif
#ifndef A_COMPLEX
#define A_COMPLEX 1
#endif
#ifndef B_COMPLEX
#define B_COMPLEX 1
#endif
#ifndef A_SCALAR
#define A_SCALAR 0
#endif
#ifndef B_SCALAR
#define B_SCALAR 0
#endif
#ifndef NIN
#define NIN 2
#endif
#ifndef OP
#define OP ADD
#endif
#ifndef NDIM
#define NDIM 1
#endif
#ifndef ABS_DOUBLE
#define ABS_DOUBLE 0
#endif
#if ABS_DOUBLE && !IS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define ADD 1
#define SUB 2
#define MUL 3
#define DIV 4
#define EQ 5
#define NE 6
#define NEG 7
#define POS 8
#define CONJ 9
#define ABS 10
#define SQUARE 11
#define ISNAN 12
#define ISINF 13
#define ISFINITE 14

#include "fft_complex.h"
#include "strided_offset.h"

#ifndef OUT_T
#define OUT_T T2
#endif

// An operand's element v as its real and imaginary parts (scalars: a vector constructor from
// two scalars reads as uninitialised to Oclgrind)
#if A_COMPLEX
#define LOAD_A(v, re, im) const A_T va_ = (v); const T re = (T)va_.x, im = (T)va_.y;
#else
#define LOAD_A(v, re, im) const T re = (T)(v), im = (T)0;
#endif
#if B_COMPLEX
#define LOAD_B(v, re, im) const B_T vb_ = (v); const T re = (T)vb_.x, im = (T)vb_.y;
#else
#define LOAD_B(v, re, im) const T re = (T)(v), im = (T)0;
#endif

inline void store_complex(__global T* out, const T re, const T im)
{
    out[0] = re;
    out[1] = im;
}

__kernel void complex_op(const long n, __global const A_T* restrict a, const long a_off,
                         const A_T a_scalar, __global const B_T* restrict b, const long b_off,
                         const B_T b_scalar, __global OUT_T* restrict out, const long8 shape,
                         const long8 a_stride, const long8 b_stride)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    const long shp[8] = UNPACK8(shape);
#if A_SCALAR
    LOAD_A(a_scalar, xr, xi)
#else
    const long sa[8] = UNPACK8(a_stride);
    LOAD_A(a[a_off + offset_of(i, shp, sa, NDIM)], xr, xi)
#endif
#if NIN == 2
#if B_SCALAR
    LOAD_B(b_scalar, yr, yi)
#else
    const long sb[8] = UNPACK8(b_stride);
    LOAD_B(b[b_off + offset_of(i, shp, sb, NDIM)], yr, yi)
#endif
#endif
    __global T* o = (__global T*)(out + i);
#if OP == ADD
    store_complex(o, xr + yr, xi + yi);
#elif OP == SUB
    store_complex(o, xr - yr, xi - yi);
#elif OP == MUL
    store_complex(o, xr * yr - xi * yi, xr * yi + xi * yr);
#elif OP == DIV
    const T yr_abs = fabs(yr), yi_abs = fabs(yi);
    if (yr_abs >= yi_abs) {
        if (yr_abs == 0 && yi_abs == 0) {   // a complex infinity or NaN, as NumPy gives
            store_complex(o, xr / yr_abs, xi / yr_abs);
        } else {
            const T rat = yi / yr;
            const T scl = (T)1 / (yr + yi * rat);
            store_complex(o, (xr + xi * rat) * scl, (xi - xr * rat) * scl);
        }
    } else {
        const T rat = yr / yi;
        const T scl = (T)1 / (yi + yr * rat);
        store_complex(o, (xr * rat + xi) * scl, (xi * rat - xr) * scl);
    }
#elif OP == EQ
    out[i] = (xr == yr && xi == yi) ? 1 : 0;
#elif OP == NE
    out[i] = (xr != yr || xi != yi) ? 1 : 0;
#elif OP == NEG
    store_complex(o, -xr, -xi);
#elif OP == POS
    store_complex(o, xr, xi);
#elif OP == CONJ
    store_complex(o, xr, -xi);
#elif OP == SQUARE
    store_complex(o, xr * xr - xi * xi, xr * xi + xi * xr);
#elif OP == ABS
    // hypot: an infinite part gives inf (even beside a NaN), else NaN propagates
    if (isinf(xr) || isinf(xi)) {
        out[i] = INFINITY;
    } else {
#if ABS_DOUBLE   // glibc's hypotf: the sum of squares in double, one square root, rounded once
        out[i] = (T)sqrt((double)xr * (double)xr + (double)xi * (double)xi);
#else
        out[i] = hypot(xr, xi);
#endif
    }
#elif OP == ISNAN
    out[i] = (isnan(xr) || isnan(xi)) ? 1 : 0;
#elif OP == ISINF
    out[i] = (isinf(xr) || isinf(xi)) ? 1 : 0;
#elif OP == ISFINITE
    out[i] = (isfinite(xr) && isfinite(xi)) ? 1 : 0;
#else
#error "unknown OP"
#endif
}
