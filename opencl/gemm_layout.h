// Shared by the GEMM kernels (included with #include "gemm_layout.h", which the host inlines):
// the element-type defaults, the arguments (GEMM_ARGS) and the operand layout of the calling
// convention documented in gemm_naive.cl. A(m, k) and B(k, n) address row-major or transposed
// storage by TRANS_A/TRANS_B.
//
// Parameters: T element type, ACC accumulator type (unsigned for integers so overflow wraps like
// NumPy), TRANS_A, TRANS_B (gemm_args.h).
#include "scalar_types.h"
#include "gemm_args.h"

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

// The arguments of every GEMM kernel whose operands are all buffers of one element type T.
#define GEMM_ARGS GEMM_ARGS_OF(T, T, restrict)
