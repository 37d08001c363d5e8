// Sorting rows in local memory: one work-group sorts one row of a C-contiguous (rows x n) array
// with a bitonic network over P (a power of two >= n) slots, the slots past n holding
// sentinels that sort last. Each slot is a (key, index) pair and pairs compare by key, then by
// index: equal keys keep their order, so the result is NumPy's stable sort (kind="stable"),
// bit for bit, whatever the network does.
//
//   sort_rows     out[r, :] = the row's keys in order, or their indices (ARG: np.argsort).
//                 Global size (rows * WG), local (WG). (Longer rows: radix.cl.)
//   search_sorted out[j] = where v[j] goes in the sorted a (np.searchsorted: the first slot
//                 whose key is not before v[j], RIGHT 1: the first after it), a binary search
//                 a work-item. Global size (m).
//
// Parameters:
//   T        the key type (float, double, an integer type; float16 as its bits: HALF)
//   P        slots a work-group sorts (a power of two), WG work-items (a power of two <= P / 2)
//   IS_FLOAT 1: NaNs sort last (all equal to one another), -0.0 equal to 0.0, as NumPy orders
//   HALF     1: T is ushort holding float16 bits, compared as floats (half_bits.h)
//   ARG      1: write the indices (long) instead of the keys
//   RIGHT    search_sorted's side: 0 left, 1 right
#ifndef T
#define T float
#endif
#ifndef P
#define P 1024
#endif
#ifndef WG
#define WG 256
#endif
#ifndef IS_FLOAT
#define IS_FLOAT 1
#endif
#ifndef HALF
#define HALF 0
#endif
#ifndef ARG
#define ARG 0
#endif
#ifndef RIGHT
#define RIGHT 0
#endif
#if (P & (P - 1)) != 0 || (WG & (WG - 1)) != 0 || 2 * WG > P
#error "P and WG must be powers of two with 2 * WG <= P"
#endif
#if ARG
#define OUT_T long
#else
#define OUT_T T
#endif

#include "half_bits.h"
#if HALF
#define KEY(v) half_bits_to_float(v)
#else
#define KEY(v) (v)
#endif

// Whether slot (a, ia) sorts before (b, ib): sentinels (index >= n) last, then NaNs, then by
// value; equal keys by index.
inline bool before(const T a, const int ia, const T b, const int ib, const int n)
{
    if (ib >= n) return ia < n || ia < ib;
    if (ia >= n) return false;
#if IS_FLOAT || HALF
    const bool na = isnan(KEY(a)), nb = isnan(KEY(b));
    if (na || nb) return !na || (nb && ia < ib);
#endif
    return KEY(a) < KEY(b) || (KEY(a) == KEY(b) && ia < ib);
}

// Whether the pair (lo, hi) of slots must be exchanged, the pair's block of `size` ascending
// when the first slot has bit `size` clear.
inline bool swap_pair(const T ka, const int ia, const T kb, const int ib, const int n,
                      const int lo, const int size)
{
    return before(kb, ib, ka, ia, n) == ((lo & size) == 0);
}

// The network's steps of `size` from stride `top` down to 1 over the P slots in local memory.
inline void local_steps(__local T* keys, __local int* idx, const int n, const int size,
                        const int top)
{
    const int lid = get_local_id(0);
    for (int stride = top; stride > 0; stride >>= 1) {
        for (int t = lid; t < P / 2; t += WG) {
            const int lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
            const T ka = keys[lo], kb = keys[hi];
            const int ia = idx[lo], ib = idx[hi];
            if (swap_pair(ka, ia, kb, ib, n, lo, size)) {
                keys[lo] = kb; keys[hi] = ka;
                idx[lo] = ib; idx[hi] = ia;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sort_rows(const int n, __global const T* restrict in, const long in_off,
               __global OUT_T* restrict out)
{
    __local T keys[P];
    __local int idx[P];
    const int lid = get_local_id(0);
    const long row = get_group_id(0);
    __global const T* src = in + in_off + row * n;
    for (int i = lid; i < P; i += WG) {
        keys[i] = i < n ? src[i] : (T)0;   // (a sentinel's key is never compared)
        idx[i] = i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int size = 2; size <= P; size <<= 1)
        local_steps(keys, idx, n, size, size >> 1);
    for (int i = lid; i < n; i += WG) {
#if ARG
        out[row * n + i] = idx[i];
#else
        out[row * n + i] = keys[i];
#endif
    }
}

// Whether key p sorts before key q (NaN last, as the sort orders them)
inline bool key_before(const T p, const T q)
{
#if IS_FLOAT || HALF
    if (isnan(KEY(q))) return !isnan(KEY(p));
#endif
    return KEY(p) < KEY(q);
}

__kernel void search_sorted(const long n, __global const T* restrict a, const long a_off,
                            const long m, __global const T* restrict v, const long v_off,
                            __global long* restrict out)
{
    const long j = get_global_id(0);
    if (j >= m)
        return;
    const T x = v[v_off + j];
    long lo = 0, hi = n;
    while (lo < hi) {
        const long mid = lo + ((hi - lo) >> 1);
#if RIGHT
        const bool go_right = !key_before(x, a[a_off + mid]);   // a[mid] <= x
#else
        const bool go_right = key_before(a[a_off + mid], x);    // a[mid] < x
#endif
        if (go_right)
            lo = mid + 1;
        else
            hi = mid;
    }
    out[j] = lo;
}
