// Shared by gemm_regtile.cl and gemm_vec.cl (after gemm_layout.h): the tile sizes and the
// staging of tiles in local memory. A work-group computes a TSM x TSN tile of C, walking K in
// TSK-deep steps; each step stages the TSM x TSK slice of A k-major (As[TSK][TSM]), so the
// inner product loop reads a column of A contiguously (gemm_regtile.cl stages B's slice the
// same way, Bs[TSK][TSN]).
//
// Parameters: TSM, TSN, TSK tile sizes ((TSM + TSN) * TSK * sizeof(T) <= local memory).
#ifndef TSM
#define TSM 64
#endif
#ifndef TSN
#define TSN 64
#endif
#ifndef TSK
#define TSK 16
#endif

// tile[kk][i] = X(i0 + i, k0 + kk) for i < width, kk < TSK, zeros past `extent` and K: a
// k-major tile of A (X = A, i along M, width TSM) or of B (X = B^T, i along N, width TSN).
// X(i, k) is src[i * ld + k] when `k_contiguous`, else src[k * ld + i]. The `threads`
// work-items of the group (flat local id `tid`) share the loads; consecutive work-items walk
// along X's stored rows, so their global reads are contiguous. Called with constant
// `k_contiguous` and `width`, which the compiler folds.
inline void load_tile(__global const T* restrict src, const int ld, const int k_contiguous,
                      const int extent, const int K, const int i0, const int k0,
                      const int width, const int tid, const int threads, __local T* tile)
{
    for (int l = tid; l < width * TSK; l += threads) {
        int i, kk;
        if (k_contiguous) {
            i = l / TSK;
            kk = l - i * TSK;
        } else {
            kk = l / width;
            i = l - kk * width;
        }
        const int gi = i0 + i, gk = k0 + kk;
        tile[kk * width + i] = (gi < extent && gk < K)
            ? src[k_contiguous ? (long)gi * ld + gk : (long)gk * ld + gi] : (T)0;
    }
}

// As[kk][r] = A(m0 + r, k0 + kk), zeros past M and K.
inline void load_a_tile(__global const T* restrict A, const int lda, const int M, const int K,
                        const int m0, const int k0, const int tid, const int threads,
                        __local T As[TSK][TSM])
{
    load_tile(A, lda, !TRANS_A, M, K, m0, k0, TSM, tid, threads, &As[0][0]);
}
