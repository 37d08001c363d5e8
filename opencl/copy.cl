// Strided copy with a cast: the device-side "pack" used for astype, contiguous copies,
// transposes, broadcasts and writes into strided views.
//
//   dst[dst_offset + sum_d i_d*dst_stride_d] = cast(src[src_offset + sum_d i_d*src_stride_d])
//
// for every multi-index i of `shape`, with up to 8 dimensions (the host merges dimensions that
// are contiguous in both arrays first). Strides and offsets are in elements and may be 0
// (broadcast) or negative (reversed views). One work-item per element.
//
// `cast` is NumPy's conversion (numpy_cast.h: its x86-64 results also for NaN and out-of-range
// float -> integer values, which OpenCL C leaves undefined).
//
// Parameters:
//   SRC_T, DST_T  element types (OpenCL C scalar names)
//   TO_BOOL       1: store (src != 0), as NumPy's cast to bool does
//   SRC_HALF, DST_HALF  1: that side is float16, held as its bits (its T ushort): read as its
//                 float value and cast on from float (as NumPy casts float16), written rounded
//                 to nearest even from float, or from double where the source is double
//                 (HALF_FROM double), as NumPy's float16 casts round; HALF_TO_DOUBLE 1: a
//                 float16 source into double, from its bits
//   NDIM          merged dimensions (1-8): the innermost NDIM entries of the shape and strides
//   IDX32         1: fewer than 2^31 elements, index decomposition in 32 bits
#ifndef SRC_T
#define SRC_T float
#endif
#ifndef DST_T
#define DST_T SRC_T
#endif
#ifndef TO_BOOL
#define TO_BOOL 0
#endif
#ifndef NDIM
#define NDIM 8
#endif
#ifndef SRC_HALF
#define SRC_HALF 0
#endif
#ifndef DST_HALF
#define DST_HALF 0
#endif
#ifndef HALF_FROM
#define HALF_FROM float
#endif
#ifndef HALF_TO_DOUBLE
#define HALF_TO_DOUBLE 0
#endif
#include "flat_index.h"
#include "half_bits.h"

// CONVERT(v): the destination's element for source element v; NONZERO(v): v != 0 by value.
#if SRC_HALF && DST_HALF
#define CONVERT(v) (v)
#define NONZERO(v) (half_bits_to_float(v) != 0.0f)
#elif SRC_HALF && HALF_TO_DOUBLE
#define CONVERT(v) half_bits_to_double(v)
#define NONZERO(v) (half_bits_to_float(v) != 0.0f)
#elif SRC_HALF
#define NP_CAST_SRC float
#define NP_CAST_DST DST_T
#define NP_CAST_NAME cast
#include "numpy_cast.h"
#define CONVERT(v) cast(half_bits_to_float(v))
#define NONZERO(v) (half_bits_to_float(v) != 0.0f)
#elif DST_HALF
#define CONVERT(v) HALF_BITS_FROM(HALF_FROM)((HALF_FROM)(v))
#define NONZERO(v) ((v) != (SRC_T)0)
#else
#define NP_CAST_SRC SRC_T
#define NP_CAST_DST DST_T
#define NP_CAST_NAME cast
#include "numpy_cast.h"
#define CONVERT(v) cast(v)
#define NONZERO(v) ((v) != (SRC_T)0)
#endif

__kernel void strided_copy(const long n,
                           __global const SRC_T* restrict src, const long src_offset,
                           __global DST_T* restrict dst, const long dst_offset,
                           const long8 shape, const long8 src_stride, const long8 dst_stride)
{
    const long i = get_global_id(0);
    if (i >= n) return;
    flat_index_t rem = (flat_index_t)i;
    long s_off = src_offset, d_off = dst_offset;
    const long shp[8] = {shape.s0, shape.s1, shape.s2, shape.s3, shape.s4, shape.s5, shape.s6, shape.s7};
    const long ss[8] = {src_stride.s0, src_stride.s1, src_stride.s2, src_stride.s3,
                        src_stride.s4, src_stride.s5, src_stride.s6, src_stride.s7};
    const long ds[8] = {dst_stride.s0, dst_stride.s1, dst_stride.s2, dst_stride.s3,
                        dst_stride.s4, dst_stride.s5, dst_stride.s6, dst_stride.s7};
    // Dimension 7 is the fastest-varying; the outermost one's index is what remains.
    for (int d = 7; d > 8 - NDIM; --d) {
        const long idx = next_index(&rem, shp[d]);
        s_off += idx * ss[d];
        d_off += idx * ds[d];
    }
    s_off += (long)rem * ss[8 - NDIM];
    d_off += (long)rem * ds[8 - NDIM];
    const SRC_T v = src[s_off];
#if TO_BOOL
    dst[d_off] = NONZERO(v) ? (DST_T)1 : (DST_T)0;
#else
    dst[d_off] = CONVERT(v);
#endif
}

// The transposed layout class on GPUs (transpose_tile.h): a source that runs along the rows of
// a destination contiguous along its columns ([batch,] rows, columns; strides (batch, row,
// column, -) in elements), staged through local memory so both sides are read and written in
// whole memory segments.
#include "transpose_tile.h"

__kernel __attribute__((reqd_work_group_size(TILE, TILE_ROWS, 1)))
void transposed_copy(const long rows, const long cols,
                     __global const SRC_T* restrict src, const long src_offset, const long4 ss,
                     __global DST_T* restrict dst, const long dst_offset, const long4 ds)
{
    const int lx = get_local_id(0), ly = get_local_id(1);
    const long c0 = get_group_id(0) * (long)TILE, r0 = get_group_id(1) * (long)TILE;
    const long batch = get_group_id(2);
    __local SRC_T tile[TILE][TILE + 1];
    STAGE_TILE(tile, src, src_offset + batch * ss.x, ss);
    barrier(CLK_LOCAL_MEM_FENCE);
    const long c = c0 + lx, base = dst_offset + batch * ds.x + c * ds.z;
    #pragma unroll
    for (int s = 0; s < TILE_STEPS; ++s) {
        const int i = ly + s * TILE_ROWS;
        if (r0 + i < rows && c < cols) {
            const SRC_T v = tile[lx][i];
#if TO_BOOL
            dst[base + (r0 + i) * ds.y] = NONZERO(v) ? (DST_T)1 : (DST_T)0;
#else
            dst[base + (r0 + i) * ds.y] = CONVERT(v);
#endif
        }
    }
}
