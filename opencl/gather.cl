// Gathers for take / integer-array indexing and arange, over a source seen as rows x columns:
// row r, column c is src[src_off + r*row_stride + off(c)], where off(c) walks the NDIM innermost
// of 8 column dimensions (`cshape`, `cstride`; strided_offset.h).
// The destination is C-contiguous (rows x n_cols).
//
// Kernels:
//   take      dst[j, c] = src[idx[j] (+ n_rows if negative), c]     (indices already checked)
//   iota      dst[i] = start + (T)i * delta, dst[1] = second         (NumPy's arange fill)
//   ravel_index  flat[i] = flat[i] * n_axis + idx[off(i)] (+ n_axis if negative): one axis of
//             a multi-index a[i0, ..., ik] folded into one row index of a's leading axes merged
//             (one launch an index array, axis 0 first; off walks the index array broadcast to
//             the result's NDIM dimensions)
//   scatter_clear, scatter_claim, scatter_rows   dst[flat[j], c] = src[j, c] where j is the last
//             (in C order) of the j writing row flat[j], as NumPy's assignment loop leaves
//             repeated rows: winner[row] is cleared to -1 (atomically: every j of a row
//             stores), then raised to the largest j (atomic_max), then only that j copies.
//             n < 2^31 rows of src.
//
// Parameters: T (element type), NDIM (column dimensions, 0-8), IDX_T (index type of take and
// ravel_index), FIRST (ravel_index: the first axis, which writes flat[i] without reading it).
#pragma OPENCL FP_CONTRACT OFF

#ifndef T
#define T float
#endif
#ifndef NDIM
#define NDIM 1
#endif
#ifndef IDX_T
#define IDX_T long
#endif

#include "strided_offset.h"

// take: CHECK 1 checks each index against n_rows: an index out of range stores `epoch` in
// bad[0] and reads nothing (the caller compares the word with the epoch it passed, so the word
// is never reset; one blocking read of it replaces a reduction over the indices).
#ifndef CHECK
#define CHECK 0
#endif

__kernel void take(const long n, const long n_cols, const long n_rows,
                   __global const T* restrict src, const long src_off, const long row_stride,
                   const long8 cshape, const long8 cstride,
                   __global const IDX_T* restrict idx, const long idx_off,
                   __global T* restrict dst
#if CHECK
                   , __global int* bad, const int epoch
#endif
                   )
{
    const long i = get_global_id(0);
    if (i >= n) return;
    const long shp[8] = UNPACK8(cshape), st[8] = UNPACK8(cstride);
    const long j = i / n_cols;
    const long c = i - j * n_cols;
    long row = (long)idx[idx_off + j];
    if (row < 0) row += n_rows;
#if CHECK
    if (row < 0 || row >= n_rows) {
        bad[0] = epoch;
        return;
    }
#endif
    dst[i] = src[src_off + row * row_stride + offset_of(c, shp, st, NDIM)];
}

#ifndef FIRST
#define FIRST 0
#endif

// ravel_index: CHECK 1 flags an index out of range of its axis as take does (the caller then
// names the index from the host, in NumPy's order).
__kernel void ravel_index(const long n, const long8 ishape, const long8 istride,
                          __global const IDX_T* restrict idx, const long idx_off,
                          const long n_axis, __global long* restrict flat
#if CHECK
                          , __global int* bad, const int epoch
#endif
                          )
{
    const long i = get_global_id(0);
    if (i >= n) return;
    const long shp[8] = UNPACK8(ishape), st[8] = UNPACK8(istride);
    long v = (long)idx[idx_off + offset_of(i, shp, st, NDIM)];
    if (v < 0) v += n_axis;
#if CHECK
    if (v < 0 || v >= n_axis) {
        bad[0] = epoch;
        v = 0;
    }
#endif
#if FIRST
    flat[i] = v;
#else
    flat[i] = flat[i] * n_axis + v;
#endif
}

__kernel void scatter_clear(const long n, __global const long* restrict flat,
                            __global int* winner)
{
    const long i = get_global_id(0);
    if (i < n) atomic_xchg(winner + flat[i], -1);
}

__kernel void scatter_claim(const long n, __global const long* restrict flat,
                            __global int* winner)
{
    const long i = get_global_id(0);
    if (i < n) atomic_max(winner + flat[i], (int)i);
}

__kernel void scatter_rows(const long n, const long n_cols, __global const long* restrict flat,
                           __global const int* restrict winner,
                           __global T* dst, const long dst_off, const long row_stride,
                           const long8 cshape, const long8 cstride,
                           __global const T* restrict src)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    const long shp[8] = UNPACK8(cshape), st[8] = UNPACK8(cstride);
    const long j = i / n_cols;
    const long c = i - j * n_cols;
    const long row = flat[j];
    if (winner[row] != (int)j) return;
    dst[dst_off + row * row_stride + offset_of(c, shp, st, NDIM)] = src[i];
}

__kernel void iota(const long n, const T start, const T delta, const T second,
                   __global T* restrict dst)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    dst[i] = i == 1 ? second : (T)(start + (T)i * delta);
}
