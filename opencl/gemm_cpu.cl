// GEMM for CPU drivers (PoCL): packed panels, a register-blocked micro-kernel, no barriers.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Two kernels:
//   pack_panels  copies one operand into zero-padded panels of W rows of the "outer" index
//                (m for A, n for B), k-major inside a panel:
//                  P[((b*panels + p)*K + k)*W + i] = X(p*W + i, k)   (0 past `outer`)
//                X(o, k) is at X[off + b*batch + o*so + k*sk], so one kernel packs A (o = m),
//                B (o = n), transposed or not, with no defines but T. Global size
//                (K, batch*panels).
//   gemm_cpu     one work-item per MR x NR block of C (NR = VW*NV): for every k it loads NV
//                vectors of the B panel and broadcasts MR scalars of the A panel, keeping the
//                MR*NV vector accumulators in registers (MR=6, VW=16, NV=2 uses 12 of the 32
//                AVX-512 registers, leaving room for the B vectors and the broadcast, the
//                classic BLIS micro-kernel shape). Both panels are read contiguously, so the
//                4 KiB strides of a row-major 1024-wide matrix cannot thrash cache sets.
//                One launch covers k in [k0, k0+kc) (cache blocking: the kc x NR block of
//                the B panel stays in L2 while the A blocks stream past it); launches after the
//                first add to C (accumulate = 1), which for integers wraps exactly as the
//                unsigned accumulator would.
//                Global size (M panels, N panels, batch); dimension 0 walks down M so
//                consecutive work-items reuse the same B block from cache.
//                Panels of batch b start at Ap + b*a_pbatch and Bp + b*b_pbatch (0: one packed
//                operand broadcast over the batch).
//                C(m,n) = C[c_off + b*c_batch + m*ldc + n]; stores are bounds-checked.
//
// Parameters: T element type, ACC accumulator (unsigned for integers: wraps like NumPy),
// IS_INT, MR rows per work-item, VW vector width (2, 4, 8, 16), NV vectors per row (KC, the
// K block, is chosen by the host: one launch per block).
#include "scalar_types.h"
#ifndef IS_INT
#define IS_INT 0
#endif
#ifndef MR
#define MR 6
#endif
#ifndef VW
#define VW 16
#endif
#ifndef NV
#define NV 2
#endif

#define NR (VW * NV)
#include "vector_types.h"
#if IS_INT
#define MULADD(a, b, c) ((a) * (b) + (c))
#else
#define MULADD(a, b, c) fma((a), (b), (c))
#endif

__kernel void pack_panels(const int outer, const int K, const int W, const int panels,
                          __global const T* restrict X, const long off, const long so,
                          const long sk, const long batch,
                          __global T* restrict P)
{
    // One work-item per (k, panel) copies W elements: dimension 0 walks k, so neighbouring
    // work-items read neighbouring addresses whichever way the operand is transposed.
    const int k = get_global_id(0);
    const long bp = get_global_id(1);          // b * panels + p
    if (k >= K) return;
    const long b = bp / panels;
    const long o0 = (bp - b * panels) * W;
    const __global T* x = X + off + b * batch + (long)k * sk;
    __global T* out = P + (bp * K + k) * W;
    for (int i = 0; i < W; ++i) {
        const long o = o0 + i;
        out[i] = o < outer ? x[o * so] : (T)0;
    }
}

__kernel void gemm_cpu(const int M, const int N, const int K, const int k0, const int kc,
                       const int accumulate,
                       __global const T* restrict Ap, const int a_panels, const long a_pbatch,
                       __global const T* restrict Bp, const int b_panels, const long b_pbatch,
                       __global T* restrict C, const long c_off, const int ldc, const long c_batch)
{
    const int mp = get_global_id(0);
    const int np = get_global_id(1);
    const long b = get_global_id(2);
    if (mp >= a_panels || np >= b_panels) return;
    const __global T* a = Ap + b * a_pbatch + (mp * (long)K + k0) * MR;
    const __global T* bq = Bp + b * b_pbatch + (np * (long)K + k0) * NR;

    VACC acc[MR][NV];
    #pragma unroll
    for (int i = 0; i < MR; ++i)
        #pragma unroll
        for (int j = 0; j < NV; ++j)
            acc[i][j] = (VACC)0;

    for (int k = 0; k < kc; ++k) {
        VACC bv[NV];
        #pragma unroll
        for (int j = 0; j < NV; ++j)
            bv[j] = TO_VACC(VLOAD(j, bq));
        #pragma unroll
        for (int i = 0; i < MR; ++i) {
            const VACC av = (VACC)((ACC)a[i]);
            #pragma unroll
            for (int j = 0; j < NV; ++j)
                acc[i][j] = MULADD(av, bv[j], acc[i][j]);
        }
        a += MR;
        bq += NR;
    }

    const int m0 = mp * MR, n0 = np * NR;
    __global T* c = C + c_off + b * c_batch;
    #pragma unroll
    for (int i = 0; i < MR; ++i) {
        const int m = m0 + i;
        if (m >= M) break;
        __global T* row = c + (long)m * ldc;
        #pragma unroll
        for (int j = 0; j < NV; ++j) {
            const int n = n0 + j * VW;
            VT v = TO_VT(acc[i][j]);
            if (n + VW <= N) {
                if (accumulate)
                    v += VLOAD(0, row + n);
                VSTORE(v, 0, row + n);
            } else {
                T part[VW];
                VSTORE(v, 0, part);
                for (int e = 0; n + e < N; ++e)
                    row[n + e] = accumulate ? row[n + e] + part[e] : part[e];
            }
        }
    }
}
