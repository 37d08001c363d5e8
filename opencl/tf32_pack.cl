// The operands of a TF32 warpgroup product (gemm_wgmma.cl, ELEM=3) as that kernel reads them:
// K-major, rounded to TF32.
//
//   Y[b](r, k) = tf32(X[b](r, k))      r < R, k < K
//
// X's element (r, k) of batch b is at x_off + b*x_batch + (TRANS ? k*ld + r : r*ld + k);
// Y holds rows of y_ld elements (y_ld >= K; the columns past K are not written) from y_off,
// batch after batch (R * y_ld apart). tf32(): round to nearest, ties away from zero, NaN kept
// (cvt.rna.tf32.f32; the bound of clarray_gemm/ops/precision.py).
//
// TRANS=1 moves a 32 x 32 tile through local memory so that reads (along X's contiguous r) and
// writes (along k) are both coalesced; the extra column keeps the transposed reads off one bank.
//
// Launch: local (32, 8, 1); global (32 * ceil(K/32), 8 * ceil(R/32), batch).
#ifndef TRANS
#define TRANS 0
#endif
#define TILE 32
#define ROWS 8

inline uint to_tf32(const float x)
{
    const uint u = as_uint(x);
    return isnan(x) ? u : ((u + 0x1000u) & 0xFFFFE000u);
}

__kernel __attribute__((reqd_work_group_size(TILE, ROWS, 1)))
void tf32_pack(const int R, const int K, __global const float* X, const long x_off,
               const int ld, const long x_batch, __global uint* Y, const long y_off,
               const int y_ld)
{
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int k0 = get_group_id(0) * TILE, r0 = get_group_id(1) * TILE;
    const long b = get_group_id(2);
    X += x_off + b * x_batch;
    Y += y_off + b * (long)R * y_ld;
#if TRANS
    __local float tile[TILE][TILE + 1];   // tile[k - k0][r - r0]
    for (int i = ly; i < TILE; i += ROWS) {
        const int k = k0 + i, r = r0 + lx;
        if (k < K && r < R)
            tile[i][lx] = X[(long)k * ld + r];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = ly; i < TILE; i += ROWS) {
        const int r = r0 + i, k = k0 + lx;
        if (r < R && k < K)
            Y[(long)r * y_ld + k] = to_tf32(tile[lx][i]);
    }
#else
    for (int i = ly; i < TILE; i += ROWS) {
        const int r = r0 + i, k = k0 + lx;
        if (r < R && k < K)
            Y[(long)r * y_ld + k] = to_tf32(X[(long)r * ld + k]);
    }
#endif
}
