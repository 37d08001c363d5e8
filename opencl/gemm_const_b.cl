// GEMM with a small right-hand matrix in __constant memory (seed 002: many vectors times one
// small matrix, e.g. (2^19 x 32) @ (32 x 32)). Every work-item of a group walks the same
// element of B at the same time, which constant caches broadcast; A and C stream.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Layout: A and C in the shared convention of gemm_naive.cl (TRANS_A allowed). B is a packed,
// contiguous row-major copy: B(k, n) = B[b*b_batch + k*N + n] (b_batch = K*N, or 0 when one B
// is broadcast over the batch); the host checks it fits the device's constant memory.
// One work-item per row m and block of NB columns: global size (ceil(M/WG)*WG,
// ceil(N/NB), batch), local size (WG, 1, 1). Any M, N, K (bounds-checked).
//
// Parameters: T, ACC (unsigned for integers), TRANS_A, NB columns per work-item, WG
// work-group size along M.
#include "gemm_layout.h"
#ifndef NB
#define NB 8
#endif
#ifndef WG
#define WG 64
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemm_const_b(const int M, const int N, const int K,
                  __global const T* restrict A, const long a_off, const int lda, const long a_batch,
                  __constant T* restrict B, const long b_batch,
                  __global T* restrict C, const long c_off, const int ldc, const long c_batch)
{
    const int m = get_global_id(0);
    const int n0 = get_global_id(1) * NB;
    const long b = get_global_id(2);
    if (m >= M) return;
    A += a_off + b * a_batch;
    B += b * b_batch;
    ACC acc[NB];
    for (int j = 0; j < NB; ++j)
        acc[j] = (ACC)0;
    if (n0 + NB <= N) {
        for (int k = 0; k < K; ++k) {
            const ACC a = (ACC)A_AT(m, k);
            __constant T* row = B + k * N + n0;
            for (int j = 0; j < NB; ++j)
                acc[j] += a * (ACC)row[j];
        }
    } else {
        for (int k = 0; k < K; ++k) {
            const ACC a = (ACC)A_AT(m, k);
            __constant T* row = B + k * N + n0;
            for (int j = 0; j < NB; ++j)
                if (n0 + j < N)
                    acc[j] += a * (ACC)row[j];
        }
    }
    __global T* c = C + c_off + b * c_batch + (long)m * ldc;
    for (int j = 0; j < NB && n0 + j < N; ++j)
        c[n0 + j] = (T)acc[j];
}
