// Matrix-vector products at memory bandwidth on GPUs (variant gemv_split):
//
//   y[b](r) = sum_k X[b](r, k) * v[b](k),    r < R
//
// with the strides of gemv.cl: X(r, k) = X[x_off + b*x_batch + r*xr + k*xk], v(k) =
// v[v_off + b*v_batch + k*vs], y(r) = y[y_off + b*y_batch + r*ys] (elements).
//
// K is cut into KSPLIT slices of KC elements (the last shorter); with KSPLIT > 1 slice s of row r
// writes its partial sum to work[(b*KSPLIT + s)*R + r] (ACC) and gemv_split_reduce adds the
// slices into y, so that enough work-groups run to keep every compute unit's loads in flight.
//
//   gemv_rows   rows of X contiguous (xk == 1, e.g. A @ x with A C-ordered): LANES work-items
//               share a row, each loading VW consecutive elements per step; WG/LANES rows per
//               work-group; a tree reduction in local memory over the LANES partial sums.
//               Global size (WG * ceil(R / (WG/LANES)), KSPLIT, batch).
//   gemv_cols   columns of X contiguous (xr == 1, e.g. x @ B with B C-ordered): RT work-items
//               along r, each holding VW consecutive rows, times KT = WG/RT work-items along k
//               that stride through the slice; a tree reduction in local memory over KT.
//               Global size (WG * ceil(R / (RT*VW)), KSPLIT, batch).
//   gemv_split_reduce  y(r) = sum_s work[(b*KSPLIT + s)*R + r]; global (ceil(R/64)*64, batch).
//               With FINISH_LAST (last_group.h) the last slice of each work-group's rows adds
//               the slices itself (`counters`: one word per (batch, group of rows)) instead.
//
// Parameters: T, ACC (unsigned for integers), or IO16 (io16.h: float16 or bfloat16 elements read
// as they are, float sums), WG (power of two), VW (1, 2, 4, 8, 16), LANES
// (power of two dividing WG), RT (dividing WG, WG/RT a power of two), KSPLIT, KC (a multiple of
// VW for gemv_rows), ALIGNED (1: X's vectors are VW-aligned: x_off, the row (rows) or column
// (cols) stride and x_batch multiples of VW; then they load as whole vectors), V_UNIT (vs == 1).
#include "io16.h"
#include "last_group.h"
#include "scalar_types.h"
#ifndef WG
#define WG 256
#endif
#ifndef VW
#define VW 4
#endif
#ifndef LANES
#define LANES 32
#endif
#ifndef RT
#define RT 16
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#ifndef KC
#define KC 1
#endif
#ifndef ALIGNED
#define ALIGNED 0
#endif
#ifndef V_UNIT
#define V_UNIT 0
#endif
#define KT (WG / RT)

// XT / YT: the elements of X and v, and of y, in memory; LD(p): one element as ACC; PUT(p, v):
// v stored at p.
#if IO16
#define XT IN16
#define YT OUT16
#define LD(p) LOAD16(p)
#define PUT(p, value) STORE16(p, value)
#else
#define XT T
#define YT T
#define LD(p) ((ACC)*(p))
#define PUT(p, value) (*(p) = (T)(value))
#endif

// VLD(p): VW elements from any address; XLOAD(p): VW elements of X (whole aligned vectors when
// ALIGNED).
#if VW > 1
#include "vector_types.h"
#if IO16 == 1
#define VLD(p) CAT(vload_half, VW)(0, (__global const half*)(p))
#elif IO16 == 2
#define VLD(p) CAT(as_, VACC)(CAT(convert_uint, VW)(VLOAD(0, p)) << 16)
#else
#define VLD(p) TO_VACC(VLOAD(0, p))
#endif
#if ALIGNED && !IO16
#define XLOAD(p) TO_VACC(*(__global const VT*)(p))
#else
#define XLOAD(p) VLD(p)
#endif
#else
#define VACC ACC
#define XLOAD(p) LD(p)
#endif

// The result of row r of batch b and slice s: into y directly, or into the slice workspace.
#if KSPLIT > 1
#define STORE(r, value) work[((long)b * KSPLIT + s) * R + (r)] = (value)
#else
#define STORE(r, value) PUT(y + y_off + b * y_batch + (long)(r) * ys, value)
#endif
#if FINISH_LAST && KSPLIT < 2
#error "FINISH_LAST needs KSPLIT > 1"
#endif
#if FINISH_LAST
#define COUNTERS , __global volatile int* restrict counters
#else
#define COUNTERS
#endif

// y(r) for rows [r_begin, min(r_begin + n, R)) of batch b: the sum of their KSPLIT slices
// (the last group of those rows, FINISH_LAST)
inline void add_slices(const int R, const int r_begin, const int n, const long b,
                       __global const ACC* work, __global YT* y, const long y_off, const long ys,
                       const long y_batch)
{
    __global volatile const ACC* w = (__global volatile const ACC*)work + b * KSPLIT * (long)R;
    for (int i = get_local_id(0); i < n && r_begin + i < R; i += get_local_size(0)) {
        const int r = r_begin + i;
        ACC acc = (ACC)0;
        for (int s = 0; s < KSPLIT; ++s)
            acc += w[(long)s * R + r];
        PUT(y + y_off + b * y_batch + (long)r * ys, acc);
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_rows(const int R, const int K,
               __global const XT* restrict X, const long x_off, const long xr, const long xk,
               const long x_batch,
               __global const XT* restrict v, const long v_off, const long vs, const long v_batch,
               __global YT* restrict y, const long y_off, const long ys, const long y_batch,
               __global ACC* restrict work COUNTERS)
{
    // Unsigned index arithmetic: a signed / and % pair becomes an LLVM "freeze" that Oclgrind
    // cannot run.
    const uint lid = get_local_id(0);
    const uint lane = lid % LANES;
    const int r = get_group_id(0) * (WG / LANES) + (int)(lid / LANES);
    const int s = get_global_id(1);
    const long b = get_global_id(2);
    const int k0 = s * KC;
    const int k1 = min(K, k0 + KC);
    ACC acc = (ACC)0;
    if (r < R && k0 < k1) {
        __global const XT* x = X + x_off + b * x_batch + (long)r * xr;   // xk == 1
        __global const XT* vb = v + v_off + b * v_batch;
#if VW > 1
        const int kv = k0 + (int)((uint)(k1 - k0) / VW * VW);   // vectors below kv
        VACC accv = (VACC)0;
        for (int k = k0 + (int)lane * VW; k < kv; k += LANES * VW) {
#if V_UNIT
            const VACC vk = VLD(vb + k);
#else
            VACC vk;
            ACC vparts[VW];
            for (int e = 0; e < VW; ++e)
                vparts[e] = LD(vb + (long)(k + e) * vs);
            vk = CAT(vload, VW)(0, vparts);
#endif
            accv += XLOAD(x + k) * vk;
        }
        ACC parts[VW];
        CAT(vstore, VW)(accv, 0, parts);
        for (int e = 0; e < VW; ++e)
            acc += parts[e];
#else
        const int kv = k0;
#endif
        for (int k = kv + (int)lane; k < k1; k += LANES)
            acc += LD(x + k) * LD(vb + (long)k * vs);
    }
#if LANES > 1
    __local ACC part[WG];
    part[lid] = acc;
    for (uint step = LANES / 2; step > 0; step /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane < step)
            part[lid] += part[lid + step];
    }
    acc = part[lid];
#endif
    if (lane == 0 && r < R)
        STORE(r, acc);
#if FINISH_LAST
    __local int last;
    const long tile = b * get_num_groups(0) + get_group_id(0);
    LAST_GROUP_ARRIVE(counters + tile, KSPLIT, last);
    if (last) {
        add_slices(R, get_group_id(0) * (WG / LANES), WG / LANES, b, work, y, y_off, ys, y_batch);
        if (lid == 0)
            counters[tile] = 0;
    }
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_cols(const int R, const int K,
               __global const XT* restrict X, const long x_off, const long xr, const long xk,
               const long x_batch,
               __global const XT* restrict v, const long v_off, const long vs, const long v_batch,
               __global YT* restrict y, const long y_off, const long ys, const long y_batch,
               __global ACC* restrict work COUNTERS)
{
    const uint lid = get_local_id(0);
    const uint tr = lid % RT;
    const int tk = (int)(lid / RT);
    const int r0 = (int)(get_group_id(0) * RT + tr) * VW;
    const int s = get_global_id(1);
    const long b = get_global_id(2);
    const int k0 = s * KC;
    const int k1 = min(K, k0 + KC);
    __global const XT* x = X + x_off + b * x_batch + r0;   // xr == 1
    __global const XT* vb = v + v_off + b * v_batch;
    VACC acc = (VACC)0;
    if (r0 + VW <= R) {
        for (int k = k0 + tk; k < k1; k += KT)
            acc += XLOAD(x + (long)k * xk) * (VACC)(LD(vb + (long)k * vs));
    } else if (r0 < R) {   // the last rows: element by element
        ACC parts[VW];
        for (int e = 0; e < VW; ++e)
            parts[e] = (ACC)0;
        for (int k = k0 + tk; k < k1; k += KT) {
            const ACC vk = LD(vb + (long)k * vs);
            for (int e = 0; e < R - r0; ++e)
                parts[e] += LD(x + (long)k * xk + e) * vk;
        }
#if VW > 1
        acc = CAT(vload, VW)(0, parts);
#else
        acc = parts[0];
#endif
    }
#if KT > 1
    __local VACC part[WG];
    part[lid] = acc;
    for (int step = KT / 2; step > 0; step /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (tk < step)
            part[lid] += part[lid + step * RT];
    }
    acc = part[lid];
#endif
    if (tk == 0 && r0 < R) {
#if VW > 1
        ACC out[VW];
        CAT(vstore, VW)(acc, 0, out);
        for (int e = 0; e < min(VW, R - r0); ++e)
            STORE(r0 + e, out[e]);
#else
        STORE(r0, acc);
#endif
    }
#if FINISH_LAST
    __local int last;
    const long tile = b * get_num_groups(0) + get_group_id(0);
    LAST_GROUP_ARRIVE(counters + tile, KSPLIT, last);
    if (last) {
        add_slices(R, get_group_id(0) * RT * VW, RT * VW, b, work, y, y_off, ys, y_batch);
        if (lid == 0)
            counters[tile] = 0;
    }
#endif
}

__kernel void gemv_split_reduce(const int R, __global const ACC* restrict work,
                                __global YT* restrict y, const long y_off, const long ys,
                                const long y_batch)
{
    const int r = get_global_id(0);
    const long b = get_global_id(1);
    if (r >= R) return;
    __global const ACC* w = work + b * KSPLIT * (long)R + r;
    ACC acc = (ACC)0;
    for (int s = 0; s < KSPLIT; ++s)
        acc += w[(long)s * R];
    PUT(y + y_off + b * y_batch + (long)r * ys, acc);
}
