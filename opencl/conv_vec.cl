// Vectorized 1-D correlation: each work-item computes NV*VW consecutive outputs in NV vectors
// of width VW (seed 000's float4/float8 idea applied to seed 004's convolution). Per tap it
// loads VW consecutive inputs per vector with an unaligned vload and does one vector
// multiply-add with the broadcast mask value; the NV accumulators are independent, so the
// multiply-adds of one tap overlap instead of waiting on one dependency chain.
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]     for k in [0, L), x = 0 outside [0, n)
//
// Work-item g owns outputs [g*NV*VW, (g+1)*NV*VW). It runs the vector loop over the taps for
// which all its lanes read inside [0, n) (every tap, away from the edges); at the edges each
// lane then adds the remaining taps of its own clamped range one by one, so the scalar work per
// work-item is bounded by about (NV*VW)^2 taps whatever n and m are. Layout as in
// conv_basic.cl (no alignment needed: vloadn/vstoren only need element alignment).
// NDRange: ceil(L / (NV*VW)) rounded up to WG. Private memory: NV*VW accumulators, twice.
//
// Parameters: T element type, ACC accumulator type (unsigned for integers; the vector result is
// reinterpreted with as_<type>, which is the wrapping conversion), VW vector width (2, 4, 8 or
// 16), NV vectors per work-item (1 to 8), WG work-group size (the host's; not used in the
// code), IS_INT 1 for integer types.
#include "scalar_types.h"
#include "conv_layout.h"
#ifndef VW
#define VW 16
#endif
#ifndef NV
#define NV 4
#endif
#ifndef IS_INT
#define IS_INT 0
#endif

#include "vector_types.h"
#if IS_INT
#define TO_ACC(v) CAT(as_, VACC)(v)
#define FROM_ACC(v) CAT(as_, VT)(v)
#else
#define TO_ACC(v) (v)
#define FROM_ACC(v) (v)
#endif

__kernel void conv_vec(CONV_ARGS(__global))
{
    const int OUT = NV * VW;
    const int k0 = (int)get_global_id(0) * OUT;
    if (k0 >= L) return;
    x += x_off;
    const int start = k0 - pad;                    // x index of tap 0 for output k0
    // Taps for which all OUT lanes read inside [0, n): the vector range.
    const int jv0 = max(0, -start);
    const int jv1 = max(jv0, min(m, n - start - OUT + 1));
    __global const T* p = x + start;
    VACC acc[NV];
    #pragma unroll
    for (int r = 0; r < NV; ++r)
        acc[r] = (VACC)0;
    for (int j = jv0; j < jv1; ++j) {
        const VACC wj = (VACC)((ACC)w[j]);
        #pragma unroll
        for (int r = 0; r < NV; ++r)
            acc[r] += TO_ACC(VLOAD(0, p + j + r * VW)) * wj;
    }
    if (jv0 == 0 && jv1 == m && k0 + OUT <= L) {   // interior: no tap left, no lane past L
        #pragma unroll
        for (int r = 0; r < NV; ++r)
            VSTORE(FROM_ACC(acc[r]), 0, out + k0 + r * VW);
        return;
    }
    // Edges: finish each lane with the taps outside the vector range, one output at a time.
    ACC part[NV * VW];
    #pragma unroll
    for (int r = 0; r < NV; ++r)
        VSTORE(acc[r], 0, part + r * VW);
    const int lanes = min(OUT, L - k0);
    for (int i = 0; i < lanes; ++i) {
        const int s = start + i;
        const int lo = max(0, -s);
        const int hi = min(m, n - s);
        ACC a = part[i];
        for (int j = lo; j < min(hi, jv0); ++j)
            a += (ACC)x[s + j] * (ACC)w[j];
        for (int j = max(lo, jv1); j < hi; ++j)
            a += (ACC)x[s + j] * (ACC)w[j];
        out[k0 + i] = (T)a;
    }
}
