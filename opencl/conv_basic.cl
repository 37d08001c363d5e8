// Basic 1-D correlation: one output per work-item, a bounds test per tap (seed 004, kernel 1).
//
//   out[k] = sum_{j=0}^{m-1} x[k + j - pad] * w[j]     for k in [0, L), x = 0 outside [0, n)
//
// Every convolve/correlate mode is this one formula (the host reverses the mask for convolve
// and picks pad and L from the mode). Layout: x starts at element x_off of its buffer; w and
// out are contiguous from element 0. Any n, m, pad, L (the NDRange is rounded up to WG).
//
// Parameters: T element type, ACC accumulator type (unsigned for integers so that overflow
// wraps like NumPy), WG work-group size (the host's; not used in the code).
#include "scalar_types.h"
#include "conv_layout.h"

__kernel void conv_basic(CONV_ARGS(__global))
{
    const int k = get_global_id(0);
    if (k >= L) return;
    x += x_off;
    const int start = k - pad;
    ACC acc = (ACC)0;
    for (int j = 0; j < m; ++j) {
        const int i = start + j;
        if (i >= 0 && i < n)
            acc += (ACC)x[i] * (ACC)w[j];
    }
    out[k] = (T)acc;
}
