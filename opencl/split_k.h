// Split-K for the tensor-core kernels that walk K in BK-deep steps (gemm_wgmma.cl,
// gemm_dmma.cl): work-group z = b * KSPLIT + s takes slice s of the steps of batch b and writes
// its partial product to matrix z of C (the host passes a workspace of batch * KSPLIT matrices
// and sums them with gemm_gpu.cl's gemm_gpu_splitk_reduce). The includer defines KSPLIT (1: no
// split) and BK.
#ifndef SPLIT_K_H
#define SPLIT_K_H

typedef struct {
    long batch;   // the operands' batch index
    int first;    // the slice's first step
    int steps;    // its number of steps (0 for a slice past the last step)
} KSlice;

inline KSlice k_slice(const long z, const int K)
{
    KSlice s;
#if KSPLIT > 1
    s.batch = z / KSPLIT;
    const int slice = (int)(z - s.batch * KSPLIT);
#else
    s.batch = z;
    const int slice = 0;
#endif
    const int all_steps = (int)(((uint)K + BK - 1) / BK);
    const int per_slice = (all_steps + KSPLIT - 1) / KSPLIT;
    s.first = slice * per_slice;
    s.steps = max(min(all_steps - s.first, per_slice), 0);
    return s;
}

// With FINISH_LAST (last_group.h) the slices of a tile finish in one launch: the last of a
// tile's KSPLIT work-groups sums their partial products into the real C, in slice order (the
// sums of gemm_gpu_splitk_reduce), and the kernel takes SPLIT_K_FINAL_ARGS after the standard
// ones: where C lies (final_off, final_ld, final_batch), C itself and the group counters (one
// per tile and batch). SPLIT_T: the partial products' type (float); FINAL_HALF 1: C is float16
// (stored through vstore_half_rte: no cl_khr_fp16 needed).
// An includer whose sums wrap or narrow defines SPLIT_ADD(a, b) and FINAL_T with
// FINAL_NARROW(x) (gemm_gpu.cl: integers added in their unsigned type, kept narrow in C).
#include "last_group.h"
#ifndef SPLIT_T
#define SPLIT_T float
#endif
#ifndef FINAL_HALF
#define FINAL_HALF 0
#endif
#ifndef SPLIT_ADD
#define SPLIT_ADD(a, b) ((a) + (b))
#endif
#ifndef FINAL_NARROW
#define FINAL_NARROW(x) (x)
#endif
#ifndef FINAL_T
#if FINAL_HALF
#define FINAL_T half
#else
#define FINAL_T SPLIT_T
#endif
#endif
#if FINISH_LAST && KSPLIT < 2
#error "FINISH_LAST needs KSPLIT > 1"
#endif
#if FINISH_LAST
#define SPLIT_K_FINAL_ARGS , const long final_off, const int final_ld, const long final_batch, \
    __global FINAL_T* restrict final_c, __global volatile int* restrict counters

// C's tile (m0, n0), bm x bn clipped to M x N, of batch b = the sum over the slices s of the
// partial products at W + (b * KSPLIT + s) * w_batch + row * ldw + col.
inline void split_k_sum_tile(const int M, const int N, const long b, const int m0, const int n0,
                             const int bm, const int bn, __global const SPLIT_T* W,
                             const int ldw, const long w_batch, __global FINAL_T* C,
                             const long c_off, const int ldc, const long c_batch)
{
    __global volatile const SPLIT_T* w =
        (__global volatile const SPLIT_T*)W + b * KSPLIT * w_batch;
    const uint count = (uint)bm * (uint)bn, threads = get_local_size(0);
    for (uint e = get_local_id(0); e < count; e += threads) {
        const uint i = e / (uint)bn;   // unsigned: no signed / and % pair (Oclgrind)
        const int row = m0 + (int)i, col = n0 + (int)(e - i * (uint)bn);
        if (row >= M || col >= N)
            continue;
        SPLIT_T sum = (SPLIT_T)0;
        for (int t = 0; t < KSPLIT; ++t)
            sum = SPLIT_ADD(sum, w[t * w_batch + (long)row * ldw + col]);
        const long at = c_off + b * c_batch + (long)row * ldc + col;
#if FINAL_HALF
        vstore_half_rte(sum, at, C);
#else
        C[at] = FINAL_NARROW(sum);
#endif
    }
}

// Called by every work-item after the partial products are stored; `last` names a __local
// int of the kernel. The tile's counter: its work-group's (0, 1) ids within batch b.
#define SPLIT_K_FINISH(last, b, m0, n0, bm, bn, W, ldw, w_batch) do { \
        const long tile_ = ((b) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) \
                           + get_group_id(0); \
        LAST_GROUP_ARRIVE(counters + tile_, KSPLIT, last); \
        if (last) { \
            split_k_sum_tile(M, N, b, m0, n0, bm, bn, W, ldw, w_batch, final_c, final_off, \
                             final_ld, final_batch); \
            if (get_local_id(0) == 0) \
                counters[tile_] = 0; \
        } \
    } while (0)
#else
#define SPLIT_K_FINAL_ARGS
#endif

#endif
