// Matrix-vector products: GEMM with N == 1 (A @ x) or M == 1 (x @ B) seen as
//
//   y[b](r) = sum_k X[b](r, k) * v[b](k),    r < R
//
// with X(r, k) = X[x_off + b*x_batch + r*xr + k*xk], v(k) = v[v_off + b*v_batch + k*vs] and
// y(r) = y[y_off + b*y_batch + r*ys] (all in elements). For N == 1, X = A and v = B's column; for
// M == 1, X = B transposed (r = n) and v = A's row; any layout is just a choice of strides.
//
// Two kernels, for the two ways X can lie in memory:
//   gemv_reduce  rows of X contiguous (xk == 1): WG work-items share a row r, each reading VW
//                consecutive elements per step, then sum in local memory. VW > 1 needs
//                xk == 1 and vs == 1 (vector loads of x and v). On CPUs WG = 1: one
//                work-item streams a whole row with vector loads.
//                Global size (WG, R, batch), local size (WG, 1, 1); WG a power of two.
//   gemv_sweep   columns of X contiguous (xr == 1, required): one work-item per RB = VW*NVEC
//                consecutive rows loops over k, loading NVEC vectors from each column of X
//                (several cache lines per step, so the strided walk down k wastes less).
//                Global size (ceil(ceil(R/RB)/WG)*WG, 1, batch), local size (WG, 1, 1).
// Any R, K (bounds-checked; partial vectors are done element by element).
//
// Parameters: T, ACC (unsigned for integers), WG work-group size, VW vector width (1, 2, 4, 8,
// 16), NVEC vectors per work-item (gemv_sweep).
#include "scalar_types.h"
#ifndef WG
#define WG 64
#endif
#ifndef VW
#define VW 1
#endif
#ifndef NVEC
#define NVEC 1
#endif
#define RB (VW * NVEC)     // rows per work-item of gemv_sweep

#if VW > 1
#include "vector_types.h"
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_reduce(const int R, const int K,
                 __global const T* restrict X, const long x_off, const long xr, const long xk,
                 const long x_batch,
                 __global const T* restrict v, const long v_off, const long vs, const long v_batch,
                 __global T* restrict y, const long y_off, const long ys, const long y_batch)
{
    const int lid = get_local_id(0);
    const int r = get_global_id(1);
    const long b = get_global_id(2);
    __global const T* x = X + x_off + b * x_batch + (long)r * xr;
    v += v_off + b * v_batch;
    ACC acc = (ACC)0;
#if VW > 1
    const int kfull = K / VW * VW;
    VACC accv = (VACC)0;
    for (int k = lid * VW; k < kfull; k += WG * VW)
        accv += TO_VACC(VLOAD(0, x + k)) * TO_VACC(VLOAD(0, v + k));
    ACC parts[VW];
    VSTORE(accv, 0, parts);
    for (int e = 0; e < VW; ++e)
        acc += parts[e];
    for (int k = kfull + lid; k < K; k += WG)
        acc += (ACC)x[k] * (ACC)v[k];
#else
    for (int k = lid; k < K; k += WG)
        acc += (ACC)x[(long)k * xk] * (ACC)v[(long)k * vs];
#endif
#if WG > 1
    __local ACC part[WG];
    part[lid] = acc;
    for (int step = WG / 2; step > 0; step /= 2) {
        // Each halving step reads what the previous one wrote.
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < step)
            part[lid] += part[lid + step];
    }
    acc = part[0];
#endif
    if (lid == 0)
        y[y_off + b * y_batch + (long)r * ys] = (T)acc;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_sweep(const int R, const int K,
                __global const T* restrict X, const long x_off, const long xr, const long xk,
                const long x_batch,
                __global const T* restrict v, const long v_off, const long vs, const long v_batch,
                __global T* restrict y, const long y_off, const long ys, const long y_batch)
{
    const int r0 = get_global_id(0) * RB;
    const long b = get_global_id(2);
    if (r0 >= R) return;
    __global const T* x = X + x_off + b * x_batch + r0;     // xr == 1
    v += v_off + b * v_batch;
    y += y_off + b * y_batch;
#if VW > 1
    if (r0 + RB <= R) {
        VACC acc[NVEC];
        for (int j = 0; j < NVEC; ++j)
            acc[j] = (VACC)0;
        for (int k = 0; k < K; ++k) {
            const VACC vk = (VACC)((ACC)v[(long)k * vs]);
            for (int j = 0; j < NVEC; ++j)
                acc[j] += TO_VACC(VLOAD(j, x + (long)k * xk)) * vk;
        }
        for (int j = 0; j < NVEC; ++j) {
            ACC parts[VW];
            VSTORE(acc[j], 0, parts);
            for (int e = 0; e < VW; ++e)
                y[(long)(r0 + j * VW + e) * ys] = (T)parts[e];
        }
        return;
    }
#endif
    for (int r = r0; r < min(r0 + RB, R); ++r) {
        ACC acc = (ACC)0;
        for (int k = 0; k < K; ++k)
            acc += (ACC)x[(long)k * xk + (r - r0)] * (ACC)v[(long)k * vs];
        y[(long)r * ys] = (T)acc;
    }
}
