// 1-D correlation with the mask in __constant memory (seed 004, kernel 2): every work-item of a
// group reads the same w[j] at the same time, which constant caches broadcast.
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]     for k in [0, L), x = 0 outside [0, n)
//
// Layout as in conv_basic.cl. Instead of a test per tap, each work-item clamps its tap range
// to the part of x that exists. Constraint (host): m * sizeof(T) <= the device's
// CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE.
//
// Parameters: T element type, ACC accumulator type (unsigned for integers), WG work-group size
// (the host's; not used in the code).
#include "scalar_types.h"
#include "conv_layout.h"

__kernel void conv_const(CONV_ARGS(__constant))
{
    const int k = get_global_id(0);
    if (k >= L) return;
    x += x_off;
    const int start = k - pad;
    const int j0 = max(0, -start);
    const int j1 = min(m, n - start);
    ACC acc = (ACC)0;
    for (int j = j0; j < j1; ++j)
        acc += (ACC)x[start + j] * (ACC)w[j];
    out[k] = (T)acc;
}
