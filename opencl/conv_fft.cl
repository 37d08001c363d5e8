// FFT-based 1-D correlation for long masks: cost O(P log P) with P = the power of two
// >= n + m - 1, instead of O(n m). Floating types only (integers must stay exact).
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]   =   (x (*) reverse(w))[k + m - 1 - pad]
//
// The host runs: fft_pack (x, and w reversed, as complex, zero-padded to P), forward FFTs of
// both, fft_cmul (pointwise product, times 1/P), an inverse FFT, and fft_extract (real part of
// the L wanted elements, from index m - 1 - pad).
//
// NaN and infinities: a transform spreads one non-finite value to every output, where NumPy's
// direct sums spoil only the outputs whose window covers it. So fft_pack stores NaN and
// infinities of x as zeros and records where they were in a status buffer (zeroed by
// fft_clear_status before each call: a count, their lowest and highest positions, the first
// NSPECIAL positions) and flags a non-finite mask value; fft_extract then computes the outputs
// whose window covers a recorded position (every output when the mask is not finite or the
// positions did not fit) directly, as NumPy's loops do. On finite data the cost is one
// isfinite test per element and a read of the status per output.
//
// The FFT is a Stockham autosort FFT (no bit reversal), one launch per pass, ping-ponging
// between two buffers: radix-8 passes, then one radix-4 or radix-2 pass for what is left of
// log2(P). A pass of
// radix R with span p (p = 1, R, ... : the product of the previous radices) has P/R work-items;
// work-item i reads src[i + t*P/R] (t < R), applies twiddles exp(-+2 pi i t k / (R p)) with
// k = i mod p, does a length-R DFT, and writes dst[(i - k)*R + k + t*p]. Twiddles come from a
// table built once per P by fft_twiddles: for each pass a segment exp(-2 pi i e / (R p)),
// e < R p, starting at element tw_off of the table (so that neighbouring work-items read neighbouring
// entries; computing them per work-item with cospi/sinpi made every pass several times slower
// on PoCL, and one table of exp(-2 pi i e / P) read with stride P/(R p) thrashed the cache).
// Complex values are T2 (float2/double2), interleaved (re, im). No complex value is built from
// two scalars with a vector constructor (swizzles and constant vectors instead, or two scalar
// stores): the constructor compiles to an insertelement chain on a poison vector, which
// Oclgrind's uninitialised-value checker reports as uninitialised.
//
// Parameters: T real type (float or double), IS_FP64 1 for double, NSPECIAL positions of
// non-finite inputs kept (more make every output direct).
#ifndef NSPECIAL
#define NSPECIAL 32
#endif
// status[]: the count of non-finite x values, the mask flag, n - lowest position, highest
// position + 1 (both 0 until one is found), then the positions.
#define ST_COUNT 0
#define ST_MASK 1
#define ST_LOW 2
#define ST_HIGH 3
#define ST_POS 4

#include "fft_complex.h"
#if IS_FP64
#define SQRT1_2 M_SQRT1_2
#else
#define SQRT1_2 M_SQRT1_2_F
#endif

// table[e], conjugated when sign < 0
inline T2 twiddle(__global const T2* table, int e, int sign)
{
    return table[e] * (sign > 0 ? (T2)(1, 1) : (T2)(1, -1));
}

// table[off + e] = exp(-2 pi i e / len) for e in [0, len), len a power of two >= 2: cospi/sinpi
// of e/(len/2), an exact fraction, so every entry is accurate to about an ulp.
__kernel void fft_twiddles(__global T2* restrict table, const int off, const int len)
{
    const int e = get_global_id(0);
    if (e >= len) return;
    const T f = (T)e / (T)(len >> 1);
    __global T* t = (__global T*)(table + off + e);
    t[0] = cospi(f);
    t[1] = -sinpi(f);
}

// status[i] = 0 for i < count (a kernel rather than clEnqueueFillBuffer, whose writes
// Oclgrind's uninitialised-value checker does not see).
__kernel void fft_clear_status(__global int* restrict status, const int count)
{
    const int i = get_global_id(0);
    if (i < count)
        status[i] = 0;
}

// dst[i] = (src[off + (is_mask ? len-1-i : i)], 0) for i < len, else 0; i in [0, P). A NaN or
// infinity of the signal is stored as 0 and its position recorded; one of the mask sets the
// mask flag (see the note on non-finite values above).
__kernel void fft_pack(__global const T* restrict src, const long off, const int len,
                       const int is_mask, __global T2* restrict dst, const int P,
                       __global int* restrict status)
{
    const int i = get_global_id(0);
    if (i >= P) return;
    T v = (T)0;
    if (i < len) {
        v = src[off + (is_mask ? len - 1 - i : i)];
        if (!isfinite(v)) {
            if (is_mask) {
                atomic_or(status + ST_MASK, 1);
            } else {
                v = (T)0;
                const int slot = atomic_inc(status + ST_COUNT);
                atomic_max(status + ST_LOW, len - i);
                atomic_max(status + ST_HIGH, i + 1);
                if (slot < NSPECIAL)
                    status[ST_POS + slot] = i;
            }
        }
    }
    __global T* d = (__global T*)dst;      // scalar stores: see the note on Oclgrind above
    d[2 * i] = v;
    d[2 * i + 1] = (T)0;
}

// One radix-2 pass; P/2 work-items; sign 1 forward, -1 inverse.
__kernel void fft_radix2(__global const T2* restrict src, __global T2* restrict dst,
                         __global const T2* restrict table, const int tw_off, const int P,
                         const int p, const int sign)
{
    const int i = get_global_id(0);
    const int hp = P >> 1;
    if (i >= hp) return;
    const int k = i & (p - 1);
    table += tw_off;
    T2 u0 = src[i];
    T2 u1 = cmul(src[i + hp], twiddle(table, k, sign));
    const int j = ((i - k) << 1) + k;
    dst[j] = u0 + u1;
    dst[j + p] = u0 - u1;
}

// One radix-4 pass; P/4 work-items; sign 1 forward, -1 inverse.
__kernel void fft_radix4(__global const T2* restrict src, __global T2* restrict dst,
                         __global const T2* restrict table, const int tw_off, const int P,
                         const int p, const int sign)
{
    const int i = get_global_id(0);
    const int q = P >> 2;
    if (i >= q) return;
    const int k = i & (p - 1);
    table += tw_off;
    T2 u0 = src[i];
    T2 u1 = cmul(src[i + q], twiddle(table, k, sign));
    T2 u2 = cmul(src[i + 2 * q], twiddle(table, 2 * k, sign));
    T2 u3 = cmul(src[i + 3 * q], twiddle(table, 3 * k, sign));
    const T2 v0 = u0 + u2, v1 = u0 - u2, v2 = u1 + u3;
    const T2 d = u1 - u3;
    const T2 v3 = (T)sign * d.yx * (T2)(1, -1);          // d * (-sign * i)
    const int j = ((i - k) << 2) + k;
    dst[j] = v0 + v2;
    dst[j + p] = v1 + v3;
    dst[j + 2 * p] = v0 - v2;
    dst[j + 3 * p] = v1 - v3;
}

// c * exp(-sign * i * pi / 2) = c * (-sign * i)
inline T2 rot90(T2 c, int sign) { return (T)sign * c.yx * (T2)(1, -1); }

// One radix-8 pass; P/8 work-items; sign 1 forward, -1 inverse. The 8-point DFT is two 4-point
// DFTs (even and odd inputs) joined by the eighth roots of unity.
__kernel void fft_radix8(__global const T2* restrict src, __global T2* restrict dst,
                         __global const T2* restrict table, const int tw_off, const int P,
                         const int p, const int sign)
{
    const int i = get_global_id(0);
    const int q = P >> 3;
    if (i >= q) return;
    const int k = i & (p - 1);
    table += tw_off;
    T2 u[8];
    u[0] = src[i];
    #pragma unroll
    for (int t = 1; t < 8; ++t)
        u[t] = cmul(src[i + t * q], twiddle(table, t * k, sign));
    // 4-point DFTs of the even (u0 u2 u4 u6) and odd (u1 u3 u5 u7) inputs
    const T2 a0 = u[0] + u[4], a1 = u[0] - u[4], a2 = u[2] + u[6], a3 = rot90(u[2] - u[6], sign);
    const T2 e0 = a0 + a2, e1 = a1 + a3, e2 = a0 - a2, e3 = a1 - a3;
    const T2 b0 = u[1] + u[5], b1 = u[1] - u[5], b2 = u[3] + u[7], b3 = rot90(u[3] - u[7], sign);
    T2 o0 = b0 + b2, o1 = b1 + b3, o2 = b0 - b2, o3 = b1 - b3;
    // times w^s, w = exp(-sign * 2 pi i / 8)
    const T r = SQRT1_2;
    o1 = (o1 + rot90(o1, sign)) * r;
    o2 = rot90(o2, sign);
    o3 = (rot90(o3, sign) - o3) * r;
    const int j = ((i - k) << 3) + k;
    dst[j] = e0 + o0;
    dst[j + p] = e1 + o1;
    dst[j + 2 * p] = e2 + o2;
    dst[j + 3 * p] = e3 + o3;
    dst[j + 4 * p] = e0 - o0;
    dst[j + 5 * p] = e1 - o1;
    dst[j + 6 * p] = e2 - o2;
    dst[j + 7 * p] = e3 - o3;
}

// a[i] = a[i] * b[i] * scale, i in [0, P).
__kernel void fft_cmul(__global T2* restrict a, __global const T2* restrict b, const int P,
                       const T scale)
{
    const int i = get_global_id(0);
    if (i >= P) return;
    a[i] = cmul(a[i], b[i]) * scale;
}

// Whether output k's window x[k - pad, k - pad + m) covers a non-finite value of x.
inline bool covers_special(__global const int* restrict status, const int n, const int m,
                           const int start)
{
    if (status[ST_MASK])
        return true;
    const int count = status[ST_COUNT];
    if (count == 0)
        return false;
    const int low = n - status[ST_LOW], high = status[ST_HIGH] - 1;
    if (high < start || low >= start + m)
        return false;
    if (count > NSPECIAL)
        return true;
    for (int i = 0; i < count; ++i) {
        const int p = status[ST_POS + i];
        if (p >= start && p < start + m)
            return true;
    }
    return false;
}

// out[k] = re(src[k + off]), k in [0, L); outputs whose window covers a non-finite value
// computed directly from x (at x_off, n elements) and w (m, the correlation's order).
__kernel void fft_extract(__global const T2* restrict src, const int off,
                          __global T* restrict out, const int L,
                          __global const T* restrict x, const long x_off, const int n,
                          __global const T* restrict w, const int m, const int pad,
                          __global const int* restrict status)
{
    const int k = get_global_id(0);
    if (k >= L) return;
    const int start = k - pad;
    if (covers_special(status, n, m, start)) {
        x += x_off;
        T acc = (T)0;
        for (int j = max(0, -start); j < min(m, n - start); ++j)
            acc += x[start + j] * w[j];
        out[k] = acc;
        return;
    }
    out[k] = src[k + off].x;
}
