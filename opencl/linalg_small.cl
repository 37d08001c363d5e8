// Batches of small linear systems, a work-group a matrix, in local memory: LU factorisation with
// partial pivoting (LAPACK's getrf order: the first largest |a[i][j]| of the column is the
// pivot), the right-hand sides carried along, then back substitution (getrs). np.linalg.solve,
// np.linalg.inv (the identity as right-hand sides) and np.linalg.det / slogdet (the pivots and
// the row swaps) are built on it; np.linalg.cholesky is the second kernel.
//
// Matrix m of the batch is read from a[a_off + m * a_batch + i * N + j] (C-contiguous rows of
// N), its right-hand sides from b[b_off + m * b_batch + i * K + c] (N x K); the solutions go to
// x[m * N * K + i * K + c]. status[m] is set to 1 + the column where a pivot was exactly zero
// (a singular matrix, NumPy's LinAlgError), else 0. With DET, det_out[m] holds the product of
// the pivots with the sign of the row permutation (K may be 0 then), and log_out[m] the sum of
// the logarithms of their magnitudes with sign_out[m] the sign (slogdet); NumPy's det is
// sign * exp(logdet) too.
//
// Parameters:
//   T      the element type (float, or double with IS_FP64 1)
//   N      the matrices' order; K the right-hand sides a matrix (0: determinants only)
//   WG     work-items a group
//   DET    1: write the determinants (and slogdet's sign and logarithm)
//   IDENTITY  1: the right-hand sides are the identity (K = N), b is not read
#pragma OPENCL FP_CONTRACT OFF
#ifndef T
#define T float
#endif
#ifndef N
#define N 4
#endif
#ifndef K
#define K 1
#endif
#ifndef WG
#define WG 64
#endif
#ifndef DET
#define DET 0
#endif
#ifndef IDENTITY
#define IDENTITY 0
#endif
#define KK (K > 0 ? K : 1)
#include "cholesky_local.h"

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void lu_solve(__global const T* restrict a, const long a_off, const long a_batch,
              __global const T* restrict b, const long b_off, const long b_batch,
              __global T* restrict x, __global int* restrict status,
              __global T* restrict det_out, __global T* restrict sign_out,
              __global T* restrict log_out)
{
    __local T lu[N * N];
    __local T rhs[N * KK];
    __local int pivot_row;
    __local int singular;
    const int lid = get_local_id(0);
    const long m = get_group_id(0);
    a += a_off + m * a_batch;
    for (int e = lid; e < N * N; e += WG)
        lu[e] = a[e];
#if K > 0 && IDENTITY
    for (int e = lid; e < N * K; e += WG) {   // np.linalg.inv's right-hand sides
        const int i = e / K;
        rhs[e] = (e - i * K == i) ? (T)1 : (T)0;
    }
#elif K > 0
    b += b_off + m * b_batch;
    for (int e = lid; e < N * K; e += WG)
        rhs[e] = b[e];
#endif
    if (lid == 0)
        singular = 0;
    int swaps = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < N; ++j) {
        if (lid == 0) {   // the first largest magnitude, as LAPACK's i?amax picks it
            int p = j;
            T best = fabs(lu[j * N + j]);
            for (int i = j + 1; i < N; ++i) {
                const T v = fabs(lu[i * N + j]);
                if (v > best) {
                    best = v;
                    p = i;
                }
            }
            pivot_row = p;
            if (best == (T)0 && singular == 0)
                singular = j + 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int p = pivot_row;
        if (p != j) {
            ++swaps;
            for (int c = lid; c < N; c += WG) {
                const T t = lu[j * N + c];
                lu[j * N + c] = lu[p * N + c];
                lu[p * N + c] = t;
            }
#if K > 0
            for (int c = lid; c < K; c += WG) {
                const T t = rhs[j * K + c];
                rhs[j * K + c] = rhs[p * K + c];
                rhs[p * K + c] = t;
            }
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const T pivot = lu[j * N + j];
        for (int i = j + 1 + lid; i < N; i += WG)    // the multipliers (getrf scales the column)
            lu[i * N + j] = pivot != (T)0 ? lu[i * N + j] / pivot : lu[i * N + j];
        barrier(CLK_LOCAL_MEM_FENCE);
        const int rows = N - j - 1, cols = N - j - 1 + K;
        for (int e = lid; e < rows * cols; e += WG) {   // the trailing update
            const int i = j + 1 + e / cols, c = e - (e / cols) * cols;
            const T l = lu[i * N + j];
            if (c < N - j - 1) {
                const int cc = j + 1 + c;
                lu[i * N + cc] = lu[i * N + cc] - l * lu[j * N + cc];
            } else {
                const int cc = c - (N - j - 1);
                rhs[i * KK + cc] = rhs[i * KK + cc] - l * rhs[j * KK + cc];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#if K > 0
    for (int j = N - 1; j >= 0; --j) {   // back substitution, a column of U at a time
        const T u = lu[j * N + j];
        for (int c = lid; c < K; c += WG)
            rhs[j * K + c] = rhs[j * K + c] / u;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = lid; e < j * K; e += WG) {
            const int i = e / K, c = e - (e / K) * K;
            rhs[i * K + c] = rhs[i * K + c] - lu[i * N + j] * rhs[j * K + c];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    x += m * (long)(N * K);
    for (int e = lid; e < N * K; e += WG)
        x[e] = rhs[e];
#endif
    if (lid == 0) {
        status[m] = singular;
#if DET   // NumPy's: the sign and the sum of log|pivot|, det = sign * exp(logdet)
        T sign = (swaps & 1) ? (T)-1 : (T)1, logdet = 0;
        for (int j = 0; j < N; ++j) {
            const T d = lu[j * N + j];
            sign *= d < 0 ? (T)-1 : (d > 0 ? (T)1 : (T)0);
            logdet += log(fabs(d));
        }
        if (sign == (T)0)
            logdet = -INFINITY;
        det_out[m] = sign * exp(logdet);
        sign_out[m] = sign;
        log_out[m] = logdet;
#endif
    }
}

// The Cholesky factor L (lower, L L^T = a) of each matrix of the batch, from its lower triangle
// (the upper one is not read, as LAPACK's potrf does not), in local memory: a column at a time,
// its diagonal element on one work-item, the rest of the column in parallel. x[m] gets L with
// zeros above the diagonal; status[m] 1 + the column whose pivot was not positive (NumPy's
// "Matrix is not positive definite"), else 0.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void cholesky(__global const T* restrict a, const long a_off, const long a_batch,
              __global T* restrict x, __global int* restrict status)
{
    __local T l[N * N];
    __local int failed;
    const int lid = get_local_id(0);
    const long m = get_group_id(0);
    a += a_off + m * a_batch;
    for (int e = lid; e < N * N; e += WG) {
        const int i = e / N, j = e - (e / N) * N;
        l[e] = j <= i ? a[e] : (T)0;
    }
    if (lid == 0)
        failed = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    cholesky_local(l, N, N, &failed, lid);
    x += m * (long)(N * N);
    for (int e = lid; e < N * N; e += WG)
        x[e] = l[e];
    if (lid == 0)
        status[m] = failed;
}
