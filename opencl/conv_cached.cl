// Simpler tiled 1-D correlation (seed 004, kernel 4): only the work-group's own tile of the
// input is staged in local memory; taps that fall outside the tile (the halo) read global
// memory directly and rely on the cache, where the neighbouring group's tile already is.
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]     for k in [0, L), x = 0 outside [0, n)
//
// The tile is x[t0, t0 + WG) with t0 = group*WG - pad + (m-1)/2 (for an odd mask in "same"
// mode: the outputs' own elements, as in the seed). Each work-item splits its clamped tap range
// into left halo (global), tile (local) and right halo (global): no test per tap.
// Layout as in conv_basic.cl; NDRange rounded up to WG. Local memory: WG * sizeof(T) bytes.
//
// Parameters: T element type, ACC accumulator type (unsigned for integers), WG work-group size
// (must equal the launch's local size).
#include "scalar_types.h"
#include "conv_layout.h"

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void conv_cached(CONV_ARGS(__global))
{
    __local T xs[WG];
    const int lid = get_local_id(0);
    const int k = get_global_id(0);
    const int t0 = (int)get_group_id(0) * WG - pad + (m - 1) / 2;
    x += x_off;
    const int ti = t0 + lid;
    xs[lid] = (ti >= 0 && ti < n) ? x[ti] : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (k >= L) return;

    const int start = k - pad;                 // x index of tap 0
    const int jb = max(0, -start);
    const int je = min(m, n - start);
    const int jl0 = clamp(t0 - start, jb, je);        // first tap inside the tile
    const int jl1 = clamp(t0 + WG - start, jl0, je);  // first tap past the tile
    ACC acc = (ACC)0;
    for (int j = jb; j < jl0; ++j)
        acc += (ACC)x[start + j] * (ACC)w[j];
    const int shift = start - t0;
    for (int j = jl0; j < jl1; ++j)
        acc += (ACC)xs[shift + j] * (ACC)w[j];
    for (int j = jl1; j < je; ++j)
        acc += (ACC)x[start + j] * (ACC)w[j];
    out[k] = (T)acc;
}
