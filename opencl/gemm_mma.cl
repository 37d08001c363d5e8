// Tensor-core GEMM: warp-level mma.sync through inline PTX on NVIDIA sm_80+ (float16, bfloat16,
// TF32), with a portable emulation of the same warp-level steps for every other device.
//
//   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n)     (float32 accumulation, C rounded once)
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides; TRANS_A / TRANS_B select the stored orientation of A and B).
//
// Blocking: a work-group of NTHREADS = (BM/WM)*(BN/WN)*32 work-items (one warp per 32
// consecutive local ids) computes a BM x BN tile of C; each warp a WM x WN block of it, as
// (WM/16) x (WN/8) mma tiles of 16 x 8 whose accumulators stay in registers. The BK-deep steps of
// A and B go through a ring of STAGES local tiles: step s + STAGES - 1 is copied while step s is
// multiplied. On NVIDIA (MMA_PTX=1) whole 16-byte chunks travel with cp.async (global -> shared,
// no registers; rows past the matrix are zero-filled by a source size of 0); chunks cut by the
// matrix edge along the contiguous axis, and unaligned operands, are loaded through registers.
// Each tile keeps its operand's own orientation (rows along K for row-major A / column-major B,
// along M or N otherwise), unpadded, with the 16-byte chunks of each row XOR-swizzled (see SWZ)
// so that the 8 rows an ldmatrix phase reads hit 32 distinct banks.
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16" / "mma.m16n8k8", lane = 4*g + t):
//   f16/bf16 m16n8k16: A regs {(g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..)} as (m, k);
//                      B regs {(2t..2t+1, g), (2t+8.., g)} as (k, n)
//   tf32 m16n8k8:      A regs {(g, t), (g+8, t), (g, t+4), (g+8, t+4)}; B regs {(t, g), (t+4, g)}
//   C (f32):           {(g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)} as (m, n)
// ldmatrix.x4: lanes 8j..8j+7 give the row addresses of 8x8 matrix j, and register j of lane
// 4*g + t holds row g, columns 2t, 2t+1 of matrix j (the transpose's with .trans). For TF32 an
// 8x8 b16 matrix is 8 rows of 4 float32, so lane 4*g + t gets element (g, t) of it: the TF32
// fragment wherever K is the tile's contiguous axis (row-major A, column-major B); the other
// orientations read TF32 fragments as 32-bit scalars. TF32 tiles hold float32 bits; fragments
// are rounded (cvt.rna) when loaded.
//
// Launch: local size (NTHREADS, 1, 1); global (NTHREADS * ceil(N/BN), ceil(M/BM), batch).
//
// Parameters (-D):
//   ELEM       1: float16 (A, B and C as IEEE half bits), 2: bfloat16 (C float32),
//              3: float32 rounded to TF32 (C float32)
//   MMA_PTX    1: inline PTX (NVIDIA sm_80+ only; the host never sets it elsewhere);
//              0: the portable emulation (every lane computes its C fragment from local memory)
//   TRANS_A/B  operand orientation (see gemm_naive.cl)
//   BM, BN, BK block tile (BK a multiple of 16: 32 for 16-bit types, 16 for TF32 by default);
//              every tile row of 16-byte chunks: 1, 2 or 4 chunks, or a multiple of 8
//   WM, WN     warp tile: WM % 16 == 0, WN % 16 == 0; BM % WM == 0, BN % WN == 0
//   STAGES     local tiles in the copy ring (2 to 5)
//   VEC_A/B    1: 16-byte global loads; needs the operand's offset, leading dimension and batch
//              stride to be multiples of 16 bytes. 0: element loads, any layout.
//   VEC_C      1: C's offset, leading dimension and batch stride are even (pairs stored at once)
//   DYN_LOCAL  1: the tiles live in a __local buffer argument (the host sizes it: STAGES * (BM + BN)
//              * BK elements), which may exceed the 48 KB a static __local array is allowed
//   NPERM      1 (TF32, row-major B, WN % 32 == 0): the columns of each warp's B block are dealt
//              to the mma tiles round-robin (column c of tile j is warp column c * NT8 + j), so
//              that a lane's B fragments of all tiles are NT8 contiguous floats of two K rows
//              (128-bit local loads instead of 32-bit ones) and its C values contiguous runs
//   GROUP_M    work-groups are walked GROUP_M tile-rows at a time (L2 reuse)
//   SIMULATOR  1 on Oclgrind: C pairs stored element by element (see store_pair)
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
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef DYN_LOCAL
#define DYN_LOCAL 0
#endif
#ifndef NPERM
#define NPERM 0
#endif

#if ELEM == 3
typedef float GT;            // global input element
typedef uint LT;             // local element: float32 bits (rounded to TF32 when read)
typedef float OT;            // output element
#define EPC 4                // elements per 16-byte chunk
#define KSTEP 8              // K of one mma
#else
typedef ushort GT;
typedef ushort LT;
#if ELEM == 1
typedef half OT;             // float16 @ float16 -> float16, as NumPy
#else
typedef float OT;            // bfloat16 @ bfloat16 -> float32, as NumPy with ml_dtypes
#endif
#define EPC 8
#define KSTEP 16
#endif
#define KHALF (KSTEP / 2)    // one 16-byte chunk: the K extent of an 8x8 ldmatrix matrix

#define WARPS_N (BN / WN)
#define NTHREADS ((BM / WM) * WARPS_N * 32)
#define MT (WM / 16)         // mma tiles per warp along M
#define NT8 (WN / 8)         // mma tiles per warp along N

// Local tiles: rows x LEN elements of A and B in their stored orientation.
#if TRANS_A
#define A_ROWS BK
#define A_LEN BM
#else
#define A_ROWS BM
#define A_LEN BK
#endif
#if TRANS_B
#define B_ROWS BN
#define B_LEN BK
#else
#define B_ROWS BK
#define B_LEN BN
#endif
#define A_TILE (A_ROWS * A_LEN)
#define B_TILE (B_ROWS * B_LEN)
#define A_LOADS (BM * BK / EPC / NTHREADS)   // 16-byte chunks per work-item per step
#define B_LOADS (BN * BK / EPC / NTHREADS)

// Swizzle: chunk c of row r of a tile with `cpr` chunks per row is stored at chunk c ^ SWZ(r).
// A 128-byte bank line holds 8 chunks, i.e. 8 / cpr rows when cpr < 8; XOR-ing with the line's
// index (mod cpr) puts the same chunk of 8 consecutive rows on 8 distinct chunk positions.
#define SWZ_SHIFT(cpr) ((cpr) >= 8 ? 0 : (cpr) == 4 ? 1 : (cpr) == 2 ? 2 : 3)
#define SWZ_MASK(cpr) ((cpr) >= 8 ? 7 : (cpr) - 1)
#define SWZ(r, cpr) (((uint)(r) >> SWZ_SHIFT(cpr)) & SWZ_MASK(cpr))
// Element offset of (row, col) in a swizzled tile with rows of len elements.
#define SW_OFF(row, col, len) \
    ((int)((uint)(row) * (len) + ((((uint)(col) / EPC) ^ SWZ(row, (len) / EPC)) * EPC) \
           + (uint)(col) % EPC))
#if NPERM
// B with NPERM: a quarter-warp reads chunks 2g and 2g + 1 (g of 2 lanes) of K rows t = 0..3;
// XOR-ing with 0, 1, 4, 5 for rows 0..3 (mod 4) gives its 8 loads 8 distinct chunk positions.
#define SWZ_B(r) (((uint)(r) & 1u) | (((uint)(r) & 2u) << 1))
#define B_OFF(row, col) \
    ((int)((uint)(row) * B_LEN + ((((uint)(col) / EPC) ^ SWZ_B(row)) * EPC) + (uint)(col) % EPC))
#else
#define B_OFF(row, col) SW_OFF(row, col, B_LEN)
#endif
// Warp column of fragment column c (0..7) of mma tile j.
#if NPERM
#define NCOL(j, c) ((c) * NT8 + (j))
#else
#define NCOL(j, c) (8 * (j) + (c))
#endif

#if (BM % WM) || (BN % WN) || (WM % 16) || (WN % 16) || (BK % 16) || STAGES < 2
#error "gemm_mma.cl: tile parameters violate the constraints in the header"
#endif
#if (BM * BK) % (EPC * NTHREADS) || (BN * BK) % (EPC * NTHREADS) || A_LOADS == 0 || B_LOADS == 0
#error "gemm_mma.cl: BM*BK and BN*BK must be multiples of the chunk size times NTHREADS"
#endif
#define CPR_OK(cpr) ((cpr) == 1 || (cpr) == 2 || (cpr) == 4 || (cpr) % 8 == 0)
#if !CPR_OK(A_LEN / EPC) || !CPR_OK(B_LEN / EPC) || (A_LEN % EPC) || (B_LEN % EPC)
#error "gemm_mma.cl: tile rows must hold 1, 2, 4 or a multiple of 8 chunks of 16 bytes"
#endif
#if NPERM && (ELEM != 3 || TRANS_B || WN % 32)
#error "gemm_mma.cl: NPERM needs TF32, row-major B and WN % 32 == 0"
#endif

#if STAGES < 2 || STAGES > 5
#error "gemm_mma.cl: STAGES must be 2 to 5"
#endif
#define CP_ASYNC_LEFT (STAGES - 2)   // a copy_wait leaves the later steps' copies in flight

// -- element conversions ---------------------------------------------------------------------
#include "tf32.h"

// float32 -> TF32 bits, rounded to nearest, ties away from zero (cvt.rna.tf32.f32).
inline uint to_tf32(const float x)
{
#if MMA_PTX
    uint r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
#else
    return to_tf32_bits(as_uint(x));
#endif
}

#if !MMA_PTX
// A local element as float32 (the emulation's operand read).
inline float local_to_float(__local const LT* p, const int i)
{
#if ELEM == 1
    return vload_half(i, (__local const half*)p);
#elif ELEM == 2
    return as_float((uint)p[i] << 16);
#else
    return as_float(to_tf32(as_float(p[i])));
#endif
}
#endif

#include "mma_copy.h"

// A chunk's place in the swizzled tiles of the ring (gemm_ring.h).
#define A_SLOT(row, col) SW_OFF(row, col, A_LEN)
#define B_SLOT(row, col) B_OFF(row, col)

// Local element offsets of A(m, k) and B(k, n) within one tile.
#if TRANS_A
#define LA(m, k) SW_OFF(k, m, A_LEN)
#else
#define LA(m, k) SW_OFF(m, k, A_LEN)
#endif
#if TRANS_B
#define LB(k, n) SW_OFF(n, k, B_LEN)
#else
#define LB(k, n) B_OFF(k, n)
#endif

// -- the warp-level product of one local tile ----------------------------------------------
#if MMA_PTX
#include "mma_ptx.h"

#if ELEM == 3
#define FRAG(x) to_tf32(as_float(x))
#else
#define FRAG(x) (x)
#endif
#endif

// acc[i][j][*] += A(wm0 + 16i.., kk..) * B(kk.., wn0 + 8j..) for one KSTEP slice.
inline void warp_step(__local const LT* As, __local const LT* Bs, const int wm0, const int wn0,
                      const int kk, const int lane, float acc[MT][NT8][4])
{
    const int g = lane >> 2, t = lane & 3;
#if MMA_PTX
    uint af[MT][4], bf[NT8][2];
    // ldmatrix: lane 8*q + r gives row r of matrix q.
    const int q = lane >> 3, r = lane & 7;
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        // Matrix q of an A fragment: rows m + 8*(q&1), K columns k + KHALF*(q>>1).
        const int m = wm0 + 16 * i + 8 * (q & 1), k = kk + KHALF * (q >> 1);
#if ELEM == 3 && TRANS_A
        const int mg = wm0 + 16 * i + g;
        af[i][0] = FRAG(As[LA(mg, kk + t)]);
        af[i][1] = FRAG(As[LA(mg + 8, kk + t)]);
        af[i][2] = FRAG(As[LA(mg, kk + t + 4)]);
        af[i][3] = FRAG(As[LA(mg + 8, kk + t + 4)]);
#elif TRANS_A
        ldmatrix_x4_trans(af[i], As + LA(m, k + r));
#else
        ldmatrix_x4(af[i], As + LA(m + r, k));
#if ELEM == 3
        #pragma unroll
        for (int e = 0; e < 4; ++e)
            af[i][e] = FRAG(af[i][e]);
#endif
#endif
    }
#if NPERM
    // Lane g's warp columns g * NT8 .. g * NT8 + NT8 - 1 of K rows kk + t and kk + t + 4, 16 bytes
    // at a time: element j of the run is fragment column g of tile j.
    #pragma unroll
    for (int c = 0; c < NT8 / 4; ++c) {
        #pragma unroll
        for (int h = 0; h < 2; ++h) {
            const uint4 v = ld_shared_v4(Bs + LB(kk + t + 4 * h, wn0 + g * NT8 + 4 * c));
            bf[4 * c][h] = FRAG(v.x);
            bf[4 * c + 1][h] = FRAG(v.y);
            bf[4 * c + 2][h] = FRAG(v.z);
            bf[4 * c + 3][h] = FRAG(v.w);
        }
    }
#else
    #pragma unroll
    for (int p = 0; p < NT8 / 2; ++p) {
        // Matrix q: n tile 2p + (q>>1), K half (q&1): registers b[2p][0], b[2p][1], b[2p+1][..].
        const int n = wn0 + 16 * p + 8 * (q >> 1), k = kk + KHALF * (q & 1);
#if ELEM == 3 && !TRANS_B
        #pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int ng = wn0 + 16 * p + 8 * h + g;
            bf[2 * p + h][0] = FRAG(Bs[LB(kk + t, ng)]);
            bf[2 * p + h][1] = FRAG(Bs[LB(kk + t + 4, ng)]);
        }
#else
        uint r4[4];
#if TRANS_B
        ldmatrix_x4(r4, Bs + LB(k, n + r));
#else
        ldmatrix_x4_trans(r4, Bs + LB(k + r, n));
#endif
        bf[2 * p][0] = FRAG(r4[0]);
        bf[2 * p][1] = FRAG(r4[1]);
        bf[2 * p + 1][0] = FRAG(r4[2]);
        bf[2 * p + 1][1] = FRAG(r4[3]);
#endif
    }
#endif
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        #pragma unroll
        for (int j = 0; j < NT8; ++j)
            mma_sync(acc[i][j], af[i], bf[j]);
    }
#else
    // Emulation: the same C fragment per lane, its dot products read straight from local memory.
    for (int i = 0; i < MT; ++i) {
        for (int j = 0; j < NT8; ++j) {
            const int m = wm0 + 16 * i + g;
            const int n = wn0 + NCOL(j, 2 * t), n1 = wn0 + NCOL(j, 2 * t + 1);
            for (int k = kk; k < kk + KSTEP; ++k) {
                const float a0 = local_to_float(As, LA(m, k));
                const float a1 = local_to_float(As, LA(m + 8, k));
                const float b0 = local_to_float(Bs, LB(k, n));
                const float b1 = local_to_float(Bs, LB(k, n1));
                acc[i][j][0] = fma(a0, b0, acc[i][j][0]);
                acc[i][j][1] = fma(a0, b1, acc[i][j][1]);
                acc[i][j][2] = fma(a1, b0, acc[i][j][2]);
                acc[i][j][3] = fma(a1, b1, acc[i][j][3]);
            }
        }
    }
#endif
}

// The ring's parameters (gemm_ring.h): a warp_step is one mma's K.
typedef float ACC_T;
#define ACC_N 4
#define WARP_K KSTEP
#include "gemm_ring.h"
#include "tile_order.h"

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void gemm_mma(GEMM_ARGS_OF(GT, OT, )
#if DYN_LOCAL
              , __local uint4* tiles
#endif
              )
{
#if DYN_LOCAL
    __local LT* As = (__local LT*)tiles;
    __local LT* Bs = As + STAGES * A_TILE;
#else
    __local uint4 a_chunks[STAGES * A_TILE / EPC];
    __local uint4 b_chunks[STAGES * B_TILE / EPC];
    __local LT* As = (__local LT*)a_chunks;
    __local LT* Bs = (__local LT*)b_chunks;
#endif

    const int tid = get_local_id(0), lane = tid & 31;
    const uint warp = (uint)tid >> 5;
    const int wm0 = (int)(warp / WARPS_N) * WM, wn0 = (int)(warp % WARPS_N) * WN;

    const int2 origin = grouped_tile_origin(M, N, BM, BN, GROUP_M);
    const int m0 = origin.x, n0 = origin.y;

    const long batch = get_group_id(2);
    A += a_off + batch * a_batch;
    B += b_off + batch * b_batch;
    const long c0 = c_off + batch * c_batch;   // no arithmetic on half pointers

    float acc[MT][NT8][4];
    #pragma unroll
    for (int i = 0; i < MT; ++i)
        #pragma unroll
        for (int j = 0; j < NT8; ++j)
            acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

    ring_product(As, Bs, A, lda, B, ldb, M, N, K, m0, n0, tid, wm0, wn0, lane, 0,
                 (int)(((uint)K + BK - 1) / BK), acc);

    const int g = lane >> 2, t = lane & 3;
#if NPERM
    // Fragment column 2t + e of tiles j, j + 1 are warp columns (2t + e) * NT8 + j, j + 1.
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        #pragma unroll
        for (int e = 0; e < 2; ++e) {
            #pragma unroll
            for (int j = 0; j < NT8; j += 2) {
                const int m = m0 + wm0 + 16 * i + g, n = n0 + wn0 + NCOL(j, 2 * t + e);
                #pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int row = m + 8 * h;
                    if (row < M && n < N)
                        store_pair(C, c0 + (long)row * ldc + n, n + 1 < N, acc[i][j][2 * h + e],
                                   acc[i][j + 1][2 * h + e]);
                }
            }
        }
    }
#else
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        #pragma unroll
        for (int j = 0; j < NT8; ++j) {
            const int m = m0 + wm0 + 16 * i + g, n = n0 + wn0 + 8 * j + 2 * t;
            #pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m + 8 * h;
                if (row < M && n < N)
                    store_pair(C, c0 + (long)row * ldc + n, n + 1 < N, acc[i][j][2 * h],
                               acc[i][j][2 * h + 1]);
            }
        }
    }
#endif
}
