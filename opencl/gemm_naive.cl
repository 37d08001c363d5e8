// Naive GEMM: one work-item per element of C (seed 000 version 1, seed 001's bounds check).
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)
//
// Layout (all offsets/strides in elements, batch index b = get_global_id(2)):
//   A(m,k) = A[a_off + b*a_batch + (TRANS_A ? k*lda + m : m*lda + k)]
//   B(k,n) = B[b_off + b*b_batch + (TRANS_B ? n*ldb + k : k*ldb + n)]
//   C(m,n) = C[c_off + b*c_batch + m*ldc + n]
// Any M, N, K (the NDRange is rounded up to the work-group; extra work-items return).
//
// Parameters: T element type, ACC accumulator type (unsigned for integers so overflow wraps
// like NumPy), TRANS_A, TRANS_B.
#include "gemm_layout.h"

__kernel void gemm_naive(GEMM_ARGS)
{
    const int n = get_global_id(0);
    const int m = get_global_id(1);
    const long b = get_global_id(2);
    if (m >= M || n >= N) return;
    A += a_off + b * a_batch;
    B += b_off + b * b_batch;
    ACC acc = (ACC)0;
    for (int k = 0; k < K; ++k)
        acc += (ACC)A_AT(m, k) * (ACC)B_AT(k, n);
    C[c_off + b * c_batch + (long)m * ldc + n] = (T)acc;
}
