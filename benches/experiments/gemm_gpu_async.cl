// ARCHIVED EXPERIMENT (not built by the library): opencl/gemm_gpu.cl as of 2026-11-22 with
// the ASYNC=1 path (cp.async inline PTX, STAGES-deep local ring, clamped/unclamped copies).
// Correct on the H100 but slower than the register-staged path (benches/gpu-notes.md, v4/v5).
// Build it by hand: -DASYNC=1 -DSTAGES=3 plus the gemm_gpu.cl parameters.
//
// High-performance GPU GEMM: 2-D register blocking, operands staged in local memory with double
// buffering (one barrier per K step), optional split-K. Written for NVIDIA-class GPUs (SIMT FFMA,
// fp32 and fp64), portable OpenCL C 1.2.
//
//   C[z](m, n) = sum_{k in slice s} A[b](m, k) * B[b](k, n),   z = get_global_id(2) = b*KSPLIT + s
//
// Layout: the shared convention of gemm_naive.cl (element offsets, leading dimensions, batch
// strides; TRANS_A / TRANS_B select the stored orientation of A and B). With KSPLIT > 1 each
// slice s of K writes its partial product to C[z] (the caller passes a workspace of
// batch*KSPLIT matrices as C) and gemm_gpu_splitk_reduce sums them into the real C.
//
// Blocking: a work-group of NT = (BM/TM)*(BN/TN) work-items computes a BM x BN macro-tile of C;
// each work-item holds a TM x TN micro-tile in registers, as TM/4 x TN/4 blocks of 4x4 strided by
// 4*(BM/TM) rows and 4*(BN/TN) columns (so that, for every k, a work-item reads its A and B
// values as whole T4 vectors from local memory, and neighbouring work-items read neighbouring
// vectors). Each K step of BK columns of A / rows of B is loaded from global memory into
// registers while the previous step is being multiplied, then stored into the other half of the
// local double buffer. A is stored transposed (k-major) in local memory.
//
// Launch: local size (NT, 1, 1); global size (NT * ceil(N/BN), ceil(M/BM), batch*KSPLIT).
//
// Parameters (-D):
//   T              float or double (the accumulator is T)
//   TRANS_A/B      operand orientation (see gemm_naive.cl)
//   BM, BN, BK     macro-tile; BM % TM == 0, BN % TN == 0, BK % 4 == 0
//   TM, TN         micro-tile, multiples of 4
//   WARP_X         work-items of one 32-wide warp along N: (BN/TN) % WARP_X == 0 and
//                  (BM/TM) % (32/WARP_X) == 0 (only a layout hint: correct on any SIMD width)
//   VEC_A, VEC_B   1: T4 global loads; needs the operand's offset, leading dimension and batch
//                  stride to be multiples of 4, and its contiguous extent (K, or M for TRANS_A;
//                  N, or K for TRANS_B) too. 0: scalar loads, any layout.
//   VEC_C          1: T4 stores of C; needs c_off, ldc, c_batch and N multiples of 4
//   PAD_A, PAD_B   extra T4-aligned elements per local-memory row (bank spreading)
//   GROUP_M        work-groups are walked GROUP_M tile-rows at a time (L2 reuse); 1 disables
//   KSPLIT         number of K slices (1: no split)
//   ASYNC          1: NVIDIA sm_80+ only, T = float: global -> local copies with the PTX
//                  instruction cp.async (inline assembly), STAGES-deep ring of local buffers, no
//                  registers held across the arithmetic. 0: portable register-staged double
//                  buffer (ptxas issues those loads only at the end of the step's arithmetic,
//                  so their latency is not hidden; cp.async is how it is).
//   STAGES         local-memory buffers of the ASYNC pipeline (>= 2)
//   BM*BK and BN*BK must be multiples of 4*NT (each work-item loads whole T4 vectors).
#ifndef T
#define T float
#endif
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WARP_X
#define WARP_X 8
#endif
#ifndef VEC_A
#define VEC_A 1
#endif
#ifndef VEC_B
#define VEC_B 1
#endif
#ifndef VEC_C
#define VEC_C 1
#endif
#ifndef PAD_A
#define PAD_A 4
#endif
#ifndef PAD_B
#define PAD_B 0
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#ifndef ASYNC
#define ASYNC 0
#endif
#ifndef STAGES
#define STAGES 3
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T4 CAT(T, 4)

#define NTX (BN / TN)          // work-items along N
#define NTY (BM / TM)          // work-items along M
#define NT (NTX * NTY)
#define WARP_Y (32 / WARP_X)
#define LDA_L ((BM + PAD_A) / 4) // local row lengths in T4
#define LDB_L ((BN + PAD_B) / 4)
#define A_LOADS (BM * BK / NT)   // scalars each work-item loads per K step
#define B_LOADS (BN * BK / NT)

#if (BM % TM) || (BN % TN) || (TM % 4) || (TN % 4) || (BK % 4) || (PAD_A % 4) || (PAD_B % 4)
#error "gemm_gpu.cl: tile parameters violate the constraints in the header"
#endif
#if (A_LOADS % 4) || (B_LOADS % 4) || (A_LOADS == 0) || (B_LOADS == 0)
#error "gemm_gpu.cl: BM*BK and BN*BK must be multiples of 4*NT"
#endif

// One K step of A (BM x BK at rows m0.., columns kb..) into ra; zeros outside M x [.., k1).
// The addresses are clamped into the matrix and the zeros selected after the load, so the
// loads are unconditional: with a branch around them ptxas issues them only just before their
// use (after the step's arithmetic), exposing the whole global-memory latency every step.
inline void load_a(__global const T* A, const int lda, const int M, const int m0,
                   const int kb, const int k1, const int lid, T* ra)
{
#if VEC_A
    #pragma unroll
    for (int v = 0; v < A_LOADS / 4; ++v) {
        const int e = lid + v * NT;
#if TRANS_A
        const int kk = e / (BM / 4), m = m0 + (e % (BM / 4)) * 4;   // T4 along m
        const bool ok = m < M && kb + kk < k1;
        T4 x = *(__global const T4*)(A + (long)min(kb + kk, k1 - 1) * lda + min(m, M - 4));
#else
        const int r = e / (BK / 4), k = kb + (e % (BK / 4)) * 4;    // T4 along k
        const bool ok = m0 + r < M && k < k1;
        T4 x = *(__global const T4*)(A + (long)min(m0 + r, M - 1) * lda + min(k, k1 - 4));
#endif
        x = ok ? x : (T4)0;
        ra[4 * v] = x.s0; ra[4 * v + 1] = x.s1; ra[4 * v + 2] = x.s2; ra[4 * v + 3] = x.s3;
    }
#else
    #pragma unroll
    for (int v = 0; v < A_LOADS; ++v) {
        const int e = lid + v * NT;
#if TRANS_A
        const int kk = e / BM, m = m0 + e % BM;
        const T x = A[(long)min(kb + kk, k1 - 1) * lda + min(m, M - 1)];
        ra[v] = (m < M && kb + kk < k1) ? x : (T)0;
#else
        const int r = e / BK, k = kb + e % BK;
        const T x = A[(long)min(m0 + r, M - 1) * lda + min(k, k1 - 1)];
        ra[v] = (m0 + r < M && k < k1) ? x : (T)0;
#endif
    }
#endif
}

// The registers of load_a into local memory, transposed to As[k][m].
inline void store_a(__local T4* As, const int lid, const T* ra)
{
    __local T* s = (__local T*)As;
#if VEC_A
    #pragma unroll
    for (int v = 0; v < A_LOADS / 4; ++v) {
        const int e = lid + v * NT;
#if TRANS_A
        As[(e / (BM / 4)) * LDA_L + e % (BM / 4)] = (T4)(ra[4 * v], ra[4 * v + 1], ra[4 * v + 2], ra[4 * v + 3]);
#else
        const int r = e / (BK / 4), k = (e % (BK / 4)) * 4;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            s[(k + j) * (4 * LDA_L) + r] = ra[4 * v + j];
#endif
    }
#else
    #pragma unroll
    for (int v = 0; v < A_LOADS; ++v) {
        const int e = lid + v * NT;
#if TRANS_A
        s[(e / BM) * (4 * LDA_L) + e % BM] = ra[v];
#else
        s[(e % BK) * (4 * LDA_L) + e / BK] = ra[v];
#endif
    }
#endif
}

// One K step of B (BK x BN at rows kb.., columns n0..) into rb; zeros outside [.., k1) x N
// (unconditional clamped loads, as in load_a).
inline void load_b(__global const T* B, const int ldb, const int N, const int n0,
                   const int kb, const int k1, const int lid, T* rb)
{
#if VEC_B
    #pragma unroll
    for (int v = 0; v < B_LOADS / 4; ++v) {
        const int e = lid + v * NT;
#if TRANS_B
        const int c = e / (BK / 4), k = kb + (e % (BK / 4)) * 4;    // T4 along k
        const bool ok = n0 + c < N && k < k1;
        T4 x = *(__global const T4*)(B + (long)min(n0 + c, N - 1) * ldb + min(k, k1 - 4));
#else
        const int kk = e / (BN / 4), n = n0 + (e % (BN / 4)) * 4;   // T4 along n
        const bool ok = n < N && kb + kk < k1;
        T4 x = *(__global const T4*)(B + (long)min(kb + kk, k1 - 1) * ldb + min(n, N - 4));
#endif
        x = ok ? x : (T4)0;
        rb[4 * v] = x.s0; rb[4 * v + 1] = x.s1; rb[4 * v + 2] = x.s2; rb[4 * v + 3] = x.s3;
    }
#else
    #pragma unroll
    for (int v = 0; v < B_LOADS; ++v) {
        const int e = lid + v * NT;
#if TRANS_B
        const int c = e / BK, k = kb + e % BK;
        const T x = B[(long)min(n0 + c, N - 1) * ldb + min(k, k1 - 1)];
        rb[v] = (n0 + c < N && k < k1) ? x : (T)0;
#else
        const int kk = e / BN, n = n0 + e % BN;
        const T x = B[(long)min(kb + kk, k1 - 1) * ldb + min(n, N - 1)];
        rb[v] = (n < N && kb + kk < k1) ? x : (T)0;
#endif
    }
#endif
}

// The registers of load_b into local memory as Bs[k][n].
inline void store_b(__local T4* Bs, const int lid, const T* rb)
{
    __local T* s = (__local T*)Bs;
#if VEC_B
    #pragma unroll
    for (int v = 0; v < B_LOADS / 4; ++v) {
        const int e = lid + v * NT;
#if TRANS_B
        const int c = e / (BK / 4), k = (e % (BK / 4)) * 4;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            s[(k + j) * (4 * LDB_L) + c] = rb[4 * v + j];
#else
        Bs[(e / (BN / 4)) * LDB_L + e % (BN / 4)] = (T4)(rb[4 * v], rb[4 * v + 1], rb[4 * v + 2], rb[4 * v + 3]);
#endif
    }
#else
    #pragma unroll
    for (int v = 0; v < B_LOADS; ++v) {
        const int e = lid + v * NT;
#if TRANS_B
        s[(e % BK) * (4 * LDB_L) + e / BK] = rb[v];
#else
        s[(e / BN) * (4 * LDB_L) + e % BN] = rb[v];
#endif
    }
#endif
}

// One K step of the TM x TN outer products of this work-item, from local memory.
#define COMPUTE_STEP(as, bs)                                                                  \
    _Pragma("unroll")                                                                         \
    for (int kk = 0; kk < BK; ++kk) {                                                         \
        T a[TM], bv[TN];                                                                      \
        _Pragma("unroll")                                                                     \
        for (int q = 0; q < TM / 4; ++q) {                                                    \
            const T4 x = (as)[kk * LDA_L + q * NTY + ty];                                     \
            a[4 * q] = x.s0; a[4 * q + 1] = x.s1; a[4 * q + 2] = x.s2; a[4 * q + 3] = x.s3;   \
        }                                                                                     \
        _Pragma("unroll")                                                                     \
        for (int p = 0; p < TN / 4; ++p) {                                                    \
            const T4 x = (bs)[kk * LDB_L + p * NTX + tx];                                     \
            bv[4 * p] = x.s0; bv[4 * p + 1] = x.s1; bv[4 * p + 2] = x.s2; bv[4 * p + 3] = x.s3; \
        }                                                                                     \
        _Pragma("unroll")                                                                     \
        for (int i = 0; i < TM; ++i)                                                          \
            _Pragma("unroll")                                                                 \
            for (int j = 0; j < TN; ++j)                                                      \
                acc[i][j] = fma(a[i], bv[j], acc[i][j]);                                      \
    }

#if ASYNC
// cp.async with src-size 0 writes zeros: out-of-range elements are zero-filled without a branch
// (the clamped source address is valid either way).
inline void cp_async4(__local T* dst, __global const T* src, const bool ok)
{
    __asm__ __volatile__("cp.async.ca.shared.global [%0], [%1], 4, %2;"
                 :: "r"((uint)(size_t)dst), "l"(src), "r"(ok ? 4 : 0) : "memory");
}

inline void cp_async16(__local T4* dst, __global const T4* src, const bool ok)
{
    __asm__ __volatile__("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :: "r"((uint)(size_t)dst), "l"(src), "r"(ok ? 16 : 0) : "memory");
}

inline void cp_async_commit(void) { __asm__ __volatile__("cp.async.commit_group;" ::: "memory"); }

// Wait until at most STAGES-2 groups of this work-item's copies are still in flight.
#if STAGES == 2
#define WAIT_GROUPS "0"
#elif STAGES == 3
#define WAIT_GROUPS "1"
#elif STAGES == 4
#define WAIT_GROUPS "2"
#elif STAGES == 5
#define WAIT_GROUPS "3"
#else
#error "gemm_gpu.cl: STAGES must be 2 to 5"
#endif
inline void cp_async_wait(void) { __asm__ __volatile__("cp.async.wait_group " WAIT_GROUPS ";" ::: "memory"); }

// One K step of A into local buffer As (k-major): 16-byte copies where the layout is already
// k-major (TRANS_A, aligned), else element copies that transpose, consecutive work-items
// walking k so that each warp reads whole 32-byte sectors. `clamp` (false for tiles wholly
// inside the matrix, the common case) adds the bounds clamping; inlined with a literal it
// costs nothing when false.
inline void async_a(__local T4* As, __global const T* A, const int lda, const int M,
                    const int m0, const int kb, const int k1, const int lid, const bool clamp)
{
#if VEC_A && TRANS_A
    #pragma unroll
    for (int v = 0; v < A_LOADS / 4; ++v) {
        const int e = lid + v * NT;
        const int kk = e / (BM / 4), m = m0 + (e % (BM / 4)) * 4;
        const int k = clamp ? min(kb + kk, k1 - 1) : kb + kk;
        cp_async16(As + kk * LDA_L + e % (BM / 4),
                   (__global const T4*)(A + (long)k * lda + (clamp ? min(m, M - 4) : m)),
                   !clamp || (m < M && kb + kk < k1));
    }
#else
    __local T* s = (__local T*)As;
    #pragma unroll
    for (int v = 0; v < A_LOADS; ++v) {
        const int e = lid + v * NT;
#if TRANS_A
        const int kk = e / BM, r = e % BM;
#else
        const int r = e / BK, kk = e % BK;
#endif
        const int m = clamp ? min(m0 + r, M - 1) : m0 + r;
        const int k = clamp ? min(kb + kk, k1 - 1) : kb + kk;
#if TRANS_A
        const long src = (long)k * lda + m;
#else
        const long src = (long)m * lda + k;
#endif
        cp_async4(s + kk * (4 * LDA_L) + r, A + src, !clamp || (m0 + r < M && kb + kk < k1));
    }
#endif
}

// One K step of B into local buffer Bs (k-major), as async_a.
inline void async_b(__local T4* Bs, __global const T* B, const int ldb, const int N,
                    const int n0, const int kb, const int k1, const int lid, const bool clamp)
{
#if VEC_B && !TRANS_B
    #pragma unroll
    for (int v = 0; v < B_LOADS / 4; ++v) {
        const int e = lid + v * NT;
        const int kk = e / (BN / 4), n = n0 + (e % (BN / 4)) * 4;
        const int k = clamp ? min(kb + kk, k1 - 1) : kb + kk;
        cp_async16(Bs + kk * LDB_L + e % (BN / 4),
                   (__global const T4*)(B + (long)k * ldb + (clamp ? min(n, N - 4) : n)),
                   !clamp || (n < N && kb + kk < k1));
    }
#else
    __local T* s = (__local T*)Bs;
    #pragma unroll
    for (int v = 0; v < B_LOADS; ++v) {
        const int e = lid + v * NT;
#if TRANS_B
        const int c = e / BK, kk = e % BK;
#else
        const int kk = e / BN, c = e % BN;
#endif
        const int n = clamp ? min(n0 + c, N - 1) : n0 + c;
        const int k = clamp ? min(kb + kk, k1 - 1) : kb + kk;
#if TRANS_B
        const long src = (long)n * ldb + k;
#else
        const long src = (long)k * ldb + n;
#endif
        cp_async4(s + kk * (4 * LDB_L) + c, B + src, !clamp || (n0 + c < N && kb + kk < k1));
    }
#endif
}

// Both operands of one K step into ring buffer `buf`, unclamped where the step lies wholly
// inside the matrices.
#define ASYNC_STEP(buf, kb)                                                                   \
    do {                                                                                      \
        const int kb_ = (kb);                                                                 \
        if (m0 + BM <= M && kb_ + BK <= k1)                                                   \
            async_a(As + (buf) * (BK * LDA_L), A, lda, M, m0, kb_, k1, lid, false);           \
        else                                                                                  \
            async_a(As + (buf) * (BK * LDA_L), A, lda, M, m0, kb_, k1, lid, true);            \
        if (n0 + BN <= N && kb_ + BK <= k1)                                                   \
            async_b(Bs + (buf) * (BK * LDB_L), B, ldb, N, n0, kb_, k1, lid, false);           \
        else                                                                                  \
            async_b(Bs + (buf) * (BK * LDB_L), B, ldb, N, n0, kb_, k1, lid, true);            \
    } while (0)
#endif

__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void gemm_gpu(const int M, const int N, const int K,
              __global const T* restrict A, const long a_off, const int lda, const long a_batch,
              __global const T* restrict B, const long b_off, const int ldb, const long b_batch,
              __global T* restrict C, const long c_off, const int ldc, const long c_batch)
{
#if ASYNC
    __local T4 As[STAGES * BK * LDA_L];
    __local T4 Bs[STAGES * BK * LDB_L];
#else
    __local T4 As[2 * BK * LDA_L];
    __local T4 Bs[2 * BK * LDB_L];
#endif

    const int lid = get_local_id(0);
    // Work-group -> tile, GROUP_M tile-rows at a time so that concurrently running groups share
    // rows of A and columns of B in L2.
    const int ntn = get_num_groups(0), ntm = get_num_groups(1);
    const int gid = get_group_id(1) * ntn + get_group_id(0);
    const int per_group = GROUP_M * ntn;
    const int first_m = (gid / per_group) * GROUP_M;
    const int rows_here = min(ntm - first_m, GROUP_M);
    const int tile_m = first_m + (gid % per_group) % rows_here;
    const int tile_n = (gid % per_group) / rows_here;
    const int m0 = tile_m * BM, n0 = tile_n * BN;

    const int z = get_global_id(2);
    const long b = z / KSPLIT;
    A += a_off + b * a_batch;
    B += b_off + b * b_batch;
    // This slice's K range, a whole number of K steps long.
    const int kchunk = ((K + KSPLIT - 1) / KSPLIT + BK - 1) / BK * BK;
    const int k0 = (z % KSPLIT) * kchunk;
    const int k1 = min(K, k0 + kchunk);
    const int nk = k1 > k0 ? (k1 - k0 + BK - 1) / BK : 0;

    // Work-item layout: a warp covers WARP_Y x WARP_X work-items, so its local-memory reads touch
    // WARP_Y distinct A vectors and WARP_X distinct B vectors.
    const int lane = lid % 32, warp = lid / 32;
    const int tx = (warp % (NTX / WARP_X)) * WARP_X + lane % WARP_X;
    const int ty = (warp / (NTX / WARP_X)) * WARP_Y + lane / WARP_X;

    T acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = (T)0;

#if ASYNC
    // Ring of STAGES buffers: step t is computed from buffer t % STAGES while the copies of
    // steps t+1 .. t+STAGES-2 are in flight. One group is committed per step (empty ones too),
    // so "all but the newest STAGES-2 groups done" always means "step t has landed".
    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk)
            ASYNC_STEP(s, k0 + s * BK);
        cp_async_commit();
    }
    int cur = 0, nxt = STAGES - 1;
    for (int t = 0; t < nk; ++t) {
        cp_async_wait();
        // Makes every work-item's copies of step t visible, and ends everyone's step t-1,
        // whose buffer the copies issued next overwrite.
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t + STAGES - 1 < nk)
            ASYNC_STEP(nxt, k0 + (t + STAGES - 1) * BK);
        cp_async_commit();
        __local const T4* as = As + cur * (BK * LDA_L);
        __local const T4* bs = Bs + cur * (BK * LDB_L);
        COMPUTE_STEP(as, bs)
        cur = cur + 1 == STAGES ? 0 : cur + 1;
        nxt = nxt + 1 == STAGES ? 0 : nxt + 1;
    }
#else
    T ra[A_LOADS], rb[B_LOADS];
    if (nk > 0) {
        load_a(A, lda, M, m0, k0, k1, lid, ra);
        load_b(B, ldb, N, n0, k0, k1, lid, rb);
        store_a(As, lid, ra);
        store_b(Bs, lid, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int t = 0; t < nk; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < nk;
        // Next step's global loads (after the last step they read a clamped, valid tile that
        // is never stored).
        load_a(A, lda, M, m0, k0 + (t + 1) * BK, k1, lid, ra);
        load_b(B, ldb, N, n0, k0 + (t + 1) * BK, k1, lid, rb);
        __local const T4* as = As + cur * (BK * LDA_L);
        __local const T4* bs = Bs + cur * (BK * LDB_L);
        COMPUTE_STEP(as, bs)
        if (more) {
            // The other buffer was last read in step t-1, which every work-item finished
            // before the barrier that ended it: one barrier per step suffices.
            store_a(As + (cur ^ 1) * (BK * LDA_L), lid, ra);
            store_b(Bs + (cur ^ 1) * (BK * LDB_L), lid, rb);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif

    C += c_off + (long)z * c_batch;
    #pragma unroll
    for (int q = 0; q < TM / 4; ++q) {
        #pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int m = m0 + q * 4 * NTY + ty * 4 + i;
            if (m >= M) continue;
            __global T* crow = C + (long)m * ldc;
            #pragma unroll
            for (int p = 0; p < TN / 4; ++p) {
                const int n = n0 + p * 4 * NTX + tx * 4;
                const int r = 4 * q + i, c = 4 * p;
#if VEC_C
                if (n < N)
                    *(__global T4*)(crow + n) = (T4)(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]);
#else
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (n + j < N) crow[n + j] = acc[r][c + j];
#endif
            }
        }
    }
}

// Split-K epilogue: C[b](m, n) = sum_s W[(b*KSPLIT + s)*M*N + m*N + n]. One work-item per
// element; global size (ceil(N), M, batch).
__kernel void gemm_gpu_splitk_reduce(const int M, const int N, __global const T* restrict W,
                                     __global T* restrict C, const long c_off, const int ldc,
                                     const long c_batch)
{
    const int n = get_global_id(0), m = get_global_id(1);
    const long b = get_global_id(2);
    if (n >= N || m >= M) return;
    const long mn = (long)M * N;
    __global const T* w = W + b * KSPLIT * mn + (long)m * N + n;
    T s = (T)0;
    #pragma unroll
    for (int i = 0; i < KSPLIT; ++i)
        s += w[i * mn];
    C[c_off + b * c_batch + (long)m * ldc + n] = s;
}
