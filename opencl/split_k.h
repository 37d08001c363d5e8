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

#endif
