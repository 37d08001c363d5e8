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
// (WM/16) x (WN/8) mma tiles of 16 x 8 whose accumulators stay in registers. Each BK-deep step of
// A and B is read from global memory into registers (16-byte chunks, zeros outside the matrices)
// while the previous step is multiplied, then stored into the other half of a double buffer in
// local memory, in the operand's own orientation: rows along K for row-major A / column-major B,
// along M or N otherwise. Rows are padded so that ldmatrix (8 rows of 16 bytes per phase) and the
// TF32 fragment reads hit 32 distinct banks.
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16" / "mma.m16n8k8", lane = 4*g + t):
//   f16/bf16 m16n8k16: A regs {(g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..)} as (m, k);
//                      B regs {(2t..2t+1, g), (2t+8.., g)} as (k, n)
//   tf32 m16n8k8:      A regs {(g, t), (g+8, t), (g, t+4), (g+8, t+4)}; B regs {(t, g), (t+4, g)}
//   C (f32):           {(g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)} as (m, n)
// ldmatrix.x4: lanes 8j..8j+7 give the row addresses of 8x8 matrix j, and register j of lane
// 4*g + t holds row g, columns 2t, 2t+1 of matrix j (the transpose's with .trans).
//
// Launch: local size (NTHREADS, 1, 1); global (NTHREADS * ceil(N/BN), ceil(M/BM), batch).
//
// Parameters (-D):
//   ELEM       1: float16 (A, B and C as IEEE half bits), 2: bfloat16 (C float32),
//              3: float32 rounded to TF32 (C float32)
//   MMA_PTX    1: inline PTX (NVIDIA sm_80+ only; the host never sets it elsewhere);
//              0: the portable emulation (every lane computes its C fragment from local memory)
//   TRANS_A/B  operand orientation (see gemm_naive.cl)
//   BM, BN, BK block tile (BK a multiple of 16: 32 for 16-bit types, 16 for TF32 by default)
//   WM, WN     warp tile: WM % 16 == 0, WN % 16 == 0; BM % WM == 0, BN % WN == 0
//   VEC_A/B    1: 16-byte global loads; needs the operand's offset, leading dimension and batch
//              stride to be multiples of 16 bytes. 0: element loads, any layout.
//   GROUP_M    work-groups are walked GROUP_M tile-rows at a time (L2 reuse)
//   SIMULATOR  1 on Oclgrind: TF32 chunks stored element by element (see store_chunk)
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef ELEM
#define ELEM 1
#endif
#ifndef MMA_PTX
#define MMA_PTX 0
#endif
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
#define WN 32
#endif
#ifndef VEC_A
#define VEC_A 0
#endif
#ifndef VEC_B
#define VEC_B 0
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef SIMULATOR
#define SIMULATOR 0
#endif

#if ELEM == 3
typedef float GT;            // global input element
typedef uint LT;             // local element: TF32 bits
typedef float OT;            // output element
#define EPC 4                // elements per 16-byte chunk
#define KSTEP 8              // K of one mma
#define PAD_K 4              // padding of rows running along K (elements)
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
#define PAD_K 8
#endif
#define PAD_X 8              // padding of rows running along M or N (elements)

#define WARPS_N (BN / WN)
#define NTHREADS ((BM / WM) * WARPS_N * 32)
#define MT (WM / 16)         // mma tiles per warp along M
#define NT8 (WN / 8)         // mma tiles per warp along N

// Local tiles: (rows, row stride) of A and B in their stored orientation.
#if TRANS_A
#define A_ROWS BK
#define A_LEN BM
#define A_STRIDE (BM + PAD_X)
#else
#define A_ROWS BM
#define A_LEN BK
#define A_STRIDE (BK + PAD_K)
#endif
#if TRANS_B
#define B_ROWS BN
#define B_LEN BK
#define B_STRIDE (BK + PAD_K)
#else
#define B_ROWS BK
#define B_LEN BN
#define B_STRIDE (BN + PAD_X)
#endif
#define A_TILE (A_ROWS * A_STRIDE)
#define B_TILE (B_ROWS * B_STRIDE)
#define A_LOADS (BM * BK / EPC / NTHREADS)   // 16-byte chunks per work-item per step
#define B_LOADS (BN * BK / EPC / NTHREADS)

#if (BM % WM) || (BN % WN) || (WM % 16) || (WN % 16) || (BK % 16)
#error "gemm_mma.cl: tile parameters violate the constraints in the header"
#endif
#if (BM * BK) % (EPC * NTHREADS) || (BN * BK) % (EPC * NTHREADS) || A_LOADS == 0 || B_LOADS == 0
#error "gemm_mma.cl: BM*BK and BN*BK must be multiples of the chunk size times NTHREADS"
#endif
#if (A_TILE * 16 / EPC) % 16 || (B_TILE * 16 / EPC) % 16
#error "gemm_mma.cl: local tiles must be whole 16-byte chunks"
#endif

// -- element conversions ---------------------------------------------------------------------
// float32 -> TF32 bits, rounded to nearest, ties away from zero (cvt.rna.tf32.f32).
inline uint to_tf32(const float x)
{
#if MMA_PTX
    uint r;
    asm volatile("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
#else
    const uint u = as_uint(x);
    return isnan(x) ? u : ((u + 0x1000u) & 0xFFFFE000u);
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
    return as_float(p[i]);
#endif
}
#endif

inline void store_out(__global OT* C, const long i, const float v)
{
#if ELEM == 1
    vstore_half_rte(v, i, C);
#else
    C[i] = v;
#endif
}

// -- global -> registers -> local -----------------------------------------------------------
// One 16-byte chunk of an operand: EPC elements along its contiguous axis starting at `inner`
// in row `outer` of its storage; zeros past outer_lim / inner_lim.
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

inline void store_chunk(__local LT* tile, const int offset, const uint4 v)
{
#if ELEM == 3 && SIMULATOR
    // Element by element: Oclgrind calls the vector rebuilt from four conversions undefined.
    __local uint* p = tile + offset;
    p[0] = to_tf32(as_float(v.x));
    p[1] = to_tf32(as_float(v.y));
    p[2] = to_tf32(as_float(v.z));
    p[3] = to_tf32(as_float(v.w));
#elif ELEM == 3
    *(__local uint4*)(tile + offset) = (uint4)(to_tf32(as_float(v.x)), to_tf32(as_float(v.y)),
                                               to_tf32(as_float(v.z)), to_tf32(as_float(v.w)));
#else
    *(__local uint4*)(tile + offset) = v;
#endif
}

// Chunk c of a tile stored as `rows` rows of `len` elements: (row, first element). Unsigned, so
// that the constant divisions are shifts (a signed / and % pair also becomes a "freeze").
#define CHUNK_ROW(c, len) ((int)((uint)(c) / ((len) / EPC)))
#define CHUNK_COL(c, len) ((int)((uint)(c) % ((len) / EPC)) * EPC)

inline void load_a(__global const GT* A, const int lda, const int M, const int K, const int m0,
                   const int k0, const int tid, uint4* ra)
{
    #pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        const int c = tid + l * NTHREADS;
        const int row = CHUNK_ROW(c, A_LEN), col = CHUNK_COL(c, A_LEN);
#if TRANS_A
        ra[l] = load_chunk(A, lda, k0 + row, m0 + col, K, M, VEC_A);
#else
        ra[l] = load_chunk(A, lda, m0 + row, k0 + col, M, K, VEC_A);
#endif
    }
}

inline void load_b(__global const GT* B, const int ldb, const int N, const int K, const int n0,
                   const int k0, const int tid, uint4* rb)
{
    #pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        const int c = tid + l * NTHREADS;
        const int row = CHUNK_ROW(c, B_LEN), col = CHUNK_COL(c, B_LEN);
#if TRANS_B
        rb[l] = load_chunk(B, ldb, n0 + row, k0 + col, N, K, VEC_B);
#else
        rb[l] = load_chunk(B, ldb, k0 + row, n0 + col, K, N, VEC_B);
#endif
    }
}

inline void store_tiles(__local LT* As, __local LT* Bs, const int tid, const uint4* ra,
                        const uint4* rb)
{
    #pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        const int c = tid + l * NTHREADS;
        store_chunk(As, CHUNK_ROW(c, A_LEN) * A_STRIDE + CHUNK_COL(c, A_LEN), ra[l]);
    }
    #pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        const int c = tid + l * NTHREADS;
        store_chunk(Bs, CHUNK_ROW(c, B_LEN) * B_STRIDE + CHUNK_COL(c, B_LEN), rb[l]);
    }
}

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
// The shared-window address of a __local pointer (NVIDIA: __local pointers are shared-space
// addresses, so the integer value is what ldmatrix's [addr] expects).
#define SHARED_ADDR(p) ((uint)(size_t)(p))

inline void ldmatrix_x4(uint* r, __local const LT* p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SHARED_ADDR(p)));
}

inline void ldmatrix_x4_trans(uint* r, __local const LT* p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SHARED_ADDR(p)));
}

inline void mma_sync(float* d, const uint* a, const uint* b)
{
#if ELEM == 1
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                   "f"(d[0]), "f"(d[1]), "f"(d[2]), "f"(d[3]));
#elif ELEM == 2
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                   "f"(d[0]), "f"(d[1]), "f"(d[2]), "f"(d[3]));
#else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
                   "f"(d[0]), "f"(d[1]), "f"(d[2]), "f"(d[3]));
#endif
}
#endif

// acc[i][j][*] += A(wm0 + 16i.., kk..) * B(kk.., wn0 + 8j..) for one KSTEP slice.
inline void warp_step(__local const LT* As, __local const LT* Bs, const int wm0, const int wn0,
                      const int kk, const int lane, float acc[MT][NT8][4])
{
    const int g = lane >> 2, t = lane & 3;
#if MMA_PTX
    uint af[MT][4], bf[NT8][2];
#if ELEM == 3
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        const int m = wm0 + 16 * i + g;
        af[i][0] = As[LA(m, kk + t)];
        af[i][1] = As[LA(m + 8, kk + t)];
        af[i][2] = As[LA(m, kk + t + 4)];
        af[i][3] = As[LA(m + 8, kk + t + 4)];
    }
    #pragma unroll
    for (int j = 0; j < NT8; ++j) {
        const int n = wn0 + 8 * j + g;
        bf[j][0] = Bs[LB(kk + t, n)];
        bf[j][1] = Bs[LB(kk + t + 4, n)];
    }
#else
    // ldmatrix: lane 8*q + r gives row r of matrix q.
    const int q = lane >> 3, r = lane & 7;
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        // Matrix q of an A fragment: rows m + 8*(q&1), columns k + 8*(q>>1).
        const int m = wm0 + 16 * i + 8 * (q & 1), k = kk + 8 * (q >> 1);
#if TRANS_A
        ldmatrix_x4_trans(af[i], As + LA(m, k + r));
#else
        ldmatrix_x4(af[i], As + LA(m + r, k));
#endif
    }
    #pragma unroll
    for (int p = 0; p < NT8 / 2; ++p) {
        // Matrix q: n tile 2p + (q>>1), k half (q&1): registers b[2p][0], b[2p][1], b[2p+1][..].
        const int n = wn0 + 16 * p + 8 * (q >> 1), k = kk + 8 * (q & 1);
        uint r4[4];
#if TRANS_B
        ldmatrix_x4(r4, Bs + LB(k, n + r));
#else
        ldmatrix_x4_trans(r4, Bs + LB(k + r, n));
#endif
        bf[2 * p][0] = r4[0];
        bf[2 * p][1] = r4[1];
        bf[2 * p + 1][0] = r4[2];
        bf[2 * p + 1][1] = r4[3];
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
            const int m = wm0 + 16 * i + g, n = wn0 + 8 * j + 2 * t;
            for (int k = kk; k < kk + KSTEP; ++k) {
                const float a0 = local_to_float(As, LA(m, k));
                const float a1 = local_to_float(As, LA(m + 8, k));
                const float b0 = local_to_float(Bs, LB(k, n));
                const float b1 = local_to_float(Bs, LB(k, n + 1));
                acc[i][j][0] = fma(a0, b0, acc[i][j][0]);
                acc[i][j][1] = fma(a0, b1, acc[i][j][1]);
                acc[i][j][2] = fma(a1, b0, acc[i][j][2]);
                acc[i][j][3] = fma(a1, b1, acc[i][j][3]);
            }
        }
    }
#endif
}

__kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1)))
void gemm_mma(const int M, const int N, const int K,
              __global const GT* A, const long a_off, const int lda, const long a_batch,
              __global const GT* B, const long b_off, const int ldb, const long b_batch,
              __global OT* C, const long c_off, const int ldc, const long c_batch)
{
    __local uint4 a_chunks[2 * A_TILE / EPC];
    __local uint4 b_chunks[2 * B_TILE / EPC];
    __local LT* As = (__local LT*)a_chunks;
    __local LT* Bs = (__local LT*)b_chunks;

    const int tid = get_local_id(0), lane = tid & 31;
    const uint warp = (uint)tid >> 5;
    const int wm0 = (int)(warp / WARPS_N) * WM, wn0 = (int)(warp % WARPS_N) * WN;

    // Tile (tm, tn) of C, walked GROUP_M tile-rows at a time. Remainders are written out: LLVM
    // turns a / and % pair into a "freeze" instruction that Oclgrind cannot run.
    const uint tiles_m = ((uint)M + BM - 1) / BM, tiles_n = ((uint)N + BN - 1) / BN;
    const uint pid = (uint)get_group_id(1) * tiles_n + (uint)get_group_id(0);
    const uint width = GROUP_M * tiles_n;
    const uint group = pid / width;
    const uint first_m = group * GROUP_M;
    const uint group_rows = min(tiles_m - first_m, (uint)GROUP_M);
    const uint in_group = pid - group * width;
    const uint tn = in_group / group_rows;
    const int m0 = (int)(first_m + in_group - tn * group_rows) * BM;
    const int n0 = (int)tn * BN;

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

    uint4 ra[A_LOADS], rb[B_LOADS];
    const int steps = (int)(((uint)K + BK - 1) / BK);
    load_a(A, lda, M, K, m0, 0, tid, ra);
    load_b(B, ldb, N, K, n0, 0, tid, rb);
    store_tiles(As, Bs, tid, ra, rb);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < steps; ++s) {
        const int cur = s & 1;
        const bool more = s + 1 < steps;
        if (more) {
            load_a(A, lda, M, K, m0, (s + 1) * BK, tid, ra);
            load_b(B, ldb, N, K, n0, (s + 1) * BK, tid, rb);
        }
        __local const LT* Ac = As + cur * A_TILE;
        __local const LT* Bc = Bs + cur * B_TILE;
        #pragma unroll
        for (int kk = 0; kk < BK; kk += KSTEP)
            warp_step(Ac, Bc, wm0, wn0, kk, lane, acc);
        if (more)
            store_tiles(As + (1 - cur) * A_TILE, Bs + (1 - cur) * B_TILE, tid, ra, rb);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    const int g = lane >> 2, t = lane & 3;
    #pragma unroll
    for (int i = 0; i < MT; ++i) {
        #pragma unroll
        for (int j = 0; j < NT8; ++j) {
            const int m = m0 + wm0 + 16 * i + g, n = n0 + wn0 + 8 * j + 2 * t;
            #pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m + 8 * h;
                if (row < M) {
                    if (n < N)
                        store_out(C, c0 + (long)row * ldc + n, acc[i][j][2 * h]);
                    if (n + 1 < N)
                        store_out(C, c0 + (long)row * ldc + n + 1, acc[i][j][2 * h + 1]);
                }
            }
        }
    }
}
