// Tiled 1-D correlation with halo cells in local memory (seed 004, kernel 3), for any mask
// length: the mask is processed in chunks of WG taps. For each chunk the work-group loads the
// 2*WG-1 input elements its WG outputs need (its tile plus the halo) and the chunk of the mask
// into local memory, then every tap reads local memory only. Ghost cells (outside [0, n)) are
// stored as zeros but never multiplied: each work-item clamps its tap range to the taps that
// read x inside [0, n), so a non-finite mask value meets only real inputs (NumPy's NaN/inf
// pattern: 0 * inf would be NaN).
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]     for k in [0, L), x = 0 outside [0, n)
//
// Layout as in conv_basic.cl. The NDRange is rounded up to WG; work-items past L load and
// synchronise but do not store. Local memory: (3*WG) * sizeof(T) bytes.
//
// Parameters: T element type, ACC accumulator type (unsigned for integers), WG work-group size
// (must equal the launch's local size).
#include "scalar_types.h"
#include "conv_layout.h"

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void conv_tiled(CONV_ARGS(__global))
{
    __local T xs[2 * WG];
    __local T ws[WG];
    const int lid = get_local_id(0);
    const int k = get_global_id(0);
    const int base = (int)get_group_id(0) * WG - pad;
    x += x_off;
    ACC acc = (ACC)0;
    for (int c0 = 0; c0 < m; c0 += WG) {
        const int i0 = base + c0 + lid;
        const int i1 = i0 + WG;
        xs[lid] = (i0 >= 0 && i0 < n) ? x[i0] : (T)0;
        xs[lid + WG] = (i1 >= 0 && i1 < n) ? x[i1] : (T)0;
        ws[lid] = (c0 + lid < m) ? w[c0 + lid] : (T)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int taps = min(WG, m - c0);
        const int jlo = clamp(-i0, 0, taps);           // tap c0 + j reads x[i0 + j]
        const int jhi = clamp(n - i0, jlo, taps);
        for (int j = jlo; j < jhi; ++j)
            acc += (ACC)xs[lid + j] * (ACC)ws[j];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (k < L)
        out[k] = (T)acc;
}
