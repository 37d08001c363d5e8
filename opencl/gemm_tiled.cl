// Local-memory tiled GEMM (seed 000 version 2): a TS x TS work-group stages one TS x TS tile of
// A and one of B in __local memory per step of K, so every global element is read once per
// work-group instead of once per work-item.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides, TRANS_A/TRANS_B, batch index = get_global_id(2)).
// Global size (ceil(N/TS)*TS, ceil(M/TS)*TS, batch), local size (TS, TS, 1). Any M, N, K: tiles
// are zero-filled past the edges and only elements inside C are stored.
//
// Parameters: T, ACC (unsigned for integers), TRANS_A, TRANS_B, TS tile edge
// (TS*TS <= the device's work-group limit, 2*TS*TS*sizeof(T) <= local memory).
#include "gemm_layout.h"
#ifndef TS
#define TS 16
#endif

__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm_tiled(GEMM_ARGS)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int n = get_group_id(0) * TS + tx;
    const int m = get_group_id(1) * TS + ty;
    const long b = get_global_id(2);
    A += a_off + b * a_batch;
    B += b_off + b * b_batch;
    __local T As[TS][TS];
    __local T Bs[TS][TS];
    ACC acc = (ACC)0;
    for (int k0 = 0; k0 < K; k0 += TS) {
        const int ka = k0 + tx, kb = k0 + ty;
        As[ty][tx] = (m < M && ka < K) ? A_AT(m, ka) : (T)0;
        Bs[ty][tx] = (kb < K && n < N) ? B_AT(kb, n) : (T)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TS; ++kk)
            acc += (ACC)As[ty][kk] * (ACC)Bs[kk][tx];
        // The next step overwrites the tiles: everyone must have finished reading them.
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (m < M && n < N)
        C[c_off + b * c_batch + (long)m * ldc + n] = (T)acc;
}
