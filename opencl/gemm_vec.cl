// Vectorized GEMM (seed 000 version 4): float4 / float8 (VW) loads, local tiles and
// accumulators along N. A work-group computes a TSM x TSN tile of C; each work-item WPTM rows
// times one VW-wide vector of columns, so a B vector read from local memory feeds WPTM vector
// multiply-adds.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Layout: the shared convention of gemm_naive.cl, with B not transposed (the host packs a
// transposed B, and one whose rows do not start on multiples of VW, so vector loads are
// aligned). A may be transposed (TRANS_A) and unaligned; C is written with vstore at any
// element offset. The last, partial vector of a row of B is read element by element.
// Work-group (TSN/VW, TSM/WPTM, 1); global size (ceil(N/TSN)*TSN/VW, ceil(M/TSM)*TSM/WPTM,
// batch). Any M, N, K: tiles are zero-filled past M and K, stores are bounds-checked.
//
// Parameters: T, ACC (unsigned for integers), IS_INT, TRANS_A, VW vector width (2, 4, 8, 16),
// TSM, TSN, TSK tile sizes, WPTM rows per work-item (TSN % VW == 0, TSM % WPTM == 0).
#include "gemm_layout.h"
#include "gemm_tiles.h"
#ifndef IS_INT
#define IS_INT 0
#endif
#ifndef VW
#define VW 4
#endif
#ifndef WPTM
#define WPTM 8
#endif

#include "vector_types.h"
#if IS_INT
#define MULADD(a, b, c) ((a) * (b) + (c))
#else
#define MULADD(a, b, c) mad((a), (b), (c))
#endif

#define RTSM (TSM / WPTM)
#define RTSN (TSN / VW)
#define THREADS (RTSM * RTSN)

__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void gemm_vec(GEMM_ARGS)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * RTSN + tx;
    const int m0 = get_group_id(1) * TSM, n0 = get_group_id(0) * TSN;
    const int nvec = (N + VW - 1) / VW;          // vectors per row of B, the last partial
    const long b = get_global_id(2);
    A += a_off + b * a_batch;
    B += b_off + b * b_batch;
    __local T As[TSK][TSM];
    __local VT Bs[TSK][RTSN];

    VACC acc[WPTM];
    for (int i = 0; i < WPTM; ++i)
        acc[i] = (VACC)0;

    for (int k0 = 0; k0 < K; k0 += TSK) {
        load_a_tile(A, lda, M, K, m0, k0, tid, THREADS, As);
        for (int l = tid; l < TSK * RTSN; l += THREADS) {
            const int kk = l / RTSN, v = l - kk * RTSN;
            const int gv = n0 / VW + v, gk = k0 + kk;
            VT x = (VT)0;
            if (gk < K) {
                __global const T* src = B + (long)gk * ldb + gv * VW;
                if (gv * VW + VW <= N) {
                    x = VLOAD(0, src);
                } else if (gv < nvec) {          // the last, partial vector: zeros past N
                    T part[VW];
                    for (int e = 0; e < VW; ++e)
                        part[e] = gv * VW + e < N ? src[e] : (T)0;
                    x = VLOAD(0, part);
                }
            }
            Bs[kk][v] = x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TSK; ++kk) {
            const VACC bv = TO_VACC(Bs[kk][tx]);
            for (int i = 0; i < WPTM; ++i)
                acc[i] = MULADD((VACC)((ACC)As[kk][ty + i * RTSM]), bv, acc[i]);
        }
        // The next step overwrites the tiles: everyone must have finished reading them.
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    __global T* c = C + c_off + b * c_batch;
    const int n = n0 + tx * VW;
    for (int i = 0; i < WPTM; ++i) {
        const int m = m0 + ty + i * RTSM;
        if (m >= M || n >= N) break;
        const VT v = TO_VT(acc[i]);
        __global T* dst = c + (long)m * ldc + n;
        if (n + VW <= N) {
            VSTORE(v, 0, dst);
        } else {
            T part[VW];
            VSTORE(v, 0, part);
            for (int e = 0; n + e < N; ++e)
                dst[e] = part[e];
        }
    }
}
