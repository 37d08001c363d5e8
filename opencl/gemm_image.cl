// Adreno-style GEMM (seed 003): A streams from a buffer while B is read through the texture
// pipe as an RGBA-float image2d_t (one texel = 4 consecutive elements of a row of B), each
// work-item computing an 8 x 4 micro-tile of C (float4 c[8]), K in steps of 4.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Layout (float32 only: read_imagef):
//   A  row-major, lda % 4 == 0, a_off and a_batch multiples of 4, rows padded with zeros to a
//      multiple of 8 and columns to K4 = roundup(K, 4), so every vload4 is aligned, inside the
//      buffer, and the padding adds zeros (the host packs A on the device when it is not so).
//   Bi texel (x, b*K4 + k) = B[b](k, 4x .. 4x+3): width ceil(N/4), height batch*K4, zero past N
//      and K, written on the device by pack_b_image from B in the shared convention (TRANS_B):
//      one pass that packs, pads and fills the image.
//   C  the shared convention: C(m, n) = C[c_off + b*c_batch + m*ldc + n]; stores bounds-checked.
// Global size (ceil(N/4) rounded up to WG_X, ceil(M/8) rounded up to WG_Y, batch), local size
// (WG_X, WG_Y, 1).
//
// Parameters: WG_X, WG_Y work-group shape; TRANS_B (pack_b_image only).
#ifndef WG_X
#define WG_X 16
#endif
#ifndef WG_Y
#define WG_Y 4
#endif

#include "gemm_layout.h"

__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

__kernel __attribute__((reqd_work_group_size(WG_X, WG_Y, 1)))
void gemm_image(const int M, const int N, const int K4,
                __global const float* restrict A, const long a_off, const int lda,
                const long a_batch,
                __read_only image2d_t Bi,
                __global float* restrict C, const long c_off, const int ldc, const long c_batch)
{
    const int gx = get_global_id(0);    // column block: columns 4*gx .. 4*gx+3
    const int gy = get_global_id(1);    // row block: rows 8*gy .. 8*gy+7
    const int b = get_global_id(2);
    if (4 * gx >= N || 8 * gy >= M) return;
    __global const float* a = A + a_off + b * a_batch + (long)(8 * gy) * lda;
    const int row0 = b * K4;
    float4 c[8];
    for (int i = 0; i < 8; ++i)
        c[i] = (float4)0.0f;
    for (int pos = 0; pos < K4; pos += 4) {
        float4 bv[4];
        for (int i = 0; i < 4; ++i)
            bv[i] = read_imagef(Bi, smp, (int2)(gx, row0 + pos + i));
        for (int i = 0; i < 8; ++i) {
            const float4 av = vload4(0, a + (long)i * lda + pos);
            c[i] = mad((float4)av.x, bv[0], c[i]);
            c[i] = mad((float4)av.y, bv[1], c[i]);
            c[i] = mad((float4)av.z, bv[2], c[i]);
            c[i] = mad((float4)av.w, bv[3], c[i]);
        }
    }
    __global float* cb = C + c_off + b * c_batch;
    const int n = 4 * gx;
    for (int i = 0; i < 8; ++i) {
        const int m = 8 * gy + i;
        if (m >= M) break;
        __global float* dst = cb + (long)m * ldc + n;
        if (n + 4 <= N) {
            vstore4(c[i], 0, dst);
        } else {
            const float v[4] = {c[i].x, c[i].y, c[i].z, c[i].w};
            for (int e = 0; n + e < N; ++e)
                dst[e] = v[e];
        }
    }
}

// Global size (ceil(N/4), K4, batch): one texel per work-item.
__kernel void pack_b_image(const int N, const int K, const int K4,
                           __global const float* restrict B, const long b_off, const int ldb,
                           const long b_batch, __write_only image2d_t Bi)
{
    const int x = get_global_id(0);
    const int k = get_global_id(1);
    const int b = get_global_id(2);
    B += b_off + b * b_batch;
    float v[4];
    for (int e = 0; e < 4; ++e) {
        const int n = 4 * x + e;
        v[e] = (n < N && k < K) ? B_AT(k, n) : 0.0f;
    }
    write_imagef(Bi, (int2)(x, b * K4 + k), (float4)(v[0], v[1], v[2], v[3]));
}
