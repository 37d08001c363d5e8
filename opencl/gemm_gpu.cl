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
// registers while the previous step is being multiplied (as written: ptxas may still schedule
// the loads late, see benches/gpu-notes.md), then stored into the other half of the local
// double buffer. A is stored transposed (k-major) in local memory.
//
// Launch: local size (NT, 1, 1); global size (NT * ceil(N/BN), ceil(M/BM), batch*KSPLIT).
//
// Parameters (-D):
//   T              float, double or an integer type (the accumulator is T)
//   IS_INT, ACC    integers: products and sums in ACC (unsigned), wrapping as NumPy's
//   HALF_C         gemm_gpu_splitk_reduce only: 1 stores C as float16 (T float; the split-K
//                  partial sums of the float16 tensor-core products, rounded once)
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
//   EDGE_ONLY_CLAMP 1: steps wholly inside K load without clamping K (a uniform branch per
//                  step); 0: every step clamps. Rows of A past M and columns of B past N are
//                  read clamped to the last one in every step (a loop-invariant address): they
//                  reach only rows and columns of C that are never stored.
//   BATCH_INNER    0: one batch level (matrix b of A at a_off + b*a_batch). N > 0: two levels,
//                  for batch dimensions broadcast against each other (NumPy's (8,1,m,k) @
//                  (1,32,k,n)): matrix b of A at a_off + (b / N)*a_batch + (b % N)*A_BATCH_INNER,
//                  of B likewise with b_batch and B_BATCH_INNER; C stays one level (c_batch).
//   A_BATCH_INNER, B_BATCH_INNER  the inner batch strides (elements; 0 broadcasts)
//   GATE           1: two more arguments, `gate` and `epoch`: the kernel returns at once unless
//                  *gate == epoch (the float32 fallback of kernels/gemm_tf32x3.py, enqueued
//                  after the packs that set *gate when the tensor-core split cannot carry a value)
//   ST, UST        8- and 16-bit integers kept narrow in memory: ST is A's, B's and C's element
//                  type there (char, uchar, short, ushort), UST its unsigned twin; T the 32-bit
//                  type they are computed in. Loads widen (sign or zero extension); C keeps the
//                  low bits of each sum, NumPy's wrapping (with KSPLIT > 1 the partial products
//                  stay in T and the reduction narrows). Default: ST = T, no conversion.
//   BM*BK and BN*BK must be multiples of 4*NT (each work-item loads whole T4 vectors).
#include "gemm_layout.h"
// SIMULATOR 1 (set for Oclgrind) changes two things that Oclgrind's uninitialized-value
// checker cannot follow, both measured as costly on an H100 (4096^3: -11% together):
// * T4 vectors from private arrays are built with vload4, not (T4)(x, y, z, w) literals, which
//   the checker calls uninitialized; on GPUs vload4 makes the array addressable;
// * the load/store loops index with unsigned ints: LLVM turns a signed / and % pair into a
//   "freeze" instruction that Oclgrind cannot run; NVIDIA schedules the unsigned form worse.
#ifndef SIMULATOR
#define SIMULATOR 0
#endif
#if SIMULATOR
#define IDX uint
#else
#define IDX int
#endif
#if SIMULATOR
#define PRIVATE_T4(arr, i) vload4((i), (arr))
#else
#define PRIVATE_T4(arr, i) \
    ((T4)((arr)[4 * (i)], (arr)[4 * (i) + 1], (arr)[4 * (i) + 2], (arr)[4 * (i) + 3]))
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
#ifndef EDGE_ONLY_CLAMP
#define EDGE_ONLY_CLAMP 1
#endif
#ifndef BATCH_INNER
#define BATCH_INNER 0
#endif
#ifndef A_BATCH_INNER
#define A_BATCH_INNER 0
#endif
#ifndef B_BATCH_INNER
#define B_BATCH_INNER 0
#endif
#ifndef GATE
#define GATE 0
#endif
#if GATE
#define GATE_ARGS , __global const int* gate, const int epoch
#else
#define GATE_ARGS
#endif

// Integers (IS_INT, ACC unsigned) multiply and add in ACC, so that overflow wraps as NumPy's does.
#ifndef IS_INT
#define IS_INT 0
#endif
#if IS_INT
#define MUL_ADD(a, b, c) ((T)((ACC)(a) * (ACC)(b) + (ACC)(c)))
#define ADD(a, b) ((T)((ACC)(a) + (ACC)(b)))
#else
#define MUL_ADD(a, b, c) fma((a), (b), (c))
#define ADD(a, b) ((a) + (b))
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T4 CAT(T, 4)

#ifdef ST
#define ST4 CAT(ST, 4)
#define LOAD4(p) CAT(convert_, T4)(*(__global const ST4*)(p))
// The low bits of a T sum as ST: through the unsigned types, where C's conversions wrap and
// as_type reinterprets (a signed narrowing would be implementation-defined).
#define NARROW(x) CAT(as_, ST)((UST)(ACC)(x))
#define NARROW4(v) CAT(as_, ST4)(CAT(convert_, CAT(UST, 4))(CAT(as_, CAT(ACC, 4))(v)))
#else
#define ST T
#define LOAD4(p) (*(__global const T4*)(p))
#define NARROW(x) (x)
#define NARROW4(v) (v)
#endif
// gemm_gpu's C: ST, except that split-K slices write their partial products in T.
#if KSPLIT > 1
#define CT T
#define C_NARROW(x) (x)
#define C_NARROW4(v) (v)
#else
#define CT ST
#define C_NARROW(x) NARROW(x)
#define C_NARROW4(v) NARROW4(v)
#endif

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

// One K step of A (BM x BK at rows m0.., columns kb..) into ra; zeros past k1. Rows past M
// read row M-1 (whatever they hold lands only in C rows that are never stored), so a tile on
// the M edge runs the same loads as an interior one: edge tiles clamping every step made
// the whole product wait on them (H100, 3000x5000x700: 599 us against 548 us for
// 3072x5000x704, the same 264 tiles). With `clamp` the K addresses are clamped and the zeros
// selected after the load; without it (inlined with a literal false, for steps wholly inside
// K) neither is done. Either way the loads are unconditional: with a branch around them
// ptxas issued them only just before their use.
inline void load_a(__global const ST* A, const int lda, const int M, const int m0,
                   const int kb, const int k1, const int lid, T* ra, const bool clamp)
{
#if VEC_A
    #pragma unroll
    for (int v = 0; v < A_LOADS / 4; ++v) {
        const IDX e = lid + v * NT;
#if TRANS_A
        // T4 along m
        const int k = kb + e / (BM / 4), m = min(m0 + (int)(e % (BM / 4)) * 4, M - 4);
        T4 x = LOAD4(A + (long)(clamp ? min(k, k1 - 1) : k) * lda + m);
#else
        // T4 along k
        const int m = min(m0 + (int)(e / (BK / 4)), M - 1), k = kb + (e % (BK / 4)) * 4;
        T4 x = LOAD4(A + (long)m * lda + (clamp ? min(k, k1 - 4) : k));
#endif
        const bool ok = k < k1;
        if (clamp)
            x = ok ? x : (T4)0;
        ra[4 * v] = x.s0; ra[4 * v + 1] = x.s1; ra[4 * v + 2] = x.s2; ra[4 * v + 3] = x.s3;
    }
#else
    #pragma unroll
    for (int v = 0; v < A_LOADS; ++v) {
        const IDX e = lid + v * NT;
#if TRANS_A
        const int m = min(m0 + (int)(e % BM), M - 1), k = kb + e / BM;
        const T x = A[(long)(clamp ? min(k, k1 - 1) : k) * lda + m];
#else
        const int m = min(m0 + (int)(e / BK), M - 1), k = kb + e % BK;
        const T x = A[(long)m * lda + (clamp ? min(k, k1 - 1) : k)];
#endif
        ra[v] = (!clamp || k < k1) ? x : (T)0;
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
        const IDX e = lid + v * NT;
#if TRANS_A
        As[(e / (BM / 4)) * LDA_L + e % (BM / 4)] = PRIVATE_T4(ra, v);
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
        const IDX e = lid + v * NT;
#if TRANS_A
        s[(e / BM) * (4 * LDA_L) + e % BM] = ra[v];
#else
        s[(e % BK) * (4 * LDA_L) + e / BK] = ra[v];
#endif
    }
#endif
}

// One K step of B (BK x BN at rows kb.., columns n0..) into rb; zeros past k1, columns past N
// read column N-1 (as load_a: unconditional loads, K clamped when `clamp`).
inline void load_b(__global const ST* B, const int ldb, const int N, const int n0,
                   const int kb, const int k1, const int lid, T* rb, const bool clamp)
{
#if VEC_B
    #pragma unroll
    for (int v = 0; v < B_LOADS / 4; ++v) {
        const IDX e = lid + v * NT;
#if TRANS_B
        // T4 along k
        const int n = min(n0 + (int)(e / (BK / 4)), N - 1), k = kb + (e % (BK / 4)) * 4;
        T4 x = LOAD4(B + (long)n * ldb + (clamp ? min(k, k1 - 4) : k));
#else
        // T4 along n
        const int k = kb + e / (BN / 4), n = min(n0 + (int)(e % (BN / 4)) * 4, N - 4);
        T4 x = LOAD4(B + (long)(clamp ? min(k, k1 - 1) : k) * ldb + n);
#endif
        const bool ok = k < k1;
        if (clamp)
            x = ok ? x : (T4)0;
        rb[4 * v] = x.s0; rb[4 * v + 1] = x.s1; rb[4 * v + 2] = x.s2; rb[4 * v + 3] = x.s3;
    }
#else
    #pragma unroll
    for (int v = 0; v < B_LOADS; ++v) {
        const IDX e = lid + v * NT;
#if TRANS_B
        const int n = min(n0 + (int)(e / BK), N - 1), k = kb + e % BK;
        const T x = B[(long)n * ldb + (clamp ? min(k, k1 - 1) : k)];
#else
        const int n = min(n0 + (int)(e % BN), N - 1), k = kb + e / BN;
        const T x = B[(long)(clamp ? min(k, k1 - 1) : k) * ldb + n];
#endif
        rb[v] = (!clamp || k < k1) ? x : (T)0;
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
        const IDX e = lid + v * NT;
#if TRANS_B
        const int c = e / (BK / 4), k = (e % (BK / 4)) * 4;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            s[(k + j) * (4 * LDB_L) + c] = rb[4 * v + j];
#else
        Bs[(e / (BN / 4)) * LDB_L + e % (BN / 4)] = PRIVATE_T4(rb, v);
#endif
    }
#else
    #pragma unroll
    for (int v = 0; v < B_LOADS; ++v) {
        const IDX e = lid + v * NT;
#if TRANS_B
        s[(e % BK) * (4 * LDB_L) + e / BK] = rb[v];
#else
        s[(e / BN) * (4 * LDB_L) + e % BN] = rb[v];
#endif
    }
#endif
}

// The A and B values of row kk of a local K step that this work-item multiplies.
inline void load_frag(__local const T4* as, __local const T4* bs, const int kk, const int tx,
                      const int ty, T* a, T* bv)
{
    #pragma unroll
    for (int q = 0; q < TM / 4; ++q) {
        const T4 x = as[kk * LDA_L + q * NTY + ty];
        a[4 * q] = x.s0; a[4 * q + 1] = x.s1; a[4 * q + 2] = x.s2; a[4 * q + 3] = x.s3;
    }
    #pragma unroll
    for (int p = 0; p < TN / 4; ++p) {
        const T4 x = bs[kk * LDB_L + p * NTX + tx];
        bv[4 * p] = x.s0; bv[4 * p + 1] = x.s1; bv[4 * p + 2] = x.s2; bv[4 * p + 3] = x.s3;
    }
}

// FINISH_LAST (split_k.h, last_group.h): the last slice of each tile sums the slices' partial
// products into C (narrowed as gemm_gpu_splitk_reduce does), one launch instead of two.
#define SPLIT_T T
#define SPLIT_ADD(a, b) ADD(a, b)
#define FINAL_T ST
#define FINAL_NARROW(x) NARROW(x)
#include "split_k.h"

__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void gemm_gpu(GEMM_ARGS_OF(ST, CT, restrict) GATE_ARGS SPLIT_K_FINAL_ARGS)
{
#if GATE
    if (*gate != epoch)
        return;
#endif
    __local T4 As[2 * BK * LDA_L];
    __local T4 Bs[2 * BK * LDB_L];

    const int lid = get_local_id(0);
    // Work-group -> tile, GROUP_M tile-rows at a time so that concurrently running groups share
    // rows of A and columns of B in L2.
    const int ntn = get_num_groups(0), ntm = get_num_groups(1);
    const int gid = get_group_id(1) * ntn + get_group_id(0);
    // Quotients and remainders as q and x - q*y, never as a / and % pair: LLVM fuses such a
    // pair into a "freeze" instruction, which Oclgrind's uninitialized-value checker cannot
    // simulate (it stops the work-item with a fatal error, and C keeps stale values).
    const int per_group = GROUP_M * ntn;
    const int band = gid / per_group, in_band = gid - band * per_group;
    const int first_m = band * GROUP_M;
    const int rows_here = min(ntm - first_m, GROUP_M);
    const int tile_n = in_band / rows_here;
    const int tile_m = first_m + in_band - tile_n * rows_here;
    const int m0 = tile_m * BM, n0 = tile_n * BN;

    const int z = get_global_id(2);
#if KSPLIT == 1
    const int b = z, slice = 0;
#else
    const int b = z / KSPLIT, slice = z - b * KSPLIT;
#endif
#if BATCH_INNER
    const int b_outer = b / BATCH_INNER, b_inner = b - b_outer * BATCH_INNER;
    A += a_off + (long)b_outer * a_batch + (long)b_inner * A_BATCH_INNER;
    B += b_off + (long)b_outer * b_batch + (long)b_inner * B_BATCH_INNER;
#else
    A += a_off + (long)b * a_batch;
    B += b_off + (long)b * b_batch;
#endif
    // This slice's K range, a whole number of K steps long.
    const int kchunk = ((K + KSPLIT - 1) / KSPLIT + BK - 1) / BK * BK;
    const int k0 = slice * kchunk;
    const int k1 = min(K, k0 + kchunk);
    const int nk = k1 > k0 ? (k1 - k0 + BK - 1) / BK : 0;

    // Work-item layout: a warp covers WARP_Y x WARP_X work-items, so its local-memory reads touch
    // WARP_Y distinct A vectors and WARP_X distinct B vectors.
    const IDX lane = (IDX)lid % 32, warp = (IDX)lid / 32;
    const int tx = (warp % (NTX / WARP_X)) * WARP_X + lane % WARP_X;
    const int ty = (warp / (NTX / WARP_X)) * WARP_Y + lane / WARP_X;

    T acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = (T)0;

    T ra[A_LOADS], rb[B_LOADS];
    if (nk > 0) {
        load_a(A, lda, M, m0, k0, k1, lid, ra, true);
        load_b(B, ldb, N, n0, k0, k1, lid, rb, true);
        store_a(As, lid, ra);
        store_b(Bs, lid, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < nk; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < nk;
        // Next step's global loads (after the last step they read a clamped, valid tile that
        // is never stored).
        const int kn = k0 + (t + 1) * BK;
        if (EDGE_ONLY_CLAMP && kn + BK <= k1) {
            load_a(A, lda, M, m0, kn, k1, lid, ra, false);
            load_b(B, ldb, N, n0, kn, k1, lid, rb, false);
        } else {
            load_a(A, lda, M, m0, kn, k1, lid, ra, true);
            load_b(B, ldb, N, n0, kn, k1, lid, rb, true);
        }
        __local const T4* as = As + cur * (BK * LDA_L);
        __local const T4* bs = Bs + cur * (BK * LDB_L);
        #pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            T a[TM], bv[TN];
            load_frag(as, bs, kk, tx, ty, a, bv);
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = MUL_ADD(a[i], bv[j], acc[i][j]);
        }
        if (more) {
            // The other buffer was last read in step t-1, which every work-item finished
            // before the barrier that ended it: one barrier per step suffices.
            store_a(As + (cur ^ 1) * (BK * LDA_L), lid, ra);
            store_b(Bs + (cur ^ 1) * (BK * LDB_L), lid, rb);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    __global const CT* const partials = C + c_off;   // (split-K: every slice's product)
    C += c_off + (long)z * c_batch;
    #pragma unroll
    for (int q = 0; q < TM / 4; ++q) {
        #pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int m = m0 + q * 4 * NTY + ty * 4 + i;
            if (m >= M) continue;
            __global CT* crow = C + (long)m * ldc;
            #pragma unroll
            for (int p = 0; p < TN / 4; ++p) {
                const int n = n0 + p * 4 * NTX + tx * 4;
                const int r = 4 * q + i, c = 4 * p;
#if VEC_C
                if (n < N)
                    *(__global CAT(CT, 4)*)(crow + n) = C_NARROW4(PRIVATE_T4(acc[r], p));
#else
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (n + j < N) crow[n + j] = C_NARROW(acc[r][c + j]);
#endif
            }
        }
    }
#if FINISH_LAST
    // the flag in As's first word: every read of As is over by the barrier before its write
    __local int* const last = (__local int*)As;
    SPLIT_K_FINISH(*last, (long)b, m0, n0, BM, BN, partials, ldc, c_batch);
#else
    (void)partials;
#endif
}

// Split-K epilogue: C[b](m, n) = sum_s W[(b*KSPLIT + s)*M*N + m*N + n]. One work-item per
// element; global size (ceil(N), M, batch).
#ifndef HALF_C
#define HALF_C 0
#endif
#if HALF_C
#define REDUCED_C half       // only stored through vstore_half: no cl_khr_fp16 needed
#else
#define REDUCED_C ST
#endif
__kernel void gemm_gpu_splitk_reduce(const int M, const int N, __global const T* restrict W,
                                     __global REDUCED_C* restrict C, const long c_off,
                                     const int ldc, const long c_batch)
{
    const int n = get_global_id(0), m = get_global_id(1);
    const long b = get_global_id(2);
    if (n >= N || m >= M) return;
    const long mn = (long)M * N;
    __global const T* w = W + b * KSPLIT * mn + (long)m * N + n;
    T s = (T)0;
    #pragma unroll
    for (int i = 0; i < KSPLIT; ++i)
        s = ADD(s, w[i * mn]);
#if HALF_C
    vstore_half_rte(s, c_off + b * c_batch + (long)m * ldc + n, C);
#else
    C[c_off + b * c_batch + (long)m * ldc + n] = NARROW(s);
#endif
}
