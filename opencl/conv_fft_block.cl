// Overlap-save FFT correlation for long masks, each block transformed by one work-group in local
// memory: two launches per call (the mask's spectrum, then every block), however long the
// signal.
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]     for k in [0, L), x = 0 outside [0, n)
//
// A block of B = P - m + 1 outputs from k0 needs the P inputs x[k0 - pad, k0 - pad + P): its
// circular correlation with w (zero-padded to P) is exact for the first B lags. Two consecutive
// blocks travel as the real and imaginary parts of one complex block z = x1 + i x2; w is real,
// so corr(z, w) = corr(x1, w) + i corr(x2, w) keeps them apart. With Z = FFT(z) and
// W = FFT(w) / P (fft_block_spectrum), corr(z, w) = IFFT(Z conj(W)) = conj(FFT(conj(Z) W)):
// two forward transforms per block pair, no inverse one.
//
// The transform: P = 2**LOG2P points, WG = P / NPT work-items, each holding NPT points in
// registers. Stockham passes (one of radix 2, 4 or 8 for what LOG2P leaves over 4, first, as
// it needs no twiddles there; then radix 16) go through one local array, padded with one slot
// every 16 so that the strided stores of the early passes spread over all banks. In every
// pass work-item j reads the points j + s*WG (s < NPT) and does NPT/r butterflies of radix r;
// in the last pass its outputs land on those same points, so the spectrum is multiplied in
// registers and the second transform starts there, and the signal is loaded (and the result
// stored) straight from (to) global memory in coalesced order. Twiddles w^t come from one
// cospi/sinpi per butterfly and products (float32 error on the H100 at P = 16384: 6e-7
// relative). NVIDIA H100, float32: 64 to 100 registers, no spills, for P = 2048 to 16384.
//
// NaN and infinities give NumPy's pattern: a transform spreads one non-finite value over every
// output of its block, where NumPy's direct sums spoil only the outputs whose window covers it.
// The inputs of a block pair are exactly the union of its outputs' windows, so each work-group
// needs no other group's data: it loads non-finite inputs as zeros, records their positions in
// local memory, and computes the outputs whose window covers one directly from x and w (every
// output of the pair when more than NSPECIAL were found, every output of the call when the
// mask holds one: fft_block_spectrum sets status[0]). On finite data the cost is an isfinite
// test per input and a local read per output.
//
// Complex values are T2 (re, im). No complex value is built from two scalars with a vector
// constructor (cplx() instead): the constructor compiles to an insertelement chain on a poison
// vector, which Oclgrind's uninitialised-value checker reports.
//
// Parameters: T real type (float or double), IS_FP64 1 for double, LOG2P the transform length
// (LOG2P >= log2(NPT)), NPT points per work-item (16 or 32), NSPECIAL positions of non-finite
// inputs a work-group records.
#include "fft_complex.h"
#ifndef LOG2P
#define LOG2P 12
#endif
#ifndef NPT
#define NPT 16
#endif
#ifndef NSPECIAL
#define NSPECIAL 32
#endif

#define P (1 << LOG2P)
#define WG (P / NPT)
#define N16 (LOG2P / 4)                // radix-16 passes
#define FIRST_R (1 << (LOG2P % 4))     // the first pass's radix (1: none)
#define PAD(e) ((e) + ((e) >> 4))
#define PADDED PAD(P)

#if IS_FP64
#define C16 0.92387953251128675613
#define S16 0.38268343236508977173
#define R2 0.70710678118654752440
#else
#define C16 0.92387953251128675613f
#define S16 0.38268343236508977173f
#define R2 0.70710678118654752440f
#endif

inline T2 cplx(T re, T im)
{
    T2 z = (T2)(0);
    z.x = re;
    z.y = im;
    return z;
}


inline T2 conj2(T2 a) { return a * (T2)(1, -1); }

// a * (-i)
inline T2 mul_mi(T2 a) { return a.yx * (T2)(1, -1); }

// In-place forward DFTs, outputs in natural order.
inline void dft2(T2* a)
{
    const T2 t = a[0] - a[1];
    a[0] += a[1];
    a[1] = t;
}

inline void dft4_4(T2* a0, T2* a1, T2* a2, T2* a3)
{
    const T2 t0 = *a0 + *a2, t1 = *a0 - *a2, t2 = *a1 + *a3, t3 = mul_mi(*a1 - *a3);
    *a0 = t0 + t2;
    *a1 = t1 + t3;
    *a2 = t0 - t2;
    *a3 = t1 - t3;
}

inline void dft4(T2* a) { dft4_4(a, a + 1, a + 2, a + 3); }

inline void dft8(T2* a)
{
    dft4_4(a, a + 2, a + 4, a + 6);    // evens: E[k] in a[2k]
    dft4_4(a + 1, a + 3, a + 5, a + 7);   // odds: O[k] in a[2k + 1]
    const T2 o1 = (a[3] + mul_mi(a[3])) * R2;    // O[1] * exp(-i pi / 4)
    const T2 o2 = mul_mi(a[5]);                  // O[2] * -i
    const T2 o3 = (mul_mi(a[7]) - a[7]) * R2;    // O[3] * exp(-3 i pi / 4)
    const T2 e0 = a[0], e1 = a[2], e2 = a[4], e3 = a[6], o0 = a[1];
    a[0] = e0 + o0;
    a[4] = e0 - o0;
    a[1] = e1 + o1;
    a[5] = e1 - o1;
    a[2] = e2 + o2;
    a[6] = e2 - o2;
    a[3] = e3 + o3;
    a[7] = e3 - o3;
}

// 16 = 4 x 4: DFT4 over n1 of a[4 n1 + n2], twiddles W16^(n2 k1), DFT4 over n2; the result of
// (k1, k2) belongs in slot k1 + 4 k2.
inline void dft16(T2* a)
{
    #pragma unroll
    for (int n2 = 0; n2 < 4; ++n2)
        dft4_4(a + n2, a + 4 + n2, a + 8 + n2, a + 12 + n2);   // y[n2][k1] in a[4 k1 + n2]
    const T2 w1 = cplx(C16, -S16), w2 = cplx(R2, -R2), w3 = cplx(S16, -C16);
    a[5] = cmul(a[5], w1);
    a[6] = cmul(a[6], w2);
    a[7] = cmul(a[7], w3);
    a[9] = cmul(a[9], w2);
    a[10] = mul_mi(a[10]);
    a[11] = cmul(a[11], cplx(-R2, -R2));
    a[13] = cmul(a[13], w3);
    a[14] = cmul(a[14], cplx(-R2, -R2));
    a[15] = cmul(a[15], cplx(-C16, S16));
    #pragma unroll
    for (int k1 = 0; k1 < 4; ++k1)
        dft4_4(a + 4 * k1, a + 4 * k1 + 1, a + 4 * k1 + 2, a + 4 * k1 + 3);
    T2 b[16];
    #pragma unroll
    for (int k1 = 0; k1 < 4; ++k1)
        #pragma unroll
        for (int k2 = 0; k2 < 4; ++k2)
            b[k1 + 4 * k2] = a[4 * k1 + k2];
    #pragma unroll
    for (int i = 0; i < 16; ++i)
        a[i] = b[i];
}

// a[t] *= w^t, w = exp(-2 pi i k / rp), t < r: w from cospi/sinpi of an exact fraction, its
// powers by at most four products.
inline void twiddle(T2* a, const int r, const int k, const int rp)
{
    const T f = (T)(2 * k) / (T)rp;
    T2 w[16];
    w[1] = cplx(cospi(f), -sinpi(f));
    w[2] = cmul(w[1], w[1]);
    w[3] = cmul(w[2], w[1]);
    if (r > 4) {
        w[4] = cmul(w[2], w[2]);
        w[5] = cmul(w[4], w[1]);
        w[6] = cmul(w[4], w[2]);
        w[7] = cmul(w[4], w[3]);
    }
    if (r > 8) {
        w[8] = cmul(w[4], w[4]);
        #pragma unroll
        for (int t = 9; t < 16; ++t)
            w[t] = cmul(w[8], w[t - 8]);
    }
    #pragma unroll
    for (int t = 1; t < r; ++t)
        a[t] = cmul(a[t], w[t]);
}

// One Stockham pass of radix r and span p over the work-item's points v (v[s] is point
// j + s*WG). store: write the results to buf at their Stockham positions and read back the
// next pass's points; else (the last pass) they stay in v, which then holds the same points.
inline void radix_pass(T2* v, const int r, const int p, const int j, __local T2* buf,
                       const bool store)
{
    #pragma unroll
    for (int u = 0; u < NPT / r; ++u) {
        T2 a[16];
        #pragma unroll
        for (int t = 0; t < r; ++t)
            a[t] = v[u + t * (NPT / r)];
        const int i = j + u * WG;
        const int k = i & (p - 1);
        if (p > 1)
            twiddle(a, r, k, r * p);
        if (r == 16)
            dft16(a);
        else if (r == 8)
            dft8(a);
        else if (r == 4)
            dft4(a);
        else
            dft2(a);
        if (store) {
            const int d = (i - k) * r + k;
            #pragma unroll
            for (int t = 0; t < r; ++t)
                buf[PAD(d + t * p)] = a[t];
        } else {
            #pragma unroll
            for (int t = 0; t < r; ++t)
                v[u + t * (NPT / r)] = a[t];
        }
    }
    if (store) {
        barrier(CLK_LOCAL_MEM_FENCE);
        #pragma unroll
        for (int s = 0; s < NPT; ++s)
            v[s] = buf[PAD(j + s * WG)];
        barrier(CLK_LOCAL_MEM_FENCE);     // before the next pass overwrites buf
    }
}

// Forward FFT of the P points held NPT per work-item; the result in natural order, v[s] the
// frequency j + s*WG.
inline void fft(T2* v, const int j, __local T2* buf)
{
    int p = 1;
#if FIRST_R > 1
    radix_pass(v, FIRST_R, 1, j, buf, true);
    p = FIRST_R;
#endif
    #pragma unroll
    for (int q = 0; q < N16; ++q) {
        radix_pass(v, 16, p, j, buf, q + 1 < N16);
        p *= 16;
    }
}

// status[0] = 1 when w[0, m) holds a NaN or an infinity, else 0 (written on every call);
// spec[f] = FFT(w zero-padded to P)[f] / P, non-finite mask values taken as 0.
// One work-group of WG.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void fft_block_spectrum(__global const T* restrict w, const int m, __global T2* restrict spec,
                        __global int* restrict status)
{
    __local T2 buf[PADDED];
    __local int bad;
    const int j = get_local_id(0);
    if (j == 0)
        bad = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    T2 v[NPT];
    bool seen = false;
    #pragma unroll
    for (int s = 0; s < NPT; ++s) {
        const int e = j + s * WG;
        T a = e < m ? w[e] : (T)0;
        if (!isfinite(a)) {
            seen = true;
            a = (T)0;
        }
        v[s] = cplx(a, (T)0);
    }
    if (seen)
        atomic_or(&bad, 1);
    fft(v, j, buf);
    const T scale = (T)1 / (T)P;
    #pragma unroll
    for (int s = 0; s < NPT; ++s)
        spec[j + s * WG] = v[s] * scale;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (j == 0)
        status[0] = bad;
}

// x[i] for i in [0, n), else 0; a NaN or an infinity is returned as 0 and its position kept
// in pos[] (count: how many were found, possibly more than NSPECIAL).
inline T load_x(__global const T* restrict x, const int n, const int i,
                volatile __local int* count, __local int* pos)
{
    if (i < 0 || i >= n)
        return (T)0;
    const T a = x[i];
    if (isfinite(a))
        return a;
    const int slot = atomic_inc(count);
    if (slot < NSPECIAL)
        pos[slot] = i;
    return (T)0;
}

// Whether output k's window x[k - pad, k - pad + m) covers a recorded non-finite input (any
// output does when the positions did not fit).
inline bool covers_special(const int count, __local const int* pos, const int start,
                           const int m)
{
    if (count > NSPECIAL)
        return true;
    for (int i = 0; i < count; ++i)
        if (pos[i] >= start && pos[i] < start + m)
            return true;
    return false;
}

// Output k as NumPy's direct loop computes it (ghost cells never multiplied).
inline T direct(__global const T* restrict x, const int n, __global const T* restrict w,
                const int m, const int start)
{
    T acc = (T)0;
    for (int j = max(0, -start); j < min(m, n - start); ++j)
        acc += x[start + j] * w[j];
    return acc;
}

// Work-group g computes outputs [2 g B, 2 g B + 2 B) (those below L) of the correlation of
// x (at x_off, n elements) with w (m taps), B = P - m + 1 >= 1, from spec and status of
// fft_block_spectrum. NDRange: ceil(ceil(L / B) / 2) groups of WG.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void fft_block(__global const T* restrict x, const long x_off, const int n,
               __global const T2* restrict spec, __global const int* restrict status,
               __global const T* restrict w, const int m, const int pad,
               __global T* restrict out, const int L, const int B)
{
    __local T2 buf[PADDED];
    volatile __local int count;
    __local int pos[NSPECIAL];
    const int j = get_local_id(0);
    const int k0 = 2 * get_group_id(0) * B;
    const int s0 = k0 - pad, s1 = s0 + B;
    const bool second = k0 + B < L;
    x += x_off;
    if (j == 0)
        count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    T2 v[NPT];
    #pragma unroll
    for (int s = 0; s < NPT; ++s) {
        const int e = j + s * WG;
        const T a = load_x(x, n, s0 + e, &count, pos);
        const T b = second ? load_x(x, n, s1 + e, &count, pos) : (T)0;
        v[s] = cplx(a, b);
    }
    // One call site for both transforms: Intel's CPU compiler (2024) crashes in its
    // cross-barrier pass on a kernel that inlines fft() twice.
    for (int rep = 0; rep < 2; ++rep) {
        if (rep == 1) {
            #pragma unroll
            for (int s = 0; s < NPT; ++s)
                v[s] = cmul(conj2(v[s]), spec[j + s * WG]);
        }
        fft(v, j, buf);
    }
    barrier(CLK_LOCAL_MEM_FENCE);        // count and pos complete (P = NPT has no pass barrier)
    const bool all_direct = status[0] != 0;
    const int specials = count;
    #pragma unroll
    for (int s = 0; s < NPT; ++s) {
        const int e = j + s * WG;
        if (e >= B)
            continue;
        int k = k0 + e;
        if (k < L)
            out[k] = (all_direct || (specials && covers_special(specials, pos, k - pad, m)))
                     ? direct(x, n, w, m, k - pad) : v[s].x;
        k += B;
        if (k < L)
            out[k] = (all_direct || (specials && covers_special(specials, pos, k - pad, m)))
                     ? direct(x, n, w, m, k - pad) : -v[s].y;
    }
}
