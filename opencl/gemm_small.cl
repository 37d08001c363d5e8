// Small GEMM in one K step: a work-group stages all K columns of its TS rows of A and all K rows
// of its TS columns of B in local memory at once, waits at one barrier, then each work-item sums
// its WPT x WPT elements of C over the whole of K from local memory.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Why: on a GPU a small product is a chain of latencies, not of arithmetic. A kernel that walks K
// in steps waits for each step's global loads (gpu_blocked: 7 steps at 100^3, ~0.8 us each on an
// H100, beside a ~5 us launch); here every load of the work-group is in flight together.
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides, TRANS_A/TRANS_B, batch index = get_global_id(2)).
// Launch: local size (TS/WPT, TS/WPT, 1); global size (ceil(N/TS)*TS/WPT, ceil(M/TS)*TS/WPT,
// batch). Any M and N; K <= KMAX. Rows past M and columns past N stage zeros and are not stored.
//
// Parameters (-D): T, ACC (unsigned for integers, wrapping as NumPy's), TRANS_A, TRANS_B,
//   TS    tile edge (elements of C per work-group side)
//   WPT   elements of C per work-item side (TS % WPT == 0)
//   KMAX  the largest K staged: 2 * TS * KMAX * sizeof(T) bytes of local memory
//   IO16  16-bit A and B computed in T = ACC = float (io16.h: 1 float16 A, B and C, 2 bfloat16
//         A and B and a float32 C); 0 (default) A, B and C of type T
#include "io16.h"
#include "gemm_layout.h"
#ifndef TS
#define TS 16
#endif
#ifndef WPT
#define WPT 1
#endif
#ifndef KMAX
#define KMAX 128
#endif
#define LS (TS / WPT)   // work-items per side

#if TS % WPT
#error "gemm_small.cl: TS must be a multiple of WPT"
#endif

#if IO16   // element indices from the base offsets
#if TRANS_A
#define A_LOAD(m, k) LOAD16(A + a0 + (k) * (long)lda + (m))
#else
#define A_LOAD(m, k) LOAD16(A + a0 + (m) * (long)lda + (k))
#endif
#if TRANS_B
#define B_LOAD(k, n) LOAD16(B + b0 + (n) * (long)ldb + (k))
#else
#define B_LOAD(k, n) LOAD16(B + b0 + (k) * (long)ldb + (n))
#endif
#else
#define A_LOAD(m, k) A_AT(m, k)
#define B_LOAD(k, n) B_AT(k, n)
#endif

__kernel __attribute__((reqd_work_group_size(LS, LS, 1)))
#if IO16
void gemm_small(GEMM_ARGS_OF(IN16, OUT16, restrict))
#else
void gemm_small(GEMM_ARGS)
#endif
{
    // As[k][m] and Bs[k][n]: a work-item's WPT values of one k are LS apart, so the LS work-items
    // along a row read LS consecutive words (no bank conflicts) and those along a column one
    // broadcast word.
    __local T As[KMAX][TS];
    __local T Bs[KMAX][TS];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int m0 = get_group_id(1) * TS, n0 = get_group_id(0) * TS;
    const long b = get_global_id(2);
#if IO16
    const long a0 = a_off + b * a_batch, b0 = b_off + b * b_batch;
#else
    A += a_off + b * a_batch;
    B += b_off + b * b_batch;
#endif

    // Each loop walks the operand's contiguous axis with lx, so neighbouring work-items read
    // neighbouring addresses.
#if TRANS_A
    for (int k = ly; k < K; k += LS)
        for (int r = lx; r < TS; r += LS)
            As[k][r] = m0 + r < M ? A_LOAD(m0 + r, k) : (T)0;
#else
    for (int r = ly; r < TS; r += LS)
        for (int k = lx; k < K; k += LS)
            As[k][r] = m0 + r < M ? A_LOAD(m0 + r, k) : (T)0;
#endif
#if TRANS_B
    for (int c = ly; c < TS; c += LS)
        for (int k = lx; k < K; k += LS)
            Bs[k][c] = n0 + c < N ? B_LOAD(k, n0 + c) : (T)0;
#else
    for (int k = ly; k < K; k += LS)
        for (int c = lx; c < TS; c += LS)
            Bs[k][c] = n0 + c < N ? B_LOAD(k, n0 + c) : (T)0;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    ACC acc[WPT][WPT];
    for (int i = 0; i < WPT; ++i)
        for (int j = 0; j < WPT; ++j)
            acc[i][j] = (ACC)0;
    for (int k = 0; k < K; ++k) {
        T a[WPT], bv[WPT];
        for (int i = 0; i < WPT; ++i)
            a[i] = As[k][ly + i * LS];
        for (int j = 0; j < WPT; ++j)
            bv[j] = Bs[k][lx + j * LS];
        for (int i = 0; i < WPT; ++i)
            for (int j = 0; j < WPT; ++j)
                acc[i][j] += (ACC)a[i] * (ACC)bv[j];
    }

    const long c0 = c_off + b * c_batch;
    for (int i = 0; i < WPT; ++i) {
        const int m = m0 + ly + i * LS;
        for (int j = 0; j < WPT; ++j) {
            const int n = n0 + lx + j * LS;
            if (m < M && n < N) {
#if IO16
                STORE16(C + c0 + (long)m * ldc + n, acc[i][j]);
#else
                C[c0 + (long)m * ldc + n] = (T)acc[i][j];
#endif
            }
        }
    }
}
