// Boolean-mask compaction (NumPy's x[mask]) in three launches over chunks of CHUNK = WG * ITEMS
// mask elements; each selected mask element selects a whole row of x, seen as rows x columns as
// in gather.cl: row r, column c is src[src_off + r*row_stride + off(c)] (strided_offset.h). The mask
// is read as uchar, element e at mask[mask_off + e*mask_stride] (strides may be negative); any
// nonzero byte selects. The destination is C-contiguous (selected rows x n_cols).
//
// Kernels:
//   mask_count    counts[1 + g] = number of selected elements in chunk g  (one group per chunk)
//   count_scan    counts[1 + g] = sum of those of the chunks before g, counts[0] = the total
//                 (in place; one work-group of SCAN_WG, each lane scanning a run of counts)
//   mask_compact  dst[(counts[1 + g] + j) * n_cols + c] = src[r_j, c], r_j the j-th selected row
//                 of chunk g; launched as n_groups x S groups, group (g, s) recounts chunk g in
//                 local memory and copies every S-th run of WG elements of the chunk's output
//                 (S > 1 spreads few chunks of long rows over more work-groups)
//
// The host reads counts[0] (the result's length) between count_scan and mask_compact.
//
// Parameters:
//   T        element type
//   NDIM     column dimensions (0-8); 0: one column (n_cols == 1), no column arithmetic
//   WG       work-group size of mask_count and mask_compact (a power of two)
//   ITEMS    mask elements per work-item (CHUNK = WG * ITEMS elements per work-group)
//   SCAN_WG  work-group size of count_scan (a power of two)
#pragma OPENCL FP_CONTRACT OFF

#ifndef T
#define T float
#endif
#ifndef NDIM
#define NDIM 1
#endif
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef SCAN_WG
#define SCAN_WG 256
#endif

#define CHUNK (WG * ITEMS)

#include "strided_offset.h"

// A chunk position in local memory: 16 bits where a chunk fits them (half the local memory).
#if CHUNK <= 65536
typedef ushort chunk_index_t;
#else
typedef uint chunk_index_t;
#endif

// The exclusive prefix sum of `v` over the `size` work-items of a work-group (Hillis-Steele in
// local memory `part`, `size` entries); *total gets the sum of all. Every work-item must call it.
#define DEFINE_GROUP_SCAN(NAME, TYPE)                                                        \
inline TYPE NAME(const TYPE v, __local TYPE* part, const int size, TYPE* total)            \
{                                                                                          \
    const int lid = get_local_id(0);                                                       \
    part[lid] = v;                                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                                          \
    for (int off = 1; off < size; off <<= 1) {                                             \
        const TYPE t = lid >= off ? part[lid - off] : (TYPE)0;                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        part[lid] += t;                                                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
    }                                                                                      \
    *total = part[size - 1];                                                               \
    const TYPE inclusive = part[lid];                                                      \
    barrier(CLK_LOCAL_MEM_FENCE);  /* part free for the caller's next use */               \
    return inclusive - v;                                                                  \
}
DEFINE_GROUP_SCAN(group_scan_int, int)
DEFINE_GROUP_SCAN(group_scan_long, long)

// Mask reads: work-item lid takes elements k*WG + lid of its chunk, so each of the ITEMS loads
// of a work-group reads WG consecutive mask elements.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mask_count(const long n, __global const uchar* restrict mask, const long mask_off,
                const long mask_stride, __global long* restrict counts)
{
    __local int part[WG];
    const int lid = get_local_id(0);
    const long base = (long)get_group_id(0) * CHUNK;
    const long left = n - base;
    int count = 0;
    for (int k = 0; k < ITEMS; ++k) {  // a fixed count: the loads unrolled, all in flight
        const int i = k * WG + lid;
        if (i < left) count += mask[mask_off + (base + i) * mask_stride] != 0;
    }
    part[lid] = count;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int width = WG / 2; width > 0; width >>= 1) {
        if (lid < width) part[lid] += part[lid + width];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) counts[1 + get_group_id(0)] = part[0];
}

// Lane lid scans the chunks [lid*per, (lid+1)*per): its run's sum, the work-group's exclusive
// scan of the sums, then the run rewritten as offsets. Every lane reads and writes only its own
// run (and lane 0 the total).
__kernel __attribute__((reqd_work_group_size(SCAN_WG, 1, 1)))
void count_scan(const long n_groups, __global long* counts)
{
    __local long part[SCAN_WG];
    const int lid = get_local_id(0);
    const long per = (n_groups + SCAN_WG - 1) / SCAN_WG;
    const long begin = min(lid * per, n_groups);
    const long end = min(begin + per, n_groups);
    long sum = 0;
    __global long* chunk_counts = counts + 1;
    for (long g = begin; g < end; ++g) sum += chunk_counts[g];
    long total;
    long run = group_scan_long(sum, part, SCAN_WG, &total);
    for (long g = begin; g < end; ++g) {
        const long c = chunk_counts[g];
        chunk_counts[g] = run;
        run += c;
    }
    if (lid == 0) counts[0] = total;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mask_compact(const long n, const long n_cols,
                  __global const T* restrict src, const long src_off, const long row_stride,
                  const long8 cshape, const long8 cstride,
                  __global const uchar* restrict mask, const long mask_off,
                  const long mask_stride, __global const long* restrict counts,
                  __global T* restrict dst)
{
    __local uchar flag[CHUNK];              // the chunk's mask, 0 or 1
    __local chunk_index_t selected[CHUNK];  // positions of its selected elements, in order
    __local int part[WG];
    const int lid = get_local_id(0);
    const long group = get_group_id(0);
    const long base = group * CHUNK;
    const long left = n - base;
    for (int k = 0; k < ITEMS; ++k) {  // coalesced, as mask_count
        const int i = k * WG + lid;
        flag[i] = i < left && mask[mask_off + (base + i) * mask_stride] != 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Work-item lid ranks elements lid*ITEMS .. lid*ITEMS + ITEMS-1: consecutive runs, so that
    // one scan over the work-items orders the whole chunk.
    const int first_item = lid * ITEMS;
    int count = 0;
    for (int k = 0; k < ITEMS; ++k) count += flag[first_item + k];
    int n_selected;
    int rank = group_scan_int(count, part, WG, &n_selected);
    for (int k = 0; k < ITEMS; ++k)
        if (flag[first_item + k]) selected[rank++] = (chunk_index_t)(first_item + k);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (n_selected == 0) return;
    const long out_row = counts[1 + group];
    const int slice = get_group_id(1), n_slices = get_num_groups(1);
    __global const T* restrict rows = src + src_off + base * row_stride;
#if NDIM == 0
    // one column: element t of the chunk's output is selected row t
    for (int t = slice * WG + lid; t < n_selected; t += n_slices * WG)
        dst[out_row + t] = rows[(long)selected[t] * row_stride];
#else
    // element t of the chunk's output is row j = t / n_cols, column c = t % n_cols; t steps by
    // n_slices * WG, so j and c step by its quotient and remainder (no division per element)
    const long shp[8] = UNPACK8(cshape), st[8] = UNPACK8(cstride);
    const long step = (long)n_slices * WG;
    const long dj = step / n_cols, dc = step - dj * n_cols;
    const long t0 = (long)slice * WG + lid;
    long j = t0 / n_cols, c = t0 - j * n_cols;
    __global T* restrict out = dst + out_row * n_cols;
    while (j < n_selected) {
#if NDIM == 1
        const long col = c * st[7];  // c < n_cols == shp[7]
#else
        const long col = offset_of(c, shp, st, NDIM);
#endif
        out[j * n_cols + c] = rows[(long)selected[j] * row_stride + col];
        j += dj;
        c += dc;
        if (c >= n_cols) {
            c -= n_cols;
            ++j;
        }
    }
#endif
}
