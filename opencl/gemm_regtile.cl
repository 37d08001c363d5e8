// Register-tiled GEMM (seed 000 version 3, blocked in both directions): a work-group computes a
// TSM x TSN tile of C, each work-item WPTM x WPTN elements of it held in registers, so every
// value read from local memory feeds WPTM or WPTN multiply-adds instead of one.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides, TRANS_A/TRANS_B, batch index = get_global_id(2)).
// Work-group (TSN/WPTN, TSM/WPTM, 1); global size (ceil(N/TSN)*TSN/WPTN,
// ceil(M/TSM)*TSM/WPTM, batch). Work-item (tx, ty) owns rows ty + i*TSM/WPTM and columns
// tx + j*TSN/WPTN of the tile (strided, so neighbouring work-items read neighbouring local
// addresses). Any M, N, K: tiles are zero-filled past the edges, stores are bounds-checked.
//
// Parameters: T, ACC (unsigned for integers), TRANS_A, TRANS_B, TSM, TSN, TSK tile sizes
// (gemm_tiles.h), WPTM, WPTN work per thread (TSM % WPTM == 0, TSN % WPTN == 0,
// (TSM + TSN) * TSK * sizeof(T) <= local memory).
#include "gemm_layout.h"
#include "gemm_tiles.h"
#ifndef WPTM
#define WPTM 4
#endif
#ifndef WPTN
#define WPTN 4
#endif

#define RTSM (TSM / WPTM)
#define RTSN (TSN / WPTN)
#define THREADS (RTSM * RTSN)

__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void gemm_regtile(GEMM_ARGS)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * RTSN + tx;
    const int m0 = get_group_id(1) * TSM, n0 = get_group_id(0) * TSN;
    const long b = get_global_id(2);
    A += a_off + b * a_batch;
    B += b_off + b * b_batch;
    __local T As[TSK][TSM];   // k-major (see gemm_tiles.h)
    __local T Bs[TSK][TSN];

    ACC acc[WPTM][WPTN];
    for (int i = 0; i < WPTM; ++i)
        for (int j = 0; j < WPTN; ++j)
            acc[i][j] = (ACC)0;

    for (int k0 = 0; k0 < K; k0 += TSK) {
        load_a_tile(A, lda, M, K, m0, k0, tid, THREADS, As);
        load_tile(B, ldb, TRANS_B, N, K, n0, k0, TSN, tid, THREADS, &Bs[0][0]);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TSK; ++kk) {
            ACC bv[WPTN];
            for (int j = 0; j < WPTN; ++j)
                bv[j] = (ACC)Bs[kk][tx + j * RTSN];
            for (int i = 0; i < WPTM; ++i) {
                const ACC av = (ACC)As[kk][ty + i * RTSM];
                for (int j = 0; j < WPTN; ++j)
                    acc[i][j] += av * bv[j];
            }
        }
        // The next step overwrites the tiles: everyone must have finished reading them.
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    __global T* c = C + c_off + b * c_batch;
    for (int i = 0; i < WPTM; ++i) {
        const int m = m0 + ty + i * RTSM;
        if (m >= M) break;
        for (int j = 0; j < WPTN; ++j) {
            const int n = n0 + tx + j * RTSN;
            if (n < N)
                c[(long)m * ldc + n] = (T)acc[i][j];
        }
    }
}
