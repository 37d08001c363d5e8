// The GEMM kernels' calling convention (documented in gemm_naive.cl): the operand-orientation
// parameters and the argument list in the host's order (standard_args in kernels/gemm.py).
// Included by gemm_layout.h (the kernels of one element type T) and by the tensor-core kernels,
// whose inputs and output have element types of their own.
//
// Parameters: TRANS_A, TRANS_B (1: the operand is stored transposed, A as k x m, B as n x k).
#ifndef GEMM_ARGS_H
#define GEMM_ARGS_H
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif

// Sizes, then A, B and C, each with its element offset, leading dimension and batch stride: IN
// the inputs' element type, OUT the output's, QUAL a pointer qualifier (restrict, or nothing).
#define GEMM_ARGS_OF(IN, OUT, QUAL) const int M, const int N, const int K,                   \
    __global const IN* QUAL A, const long a_off, const int lda, const long a_batch,          \
    __global const IN* QUAL B, const long b_off, const int ldb, const long b_batch,          \
    __global OUT* QUAL C, const long c_off, const int ldc, const long c_batch
#endif
