// Wide products of a shallow K (K <= KMAX, e.g. the outer product of a column and a row): C is
// large and every element of it is a short dot product, so the time is the writing of C.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Why: the tiled kernels write C in per-work-item blocks (a warp's store touches many rows or
// strided columns), which with a row length that is not a multiple of the 16-byte vector leaves
// every store a scatter of partial sectors. Here a work-item owns one column n of RPT
// consecutive rows: the lanes of a warp hold consecutive columns, so every store of a warp is
// one contiguous run of C whatever its alignment. The work-item keeps its column of B (K values)
// in registers; the work-group stages its RPT rows of A in local memory, where every work-item
// reads the same word (a broadcast).
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides, TRANS_A/TRANS_B). Launch: local size (WG, 1, 1); global size (ceil(N/WG)*WG,
// ceil(M/RPT), batch). Any M, N; K <= KMAX (K = 0 writes zeros).
//
// Parameters (-D): T, ACC (unsigned for integers, wrapping as NumPy's), TRANS_A, TRANS_B,
//   KMAX  the deepest K (the work-item's B column lives in KMAX registers; the sums run KMAX
//         unrolled steps, zeros past K)
//   RPT   rows of C per work-item (RPT * KMAX values of A in local memory)
//   WG    work-items per work-group (along N)
//   IO16  16-bit operands read as they are, computed in float (io16.h)
//   ST, UST  8- and 16-bit integers kept narrow in memory (A, B and C of type ST, the sum in T;
//            UST its unsigned twin, through which the sum wraps into ST)
#include "io16.h"
#include "gemm_layout.h"
#ifndef KMAX
#define KMAX 16
#endif
#ifndef RPT
#define RPT 8
#endif
#ifndef WG
#define WG 128
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if IO16
#define IN_T IN16
#define OUT_T OUT16
#define LOAD(p) LOAD16(p)
#define STORE(p, value) STORE16(p, value)
#elif defined(ST)
#define IN_T ST
#define OUT_T ST
#define LOAD(p) ((T)*(p))
#define STORE(p, value) (*(p) = CAT(as_, ST)((UST)(ACC)(value)))
#else
#define IN_T T
#define OUT_T T
#define LOAD(p) (*(p))
#define STORE(p, value) (*(p) = (T)(value))
#endif

#if TRANS_A
#define A_INDEX(m, k) ((k) * (long)lda + (m))
#else
#define A_INDEX(m, k) ((m) * (long)lda + (k))
#endif
#if TRANS_B
#define B_INDEX(k, n) ((n) * (long)ldb + (k))
#else
#define B_INDEX(k, n) ((k) * (long)ldb + (n))
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemm_shallow(GEMM_ARGS_OF(IN_T, OUT_T, restrict))
{
    // The work-group's RPT rows of A, staged once: read from global memory row by row they
    // would be RPT round trips, one after another, on every work-item's way to its stores.
    __local T As[RPT][KMAX];
    const int n = get_global_id(0), lid = get_local_id(0);
    const int m0 = get_group_id(1) * RPT;
    const long b = get_global_id(2);
    // element indices from the base offsets (no arithmetic on 16-bit pointers)
    const long a0 = a_off + b * a_batch, b0 = b_off + b * b_batch, c0 = c_off + b * c_batch;
    for (int i = lid; i < RPT * KMAX; i += WG) {
        const int r = i / KMAX, k = i - r * KMAX;
        As[r][k] = m0 + r < M && k < K ? LOAD(A + a0 + A_INDEX(m0 + r, k)) : (T)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (n >= N)
        return;

    T bk[KMAX];
    #pragma unroll
    for (int k = 0; k < KMAX; ++k)
        bk[k] = k < K ? LOAD(B + b0 + B_INDEX(k, n)) : (T)0;

    const int rows = min(RPT, M - m0);
    #pragma unroll
    for (int r = 0; r < RPT; ++r) {
        if (r < rows) {
            ACC acc = (ACC)0;
            #pragma unroll
            for (int k = 0; k < KMAX; ++k)
                acc += (ACC)As[r][k] * (ACC)bk[k];   // zeros past K
            STORE(C + c0 + (long)(m0 + r) * ldc + n, acc);
        }
    }
}
