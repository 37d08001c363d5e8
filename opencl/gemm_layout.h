// Shared by the GEMM kernels (included with #include "gemm_layout.h", which the host inlines):
// the element-type defaults, the arguments (GEMM_ARGS) and the operand layout of the calling
// convention documented in gemm_naive.cl. A(m, k) and B(k, n) address row-major or transposed
// storage by TRANS_A/TRANS_B.
//
// Parameters: T element type, ACC accumulator type (unsigned for integers so overflow wraps like
// NumPy), TRANS_A, TRANS_B.
#include "scalar_types.h"
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif

#if TRANS_A
#define A_AT(m, k) A[(k) * (long)lda + (m)]
#else
#define A_AT(m, k) A[(m) * (long)lda + (k)]
#endif
#if TRANS_B
#define B_AT(k, n) B[(n) * (long)ldb + (k)]
#else
#define B_AT(k, n) B[(k) * (long)ldb + (n)]
#endif

// The arguments of every GEMM kernel whose operands are all buffers, in the host's order
// (standard_args in kernels/gemm.py): sizes, then A, B and C, each with its element offset, leading dimension
// and batch stride.
#define GEMM_ARGS const int M, const int N, const int K,                                      \
    __global const T* restrict A, const long a_off, const int lda, const long a_batch,       \
    __global const T* restrict B, const long b_off, const int ldb, const long b_batch,       \
    __global T* restrict C, const long c_off, const int ldc, const long c_batch
