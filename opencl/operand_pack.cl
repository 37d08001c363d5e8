// A GEMM operand copied into the layout a kernel reads best: rows along k, 16-byte aligned.
// The operands of a TF32 warpgroup product (gemm_wgmma.cl, ELEM=3), K-major and rounded to TF32
// (ROUND_TF32=1); a row-major float32 A of gpu_blocked (gemm_gpu.cl), turned k-major so that
// its local tiles are stored as whole vectors (TRANS=1 with R = K and "k" = M).
//
//   Y[b](r, k) = round(X[b](r, k))      r < R, k < K
//
// X's element (r, k) of batch b is at x_off + b*x_batch + (TRANS ? k*ld + r : r*ld + k);
// Y holds rows of y_ld elements (y_ld a multiple of 4, y_ld >= K; the columns past K are not
// written) from y_off (a multiple of 4), batch after batch (R * y_ld apart). round(): tf32() of
// tf32.h with ROUND_TF32=1, else the bits unchanged.
//
// A work-group moves a 32 x 32 tile, one 16-byte chunk (4 elements along X's or Y's contiguous
// axis) per work-item and direction: whole chunks as vectors, chunks cut by the matrix edge (or
// all of them, when X is not 16-byte aligned: VEC=0) element by element. TRANS=1 turns the tile
// in local memory, read along r and written along k; the extra column keeps both directions'
// accesses on distinct banks.
//
// SPLIT (the operands of a float32 product as three TF32 products, kernels/gemm_tf32x3.py):
// each element x is split into hi = tf32(x) and lo = tf32(x - hi), and row r of Y holds three
// segments of KP = y_ld / 3 elements (the columns from K to KP zero): lo, hi, hi for SPLIT 1 (A),
// hi, lo, hi for SPLIT 2 (B), so that one TF32 product over 3 * KP sums lo*hi + hi*lo + hi*hi.
// An element that the split cannot carry (NaN, infinite, above 2^40 or nonzero below 2^-40 in
// magnitude: products and their sums must stay normal, finite float32) stores `epoch` at *flag,
// which sends the product to the float32 kernel (gemm_gpu.cl, GATE).
//
// Launch: local (32, 8, 1); global (32 * ceil(K/32), 8 * ceil(R/32), batch).
//
// Parameters (-D):
//   TRANS   1: X is stored k-major (X(r, k) at k*ld + r)
//   VEC     1: x_off, ld and x_batch are multiples of 4 (X's chunks are 16-byte aligned)
//   ROUND_TF32  1: round each element to TF32
//   SPLIT   0: one copy (ROUND_TF32 or not); 1 or 2: the three segments above
#ifndef ROUND_TF32
#define ROUND_TF32 0
#endif
#ifndef SPLIT
#define SPLIT 0
#endif
#ifndef TRANS
#define TRANS 0
#endif
#ifndef VEC
#define VEC 0
#endif
#define TILE 32
#define CHUNKS 8            // chunks along a tile row (TILE / 4)

#include "tf32.h"

// Elements 0 .. n-1 of the chunk at p (n may be below 1 or above 4), zero past them.
inline float4 load_chunk(__global const float* p, const int n)
{
#if VEC
    if (n >= 4)
        return vload4(0, p);
#endif
    float4 v = (float4)(0.0f);
    if (n > 0) v.x = p[0];
    if (n > 1) v.y = p[1];
    if (n > 2) v.z = p[2];
    if (n > 3) v.w = p[3];
    return v;
}

// The chunk at p (16-byte aligned), rounded, its elements 0 .. n-1 only.
inline void store_chunk(__global uint* p, const int n, const float4 v)
{
#if ROUND_TF32
    const uint4 u = (uint4)(to_tf32_bits(as_uint(v.x)), to_tf32_bits(as_uint(v.y)),
                            to_tf32_bits(as_uint(v.z)), to_tf32_bits(as_uint(v.w)));
#else
    const uint4 u = as_uint4(v);
#endif
    if (n >= 4) {
        vstore4(u, 0, p);
        return;
    }
    if (n > 0) p[0] = u.x;
    if (n > 1) p[1] = u.y;
    if (n > 2) p[2] = u.z;
}

#if SPLIT
// The largest and smallest nonzero magnitudes the split carries (see above).
#define SPLIT_MAX 0x1p40f
#define SPLIT_MIN 0x1p-40f

// The chunk v (row r from column k of Y, whole chunks only: KP is a multiple of 4) as its three
// segments; `epoch` into *flag if one of its elements is out of range.
inline void store_split(__global uint* y, const int kp, const float4 v, __global int* flag,
                        const int epoch)
{
    const float4 mag = fabs(v);
    if (any(!(mag <= SPLIT_MAX) | ((mag < SPLIT_MIN) & (mag > 0.0f))))
        *flag = epoch;
    const uint4 hi = (uint4)(to_tf32_bits(as_uint(v.x)), to_tf32_bits(as_uint(v.y)),
                             to_tf32_bits(as_uint(v.z)), to_tf32_bits(as_uint(v.w)));
    const float4 rest = v - as_float4(hi);   // exact: the low bits of v
    const uint4 lo = (uint4)(to_tf32_bits(as_uint(rest.x)), to_tf32_bits(as_uint(rest.y)),
                             to_tf32_bits(as_uint(rest.z)), to_tf32_bits(as_uint(rest.w)));
#if SPLIT == 1
    vstore4(lo, 0, y);
    vstore4(hi, 0, y + kp);
#else
    vstore4(hi, 0, y);
    vstore4(lo, 0, y + kp);
#endif
    vstore4(hi, 0, y + 2 * kp);
}
#define STORE(y, k, v) \
    if ((k) < y_ld / 3) store_split((y), y_ld / 3, (v), flag, epoch)
#define PACK_EXTRA_ARGS , __global int* flag, const int epoch
#else
#define STORE(y, k, v) store_chunk((y), K - (k), (v))
#define PACK_EXTRA_ARGS
#endif

__kernel __attribute__((reqd_work_group_size(TILE, 8, 1)))
void operand_pack(const int R, const int K, __global const float* X, const long x_off,
               const int ld, const long x_batch, __global uint* Y, const long y_off,
               const int y_ld PACK_EXTRA_ARGS)
{
    const int t = get_local_id(1) * TILE + get_local_id(0);   // 0 .. 255: one chunk each
    const int k0 = get_group_id(0) * TILE, r0 = get_group_id(1) * TILE;
    const long b = get_group_id(2);
    X += x_off + b * x_batch;
    Y += y_off + b * (long)R * y_ld;
    // Y's chunk of this work-item: row r0 + t / CHUNKS, elements from k0 + 4 * (t % CHUNKS)
    // (shifts and masks, not / and %: Oclgrind cannot follow the freeze LLVM makes of the pair)
    const int yr = t >> 3, yk = (t & 7) * 4;
#if TRANS
    __local float tile[TILE][TILE + 1];   // tile[k - k0][r - r0]
    {
        // X's chunk: row k0 + t / CHUNKS of X, elements from r0 + 4 * (t % CHUNKS) along r
        const int xk = t >> 3, xr = (t & 7) * 4;
        const float4 v = k0 + xk < K ? load_chunk(X + (long)(k0 + xk) * ld + r0 + xr, R - r0 - xr)
                                     : (float4)(0.0f);
        tile[xk][xr] = v.x;
        tile[xk][xr + 1] = v.y;
        tile[xk][xr + 2] = v.z;
        tile[xk][xr + 3] = v.w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (r0 + yr < R)
        STORE(Y + (long)(r0 + yr) * y_ld + k0 + yk, k0 + yk,
              (float4)(tile[yk][yr], tile[yk + 1][yr], tile[yk + 2][yr], tile[yk + 3][yr]));
#else
    if (r0 + yr < R)
        STORE(Y + (long)(r0 + yr) * y_ld + k0 + yk, k0 + yk,
              load_chunk(X + (long)(r0 + yr) * ld + k0 + yk, K - k0 - yk));
#endif
}
