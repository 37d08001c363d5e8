// 1-D correlation for GPUs: a work-group stages a tile of the input plus the halo in local
// memory, each work-item keeps R consecutive outputs in registers and slides a register window
// over the taps, so that JU taps cost (R + JU) / 4 vector reads of local memory for R * JU
// multiply-adds. Any mask length: the mask is taken in chunks of MC taps (input halo and mask
// chunk reloaded per chunk); a chunk's last taps (taps mod JU) run in a step that skips the
// taps past the chunk, never multiplying an input by a padding zero.
//
// NaN and infinities as NumPy's direct loops give them: every product is one of a real input
// and a real mask value. Inputs outside [0, n) are staged as zeros, which is harmless unless the
// mask holds a NaN or an infinity (0 * inf is NaN); a tile whose window reaches outside [0, n)
// (at most ceil((m - 1) / TILE) + 1 tiles at each end) checks the mask once per work-group and,
// only when it finds one, computes its outputs from global memory with each output's tap range
// clamped to [0, n) (EXACT_EDGES 0 removes the check, for integer types).
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]     for k in [0, L), x = 0 outside [0, n)
//
// Layout as in conv_basic.cl; out must be aligned to 4 elements (a buffer from element 0).
// Tile t holds outputs [t*TILE, (t+1)*TILE), TILE = WG*R; work-item l owns the R outputs from
// t*TILE + l*R. Work-groups walk the tiles with a stride of the number of groups (the host may
// launch fewer groups than tiles) and load the next tile's first chunk into registers while
// they compute the current one. Input loads and output stores are coalesced (element l + i*WG
// of the tile); the outputs go through local memory to be written as vectors. Local memory is
// read in vectors of 4 with one vector slot skipped after every 8 (PADV), which spreads the
// work-items' windows (R/4 vectors apart) over all banks. NDRange: any number of groups of WG.
// Local memory: (PADV((TILE + MC) / 4) + 1) * 4 + MC elements.
//
// Parameters: T element type, ACC accumulator type (unsigned for integers, so that overflow
// wraps), WG work-group size (must equal the launch's local size), R outputs per work-item and
// JU taps per unrolled step (multiples of 4), MC taps per local-memory chunk (a multiple of JU),
// IS_INT 1 for integer types (no NaN or infinity: the edge check is compiled out), MASK_LEN the
// mask length when compiled in (0: the argument m), FLIP_W 1 when w holds the mask reversed.
#include "scalar_types.h"
#include "conv_layout.h"
#ifndef IS_INT
#define IS_INT 0
#endif
#ifndef R
#define R 32
#endif
#ifndef JU
#define JU 16
#endif
#ifndef MC
#define MC 512
#endif
// MASK_LEN > 0: the mask length m compiled in (m <= MC), so that the chunk's step count and
// its last partial step fold away.
#ifndef MASK_LEN
#define MASK_LEN 0
#endif
#if MASK_LEN > 0
#define MTAPS MASK_LEN
#else
#define MTAPS m
#endif
// FLIP_W 1: w holds the mask reversed, as a convolution's caller gives it (tap j is
// w[m - 1 - j]), so that the host makes no reversed copy of it first (a launch less a call).
#ifndef FLIP_W
#define FLIP_W 0
#endif
#if FLIP_W
#define W_AT(j) (MTAPS - 1 - (j))
#else
#define W_AT(j) (j)
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T4 CAT(T, 4)
#define TILE (WG * R)
#define PADV(v) ((v) + ((v) >> 3))
#define XSV (PADV((TILE + MC) / 4) + 1)
#define AT(v) (4 * PADV((v) >> 2) + ((v) & 3))

#define HPT ((MC + WG - 1) / WG)

// Work-item lid's share of the chunk whose element 0 is x[g0]: R elements of the tile and HPT
// of the halo (zeros outside [0, n)); all loads are issued before any is used.
inline void load_chunk(__global const T* restrict x, const int n, const int g0, const int lid,
                       T* v, T* h)
{
    #pragma unroll
    for (int i = 0; i < R; ++i) {
        const int gi = g0 + lid + i * WG;
        v[i] = (gi >= 0 && gi < n) ? x[gi] : (T)0;
    }
    #pragma unroll
    for (int i = 0; i < HPT; ++i) {
        const int gi = g0 + TILE + lid + i * WG;
        h[i] = (gi >= 0 && gi < n) ? x[gi] : (T)0;
    }
}

// Taps [s*JU, s*JU + lim) of the staged chunk (lim <= JU) for the work-item's R outputs: the
// window of R + JU inputs in vectors from local memory, then R multiply-adds per tap. Called
// with lim = JU the tests fold away.
inline void mac_step(ACC* acc, __local const T4* xs, __local const T4* ws, const int lid,
                     const int s, const int lim)
{
    const int v0 = (lid * R + s * JU) >> 2;
    T win[R + JU];
    #pragma unroll
    for (int q = 0; q < (R + JU) / 4; ++q) {
        const T4 t = xs[PADV(v0 + q)];
        win[4 * q] = t.s0;
        win[4 * q + 1] = t.s1;
        win[4 * q + 2] = t.s2;
        win[4 * q + 3] = t.s3;
    }
    #pragma unroll
    for (int q = 0; q < JU / 4; ++q) {
        const T4 wq = ws[s * (JU / 4) + q];
        const T wt[4] = {wq.s0, wq.s1, wq.s2, wq.s3};
        #pragma unroll
        for (int t = 0; t < 4; ++t)
            if (4 * q + t < lim) {
                #pragma unroll
                for (int r = 0; r < R; ++r)
                    acc[r] += (ACC)win[r + 4 * q + t] * (ACC)wt[t];
            }
    }
}

#if !IS_INT
// Whether w[0, m) holds a NaN or an infinity; every work-item of the group gets the answer.
inline bool mask_not_finite(__global const T* restrict w, const int m, const int lid,
                            volatile __local int* flag)
{
    if (lid == 0)
        *flag = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    bool bad = false;
    for (int e = lid; e < m; e += WG)
        bad |= !isfinite(w[e]);
    if (bad)
        atomic_or(flag, 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    return *flag != 0;
}
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void conv_gpu(CONV_ARGS(__global))
{
    __local T4 xs[XSV];
    __local T4 ws[MC / 4];
    __local T* const xe = (__local T*)xs;
    __local T* const we = (__local T*)ws;
    const int lid = get_local_id(0);
    const int tiles = (L + TILE - 1) / TILE;
    const int stride = get_num_groups(0);
    const bool one_chunk = MTAPS <= MC;
    x += x_off;
    if (one_chunk)
        for (int e = lid; e < MC; e += WG)
            we[e] = e < MTAPS ? w[W_AT(e)] : (T)0;
    T v[R], h[HPT];
#if !IS_INT
    __local int flag;
    int mask_bad = -1;                 // not checked yet
#endif
    int tile = get_group_id(0);
    if (tile < tiles)
        load_chunk(x, n, tile * TILE - pad, lid, v, h);
    for (; tile < tiles; tile += stride) {
        const int k0 = tile * TILE;
        ACC acc[R];
        #pragma unroll
        for (int r = 0; r < R; ++r)
            acc[r] = (ACC)0;
        bool exact = false;
#if !IS_INT
        if (k0 - pad < 0 || (long)k0 + TILE + m - 2 - pad >= n) {      // an edge tile
            if (mask_bad < 0)
                mask_bad = mask_not_finite(w, m, lid, &flag);
            exact = mask_bad;
        }
#endif
        if (exact) {
            #pragma unroll
            for (int r = 0; r < R; ++r) {
                const int s = k0 + lid * R + r - pad;
                const int j1 = k0 + lid * R + r < L ? min(m, n - s) : 0;
                for (int j = max(0, -s); j < j1; ++j)
                    acc[r] += (ACC)x[s + j] * (ACC)w[W_AT(j)];
            }
            if (tile + stride < tiles)
                load_chunk(x, n, (tile + stride) * TILE - pad, lid, v, h);
        }
        for (int c0 = 0; !exact && c0 < MTAPS; c0 += MC) {
            const int taps = min(MC, MTAPS - c0);
            const int steps = (taps + JU - 1) / JU;
            if (c0 > 0)
                load_chunk(x, n, k0 - pad + c0, lid, v, h);
            #pragma unroll
            for (int i = 0; i < R; ++i)
                xe[AT(lid + i * WG)] = v[i];
            #pragma unroll
            for (int i = 0; i < HPT; ++i)
                if (lid + i * WG < steps * JU)
                    xe[AT(TILE + lid + i * WG)] = h[i];
            if (!one_chunk)
                for (int e = lid; e < steps * JU; e += WG)
                    we[e] = e < taps ? w[W_AT(c0 + e)] : (T)0;
            barrier(CLK_LOCAL_MEM_FENCE);
            // The next tile's first chunk is loaded while this one computes.
            if (c0 + MC >= MTAPS && tile + stride < tiles)
                load_chunk(x, n, (tile + stride) * TILE - pad, lid, v, h);
            const int full = taps / JU;
            for (int s = 0; s < full; ++s)
                mac_step(acc, xs, ws, lid, s, JU);
            if (full < steps)
                mac_step(acc, xs, ws, lid, full, taps - full * JU);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        #pragma unroll
        for (int r = 0; r < R; ++r)
            xe[4 * PADV(lid * (R / 4) + r / 4) + r % 4] = (T)acc[r];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + TILE <= L) {
            __global T4* const o = (__global T4*)(out + k0);
            #pragma unroll
            for (int i = 0; i < R / 4; ++i)
                o[lid + i * WG] = xs[PADV(lid + i * WG)];
        } else {
            for (int e = lid; e < L - k0; e += WG)
                out[k0 + e] = xe[AT(e)];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
