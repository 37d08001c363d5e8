// Blocked LU (partial pivoting, LAPACK's getrf order) and Cholesky factorisations of matrices
// too large for one work-group's local memory, with the triangular solves that use them. The
// host (clarray_gemm/ops/linalg_blocked.py) walks the matrix a block of NB columns at a time:
// the pieces here factor a panel or a diagonal block, swap rows, solve against a triangular
// block; the trailing updates are matrix products on the GEMM kernels.
//
// Every matrix of a batch is C-contiguous with leading dimension ld (a matrix m starts at
// a + a_off + m * a_batch); the batch index is the last work-group dimension. Pivots are row
// indices within a matrix (piv + m * piv_batch); status[m] gets 1 + the first column whose pivot
// was zero (LU: a singular matrix) or not positive (Cholesky), as LAPACK's info, and is only
// ever raised from 0.
//
// Parameters:
//   T      the element type (float, or double with IS_FP64 1)
//   WG     work-items a group (a power of two)
//   NB     the largest block (the triangular blocks live in local memory, NB x NB)
//   LOWER  trsm: 1 the triangle is the lower one, 0 the upper one
//   UNIT   trsm: 1 its diagonal is taken as ones (the L of an LU)
//   XMAX   lu_solve_columns: the longest column it holds in local memory
//   RPT    lu_panel_private: panel rows a work-item holds in private memory
#pragma OPENCL FP_CONTRACT OFF
#ifndef T
#define T float
#endif
#ifndef WG
#define WG 256
#endif
#ifndef NB
#define NB 32
#endif
#ifndef LOWER
#define LOWER 1
#endif
#ifndef UNIT
#define UNIT 1
#endif
#ifndef XMAX
#define XMAX 1024
#endif
#ifndef RPT
#define RPT 1
#endif
#define BS 32   // lu_solve_columns: rows a step
#include "cholesky_local.h"

// The work-group's largest candidate magnitude and its row into best_v[0], best_i[0] (the
// lowest row of equal magnitudes, as LAPACK's first-max pivot): a tree over every work-item's
// candidate, stored at [lid] before the call (WG a power of two).
inline void pivot_tree(__local T* best_v, __local int* best_i, const int lid)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            const T v2 = best_v[lid + s];
            const int i2 = best_i[lid + s];
            if (v2 > best_v[lid] || (v2 == best_v[lid] && i2 < best_i[lid])) {
                best_v[lid] = v2;
                best_i[lid] = i2;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Factor the panel of columns k..k+w-1, rows k..n-1, of each n x n matrix in place (dgetf2):
// a column at a time, the first largest magnitude as pivot (a work-group reduction), the swap
// over the panel's columns (the others take swap_rows), the multipliers, the rank-1 update of
// the panel's remaining columns (consecutive work-items along a row: coalesced).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void lu_panel(__global T* restrict a, const long a_off, const long a_batch, const int n,
              const int k, const int w, __global int* restrict piv, const long piv_batch,
              __global int* restrict status)
{
    __local T best_v[WG];
    __local int best_i[WG];
    __local T prow[NB];
    const int lid = get_local_id(0);
    const long m = get_group_id(0);
    a += a_off + m * a_batch;
    piv += m * piv_batch;
    for (int j = k; j < k + w; ++j) {
        T bv = (T)-1;
        int bi = n;
        for (int i = j + lid; i < n; i += WG) {
            const T v = fabs(a[(long)i * n + j]);
            if (v > bv) {   // the first of equal magnitudes: i only grows here; never NaN
                bv = v;
                bi = i;
            }
        }
        best_v[lid] = bv;
        best_i[lid] = bi;
        pivot_tree(best_v, best_i, lid);
        const T pv = best_v[0];
        const int p = best_i[0] < n ? best_i[0] : j;   // a column of NaN keeps its row
        // every work-item has read the winner, and its loads of the column precede the swap
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0) {
            piv[j] = p;
            if (!(pv != (T)0) && status[m] == 0)
                status[m] = j + 1;
        }
        for (int c = k + lid; c < k + w; c += WG) {   // the swap, and the pivot row kept
            const T top = a[(long)p * n + c];
            if (p != j)
                a[(long)p * n + c] = a[(long)j * n + c];
            a[(long)j * n + c] = top;
            prow[c - k] = top;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        const T pivot = prow[j - k];
        for (int i = j + 1 + lid; i < n; i += WG) {   // the multipliers
            if (pivot != (T)0)
                a[(long)i * n + j] = a[(long)i * n + j] / pivot;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        const int cols = k + w - j - 1;
        if (cols > 0) {
            const int count = (n - j - 1) * cols;   // < 2^31: n * NB elements at most
            for (int e = lid; e < count; e += WG) {   // the rank-1 update, along rows
                const int r = e / cols;
                const int i = j + 1 + r, c = j + 1 + e - r * cols;
                a[(long)i * n + c] = a[(long)i * n + c] - a[(long)i * n + j] * prow[c - k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);   // (prow is rewritten next)
    }
}

// lu_panel's factorisation with the panel read once and written once: work-item lid holds
// panel rows lid, lid + WG, ... (RPT of them, NB columns each, zero past w) in private memory,
// and each column is a work-group max-reduction of |pivot| (the first row of the largest
// magnitude, as lu_panel and LAPACK's idamax choose), the exchange of two rows through local
// memory, the multipliers and the rank-1 update on the private rows. The column loop is
// unrolled so that every private index is a constant (registers, not a stack). The same
// operations in the same order as lu_panel: the same bits. Panels of more than WG * RPT rows
// take lu_panel.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void lu_panel_private(__global T* restrict a, const long a_off, const long a_batch,
                      const int n, const int k, const int w, __global int* restrict piv,
                      const long piv_batch, __global int* restrict status)
{
    __local T best_v[WG];
    __local int best_i[WG];
    __local T prow[NB];
    __local T jrow[NB];
    const int lid = get_local_id(0);
    const long m = get_group_id(0);
    const int rows = n - k;
    a += a_off + m * a_batch + (long)k * n + k;
    piv += m * piv_batch;
    T x[RPT][NB];
#pragma unroll
    for (int t = 0; t < RPT; ++t) {
        const int r = lid + t * WG;
#pragma unroll
        for (int c = 0; c < NB; ++c)
            x[t][c] = (r < rows && c < w) ? a[(long)r * n + c] : (T)0;
    }
#pragma unroll
    for (int j = 0; j < NB; ++j) {
        if (j >= w)
            break;
        T bv = (T)-1;
        int bi = rows;
#pragma unroll
        for (int t = 0; t < RPT; ++t) {   // a work-item's rows grow with t: the first kept
            const int r = lid + t * WG;
            const T v = fabs(x[t][j]);
            if (r >= j && r < rows && v > bv) {   // never NaN
                bv = v;
                bi = r;
            }
        }
        best_v[lid] = bv;
        best_i[lid] = bi;
        pivot_tree(best_v, best_i, lid);
        const T pv = best_v[0];
        const int p = best_i[0] < rows ? best_i[0] : j;   // a column of NaN keeps its row
        const int p_item = p % WG, p_slot = p / WG;
        const int j_item = j % WG, j_slot = j / WG;
#pragma unroll
        for (int t = 0; t < RPT; ++t) {   // the two rows to exchange, to local memory
            if (lid == p_item && t == p_slot)
#pragma unroll
                for (int c = 0; c < NB; ++c)
                    prow[c] = x[t][c];
            if (lid == j_item && t == j_slot)
#pragma unroll
                for (int c = 0; c < NB; ++c)
                    jrow[c] = x[t][c];
        }
        if (lid == 0) {
            piv[k + j] = k + p;
            if (!(pv != (T)0) && status[m] == 0)
                status[m] = k + j + 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);   // (and every work-item has read the winner)
#pragma unroll
        for (int t = 0; t < RPT; ++t) {
            if (lid == p_item && t == p_slot)
#pragma unroll
                for (int c = 0; c < NB; ++c)
                    x[t][c] = jrow[c];
            if (lid == j_item && t == j_slot)   // after the other: p == j keeps the row
#pragma unroll
                for (int c = 0; c < NB; ++c)
                    x[t][c] = prow[c];
        }
        const T pivot = prow[j];
#pragma unroll
        for (int t = 0; t < RPT; ++t) {   // the multipliers and the rank-1 update
            const int r = lid + t * WG;
            if (r > j && r < rows) {
                if (pivot != (T)0)
                    x[t][j] = x[t][j] / pivot;
                const T l = x[t][j];
#pragma unroll
                for (int c = j + 1; c < NB; ++c)
                    x[t][c] = x[t][c] - l * prow[c];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);   // prow, jrow and best_* are rewritten next
    }
#pragma unroll
    for (int t = 0; t < RPT; ++t) {
        const int r = lid + t * WG;
        if (r < rows)
#pragma unroll
            for (int c = 0; c < NB; ++c)
                if (c < w)
                    a[(long)r * n + c] = x[t][c];
    }
}

// Apply the row swaps piv[j0..j1) (in order) to ncols columns of each matrix: column c of the
// work is column c of the matrix before skip_at and c + skip_len from there (the panel's own
// columns, swapped by lu_panel, are skipped). A work-item a column: its rows' loads coalesce.
__kernel void swap_rows(__global T* restrict a, const long a_off, const long a_batch,
                        const int ld, const int ncols, const int skip_at, const int skip_len,
                        __global const int* restrict piv, const long piv_batch, const int j0,
                        const int j1)
{
    const int c = get_global_id(0);
    const long m = get_global_id(1);
    if (c >= ncols)
        return;
    const int col = c < skip_at ? c : c + skip_len;
    a += a_off + m * a_batch + col;
    piv += m * piv_batch;
    for (int j = j0; j < j1; ++j) {
        const int p = piv[j];
        if (p != j) {
            const T t = a[(long)j * ld];
            a[(long)j * ld] = a[(long)p * ld];
            a[(long)p * ld] = t;
        }
    }
}

// Solve tri * X = B in place for the w x ncols block X (X[i][c] = x[i * x_rs + c * x_cs] of
// each matrix, rows from x_row0) against the w x w triangle of t at (t0, t0) (lower or upper
// per LOWER, unit diagonal per UNIT): a work-item a column of X, by substitution, the triangle
// in local memory, the column in private memory (the loops unrolled to NB: constant indices,
// registers; each element of X read and written once).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void trsm(__global const T* restrict t, const long t_off, const long t_batch, const int t_ld,
          const int t0, const int w, __global T* restrict x, const long x_off,
          const long x_batch, const long x_rs, const long x_cs, const int ncols)
{
    __local T tri[NB * NB];
    const int lid = get_local_id(0);
    const long m = get_group_id(1);
    t += t_off + m * t_batch + (long)t0 * t_ld + t0;
    for (int e = lid; e < w * w; e += WG) {
        const int i = e / w, j = e - (e / w) * w;
        tri[i * NB + j] = t[(long)i * t_ld + j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int c = get_global_id(0);
    if (c >= ncols)
        return;
    x += x_off + m * x_batch + c * x_cs;
    T v[NB];
#pragma unroll
    for (int i = 0; i < NB; ++i)
        v[i] = i < w ? x[i * x_rs] : (T)0;
#if LOWER
#pragma unroll
    for (int i = 0; i < NB; ++i) {
        if (i < w) {
            T s = v[i];
#pragma unroll
            for (int j = 0; j < i; ++j)
                s = s - tri[i * NB + j] * v[j];
#else
#pragma unroll
    for (int i = NB - 1; i >= 0; --i) {
        if (i < w) {
            T s = v[i];
#pragma unroll
            for (int j = i + 1; j < NB; ++j)
                if (j < w)
                    s = s - tri[i * NB + j] * v[j];
#endif
#if UNIT
            v[i] = s;
#else
            v[i] = s / tri[i * NB + i];
#endif
        }
    }
#pragma unroll
    for (int i = 0; i < NB; ++i)
        if (i < w)
            x[i * x_rs] = v[i];
}

// The Cholesky factor of the w x w diagonal block at (k, k) of each n x n matrix, in place
// (its lower triangle: dpotf2, cholesky_local.h), in local memory.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void cholesky_block(__global T* restrict a, const long a_off, const long a_batch, const int n,
                    const int k, const int w, __global int* restrict status)
{
    __local T l[NB * NB];
    __local int failed;
    const int lid = get_local_id(0);
    const long m = get_group_id(0);
    a += a_off + m * a_batch + (long)k * n + k;
    for (int e = lid; e < w * w; e += WG) {
        const int i = e / w, j = e - (e / w) * w;
        l[i * NB + j] = j <= i ? a[(long)i * n + j] : (T)0;
    }
    if (lid == 0)
        failed = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    cholesky_local(l, w, NB, &failed, lid);
    for (int e = lid; e < w * w; e += WG) {
        const int i = e / w, j = e - (e / w) * w;
        if (j <= i)
            a[(long)i * n + j] = l[i * NB + j];
    }
    if (lid == 0 && failed != 0 && status[m] == 0)
        status[m] = k + failed;   // the column in the whole matrix
}

// Zero the strict upper triangle of each n x n matrix (the Cholesky factor's, which the
// factorisation never wrote).
__kernel void zero_upper(__global T* restrict a, const long a_off, const long a_batch,
                         const int n)
{
    const int c = get_global_id(0), i = get_global_id(1);
    const long m = get_global_id(2);
    if (c < n && i < n && c > i)
        a[a_off + m * a_batch + (long)i * n + c] = (T)0;
}

// NumPy's determinant from an LU factorisation: the sign of the row permutation and of the
// pivots, the sum of log|pivot| (det = sign * exp(logdet), as NumPy forms it), a work-group a
// matrix.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void lu_det(__global const T* restrict a, const long a_off, const long a_batch, const int n,
            __global const int* restrict piv, const long piv_batch, __global T* restrict det_out,
            __global T* restrict sign_out, __global T* restrict log_out)
{
    __local T logs[WG];
    __local int negatives[WG];
    __local int zeros[WG];
    const int lid = get_local_id(0);
    const long m = get_group_id(0);
    a += a_off + m * a_batch;
    piv += m * piv_batch;
    T logdet = 0;
    int neg = 0, zero = 0;
    for (int j = lid; j < n; j += WG) {
        const T d = a[(long)j * n + j];
        neg += (d < (T)0) + (piv[j] != j);
        zero |= !(d != (T)0) && !isnan(d);
        logdet += log(fabs(d));
    }
    logs[lid] = logdet;
    negatives[lid] = neg;
    zeros[lid] = zero;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            logs[lid] += logs[lid + s];
            negatives[lid] += negatives[lid + s];
            zeros[lid] |= zeros[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        T sign = zeros[0] ? (T)0 : ((negatives[0] & 1) ? (T)-1 : (T)1);
        T total = zeros[0] ? -INFINITY : logs[0];
        det_out[m] = sign * exp(total);
        sign_out[m] = sign;
        log_out[m] = total;
    }
}

// Solve A x = b for each of the k columns of b (n x k, overwritten) from an LU factorisation
// (lu_panel's pivots), a work-group a column, the column in local memory: the row swaps by one
// work-item, then forward (L, unit) and back (U) substitution BS rows at a time. A step's rows
// first take their dot products with the solved part (BS rows x WG / BS lanes, each lane's loads
// along a row of the factor, coalesced), then the BS x BS triangle, a row per work-item and a
// barrier per row. For few right-hand sides, where the blocked solve's launches would cost
// more than the arithmetic.
// One step of lu_solve_columns: rows i0 .. i0 + bs take their dot products with the solved
// part x[t0 .. t1) (BS rows x WG / BS lanes, each lane's loads along a row of the factor), the
// step's triangle is staged in `tri`; returns row i0 + lid's right-hand side less that sum
// (work-items lid < bs).
inline T block_rest(__global const T* restrict lu, const int n, __local const T* x,
                    __local T* part, __local T* tri, const int i0, const int bs, const int t0,
                    const int t1, const int lid)
{
    const int lanes = WG / BS, r = lid / lanes, q = lid - (lid / lanes) * lanes;
    T s = 0;
    if (r < bs)
        for (int t = t0 + q; t < t1; t += lanes)
            s += lu[(long)(i0 + r) * n + t] * x[t];
    part[lid] = s;
    for (int e = lid; e < bs * bs; e += WG) {
        const int row = e / bs;
        tri[e] = lu[(long)(i0 + row) * n + i0 + e - row * bs];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    T v = 0;
    if (lid < bs) {
        v = x[i0 + lid];
        for (int t = 0; t < lanes; ++t)
            v -= part[lid * lanes + t];
    }
    return v;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void lu_solve_columns(__global const T* restrict lu, const long lu_off, const long lu_batch,
                      const int n, __global const int* restrict piv, const long piv_batch,
                      __global T* restrict b, const long b_off, const long b_batch, const int k)
{
    __local T x[XMAX];
    __local T part[WG];
    __local T tri[BS * BS];
    __local T cur[BS];
    const int lid = get_local_id(0);
    const int c = get_group_id(0);
    const long m = get_group_id(1);
    lu += lu_off + m * lu_batch;
    piv += m * piv_batch;
    b += b_off + m * b_batch + c;
    for (int i = lid; i < n; i += WG)
        x[i] = b[(long)i * k];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        for (int j = 0; j < n; ++j) {
            const int p = piv[j];
            if (p != j) {
                const T t = x[j];
                x[j] = x[p];
                x[p] = t;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i0 = 0; i0 < n; i0 += BS) {   // L y = P b
        const int bs = min(BS, n - i0);
        T v = block_rest(lu, n, x, part, tri, i0, bs, 0, i0, lid);
        for (int r2 = 0; r2 < bs; ++r2) {
            if (lid == r2)
                cur[r2] = v;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid > r2 && lid < bs)
                v -= tri[lid * bs + r2] * cur[r2];
        }
        if (lid < bs)
            x[i0 + lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i0 = (n - 1) / BS * BS; i0 >= 0; i0 -= BS) {   // U x = y, from the last rows up
        const int bs = min(BS, n - i0);
        T v = block_rest(lu, n, x, part, tri, i0, bs, i0 + bs, n, lid);
        for (int r2 = bs - 1; r2 >= 0; --r2) {
            if (lid == r2) {
                v = v / tri[r2 * bs + r2];
                cur[r2] = v;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < r2)
                v -= tri[lid * bs + r2] * cur[r2];
        }
        if (lid < bs)
            x[i0 + lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = lid; i < n; i += WG)
        b[(long)i * k] = x[i];
}
