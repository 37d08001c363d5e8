// Matrix-vector products: GEMM with N == 1 (A @ x) or M == 1 (x @ B) seen as
//
//   y[b](r) = sum_k X[b](r, k) * v[b](k),    r < R
//
// with X(r, k) = X[x_off + b*x_batch + r*xr + k*xk], v(k) = v[v_off + b*v_batch + k*vs] and
// y(r) = y[y_off + b*y_batch + r*ys] (all in elements). For N == 1, X = A and v = B's column; for
// M == 1, X = B transposed (r = n) and v = A's row; any layout is just a choice of strides.
//
// Two kernels, for the two ways X can lie in memory:
//   gemv_reduce  xk == 1 (rows of X contiguous): a work-group of WG work-items per row r reads
//                the row together (neighbours read neighbours), then sums in local memory.
//                Global size (WG, R, batch), local size (WG, 1, 1); WG a power of two.
//   gemv_sweep   xr == 1 (columns of X contiguous): one work-item per r loops over k, and
//                neighbouring work-items read neighbouring elements. Global size
//                (ceil(R/WG)*WG, 1, batch), local size (WG, 1, 1).
// Any R, K (bounds-checked).
//
// Parameters: T, ACC (unsigned for integers), WG work-group size.
#ifndef T
#define T float
#endif
#ifndef ACC
#define ACC T
#endif
#ifndef WG
#define WG 64
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_reduce(const int R, const int K,
                 __global const T* restrict X, const long x_off, const long xr, const long xk,
                 const long x_batch,
                 __global const T* restrict v, const long v_off, const long vs, const long v_batch,
                 __global T* restrict y, const long y_off, const long ys, const long y_batch)
{
    const int lid = get_local_id(0);
    const int r = get_global_id(1);
    const long b = get_global_id(2);
    __global const T* x = X + x_off + b * x_batch + (long)r * xr;
    v += v_off + b * v_batch;
    ACC acc = (ACC)0;
    for (int k = lid; k < K; k += WG)
        acc += (ACC)x[(long)k * xk] * (ACC)v[(long)k * vs];
    __local ACC part[WG];
    part[lid] = acc;
    for (int step = WG / 2; step > 0; step /= 2) {
        // Each halving step reads what the previous one wrote.
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < step)
            part[lid] += part[lid + step];
    }
    if (lid == 0)
        y[y_off + b * y_batch + (long)r * ys] = (T)part[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_sweep(const int R, const int K,
                __global const T* restrict X, const long x_off, const long xr, const long xk,
                const long x_batch,
                __global const T* restrict v, const long v_off, const long vs, const long v_batch,
                __global T* restrict y, const long y_off, const long ys, const long y_batch)
{
    const int r = get_global_id(0);
    const long b = get_global_id(2);
    if (r >= R) return;
    __global const T* x = X + x_off + b * x_batch + (long)r * xr;
    v += v_off + b * v_batch;
    ACC acc = (ACC)0;
    for (int k = 0; k < K; ++k)
        acc += (ACC)x[(long)k * xk] * (ACC)v[(long)k * vs];
    y[y_off + b * y_batch + (long)r * ys] = (T)acc;
}
