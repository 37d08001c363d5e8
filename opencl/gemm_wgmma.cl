// Warpgroup tensor-core GEMM (NVIDIA sm_90a: wgmma.mma_async through inline PTX) for float16,
// bfloat16 and TF32 operands, float32 accumulation; a portable emulation of the same tiles
// elsewhere.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)     (float32 accumulation, C rounded once)
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides; TRANS_A / TRANS_B select the stored orientation of A and B).
//
// Blocking: a work-group of WGS warpgroups (128 work-items each) computes a BM x BN tile of C;
// warpgroup w the rows w*BM/WGS .. of it, as BM/WGS/64 products m64 x BN per 16-deep K slice, each
// one wgmma.mma_async whose float32 accumulators (BN/2 per work-item and product) stay in
// registers. The BK-deep steps of A and B go through a ring of STAGES local tiles, filled with
// cp.async (16-byte chunks, global -> shared, no registers; rows past the matrix zero-filled by a
// source size of 0; chunks cut by the matrix edge along the contiguous axis, and unaligned
// operands, go through registers). wgmma reads the tiles in place through shared-memory
// descriptors, so each tile is stored in one of the two canonical layouts the instruction reads:
//
//   K-major (row-major A, column-major B: K contiguous in global memory): one row of BK elements
//     (32, 64 or 128 bytes: the swizzle width) per M or N index; the 16-byte chunks of a
//     row XOR-ed with address bits 7.. (SWZ); descriptor SBO = 8 rows, swizzle mode by row width.
//   MN-major (column-major A, row-major B: M or N contiguous): panels of 64 M or N indices (128
//     bytes) by BK rows of K, 128-byte swizzle (chunk ^ k % 8); LBO = one panel (the stride
//     along M or N, MN_LBO), SBO = 8 K rows (1024 bytes, MN_SBO); the instruction transposes.
//
// TF32 operands must be K-major (the instruction has no transpose for them): the host hands
// this kernel A row-major and B column-major, rounded to TF32 (opencl/operand_pack.cl), since the
// instruction reads float32 bits and drops the 13 low ones.
//
// Every tile starts on a 1024-byte boundary (the swizzle repeats every 1024 bytes of address).
// A K slice (KSTEP: 16 elements of 16 bits, 8 of TF32: 32 bytes) moves a K-major descriptor by
// 32 bytes and an MN-major one by 16 rows.
//
// Pipeline (per step s; L = STAGES - 1 - WG_INFLIGHT steps of copies ahead):
//   wait for step s's copies, fence them into the async proxy, barrier;
//   copy step s + L into the slot of step s + L - STAGES (its products are complete: waited for
//   at the end of the previous step by every warpgroup, which the barrier orders);
//   issue step s's products (wgmma.fence; BK/16 x products; commit);
//   wait until at most WG_INFLIGHT product groups are in flight.
//
// Accumulators of an m64nN product (PTX ISA, "wgmma register fragments"): warp q of the
// warpgroup holds rows 16q .. 16q + 15; lane 4g + t holds d[4j + 2h + e] = (16q + g + 8h,
// 8j + 2t + e) for j < N/8.
//
// Launch: local size (128 * WGS, 1, 1); global (128 * WGS * ceil(N/BN), ceil(M/BM),
// batch * KSPLIT).
//
// Parameters (-D):
//   ELEM        1: float16 (C float16), 2: bfloat16 (C float32), 3: TF32 (C float32; A
//               row-major and B column-major only)
//   MMA_PTX     1: wgmma through inline PTX (NVIDIA sm_90a only; the host never sets it
//               elsewhere); 0: emulation (each work-item computes its accumulators from local
//               memory through the same layouts)
//   TRANS_A/B   operand orientation (see gemm_naive.cl)
//   BM          64 * WGS * (1 or 2)
//   BN          64, 128 or 256 (one wgmma's N)
//   BK          a K-major row of 32, 64 or 128 bytes: 16, 32 or 64 (16-bit), 8, 16 or 32 (TF32)
//   WGS         warpgroups per work-group (along M)
//   STAGES      local tiles in the copy ring (2 to 5)
//   WG_INFLIGHT product groups left in flight at the end of a step (0 or 1)
//   VEC_A/B     1: 16-byte global loads (offset, leading dimension and batch stride multiples of 8
//               elements); 0: element loads, any layout
//   VEC_C       1: C's offset, leading dimension and batch stride are even
//   MN_LBO/SBO  the descriptor strides of MN-major tiles (defaults: a panel, 8 K rows)
//   GROUP_M     work-groups are walked GROUP_M tile-rows at a time (L2 reuse)
//   SM90A_PTX   1: the compiler targets sm_90 and the host rebuilds the PTX for sm_90a, so the
//               sm_90a instructions are written as comments marked "// SM90A: " (see
//               clarray_gemm/drivers/build.py); 0: written as they are
//   PROMOTE     0: the products accumulate in one set of float32 registers over all of K. P > 0:
//               they accumulate over P steps at a time, and each such partial sum is added into
//               a second set (round to nearest): the tensor cores' own accumulation drops the
//               low bits of each addend (round toward zero), whose error grows with the number
//               of accumulated products and, in all-positive sums, does not cancel
//   KSPLIT      K slices: work-group z = b * KSPLIT + s takes slice s of the K steps of
//               product b and writes its partial product to C[z], always in float32 (the caller
//               passes a workspace of batch * KSPLIT float32 matrices as C and sums them:
//               gemm_gpu.cl's gemm_gpu_splitk_reduce, which rounds float16 results once)
//   STAGE_C     1: the C tile goes through local memory (the ring, once the products are
//               done) and is written a row at a time (mma_copy.h, store_staged), where it fits
//               in the ring; 0 (or where it does not fit): stored from the accumulator fragments
//   SIMULATOR   1 on Oclgrind (see store_pair)
#include "gemm_args.h"
#include "tensor_core_params.h"
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WGS
#define WGS 2
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef WG_INFLIGHT
#define WG_INFLIGHT 1
#endif
#ifndef MN_LBO
#define MN_LBO (BK * 128)
#endif
#ifndef MN_SBO
#define MN_SBO 1024
#endif
#ifndef SM90A_PTX
#define SM90A_PTX 0
#endif
#ifndef PROMOTE
#define PROMOTE 0
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#ifndef STAGE_C
#define STAGE_C 0
#endif
#if SM90A_PTX
#define SM90A "// SM90A: "
#else
#define SM90A ""
#endif

#if ELEM == 3
typedef float GT;
typedef uint LT;             // float32 bits, already TF32
typedef float OT;
#define WG_TYPE "tf32"
#define WG_K "k8"
#define EPC 4                // elements per 16-byte chunk
#define ESIZE 4
#define KSTEP 8              // K of one product
#else
typedef ushort GT;
typedef ushort LT;
#if ELEM == 1 && KSPLIT == 1
typedef half OT;             // float16 @ float16 -> float16, as NumPy
#define OUT_HALF 1
#define WG_TYPE "f16"
#elif ELEM == 1
typedef float OT;            // float16 partial sums, rounded once by the reduction
#define OUT_HALF 0
#define WG_TYPE "f16"
#else
typedef float OT;            // bfloat16 @ bfloat16 -> float32, as NumPy with ml_dtypes
#define WG_TYPE "bf16"
#endif
#define WG_K "k16"
#define EPC 8
#define ESIZE 2
#define KSTEP 16
#endif

#define NTHREADS (128 * WGS)
#define WG_ROWS (BM / WGS)   // C rows per warpgroup
#define MREP (WG_ROWS / 64)  // m64 products per warpgroup and K slice
#define NACC (BN / 2)        // accumulators per work-item and product
#define KROW_BYTES (BK * ESIZE)  // a K-major tile row

#if (BM % (64 * WGS)) || (MREP != 1 && MREP != 2) || (BN != 64 && BN != 128 && BN != 256) \
    || (KROW_BYTES != 32 && KROW_BYTES != 64 && KROW_BYTES != 128) || STAGES < 2 || STAGES > 5 \
    || (WG_INFLIGHT != 0 && WG_INFLIGHT != 1) || STAGES - 1 - WG_INFLIGHT < 1
#error "gemm_wgmma.cl: tile parameters violate the constraints in the header"
#endif
#if ELEM != 1 && ELEM != 2 && ELEM != 3
#error "gemm_wgmma.cl: ELEM must be 1 (float16), 2 (bfloat16) or 3 (TF32)"
#endif
#if ELEM == 3 && (TRANS_A || !TRANS_B)
#error "gemm_wgmma.cl: TF32 takes A row-major and B column-major (K-major) only"
#endif

#define TNSP_A TRANS_A       // 1: the A tile is MN-major (the instruction transposes it)
#define TNSP_B (!TRANS_B)
#if ELEM == 3
#define WG_TRANS ""
#else
#define WG_TRANS ", " STR(TNSP_A) ", " STR(TNSP_B)
#endif
#define A_BYTES (BM * BK * ESIZE)
#define B_BYTES (BK * BN * ESIZE)
#define LOOKAHEAD (STAGES - 1 - WG_INFLIGHT)

#define STR_(x) #x
#define STR(x) STR_(x)
#define CP_ASYNC_LEFT (LOOKAHEAD - 1)   // a copy_wait leaves the later steps' copies in flight

#include "mma_copy.h"

#define CS_LD (BN + CS_PAD)                      // the staged C tile's row stride, elements
#define CS_BYTES (BM * CS_LD * CS_ESIZE)
#define STAGED (STAGE_C && CS_BYTES <= STAGES * (A_BYTES + B_BYTES))

// -- tile layouts (byte offsets within a tile) ------------------------------------------------
// K-major: chunk c of row r at chunk c ^ SWZ(r), the XOR taken from address bits 7.. (rows of 32,
// 64 or 128 bytes: 4, 2 or 1 rows per 128-byte line).
#define KM_SWZ(r) ((KROW_BYTES == 128 ? (uint)(r) : KROW_BYTES == 64 ? (uint)(r) >> 1 \
                    : (uint)(r) >> 2) & (uint)(KROW_BYTES / 16 - 1))
#define KM_OFF(r, c) ((uint)(r) * KROW_BYTES + (((uint)(c) ^ KM_SWZ(r)) << 4))
// MN-major: element x (along M or N) and K row k; x a multiple of 8 (a chunk) or any element.
#define MN_OFF(k, x) (((uint)(x) >> 6) * (BK * 128) + (uint)(k) * 128 \
                      + (((((uint)(x) >> 3) & 7u) ^ ((uint)(k) & 7u)) << 4) + ((uint)(x) & 7u) * 2)

// Byte offset of A(m, k) and B(k, n) within one tile (k, m, n tile-relative).
#if TRANS_A
#define A_OFF(m, k) MN_OFF(k, m)
#else
#define A_OFF(m, k) (KM_OFF(m, (uint)(k) / EPC) + ((uint)(k) % EPC) * ESIZE)
#endif
#if TRANS_B
#define B_OFF(k, n) (KM_OFF(n, (uint)(k) / EPC) + ((uint)(k) % EPC) * ESIZE)
#else
#define B_OFF(k, n) MN_OFF(k, n)
#endif

#define AT(base, off) ((__local LT*)((__local uchar*)(base) + (off)))

// Step k0 of A and B into the local tiles As, Bs.
inline void copy_step(__local uchar* As, __local uchar* Bs, __global const GT* A, const int lda,
                      __global const GT* B, const int ldb, const int M, const int N,
                      const int K, const int m0, const int n0, const int k0, const int tid)
{
    #pragma unroll
    for (int l = 0; l < BM * BK / EPC / NTHREADS; ++l) {
        const uint c = (uint)(tid + l * NTHREADS);
#if TRANS_A
        const uint k = c / (BM / EPC), m = c % (BM / EPC) * EPC;
        copy_chunk(AT(As, MN_OFF(k, m)), A, lda, k0 + (int)k, m0 + (int)m, K, M, VEC_A);
#else
        const uint m = c / (BK / EPC), kc = c % (BK / EPC);
        copy_chunk(AT(As, KM_OFF(m, kc)), A, lda, m0 + (int)m, k0 + (int)kc * EPC, M, K, VEC_A);
#endif
    }
    #pragma unroll
    for (int l = 0; l < BN * BK / EPC / NTHREADS; ++l) {
        const uint c = (uint)(tid + l * NTHREADS);
#if TRANS_B
        const uint n = c / (BK / EPC), kc = c % (BK / EPC);
        copy_chunk(AT(Bs, KM_OFF(n, kc)), B, ldb, n0 + (int)n, k0 + (int)kc * EPC, N, K, VEC_B);
#else
        const uint k = c / (BN / EPC), n = c % (BN / EPC) * EPC;
        copy_chunk(AT(Bs, MN_OFF(k, n)), B, ldb, k0 + (int)k, n0 + (int)n, K, N, VEC_B);
#endif
    }
}
#if (BM * BK / EPC) % NTHREADS || (BN * BK / EPC) % NTHREADS
#error "gemm_wgmma.cl: BM*BK/8 and BN*BK/8 must be multiples of the work-group size"
#endif

#if MMA_PTX
// The interior copy: a work-group whose tile lies inside C, with 16-byte aligned operands, copies
// every whole step through per-work-item source pointers and destination offsets fixed at the
// start (chunk l of a work-item is l passes of NTHREADS chunks after its first), with no bounds
// tests: a few instructions per chunk instead of the general path's few dozen.
//   K-major (rows of BK/8 chunks): a pass covers NTHREADS / (BK/8) rows.
//   MN-major (K rows of LEN/8 chunks): a pass covers NTHREADS / (LEN/8) K rows.
#define KM_PASS (NTHREADS / (BK / EPC))
#define MN_PASS(len) (NTHREADS / ((len) / EPC))

typedef struct {
    __global const GT* a;    // chunk 0's source at k0 = 0
    __global const GT* b;
    long a_pass, b_pass;     // source elements between passes
    long a_step, b_step;     // source elements between steps
    uint a_dst, b_dst;       // chunk 0's byte offset in a tile
    uint a_dpass, b_dpass;   // tile bytes between passes (swizzle kept: passes are 8k rows)
} InteriorCopy;

inline void cp_async16(__local uchar* dst, __global const GT* src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                 :: "r"(SHARED_ADDR(dst)), "l"((ulong)src) : "memory");
}

inline InteriorCopy interior_copy(__global const GT* A, const int lda, __global const GT* B,
                                  const int ldb, const int m0, const int n0, const int tid)
{
    InteriorCopy ic;
#if TRANS_A
    const uint ak = (uint)tid / (BM / EPC), am = (uint)tid % (BM / EPC) * EPC;
    ic.a = A + (long)ak * lda + m0 + am;
    ic.a_pass = (long)MN_PASS(BM) * lda;
    ic.a_step = (long)BK * lda;
    ic.a_dst = MN_OFF(ak, am);
    ic.a_dpass = MN_PASS(BM) * 128;
#else
    const uint am = (uint)tid / (BK / EPC), ak = (uint)tid % (BK / EPC);
    ic.a = A + (long)(m0 + (int)am) * lda + ak * EPC;
    ic.a_pass = (long)KM_PASS * lda;
    ic.a_step = BK;
    ic.a_dst = KM_OFF(am, ak);
    ic.a_dpass = KM_PASS * KROW_BYTES;
#endif
#if TRANS_B
    const uint bn = (uint)tid / (BK / EPC), bk = (uint)tid % (BK / EPC);
    ic.b = B + (long)(n0 + (int)bn) * ldb + bk * EPC;
    ic.b_pass = (long)KM_PASS * ldb;
    ic.b_step = BK;
    ic.b_dst = KM_OFF(bn, bk);
    ic.b_dpass = KM_PASS * KROW_BYTES;
#else
    const uint bk = (uint)tid / (BN / EPC), bn = (uint)tid % (BN / EPC) * EPC;
    ic.b = B + (long)bk * ldb + n0 + bn;
    ic.b_pass = (long)MN_PASS(BN) * ldb;
    ic.b_step = (long)BK * ldb;
    ic.b_dst = MN_OFF(bk, bn);
    ic.b_dpass = MN_PASS(BN) * 128;
#endif
    return ic;
}

inline void copy_step_interior(__local uchar* As, __local uchar* Bs, const InteriorCopy* ic,
                               const int step)
{
    __global const GT* a = ic->a + step * ic->a_step;
    __global const GT* b = ic->b + step * ic->b_step;
    #pragma unroll
    for (int l = 0; l < BM * BK / EPC / NTHREADS; ++l)
        cp_async16(As + ic->a_dst + l * ic->a_dpass, a + l * ic->a_pass);
    #pragma unroll
    for (int l = 0; l < BN * BK / EPC / NTHREADS; ++l)
        cp_async16(Bs + ic->b_dst + l * ic->b_dpass, b + l * ic->b_pass);
}
#if (KM_PASS % 8) || (MN_PASS(BM) % 8 && TRANS_A) || (MN_PASS(BN) % 8 && !TRANS_B)
#define INTERIOR_COPY 0      // a pass would change the swizzle: the general path only
#else
#define INTERIOR_COPY (VEC_A && VEC_B)
#endif
#else
#define INTERIOR_COPY 0
#endif

// -- the warpgroup products of one step -------------------------------------------------------
#if MMA_PTX
#include "wgmma_ptx.h"

// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address, leading
// and stride byte offsets (all >> 4), swizzle mode in bits 62-63 (1: 128 B, 2: 64 B, 3: 32 B).
inline ulong smem_desc(const uint addr, const uint lbo, const uint sbo, const uint mode)
{
    return (ulong)((addr & 0x3FFFFu) >> 4) | ((ulong)(lbo >> 4) << 16)
           | ((ulong)(sbo >> 4) << 32) | ((ulong)mode << 62);
}

#define KM_MODE (KROW_BYTES == 128 ? 1u : KROW_BYTES == 64 ? 2u : 3u)
// Descriptor of rows r0.. (M or N) of a tile at K slice j (of KSTEP).
#define KM_DESC(tile, r0, j) smem_desc(SHARED_ADDR(tile) + (uint)(r0) * KROW_BYTES + (j) * 32u, \
                                       16u, 8u * KROW_BYTES, KM_MODE)
#define MN_DESC(tile, x0, j) smem_desc(SHARED_ADDR(tile) + ((uint)(x0) >> 6) * (BK * 128) \
                                       + (j) * 2048u, MN_LBO, MN_SBO, 1u)
#if TRANS_A
#define A_DESC(tile, m0, j) MN_DESC(tile, m0, j)
#else
#define A_DESC(tile, m0, j) KM_DESC(tile, m0, j)
#endif
#if TRANS_B
#define B_DESC(tile, j) KM_DESC(tile, 0, j)
#else
#define B_DESC(tile, j) MN_DESC(tile, 0, j)
#endif

inline void wgmma_call(float* d, const ulong da, const ulong db)
{
#if BN == 64
    wgmma_n64(d, da, db);
#elif BN == 128
    wgmma_n128(d, da, db);
#else
    wgmma_n256(d, da, db);
#endif
}
#else
// The emulation's operand read: a local element as float32.
inline float tile_value(__local const uchar* tile, const uint off)
{
#if ELEM == 1
    return vload_half(0, (__local const half*)(tile + off));
#elif ELEM == 2
    return as_float((uint)*(__local const ushort*)(tile + off) << 16);
#else
    return as_float(*(__local const uint*)(tile + off) & 0xFFFFE000u);   // the 13 low bits dropped
#endif
}
#endif

// acc[r] += A(rows wg_row0 + 64 r .., k slice) * B(k slice, all BN columns) over the step's BK.
inline void step_products(__local uchar* At, __local uchar* Bt, const int wg_row0,
                          const int wtid, float acc[MREP][NACC])
{
#if MMA_PTX
    asm volatile(SM90A "wgmma.fence.sync.aligned;" ::: "memory");
    #pragma unroll
    for (int j = 0; j < BK / KSTEP; ++j) {
        const ulong db = B_DESC(Bt, j);
        #pragma unroll
        for (int r = 0; r < MREP; ++r)
            wgmma_call(acc[r], A_DESC(At, wg_row0 + 64 * r, j), db);
    }
    asm volatile(SM90A "wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile(SM90A "wgmma.wait_group.sync.aligned " STR(WG_INFLIGHT) ";" ::: "memory");
#else
    const int q = wtid >> 5, g = (wtid & 31) >> 2, t = wtid & 3;
    for (int r = 0; r < MREP; ++r) {
        for (int j = 0; j < BN / 8; ++j) {
            for (int h = 0; h < 2; ++h) {
                const int m = wg_row0 + 64 * r + 16 * q + g + 8 * h;
                for (int e = 0; e < 2; ++e) {
                    const int n = 8 * j + 2 * t + e;
                    float sum = acc[r][4 * j + 2 * h + e];
                    for (int k = 0; k < BK; ++k)
                        sum = fma(tile_value(At, A_OFF(m, k)), tile_value(Bt, B_OFF(k, n)), sum);
                    acc[r][4 * j + 2 * h + e] = sum;
                }
            }
        }
    }
#endif
}

#include "tile_order.h"
#include "split_k.h"

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void gemm_wgmma(GEMM_ARGS_OF(GT, OT, ) SPLIT_K_FINAL_ARGS)
{
    // One ring: STAGES A tiles, then STAGES B tiles (each a multiple of 1024 bytes).
    __local uint4 ring[STAGES * (A_BYTES + B_BYTES) / 16] __attribute__((aligned(1024)));
    __local uchar* As = (__local uchar*)ring;
    __local uchar* Bs = As + STAGES * A_BYTES;

    const int tid = get_local_id(0), wtid = tid & 127;
    const int wg_row0 = (tid >> 7) * WG_ROWS;

    const int2 origin = grouped_tile_origin(M, N, BM, BN, GROUP_M);
    const int m0 = origin.x, n0 = origin.y;

    // This slice's steps: first .. first + steps - 1 of all of K's (none past the last).
    const long z = get_group_id(2);
    const KSlice ks = k_slice(z, K);
    const int first = ks.first, steps = ks.steps;
    A += a_off + ks.batch * a_batch;
    B += b_off + ks.batch * b_batch;
    const long c0 = c_off + z * c_batch;   // no arithmetic on half pointers

    float acc[MREP][NACC];
    #pragma unroll
    for (int r = 0; r < MREP; ++r)
        #pragma unroll
        for (int i = 0; i < NACC; ++i)
            acc[r][i] = 0.0f;
#if PROMOTE
    float sum[MREP][NACC];
    #pragma unroll
    for (int r = 0; r < MREP; ++r)
        #pragma unroll
        for (int i = 0; i < NACC; ++i)
            sum[r][i] = 0.0f;
    int unpromoted = 0;
#endif

    // Step s lives in slot s % STAGES. Every step commits one copy group (empty past the last
    // step), so "at most LOOKAHEAD - 1 in flight" always means "step s has landed".
#if INTERIOR_COPY
    // Steps below `whole` copy by the interior path (every one, if the tile is inside C).
    const InteriorCopy ic = interior_copy(A, lda, B, ldb, m0, n0, tid);
    const int whole = m0 + BM <= M && n0 + BN <= N ? K / BK : 0;
#define COPY_STEP(slot_, step_) \
    if ((step_) < whole) \
        copy_step_interior(As + (slot_) * A_BYTES, Bs + (slot_) * B_BYTES, &ic, step_); \
    else \
        copy_step(As + (slot_) * A_BYTES, Bs + (slot_) * B_BYTES, A, lda, B, ldb, M, N, K, m0, \
                  n0, (step_) * BK, tid)
#else
#define COPY_STEP(slot_, step_) \
    copy_step(As + (slot_) * A_BYTES, Bs + (slot_) * B_BYTES, A, lda, B, ldb, M, N, K, m0, n0, \
              (step_) * BK, tid)
#endif
    #pragma unroll
    for (int st = 0; st < LOOKAHEAD; ++st) {
        if (st < steps) {
            COPY_STEP(st, first + st);
        }
        copy_commit();
    }
    int slot = 0, fill = LOOKAHEAD;
    for (int s = 0; s < steps; ++s) {
        copy_wait();
#if MMA_PTX
        // cp.async and st.shared write through the generic proxy; wgmma reads through the
        // async proxy.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        if (s + LOOKAHEAD < steps) {
            COPY_STEP(fill, first + s + LOOKAHEAD);
        }
        copy_commit();
        step_products(As + slot * A_BYTES, Bs + slot * B_BYTES, wg_row0, wtid, acc);
#if !MMA_PTX
        barrier(CLK_LOCAL_MEM_FENCE);   // the emulation's reads of the slot end here
#endif
#if PROMOTE
        if (++unpromoted == PROMOTE || s + 1 == steps) {
            unpromoted = 0;
#if MMA_PTX
            asm volatile(SM90A "wgmma.wait_group.sync.aligned 0;" ::: "memory");
#endif
            #pragma unroll
            for (int r = 0; r < MREP; ++r)
                #pragma unroll
                for (int i = 0; i < NACC; ++i) {
#if MMA_PTX
                    asm volatile("" : "+f"(acc[r][i]) :: "memory");   // read after the wait
#endif
                    sum[r][i] += acc[r][i];
                    acc[r][i] = 0.0f;
                }
        }
#endif
        slot = slot == STAGES - 1 ? 0 : slot + 1;
        fill = fill == STAGES - 1 ? 0 : fill + 1;
    }
#if MMA_PTX
#if WG_INFLIGHT
    asm volatile(SM90A "wgmma.wait_group.sync.aligned 0;" ::: "memory");
#endif
    // The accumulators are read only after the wait: tie each one to it.
    #pragma unroll
    for (int r = 0; r < MREP; ++r)
        #pragma unroll
        for (int i = 0; i < NACC; ++i)
            asm volatile("" : "+f"(acc[r][i]) :: "memory");
#endif

#if PROMOTE
    #pragma unroll
    for (int r = 0; r < MREP; ++r)
        #pragma unroll
        for (int i = 0; i < NACC; ++i)
            acc[r][i] = sum[r][i];
#endif

    const int q = wtid >> 5, g = (wtid & 31) >> 2, t = wtid & 3;
#if STAGED
    // Every warpgroup has waited for its own products, so once all are here nothing reads
    // the ring any more.
    barrier(CLK_LOCAL_MEM_FENCE);
    __local CS_T* const Cs = (__local CS_T*)ring;
    #pragma unroll
    for (int r = 0; r < MREP; ++r)
        #pragma unroll
        for (int j = 0; j < BN / 8; ++j)
            #pragma unroll
            for (int h = 0; h < 2; ++h)
                stage_pair(Cs, (wg_row0 + 64 * r + 16 * q + g + 8 * h) * CS_LD + 8 * j + 2 * t,
                           acc[r][4 * j + 2 * h], acc[r][4 * j + 2 * h + 1]);
    barrier(CLK_LOCAL_MEM_FENCE);
    store_staged(C, c0, ldc, Cs, CS_LD, BM, BN, m0, n0, M, N, tid, NTHREADS);
#if FINISH_LAST
    barrier(CLK_LOCAL_MEM_FENCE);   // the flag below takes the ring's first word
#endif
#else
    #pragma unroll
    for (int r = 0; r < MREP; ++r) {
        #pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const int n = n0 + 8 * j + 2 * t;
            #pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + wg_row0 + 64 * r + 16 * q + g + 8 * h;
                if (row < M && n < N)
                    store_pair(C, c0 + (long)row * ldc + n, n + 1 < N, acc[r][4 * j + 2 * h],
                               acc[r][4 * j + 2 * h + 1]);
            }
        }
    }
#endif
#if FINISH_LAST
    // the flag in the ring's first word: every read of the ring is over by the barrier that
    // precedes its write (and the tiles leave no local memory to spare)
    __local int* const last = (__local int*)ring;
    SPLIT_K_FINISH(*last, ks.batch, m0, n0, BM, BN, C + c_off, ldc, c_batch);
#endif
}
