// The cp.async ring of the tensor-core GEMM kernels that stage both operands through local
// memory in 16-byte chunks (gemm_mma.cl, gemm_dmma.cl): STAGES local tiles of A and of B, step s
// of K in slot s % STAGES, the copies of the next STAGES - 1 steps in flight while a warp
// multiplies the tiles of step s.
//
// The includer defines, before including it: GT and LT (global and local element types), ACC_T
// and ACC_N (a warp's accumulators are ACC_T acc[MT][NT8][ACC_N]), EPC (elements per chunk),
// NTHREADS, A_LEN / B_LEN (elements per stored tile row), A_LOADS / B_LOADS (chunks per
// work-item per step), A_TILE / B_TILE (elements per tile), A_SLOT(row, col) / B_SLOT(row, col)
// (a chunk's element offset in its tile: swizzled or padded), STAGES, BK, WARP_K (the K of one
// warp_step), TRANS_A, TRANS_B, VEC_A, VEC_B; and the functions copy_chunk (one chunk into local
// memory), warp_step (one WARP_K slice of the tiles into acc), copy_commit and copy_wait
// (cp_async.h, with CP_ASYNC_LEFT = STAGES - 2).
#ifndef GEMM_RING_H
#define GEMM_RING_H

// Chunk c of a tile stored as rows of `len` elements: its row and its first element. Unsigned,
// so that the constant divisions are shifts (a signed / and % pair also becomes an LLVM
// "freeze" that Oclgrind cannot run).
#define CHUNK_ROW(c, len) ((int)((uint)(c) / ((len) / EPC)))
#define CHUNK_COL(c, len) ((int)((uint)(c) % ((len) / EPC)) * EPC)

// Step k0 of A and B into the local tiles As, Bs.
inline void copy_step(__local LT* As, __local LT* Bs, __global const GT* A, const int lda,
                      __global const GT* B, const int ldb, const int M, const int N,
                      const int K, const int m0, const int n0, const int k0, const int tid)
{
    #pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        const int c = tid + l * NTHREADS;
        const int row = CHUNK_ROW(c, A_LEN), col = CHUNK_COL(c, A_LEN);
        __local LT* dst = As + A_SLOT(row, col);
#if TRANS_A
        copy_chunk(dst, A, lda, k0 + row, m0 + col, K, M, VEC_A);
#else
        copy_chunk(dst, A, lda, m0 + row, k0 + col, M, K, VEC_A);
#endif
    }
    #pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        const int c = tid + l * NTHREADS;
        const int row = CHUNK_ROW(c, B_LEN), col = CHUNK_COL(c, B_LEN);
        __local LT* dst = Bs + B_SLOT(row, col);
#if TRANS_B
        copy_chunk(dst, B, ldb, n0 + row, k0 + col, N, K, VEC_B);
#else
        copy_chunk(dst, B, ldb, k0 + row, n0 + col, K, N, VEC_B);
#endif
    }
}

// acc += the work-group's BM x BN tile at (m0, n0) of A @ B over the BK-deep steps first ..
// first + steps - 1 of K (a split-K slice; 0 .. all of K's steps otherwise), the warp's part of
// it at (wm0, wn0): the ring in As (STAGES A tiles) and Bs (STAGES B tiles).
inline void ring_product(__local LT* As, __local LT* Bs, __global const GT* A, const int lda,
                         __global const GT* B, const int ldb, const int M, const int N,
                         const int K, const int m0, const int n0, const int tid,
                         const int wm0, const int wn0, const int lane, const int first,
                         const int steps, ACC_T acc[MT][NT8][ACC_N])
{
    // Every step commits one copy group (empty past the last step), so "at most STAGES - 2 in
    // flight" always means "step s has landed".
    #pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
        if (st < steps)
            copy_step(As + st * A_TILE, Bs + st * B_TILE, A, lda, B, ldb, M, N, K, m0, n0,
                      (first + st) * BK, tid);
        copy_commit();
    }
    int slot = 0, fill = STAGES - 1;
    for (int s = 0; s < steps; ++s) {
        copy_wait();
        barrier(CLK_LOCAL_MEM_FENCE);   // step s visible; slot `fill` (step s - 1) read by all
        if (s + STAGES - 1 < steps)
            copy_step(As + fill * A_TILE, Bs + fill * B_TILE, A, lda, B, ldb, M, N, K, m0, n0,
                      (first + s + STAGES - 1) * BK, tid);
        copy_commit();
        __local const LT* Ac = As + slot * A_TILE;
        __local const LT* Bc = Bs + slot * B_TILE;
        #pragma unroll
        for (int kk = 0; kk < BK; kk += WARP_K)
            warp_step(Ac, Bc, wm0, wn0, kk, lane, acc);
        slot = slot == STAGES - 1 ? 0 : slot + 1;
        fill = fill == STAGES - 1 ? 0 : fill + 1;
    }
}

#endif
