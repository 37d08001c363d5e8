// Shared by gemm_regtile.cl and gemm_vec.cl (after gemm_layout.h): the tile sizes and the
// staging of A. A work-group computes a TSM x TSN tile of C, walking K in TSK-deep steps; each
// step stages the TSM x TSK slice of A in local memory, k-major (As[TSK][TSM]), so the inner
// product loop reads a column of A contiguously.
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

// As[kk][r] = A(m0 + r, k0 + kk), zeros past M and K; the `threads` work-items of the group
// (flat local id `tid`) share the loads. Consecutive work-items walk along A's stored rows
// (down m for TRANS_A, along k otherwise), so their global reads are contiguous.
inline void load_a_tile(__global const T* restrict A, const int lda, const int M, const int K,
                        const int m0, const int k0, const int tid, const int threads,
                        __local T As[TSK][TSM])
{
    for (int l = tid; l < TSM * TSK; l += threads) {
#if TRANS_A
        const int kk = l / TSM, r = l - kk * TSM;
#else
        const int r = l / TSK, kk = l - r * TSK;
#endif
        const int gm = m0 + r, gk = k0 + kk;
        As[kk][r] = (gm < M && gk < K) ? A_AT(gm, gk) : (T)0;
    }
}
