// Global -> local copies and C stores shared by the tensor-core kernels (gemm_mma.cl,
// gemm_wgmma.cl). The includer defines GT (global element), LT (local element), OT (output
// element), EPC (elements per 16-byte chunk), ELEM (1 float16, 2 bfloat16, 3 TF32), MMA_PTX (1:
// NVIDIA inline PTX), VEC_C, SIMULATOR and CP_ASYNC_LEFT (see cp_async.h), and may define
// OUT_HALF (1: OT is half; default: ELEM == 1; 0 where float16 products write float32 partial
// sums).
#ifndef MMA_COPY_H
#define MMA_COPY_H

#ifndef OUT_HALF
#define OUT_HALF (ELEM == 1)
#endif

inline void store_out(__global OT* C, const long i, const float v)
{
#if OUT_HALF
    vstore_half_rte(v, i, C);
#else
    C[i] = v;
#endif
}

// -- global -> local --------------------------------------------------------------------------
#include "cp_async.h"

// One 16-byte chunk of an operand through registers: EPC elements along its contiguous axis
// starting at `inner` in row `outer` of its storage; zeros past outer_lim / inner_lim.
inline uint4 load_chunk(__global const GT* X, const int ld, const int outer, const int inner,
                        const int outer_lim, const int inner_lim, const bool vec)
{
    if (outer >= outer_lim)
        return (uint4)(0u);
    __global const GT* p = X + (long)outer * ld + inner;
    if (vec && inner + EPC <= inner_lim)
        return *(__global const uint4*)p;
    uint e[EPC];
    #pragma unroll
    for (int i = 0; i < EPC; ++i) {
#if ELEM == 3
        e[i] = inner + i < inner_lim ? as_uint(p[i]) : 0u;
#else
        e[i] = inner + i < inner_lim ? (uint)p[i] : 0u;
#endif
    }
#if EPC == 4
    return (uint4)(e[0], e[1], e[2], e[3]);
#else
    return (uint4)(e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16);
#endif
}

// The chunk at (outer, inner) into local memory at dst: cp.async where it is a whole aligned
// chunk (or a row past the matrix: zero-filled), through registers otherwise.
inline void copy_chunk(__local LT* dst, __global const GT* X, const int ld, const int outer,
                       const int inner, const int outer_lim, const int inner_lim, const bool vec)
{
#if MMA_PTX
    if (vec && inner + EPC <= inner_lim) {
        const bool inside = outer < outer_lim;
        __global const GT* p = X + (inside ? (long)outer * ld + inner : 0);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                     :: "r"(SHARED_ADDR(dst)), "l"((ulong)p), "r"(inside ? 16 : 0) : "memory");
        return;
    }
#endif
    *(__local uint4*)dst = load_chunk(X, ld, outer, inner, outer_lim, inner_lim, vec);
}

// C(row, n), C(row, n + 1) from one accumulator pair (n + 1 may be past N).
inline void store_pair(__global OT* C, const long i, const bool both, const float v0,
                       const float v1)
{
#if VEC_C && MMA_PTX && OUT_HALF
    if (both) {
        uint h2;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h2) : "f"(v1), "f"(v0));
        ((__global uint*)C)[i >> 1] = h2;
        return;
    }
#elif VEC_C && MMA_PTX
    if (both) {   // one 8-byte store (LLVM splits a float2 store of two unrelated scalars)
        asm volatile("st.global.v2.f32 [%0], {%1, %2};" :: "l"((ulong)(C + i)), "f"(v0), "f"(v1)
                     : "memory");
        return;
    }
#elif VEC_C && !OUT_HALF && !SIMULATOR
    // (Not on Oclgrind: it calls a vector built from two initialized floats uninitialized.)
    if (both) {
        *(__global float2*)(C + i) = (float2)(v0, v1);
        return;
    }
#endif
    store_out(C, i, v0);
    if (both)
        store_out(C, i + 1, v1);
}

// -- C through local memory --------------------------------------------------------------------
// The accumulator fragments give a warp's store pairs of elements on 8 rows of C at once (and,
// where C's rows do not start on a pair, single elements): most of each 32-byte sector it
// touches goes unwritten, and a product whose time is the writing of C (a short K over a wide
// C) runs at a fraction of the memory's bandwidth. stage_pair puts the
// pairs in a local tile of C; store_staged then writes it a row at a time, each warp one run of
// consecutive elements of one row, whole sectors whatever the row alignment.
#if OUT_HALF
typedef ushort CS_T;        // float16 bits, rounded once
#define CS_ESIZE 2
#else
typedef float CS_T;
#define CS_ESIZE 4
#endif
#define CS_PAD (16 / CS_ESIZE)   // a 16-byte skew a row: the pairs of one store spread over
                                 // the banks

inline void stage_pair(__local CS_T* Cs, const int i, const float v0, const float v1)
{
#if OUT_HALF
    vstore_half_rte(v0, i, (__local half*)Cs);
    vstore_half_rte(v1, i + 1, (__local half*)Cs);
#else
    Cs[i] = v0;
    Cs[i + 1] = v1;
#endif
}

// The rows x cols tile at Cs (row stride cs_ld) to C(m0.., n0..) within M x N, by the nthreads
// work-items of the work-group (the caller's barrier orders the staging before it).
inline void store_staged(__global OT* C, const long c0, const int ldc, __local const CS_T* Cs,
                         const int cs_ld, const int rows, const int cols, const int m0,
                         const int n0, const int M, const int N, const int tid,
                         const int nthreads)
{
    const int live_rows = min(rows, M - m0), live_cols = min(cols, N - n0);
    for (int i = tid; i < live_rows * cols; i += nthreads) {
        const int r = i / cols, c = i - r * cols;
        if (c < live_cols) {
#if OUT_HALF
            ((__global ushort*)C)[c0 + (long)(m0 + r) * ldc + n0 + c] = Cs[r * cs_ld + c];
#else
            C[c0 + (long)(m0 + r) * ldc + n0 + c] = Cs[r * cs_ld + c];
#endif
        }
    }
}

#endif
