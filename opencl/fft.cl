// Discrete Fourier transforms of rows, as np.fft computes them: every row of a (rows x P) block
// of complex numbers transformed at once (global size (work-items a row, rows)).
//
// The transform of a length P whose factors are 2, 3, 5 and 7 is a Stockham autosort FFT, one
// launch per pass, ping-ponging between two blocks: a pass of radix R with span p (the product
// of the radices before it) has P/R work-items a row; work-item i (k = i mod p) reads
// src[i + t P/R] for t < R, multiplies each by exp(-+2 pi i t k / (R p)), takes the R-point DFT
// and writes dst[(i - k) R + k + s p] for s < R. Radix 8 first, then 4 and 2, then 3, 5 and 7.
// Other lengths go through Bluestein's chirp-z algorithm on a power of two (the host plans it;
// fft_load and fft_store multiply by the chirp, fft_cmul by the transformed chirp).
//
// Twiddles come from a table per pass built once per length (fft_twiddles): exp(-2 pi i e / L)
// for e < L = R p, from cospi/sinpi of an exact fraction where doubles exist. Complex values are
// T2 pairs (re, im), the layout of NumPy's complex64/complex128; every complex value is written
// as two scalar stores (see conv_fft.cl on Oclgrind and vector constructors).
//
// Parameters:
//   T         the real type (float, or double with IS_FP64 1)
//   RADIX     the pass kernel's radix: 2, 3, 4, 5, 7 or 8
//   TW_DOUBLE 1: twiddles computed in double, then rounded to T
//   IN_REAL   1: fft_load reads real numbers (T), 0 complex ones (T2)
//   CHIRP     1: fft_load / fft_store multiply by chirp[j] (Bluestein)
//   OUT_REAL  1: fft_store writes real parts (T), 0 complex numbers (T2)
//   fft_rows (a row in local memory, every pass in one launch):
//   N         the row length (its T2 values fill the local memory)
//   WG        work-items a row (a work-group)
//   NPASS     the passes, R0 .. R7 their radices (the order stockham_radices gives)
//   TWIDDLE   1: output k of row r times exp(-sign 2 pi i (r k mod tw_n) / tw_n) (the four-step
//             FFT's twiddles between its two launches)
//   ROWS      rows a work-group (ROWS N values in local memory)
//   ROWS_FAST_IN, ROWS_FAST_OUT  1: neighbouring work-items read (write) neighbouring rows'
//             elements, 0: neighbouring elements of a row (whichever are neighbours in memory)
//   LPAD      0: the rows lie in local memory as they are; k > 0: one unused element after
//             every 2^k (a pass of span p writes every R-th element, which would otherwise
//             fall into a few local-memory banks)
#ifndef RADIX
#define RADIX 2
#endif
#ifndef TW_DOUBLE
#define TW_DOUBLE 0
#endif
#ifndef IN_REAL
#define IN_REAL 0
#endif
#ifndef CHIRP
#define CHIRP 0
#endif
#ifndef OUT_REAL
#define OUT_REAL 0
#endif
#ifndef N
#define N 8
#endif
#ifndef WG
#define WG 64
#endif
#ifndef NPASS
#define NPASS 1
#endif
#ifndef R0
#define R0 8
#endif
#ifndef R1
#define R1 2
#endif
#ifndef R2
#define R2 2
#endif
#ifndef R3
#define R3 2
#endif
#ifndef R4
#define R4 2
#endif
#ifndef R5
#define R5 2
#endif
#ifndef R6
#define R6 2
#endif
#ifndef R7
#define R7 2
#endif
#ifndef TWIDDLE
#define TWIDDLE 0
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef ROWS_FAST_IN
#define ROWS_FAST_IN 0
#endif
#ifndef ROWS_FAST_OUT
#define ROWS_FAST_OUT 0
#endif
#ifndef LPAD
#define LPAD 0
#endif
#if LPAD
#define LIDX(e) ((e) + ((e) >> LPAD))
#define LOCAL_LEN (ROWS * N + ((ROWS * N) >> LPAD))
#else
#define LIDX(e) (e)
#define LOCAL_LEN (ROWS * N)
#endif
#if TW_DOUBLE && !IS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#include "fft_complex.h"

inline void store2(__global T2* p, const T re, const T im)
{
    __global T* s = (__global T*)p;
    s[0] = re;
    s[1] = im;
}

// table[off + e] = exp(-2 pi i e / len), e < len.
__kernel void fft_twiddles(__global T2* restrict table, const long off, const int len)
{
    const int e = get_global_id(0);
    if (e >= len) return;
#if TW_DOUBLE
    const double f = (double)(2 * (long)e) / (double)len;
    store2(table + off + e, (T)cospi(f), (T)-sinpi(f));
#else
    const T f = (T)(2 * e) / (T)len;
    store2(table + off + e, cospi(f), -sinpi(f));
#endif
}

// c * exp(-sign * i * pi / 2)
inline T2 rot90(const T2 c, const int sign) { return (T)sign * c.yx * (T2)(1, -1); }

// table[e], conjugated for the inverse transform (sign -1)
inline T2 twiddle(__global const T2* table, const int e, const int sign)
{
    return table[e] * (sign > 0 ? (T2)(1, 1) : (T2)(1, -1));
}

// cos and sin of 2 pi m / R for the odd radices
__constant T ROOT3_C[3] = {1, -0.5, -0.5};
__constant T ROOT3_S[3] = {0, 0.86602540378443864676, -0.86602540378443864676};
__constant T ROOT5_C[5] = {1, 0.30901699437494742410, -0.80901699437494742410,
                           -0.80901699437494742410, 0.30901699437494742410};
__constant T ROOT5_S[5] = {0, 0.95105651629515357212, 0.58778525229247312917,
                           -0.58778525229247312917, -0.95105651629515357212};
__constant T ROOT7_C[7] = {1, 0.62348980185873353053, -0.22252093395631440429,
                           -0.90096886790241912624, -0.90096886790241912624,
                           -0.22252093395631440429, 0.62348980185873353053};
__constant T ROOT7_S[7] = {0, 0.78183148246802980871, 0.97492791218182360702,
                           0.43388373911755812048, -0.43388373911755812048,
                           -0.97492791218182360702, -0.78183148246802980871};

// The R-point DFTs in place: u[s] = sum_t u[t] exp(-sign 2 pi i s t / R).
inline void dft2(T2* u, const int sign)
{
    const T2 a = u[0], b = u[1];
    u[0] = a + b;
    u[1] = a - b;
}

inline void dft4(T2* u, const int sign)
{
    const T2 v0 = u[0] + u[2], v1 = u[0] - u[2], v2 = u[1] + u[3];
    const T2 v3 = rot90(u[1] - u[3], sign);
    u[0] = v0 + v2;
    u[1] = v1 + v3;
    u[2] = v0 - v2;
    u[3] = v1 - v3;
}

// two 4-point DFTs (even and odd inputs) joined by the eighth roots of unity
inline void dft8(T2* u, const int sign)
{
    const T2 a0 = u[0] + u[4], a1 = u[0] - u[4], a2 = u[2] + u[6], a3 = rot90(u[2] - u[6], sign);
    const T2 e0 = a0 + a2, e1 = a1 + a3, e2 = a0 - a2, e3 = a1 - a3;
    const T2 b0 = u[1] + u[5], b1 = u[1] - u[5], b2 = u[3] + u[7], b3 = rot90(u[3] - u[7], sign);
    T2 o0 = b0 + b2, o1 = b1 + b3, o2 = b0 - b2, o3 = b1 - b3;
#if IS_FP64
    const T r = M_SQRT1_2;
#else
    const T r = M_SQRT1_2_F;
#endif
    o1 = (o1 + rot90(o1, sign)) * r;
    o2 = rot90(o2, sign);
    o3 = (rot90(o3, sign) - o3) * r;
    u[0] = e0 + o0;
    u[1] = e1 + o1;
    u[2] = e2 + o2;
    u[3] = e3 + o3;
    u[4] = e0 - o0;
    u[5] = e1 - o1;
    u[6] = e2 - o2;
    u[7] = e3 - o3;
}

// The odd radices directly (R^2 complex products on constant roots).
#define DFT_ODD(R)                                                                            \
inline void dft##R(T2* u, const int sign)                                                     \
{                                                                                             \
    T2 v[R];                                                                                  \
    for (int s = 0; s < R; ++s) {                                                             \
        T2 acc = u[0];                                                                        \
        _Pragma("unroll")                                                                     \
        for (int t = 1; t < R; ++t) {                                                         \
            const int m = (s * t) % R;                                                        \
            /* exp(-sign 2 pi i m / R) = cos - i sign sin */                                  \
            const T2 w = (T2)(ROOT##R##_C[m]) * (T2)(1, 0)                                   \
                         + (T2)(ROOT##R##_S[m]) * (T2)(0, 1) * (T)(-sign);                     \
            acc += cmul(u[t], w);                                                             \
        }                                                                                     \
        v[s] = acc;                                                                           \
    }                                                                                         \
    for (int s = 0; s < R; ++s)                                                               \
        u[s] = v[s];                                                                          \
}
DFT_ODD(3)
DFT_ODD(5)
DFT_ODD(7)

// One Stockham pass of radix RADIX and span p over rows of P; sign 1 forward, -1 inverse.
__kernel void fft_pass(__global const T2* restrict src, __global T2* restrict dst,
                       __global const T2* restrict table, const long tw_off, const int P,
                       const int p, const int sign)
{
    const int i = get_global_id(0);
    const int q = P / RADIX;
    if (i >= q) return;
    const long base = (long)get_global_id(1) * P;
    src += base;
    dst += base;
    table += tw_off;
    const int k = i % p;
    T2 u[RADIX];
    u[0] = src[i];
    #pragma unroll
    for (int t = 1; t < RADIX; ++t)
        u[t] = cmul(src[i + t * q], twiddle(table, t * k, sign));
    CAT(dft, RADIX)(u, sign);
    const int j = (i - k) * RADIX + k;
    #pragma unroll
    for (int s = 0; s < RADIX; ++s)
        store2(dst + j + s * p, u[s].x, u[s].y);
}

#if IN_REAL
#define IN_T T
#else
#define IN_T T2
#endif

// dst[row P + j] = src[src_off + row stride + j step] (times chirp[j] with CHIRP) for j <
// count, 0 for count <= j < P.
__kernel void fft_load(__global const IN_T* restrict src, const long src_off, const long stride,
                       const long step, const int count, __global T2* restrict dst, const int P,
                       __global const T2* restrict chirp)
{
    const int j = get_global_id(0);
    if (j >= P) return;
    const long row = get_global_id(1);
    __global T2* d = dst + row * P + j;
    if (j >= count) {
        store2(d, 0, 0);
        return;
    }
    const IN_T v = src[src_off + row * stride + j * step];
#if IN_REAL
#if CHIRP
    const T2 c = chirp[j] * v;
    store2(d, c.x, c.y);
#else
    store2(d, v, 0);
#endif
#else
#if CHIRP
    const T2 c = cmul(v, chirp[j]);
    store2(d, c.x, c.y);
#else
    store2(d, v.x, v.y);
#endif
#endif
}

// The Hermitian row of length n whose first half is src's row (np.fft.irfft's input): dst[row n
// + j] = a[j] for j <= n/2 and conj(a[n - j]) above, where a[j] = src[src_off + row stride + j
// step] for j < count and 0 past it; the imaginary parts of a[0] and (n even) a[n/2] are
// dropped, as NumPy's c2r transform drops them.
__kernel void fft_hermitian(__global const T2* restrict src, const long src_off,
                            const long stride, const long step, const int count,
                            __global T2* restrict dst, const int n)
{
    const int j = get_global_id(0);
    if (j >= n) return;
    const long row = get_global_id(1);
    const int mid = n / 2;
    const int m = j <= mid ? j : n - j;
    T2 v = (T2)(0, 0);
    if (m < count)
        v = src[src_off + row * stride + m * step];
    T im = (m == 0 || 2 * m == n) ? (T)0 : v.y;
    if (j > mid)
        im = -im;
    store2(dst + row * n + j, v.x, im);
}

// a[row P + j] = a[row P + j] * b[j], j < P (Bluestein's convolution with the chirp).
__kernel void fft_cmul(__global T2* restrict a, __global const T2* restrict b, const int P)
{
    const int j = get_global_id(0);
    if (j >= P) return;
    __global T2* x = a + (long)get_global_id(1) * P + j;
    const T2 c = cmul(*x, b[j]);
    store2(x, c.x, c.y);
}

#if OUT_REAL
#define OUT_T T
#else
#define OUT_T T2
#endif

// dst[dst_off + row stride + j] = src[row P + j] (times chirp[j] with CHIRP) * scale, j < count;
// its real part with OUT_REAL.
__kernel void fft_store(__global const T2* restrict src, const int P, __global OUT_T* restrict dst,
                        const long dst_off, const long stride, const int count,
                        __global const T2* restrict chirp, const T scale)
{
    const int j = get_global_id(0);
    if (j >= count) return;
    const long row = get_global_id(1);
    T2 v = src[row * P + j];
#if CHIRP
    v = cmul(v, chirp[j]);
#endif
    v *= scale;
#if OUT_REAL
    dst[dst_off + row * stride + j] = v.x;
#else
    store2(dst + dst_off + row * stride + j, v.x, v.y);
#endif
}

// hi = e / d, lo = e - hi d: not / and %, which LLVM fuses into the "freeze" Oclgrind cannot run
#define SPLIT(e, d, hi, lo)                                                                   \
    const uint hi = (uint)(e) / (uint)(d);                                                    \
    const uint lo = (uint)(e) - hi * (uint)(d);

// One pass of radix R over the ROWS rows in local memory (row c at LIDX(c N)), in place: every
// work-item reads its butterflies' inputs (twiddled) into registers, the group waits, then
// writes their DFTs.
#define LOCAL_PASS(R)                                                                         \
    {                                                                                         \
        const uint q = N / (R);                                                               \
        T2 u[(ROWS * (N / (R)) + WG - 1) / WG][R];                                            \
        for (int b = 0; b < (ROWS * (N / (R)) + WG - 1) / WG; ++b) {                          \
            const uint at = lid + b * WG;                                                     \
            if (at < ROWS * q) {                                                              \
                SPLIT(at, q, hi, lo)                                                          \
                const int i = lo;                                                             \
                const uint row = hi * N;                                                      \
                const int k = i % p;                                                          \
                u[b][0] = buf[LIDX(row + i)];                                                 \
                for (int t = 1; t < (R); ++t)                                                 \
                    u[b][t] = cmul(buf[LIDX(row + i + t * q)],                                \
                                   twiddle(table + off, t * k, sign));                        \
            }                                                                                 \
        }                                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        for (int b = 0; b < (ROWS * (N / (R)) + WG - 1) / WG; ++b) {                          \
            const uint at = lid + b * WG;                                                     \
            if (at < ROWS * q) {                                                              \
                SPLIT(at, q, hi, lo)                                                          \
                const int i = lo;                                                             \
                const uint row = hi * N;                                                      \
                const int k = i % p;                                                          \
                CAT(dft, R)(u[b], sign);                                                      \
                const int j = (i - k) * (R) + k;                                              \
                for (int t = 0; t < (R); ++t)                                                 \
                    buf[LIDX(row + j + t * p)] = u[b][t];                                     \
            }                                                                                 \
        }                                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        off += (R) * p;                                                                       \
        p *= (R);                                                                             \
    }

// Every pass of a length-N transform of the ROWS rows in buf, sign 1 forward, -1 inverse.
inline void local_passes(__local T2* buf, __global const T2* restrict table, const int sign,
                         const int lid)
{
    int p = 1;
    long off = 0;
#if NPASS > 0
    LOCAL_PASS(R0)
#endif
#if NPASS > 1
    LOCAL_PASS(R1)
#endif
#if NPASS > 2
    LOCAL_PASS(R2)
#endif
#if NPASS > 3
    LOCAL_PASS(R3)
#endif
#if NPASS > 4
    LOCAL_PASS(R4)
#endif
#if NPASS > 5
    LOCAL_PASS(R5)
#endif
#if NPASS > 6
    LOCAL_PASS(R6)
#endif
#if NPASS > 7
    LOCAL_PASS(R7)
#endif
}

// Element e (< ROWS N) of a work-group's rows as (row c, element j): rows fastest where the
// neighbouring rows are neighbours in memory (ROWS_FAST_IN / _OUT 1: the four-step FFT's
// columns), elements fastest otherwise, so that the group's reads and writes coalesce.
#define IN_FAST (ROWS_FAST_IN ? ROWS : N)
#define OUT_FAST (ROWS_FAST_OUT ? ROWS : N)


// The transforms of rows of length N, ROWS rows a work-group, every pass in local memory. Row
// r (< rows) of batch b (group id 1) is read from src[src_off + b in_batch + r in_stride + j
// in_step] for j < count (zeros past it; real numbers with IN_REAL) and its output k written
// to dst[dst_off + b out_batch + r out_stride + k out_step] for k < out_count where that
// position, less the batch's, is below out_limit; times scale (TWIDDLE: and the four-step
// twiddle; its real part with OUT_REAL). With CHIRP the row is Bluestein's: x times chirp[j],
// transformed, times kernel_ft[j], transformed back, times chirp[k] (N the power of two,
// count the length).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void fft_rows(__global const IN_T* restrict src, const long src_off, const long in_batch,
              const long in_stride, const long in_step, const int count, const long rows,
              __global OUT_T* restrict dst, const long dst_off, const long out_batch,
              const long out_stride, const long out_step, const int out_count,
              const long out_limit, __global const T2* restrict table, const int sign,
              const T scale, const long tw_n, __global const T2* restrict chirp,
              __global const T2* restrict kernel_ft)
{
    __local T2 buf[LOCAL_LEN];
    const int lid = get_local_id(0);
    const long first = get_group_id(0) * (long)ROWS, batch = get_group_id(1);
    src += src_off + batch * in_batch;
    for (uint e = lid; e < ROWS * N; e += WG) {
        SPLIT(e, IN_FAST, hi, lo)
        const int c = ROWS_FAST_IN ? lo : hi, j = ROWS_FAST_IN ? hi : lo;
        T2 v = (T2)(0, 0);
        if (j < count && first + c < rows) {
            const long at = (first + c) * in_stride + j * in_step;
#if IN_REAL
            v = (T2)(src[at]) * (T2)(1, 0);
#else
            v = src[at];
#endif
#if CHIRP
            v = cmul(v, chirp[j]);
#endif
        }
        buf[LIDX(c * N + j)] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    local_passes(buf, table, sign, lid);
#if CHIRP
    for (int e = lid; e < ROWS * N; e += WG)
        buf[LIDX(e)] = cmul(buf[LIDX(e)], kernel_ft[e % N]);
    barrier(CLK_LOCAL_MEM_FENCE);
    local_passes(buf, table, -sign, lid);
#endif
    dst += dst_off + batch * out_batch;
    for (uint e = lid; e < ROWS * N; e += WG) {
        SPLIT(e, OUT_FAST, hi, lo)
        const int c = ROWS_FAST_OUT ? lo : hi, k = ROWS_FAST_OUT ? hi : lo;
        const long row = first + c;
        const long at = row * out_stride + k * out_step;
        if (k >= out_count || row >= rows || at >= out_limit)
            continue;
        T2 v = buf[LIDX(c * N + k)];
#if CHIRP
        v = cmul(v, chirp[k]);
#endif
#if TWIDDLE
        const long e_tw = (row * k) % tw_n;
#if TW_DOUBLE
        const double f = (double)(2 * e_tw) / (double)tw_n;
        const T2 w = (T2)((T)cospi(f)) * (T2)(1, 0) + (T2)((T)sinpi(f)) * (T2)(0, 1) * (T)(-sign);
#else
        const T f = (T)(2 * e_tw) / (T)tw_n;
        const T2 w = (T2)(cospi(f)) * (T2)(1, 0) + (T2)(sinpi(f)) * (T2)(0, 1) * (T)(-sign);
#endif
        v = cmul(v, w);
#endif
        v *= scale;
#if OUT_REAL
        dst[at] = v.x;
#else
        store2(dst + at, v.x, v.y);
#endif
    }
}
