// Which C tile a work-group of a tiled GEMM computes (shared by gemm_mma.cl and gemm_dmma.cl).
#ifndef TILE_ORDER_H
#define TILE_ORDER_H

// The origin (m0, n0) of work-group (get_group_id(0), get_group_id(1))'s tile of an M x N C in
// bm x bn tiles, walked group_m tile-rows at a time so that neighbouring work-groups share rows
// of A and columns of B in L2. Remainders are written out: LLVM turns a / and % pair into a
// "freeze" instruction that Oclgrind cannot run.
inline int2 grouped_tile_origin(const int M, const int N, const uint bm, const uint bn,
                                const uint group_m)
{
    const uint tiles_m = ((uint)M + bm - 1) / bm, tiles_n = ((uint)N + bn - 1) / bn;
    const uint pid = (uint)get_group_id(1) * tiles_n + (uint)get_group_id(0);
    const uint width = group_m * tiles_n;
    const uint group = pid / width;
    const uint first_m = group * group_m;
    const uint group_rows = min(tiles_m - first_m, group_m);
    const uint in_group = pid - group * width;
    const uint tn = in_group / group_rows;
    return (int2)((int)((first_m + in_group - tn * group_rows) * bm), (int)(tn * bn));
}

#endif
