// Products with one thin side (variant thin): C = A @ B where M or N is a few dozen or less,
// written as
//
//   Y[b](r, j) = sum_k X[b](r, k) * V[b](k, j),    r < R, j < NV
//
// X is the wide operand (B^T when M is thin, A when N is), read once from global memory; V is
// the thin one, staged KCH rows at a time in local memory, where every work-item of a
// work-group reads the same words (broadcasts). A work-item owns RV rows of X and JB columns of
// V: RV x JB accumulators, so each value of X loaded feeds JB multiply-adds. Element (r, k) of X
// is X[x_off + b*x_batch + r*xr + k*xk], V(k, j) = V[v_off + b*v_batch + k*vk + j*vj], Y(r, j) =
// Y[y_off + b*y_batch + r*yr + j*yj] (elements).
//
//   X_ROWS 0   X's columns are contiguous (xr == 1): neighbouring work-items read neighbouring
//              rows of one column, RV consecutive rows each.
//   X_ROWS 1   X's rows are contiguous (xk == 1): each work-item walks its own row (RV == 1),
//              VW elements per load where ALIGNED.
//
// K is cut into KSPLIT slices of KC elements (a multiple of KCH; the last slice shorter) and the
// columns of V into passes of JB (global dimension 1 is KSPLIT x passes); with KSPLIT > 1 slice
// s writes its partial sums to work[((b*KSPLIT + s)*NV + j)*R + r] and gemm_thin_reduce adds
// them into Y, or with FINISH_LAST (last_group.h) the last slice of each (batch, pass, group of
// rows) adds them (`counters`: one word each). Global size (WG * ceil(R / (WG*RV)),
// KSPLIT * passes, batch).
//
// Parameters: T, ACC; IO16 (1: float16 X, V and Y read with vload_half and written rounded once
// with vstore_half_rte; 2: bfloat16 X and V, float Y; computed in float either way; 0: T), WG,
// RV, JB (a multiple of 4), KCH, KSPLIT, KC, X_ROWS, VW (1, 2, 4, 8), ALIGNED (rows of X start
// on multiples of VW elements: x_off, xr and x_batch are), V_K_UNIT (vk == 1: V is staged
// walking k first), UNROLL (steps of a chunk unrolled: the loops over the RV x JB accumulators
// are unrolled whole, so that they stay in registers).
#include "io16.h"
#include "scalar_types.h"
#ifndef WG
#define WG 128
#endif
#ifndef RV
#define RV 1
#endif
#ifndef JB
#define JB 4
#endif
#ifndef KCH
#define KCH 32
#endif
#include "last_group.h"
#ifndef KSPLIT
#define KSPLIT 1
#endif
#if FINISH_LAST && KSPLIT < 2
#error "FINISH_LAST needs KSPLIT > 1"
#endif
#ifndef KC
#define KC KCH
#endif
#ifndef X_ROWS
#define X_ROWS 0
#endif
#ifndef VW
#define VW 1
#endif
#ifndef ALIGNED
#define ALIGNED 0
#endif
#ifndef V_K_UNIT
#define V_K_UNIT 0
#endif
#ifndef UNROLL
#define UNROLL 2
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)

// IN_T: how X and V are held in memory; LOAD(p): one element as ACC; OUT_T and STORE_Y for Y.
#if IO16
#define IN_T IN16
#define OUT_T OUT16
#define LOAD(p) LOAD16(p)
#define STORE_Y(p, value) STORE16(p, value)
#else
#define IN_T T
#define OUT_T T
#define LOAD(p) ((ACC)*(p))
#define STORE_Y(p, value) (*(p) = (T)(value))
#endif

// XV(p, dst): VW consecutive elements of a row of X into dst[0..VW) (ACC).
#if X_ROWS && VW > 1 && IO16 == 1
#define XV(p, dst) CAT(vstore, VW)(CAT(vload_half, VW)(0, (__global const half*)(p)), 0, dst)
#elif X_ROWS && VW > 1 && ALIGNED && IO16 == 2
#define XV(p, dst) CAT(vstore, VW)(CAT(as_float, VW)(CAT(convert_uint, VW)(                     \
    *(__global const CAT(ushort, VW)*)(p)) << 16), 0, dst)
#elif X_ROWS && VW > 1 && ALIGNED && IO16 == 0
#define XV(p, dst) CAT(vstore, VW)(CAT(convert_, CAT(ACC, VW))(*(__global const CAT(T, VW)*)(p)), \
    0, dst)
#else
#define XV(p, dst) for (int e_ = 0; e_ < VW; ++e_) (dst)[e_] = LOAD((p) + e_)
#endif

// One k of the column form: X(r0 .. r0 + RV, kc + i) times the staged row i of V.
#define COLS_STEP(i) do {                                                                      \
        ACC xv_[RV];                                                                           \
        _Pragma("unroll")                                                                      \
        for (int e_ = 0; e_ < RV; ++e_)                                                        \
            xv_[e_] = LOAD(xp + (long)(i) * xk + xrow[e_]);                                    \
        _Pragma("unroll")                                                                      \
        for (int e_ = 0; e_ < RV; ++e_)                                                        \
            _Pragma("unroll")                                                                  \
            for (int j_ = 0; j_ < JB; ++j_)                                                    \
                acc[e_][j_] += xv_[e_] * vt[i][j_];                                            \
    } while (0)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemm_thin(const int R, const int K, const int NV,
               __global const IN_T* restrict X, const long x_off, const long xr, const long xk,
               const long x_batch,
               __global const IN_T* restrict V, const long v_off, const long vk, const long vj,
               const long v_batch,
               __global OUT_T* restrict Y, const long y_off, const long yr, const long yj,
               const long y_batch,
               __global ACC* restrict work
#if FINISH_LAST
               , __global volatile int* restrict counters
#endif
               )
{
    __local ACC vt[KCH][JB];
    const uint lid = get_local_id(0);
    const int r0 = (int)(get_group_id(0) * WG + lid) * RV;
    // A quotient and its remainder by multiplication: a / and % pair becomes an LLVM "freeze"
    // that Oclgrind cannot run.
    const int pass = (int)get_group_id(1) / KSPLIT;
    const int s = (int)get_group_id(1) - pass * KSPLIT;
    const int j0 = pass * JB;
    const long b = get_global_id(2);
    const int k0 = s * KC;
    const int k1 = min(K, k0 + KC);
    __global const IN_T* xb = X + x_off + b * x_batch;
    __global const IN_T* vb = V + v_off + b * v_batch;
    // Rows past R read row R - 1 (never stored): the loop over K needs no row test.
    long xrow[RV];
    for (int e = 0; e < RV; ++e)
        xrow[e] = (long)min(r0 + e, R - 1) * xr;
    ACC acc[RV][JB];
    _Pragma("unroll")
    for (int e = 0; e < RV; ++e)
        _Pragma("unroll")
        for (int j = 0; j < JB; ++j)
            acc[e][j] = (ACC)0;

    for (int kc = k0; kc < k1; kc += KCH) {
        const int steps = min(KCH, k1 - kc);
        for (int t = (int)lid; t < KCH * JB; t += WG) {   // zeros past the slice and NV
#if V_K_UNIT
            const int j = t / KCH, i = t - j * KCH;
#else
            const int i = t / JB, j = t - i * JB;
#endif
            vt[i][j] = (i < steps && j0 + j < NV)
                ? LOAD(vb + (long)(kc + i) * vk + (long)(j0 + j) * vj) : (ACC)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#if X_ROWS
        __global const IN_T* xp = xb + xrow[0] + kc;
        if (steps == KCH) {
            _Pragma(STR(unroll UNROLL))
            for (int i = 0; i < KCH; i += VW) {
                ACC xv[VW];
                XV(xp + i, xv);
                _Pragma("unroll")
                for (int u = 0; u < VW; ++u)
                    _Pragma("unroll")
                    for (int j = 0; j < JB; ++j)
                        acc[0][j] += xv[u] * vt[i + u][j];
            }
        } else {
            for (int i = 0; i < steps; ++i) {
                const ACC xv = LOAD(xp + i);
                _Pragma("unroll")
                for (int j = 0; j < JB; ++j)
                    acc[0][j] += xv * vt[i][j];
            }
        }
#else
        __global const IN_T* xp = xb + (long)kc * xk;
        if (steps == KCH) {   // a constant trip count: loads issued early
            _Pragma(STR(unroll UNROLL))
            for (int i = 0; i < KCH; ++i)
                COLS_STEP(i);
        } else {
            for (int i = 0; i < steps; ++i)
                COLS_STEP(i);
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    _Pragma("unroll")
    for (int e = 0; e < RV; ++e) {
        const int r = r0 + e;
        _Pragma("unroll")
        for (int j = 0; j < JB; ++j) {
            if (r >= R || j0 + j >= NV)
                continue;
#if KSPLIT > 1
            work[((b * KSPLIT + s) * NV + j0 + j) * (long)R + r] = acc[e][j];
#else
            STORE_Y(Y + y_off + b * y_batch + (long)r * yr + (long)(j0 + j) * yj, acc[e][j]);
#endif
        }
    }
#if FINISH_LAST
    __local int last;
    const long tile = (b * (get_num_groups(1) / KSPLIT) + pass) * get_num_groups(0)
                      + get_group_id(0);
    LAST_GROUP_ARRIVE(counters + tile, KSPLIT, last);
    if (last) {   // each work-item sums the slices of the elements it wrote
        __global volatile const ACC* w = (__global volatile const ACC*)work;
        for (int e = 0; e < RV; ++e) {
            const int r = r0 + e;
            for (int j = 0; j < JB; ++j) {
                if (r >= R || j0 + j >= NV)
                    continue;
                ACC sum = (ACC)0;
                for (int t = 0; t < KSPLIT; ++t)
                    sum += w[((b * KSPLIT + t) * NV + j0 + j) * (long)R + r];
                STORE_Y(Y + y_off + b * y_batch + (long)r * yr + (long)(j0 + j) * yj, sum);
            }
        }
        if (lid == 0)
            counters[tile] = 0;
    }
#endif
}

// Y(r, j) = sum over the KSPLIT slices of work; global (ceil(R / 64) * 64, NV, batch).
__kernel void gemm_thin_reduce(const int R, const int NV, __global const ACC* restrict work,
                               __global OUT_T* restrict Y, const long y_off, const long yr,
                               const long yj, const long y_batch)
{
    const int r = get_global_id(0);
    const int j = get_global_id(1);
    const long b = get_global_id(2);
    if (r >= R)
        return;
    __global const ACC* w = work + (b * KSPLIT * NV + j) * (long)R + r;
    ACC acc = (ACC)0;
    for (int s = 0; s < KSPLIT; ++s)
        acc += w[(long)s * NV * R];
    STORE_Y(Y + y_off + b * y_batch + (long)r * yr + (long)j * yj, acc);
}
