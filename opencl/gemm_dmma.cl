// float64 GEMM on the FP64 tensor cores: warp-level mma.sync.m8n8k4 (DMMA) through inline PTX on
// NVIDIA sm_80+, with a portable emulation of the same warp-level steps for every other device.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)     (float64 throughout: DMMA is IEEE fp64 FMA)
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides; TRANS_A / TRANS_B select the stored orientation of A and B).
//
// Blocking: a work-group of NTHREADS = (BM/WM)*(BN/WN)*32 work-items (one warp per 32
// consecutive local ids) computes a BM x BN tile of C; each warp a WM x WN block of it, as
// (WM/8) x (WN/8) mma tiles of 8 x 8 whose accumulators (two doubles per lane) stay in
// registers. The BK-deep steps of A and B go through a ring of STAGES local tiles, in the
// operand's own orientation, 16-byte chunks of two doubles at a time: on the PTX path with
// cp.async (global -> local without registers; zeros past the matrix by a source size of 0),
// STAGES - 1 steps ahead of the products (8-byte copies where a chunk is cut by the matrix edge
// along the contiguous axis or the operand is not 16-byte aligned); the emulation copies through
// registers. Per step: wait for the step's copies, barrier (which also ends every read of the
// slot the next copy refills), copy step s + STAGES - 1, multiply step s. Row strides are padded
// so that one fragment read (8 rows x 4 columns, or 4 rows x 8 columns, of doubles) takes the
// minimum two shared-memory wavefronts:
//   rows along K: stride = BK + PAD_K with (BK + PAD_K) % 16 == 4 or 12 (in doubles);
//   rows along M or N: stride = BM/BN + PAD_X with (BM/BN + PAD_X) % 16 == 8.
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m8n8k4 with .f64", lane = 4*g + t):
//   A (8 x 4, row): one double, A(g, t);  B (4 x 8, col): one double, B(t, g);
//   C (8 x 8): two doubles, C(g, 2t) and C(g, 2t + 1).
//
// Launch: local size (NTHREADS, 1, 1); global (NTHREADS * ceil(N/BN), ceil(M/BM),
// batch * KSPLIT).
//
// Parameters (-D):
//   MMA_PTX    1: inline PTX (NVIDIA sm_80+ only; the host never sets it elsewhere);
//              0: the portable emulation (every lane computes its C fragment from local memory)
//   TRANS_A/B  operand orientation (see gemm_naive.cl)
//   BM, BN, BK block tile (BK a multiple of 4)
//   STAGES     local tiles in the copy ring (2 to 5)
//   WM, WN     warp tile: multiples of 8; BM % WM == 0, BN % WN == 0
//   VEC_A/B    1: 16-byte global loads; needs the operand's offset, leading dimension and batch
//              stride to be even. 0: element loads, any layout.
//   GROUP_M    work-groups are walked GROUP_M tile-rows at a time (L2 reuse)
//   KSPLIT     K slices: work-group z = b * KSPLIT + s sums slice s of K's BK-deep steps into
//              matrix z of C; the host then passes a workspace of batch * KSPLIT matrices as C
//              and sums them (gemm_gpu.cl's gemm_gpu_splitk_reduce). 1: no split
//   KPAIR      1 (PTX path; BK % 8 == 0): two mma per 8 K, lane t taking k = 2t in the first and
//              2t + 1 in the second (the same sum), so that row-major A and column-major B give
//              both fragments in one 16-byte local read. 0: k = t and t + 4.
//   M16        1 (PTX path on sm_90, KPAIR=1, WM % 16 == 0): one mma.m16n8k8 (Hopper's larger
//              DMMA shape) in place of four m8n8k4 per 16 x 8 x 8: a quarter of the instructions
//              for the same fragments. Its fragments (lane 4g + t): A (g, s0), (g + 8, s0),
//              (g, s1), (g + 8, s1); B (s0, g), (s1, g); C (g, 2t), (g, 2t + 1), (g + 8, 2t),
//              (g + 8, 2t + 1), where K slots s0 = t, s1 = t + 4 are taken as k = 2t, 2t + 1 as
//              with KPAIR (the sum is the same). C keeps the m8n8 tiles' registers: tile 2p is
//              rows g, tile 2p + 1 rows g + 8 of the pair.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "gemm_args.h"
#include "tensor_core_params.h"
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 32
#endif
#ifndef WN
#define WN 32
#endif
#ifndef KPAIR
#define KPAIR 0
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef M16
#define M16 0
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#if !MMA_PTX
#undef KPAIR
#define KPAIR 0              // the emulation sums whole K steps itself
#undef M16
#define M16 0
#endif
#if M16 && (!KPAIR || WM % 16)
#error "gemm_dmma.cl: M16 needs KPAIR=1 and WM a multiple of 16"
#endif

#define EPC 2                // doubles per 16-byte chunk
#define KSTEP 4              // K of one mma
#define PAD_K 4              // padding of rows running along K (doubles)
#define PAD_X 8              // padding of rows running along M or N (doubles)

#define WARPS_N (BN / WN)
#define NTHREADS ((BM / WM) * WARPS_N * 32)
#define MT (WM / 8)          // mma tiles per warp along M
#define NT8 (WN / 8)         // mma tiles per warp along N

// Local tiles: (rows, row length, row stride) of A and B in their stored orientation.
#if TRANS_A
#define A_LEN BM
#define A_STRIDE (BM + PAD_X)
#define A_TILE (BK * A_STRIDE)
#else
#define A_LEN BK
#define A_STRIDE (BK + PAD_K)
#define A_TILE (BM * A_STRIDE)
#endif
#if TRANS_B
#define B_LEN BK
#define B_STRIDE (BK + PAD_K)
#define B_TILE (BN * B_STRIDE)
#else
#define B_LEN BN
#define B_STRIDE (BN + PAD_X)
#define B_TILE (BK * B_STRIDE)
#endif
#define A_LOADS (BM * BK / EPC / NTHREADS)   // 16-byte chunks per work-item per step
#define B_LOADS (BN * BK / EPC / NTHREADS)

#if (BM % WM) || (BN % WN) || (WM % 8) || (WN % 8) || (BK % (KSTEP * (KPAIR + 1))) \
    || STAGES < 2 || STAGES > 5
#error "gemm_dmma.cl: tile parameters violate the constraints in the header"
#endif
#define CP_ASYNC_LEFT (STAGES - 2)   // a copy_wait leaves the later steps' copies in flight
#include "cp_async.h"
#if (BM * BK) % (EPC * NTHREADS) || (BN * BK) % (EPC * NTHREADS) || A_LOADS == 0 || B_LOADS == 0
#error "gemm_dmma.cl: BM*BK and BN*BK must be multiples of 2*NTHREADS"
#endif

// -- global -> local --------------------------------------------------------------------------
// One 16-byte chunk of an operand: two doubles along its contiguous axis starting at `inner` in
// row `outer` of its storage; zeros past outer_lim / inner_lim.
inline double2 load_chunk(__global const double* X, const int ld, const int outer,
                          const int inner, const int outer_lim, const int inner_lim,
                          const bool vec)
{
    if (outer >= outer_lim)
        return (double2)(0.0);
    __global const double* p = X + (long)outer * ld + inner;
    if (vec && inner + EPC <= inner_lim)
        return *(__global const double2*)p;
    const double x = inner < inner_lim ? p[0] : 0.0;
    const double y = inner + 1 < inner_lim ? p[1] : 0.0;
    return (double2)(x, y);
}

// The chunk at (outer, inner) into local memory at dst, zeros past the matrix (a source size of
// 0). PTX path: one 16-byte cp.async for a whole aligned chunk, else one 8-byte cp.async per
// double (unaligned operands and the edge along the contiguous axis stay asynchronous too: a
// register load there would wait for global memory inside the step); the emulation through
// registers.
inline void copy_chunk(__local double* dst, __global const double* X, const int ld,
                       const int outer, const int inner, const int outer_lim,
                       const int inner_lim, const bool vec)
{
#if MMA_PTX
    const bool inside = outer < outer_lim;
    __global const double* p = X + (inside ? (long)outer * ld + inner : 0);
    if (vec && inner + EPC <= inner_lim) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                     :: "r"(SHARED_ADDR(dst)), "l"((ulong)p), "r"(inside ? 16 : 0)
                     : "memory");
        return;
    }
    #pragma unroll
    for (int e = 0; e < EPC; ++e) {
        const bool ok = inside && inner + e < inner_lim;
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;"
                     :: "r"(SHARED_ADDR(dst + e)), "l"((ulong)(ok ? p + e : X)),
                        "r"(ok ? 8 : 0)
                     : "memory");
    }
#else
    *(__local double2*)dst = load_chunk(X, ld, outer, inner, outer_lim, inner_lim, vec);
#endif
}

// A chunk's place in the padded tiles of the ring (gemm_ring.h).
#define A_SLOT(row, col) ((row) * A_STRIDE + (col))
#define B_SLOT(row, col) ((row) * B_STRIDE + (col))

// Local element offsets of A(m, k) and B(k, n) within one tile.
#if TRANS_A
#define LA(m, k) ((k) * A_STRIDE + (m))
#else
#define LA(m, k) ((m) * A_STRIDE + (k))
#endif
#if TRANS_B
#define LB(k, n) ((n) * B_STRIDE + (k))
#else
#define LB(k, n) ((k) * B_STRIDE + (n))
#endif

// -- the warp-level product of one local tile ----------------------------------------------
#if MMA_PTX
inline void dmma(double* d, const double a, const double b)
{
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
        : "=d"(d[0]), "=d"(d[1]) : "d"(a), "d"(b), "d"(d[0]), "d"(d[1]));
}
#endif
#if M16
// c_lo (rows g) and c_hi (rows g + 8) += the 16 x 8 x 8 product of one m16n8k8 (see M16).
inline void dmma16(double* c_lo, double* c_hi, const double2 a_lo, const double2 a_hi,
                   const double2 b)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+d"(c_lo[0]), "+d"(c_lo[1]), "+d"(c_hi[0]), "+d"(c_hi[1])
        : "d"(a_lo.x), "d"(a_hi.x), "d"(a_lo.y), "d"(a_hi.y), "d"(b.x), "d"(b.y));
}
#endif

#if KPAIR
// A(m, k) and A(m, k + 1), B(k, n) and B(k + 1, n) for even k: one 16-byte read where the pair is
// contiguous in local memory (row-major A, column-major B; rows start 16-byte aligned).
#if TRANS_A
#define A_PAIR(m, k) ((double2)(As[LA(m, k)], As[LA(m, (k) + 1)]))
#else
#define A_PAIR(m, k) (*(__local const double2*)(As + LA(m, k)))
#endif
#if TRANS_B
#define B_PAIR(k, n) (*(__local const double2*)(Bs + LB(k, n)))
#else
#define B_PAIR(k, n) ((double2)(Bs[LB(k, n)], Bs[LB((k) + 1, n)]))
#endif

// acc[i][j][*] += A(wm0 + 8i.., kk..kk+7) * B(kk..kk+7, wn0 + 8j..): two mma, k = kk + 2t, +1.
inline void warp_step(__local const double* As, __local const double* Bs, const int wm0,
                      const int wn0, const int kk, const int lane, double acc[MT][NT8][2])
{
    const int g = lane >> 2, t = lane & 3;
    double2 af[MT], bf[NT8];
    #pragma unroll
    for (int i = 0; i < MT; ++i)
        af[i] = A_PAIR(wm0 + 8 * i + g, kk + 2 * t);
    #pragma unroll
    for (int j = 0; j < NT8; ++j)
        bf[j] = B_PAIR(kk + 2 * t, wn0 + 8 * j + g);
#if M16
    #pragma unroll
    for (int i = 0; i < MT; i += 2) {
        #pragma unroll
        for (int j = 0; j < NT8; ++j)
            dmma16(acc[i][j], acc[i + 1][j], af[i], af[i + 1], bf[j]);
    }
#else
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        #pragma unroll
        for (int j = 0; j < NT8; ++j) {
            dmma(acc[i][j], af[i].x, bf[j].x);
            dmma(acc[i][j], af[i].y, bf[j].y);
        }
    }
#endif
}
#else
// acc[i][j][*] += A(wm0 + 8i.., kk..) * B(kk.., wn0 + 8j..) for one KSTEP slice.
inline void warp_step(__local const double* As, __local const double* Bs, const int wm0,
                      const int wn0, const int kk, const int lane, double acc[MT][NT8][2])
{
    const int g = lane >> 2, t = lane & 3;
#if MMA_PTX
    double af[MT], bf[NT8];
    #pragma unroll
    for (int i = 0; i < MT; ++i)
        af[i] = As[LA(wm0 + 8 * i + g, kk + t)];
    #pragma unroll
    for (int j = 0; j < NT8; ++j)
        bf[j] = Bs[LB(kk + t, wn0 + 8 * j + g)];
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        #pragma unroll
        for (int j = 0; j < NT8; ++j)
            dmma(acc[i][j], af[i], bf[j]);
    }
#else
    // Emulation: the same C fragment per lane, its dot products read straight from local memory.
    for (int i = 0; i < MT; ++i) {
        for (int j = 0; j < NT8; ++j) {
            const int m = wm0 + 8 * i + g, n = wn0 + 8 * j + 2 * t;
            for (int k = kk; k < kk + KSTEP; ++k) {
                const double a = As[LA(m, k)];
                acc[i][j][0] = fma(a, Bs[LB(k, n)], acc[i][j][0]);
                acc[i][j][1] = fma(a, Bs[LB(k, n + 1)], acc[i][j][1]);
            }
        }
    }
#endif
}
#endif

// The ring's parameters (gemm_ring.h): a warp_step is one or two mma's K (KPAIR).
typedef double GT;
typedef double LT;
typedef double ACC_T;
#define ACC_N 2
#define WARP_K (KSTEP * (KPAIR + 1))
#include "gemm_ring.h"
#include "tile_order.h"
#include "split_k.h"

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void gemm_dmma(GEMM_ARGS_OF(double, double, ) SPLIT_K_FINAL_ARGS)
{
    // One ring: STAGES A tiles, then STAGES B tiles.
    __local double2 ring[STAGES * (A_TILE + B_TILE) / 2];
    __local double* As = (__local double*)ring;
    __local double* Bs = As + STAGES * A_TILE;

    const int tid = get_local_id(0), lane = tid & 31;
    const uint warp = (uint)tid >> 5;
    const int wm0 = (int)(warp / WARPS_N) * WM, wn0 = (int)(warp % WARPS_N) * WN;

    const int2 origin = grouped_tile_origin(M, N, BM, BN, GROUP_M);
    const int m0 = origin.x, n0 = origin.y;

    // With split-K, work-group z takes one slice of K's steps (split_k.h).
    const long z = get_group_id(2);
    const KSlice ks = k_slice(z, K);
    A += a_off + ks.batch * a_batch;
    B += b_off + ks.batch * b_batch;
    __global const double* const partials = C + c_off;   // (split-K: every slice's product)
    C += c_off + z * c_batch;

    double acc[MT][NT8][2];
    #pragma unroll
    for (int i = 0; i < MT; ++i)
        #pragma unroll
        for (int j = 0; j < NT8; ++j)
            acc[i][j][0] = acc[i][j][1] = 0.0;

    ring_product(As, Bs, A, lda, B, ldb, M, N, K, m0, n0, tid, wm0, wn0, lane, ks.first,
                 ks.steps, acc);

    const int g = lane >> 2, t = lane & 3;
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        const int row = m0 + wm0 + 8 * i + g;
        if (row >= M)
            continue;
        #pragma unroll
        for (int j = 0; j < NT8; ++j) {
            const int n = n0 + wn0 + 8 * j + 2 * t;
            if (n < N)
                C[(long)row * ldc + n] = acc[i][j][0];
            if (n + 1 < N)
                C[(long)row * ldc + n + 1] = acc[i][j][1];
        }
    }
#if FINISH_LAST
    // the flag in the ring's first word: every read of the ring is over by the barrier that
    // precedes its write (and the stages fill the local memory)
    __local int* const last = (__local int*)ring;
    SPLIT_K_FINISH(*last, ks.batch, m0, n0, BM, BN, partials, ldc, c_batch);
#else
    (void)partials;
#endif
}
