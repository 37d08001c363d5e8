// Counting and summing by bin with global atomics, as np.bincount and np.histogram do:
//   bincount   bin = x[i] (a non-negative integer: the host checked), a work-item an element.
//   histogram  bin of a[i] as NumPy finds it: UNIFORM 1 (bins given as a count): the index
//              (a - first) / (last - first) * nbins, then moved by one where the edges say
//              otherwise (NumPy's correction); UNIFORM 0: a binary search of the edges. Values
//              outside [edges[0], edges[nbins]] and NaN are left out; the last bin holds its
//              right edge.
// Both add 1 to a uint counter (WEIGHTS 0), or the element's weight to a double sum (WEIGHTS 1:
// compare-and-swap on its bits, cl_khr_int64_base_atomics). Global size (n); with LOCAL_BINS
// (counts of at most that many bins) each work-group counts in local memory over a grid-stride
// loop and adds its counts to the bins once: few bins would otherwise take every element's
// atomic on the same few words. Global size then a multiple of the local size, any number.
//
// Parameters:
//   T        the element type of x or a (float16 as its bits: HALF)
//   W        the weights' type (float16 as its bits: W_HALF); WEIGHTS 1 to use them
//   EDGE_T   the bin edges' type (float or double; NumPy's result type of the edges)
//   UNIFORM  1: equal bins (NumPy's computed index), 0: any increasing edges (binary search)
//   LOCAL_BINS  0, or the bins (at most) counted in local memory first (WEIGHTS 0 only)
#ifndef T
#define T int
#endif
#ifndef HALF
#define HALF 0
#endif
#ifndef W
#define W double
#endif
#ifndef W_HALF
#define W_HALF 0
#endif
#ifndef WEIGHTS
#define WEIGHTS 0
#endif
#ifndef EDGE_T
#define EDGE_T double
#endif
#ifndef UNIFORM
#define UNIFORM 1
#endif
#ifndef LOCAL_BINS
#define LOCAL_BINS 0
#endif
#if LOCAL_BINS && WEIGHTS
#error "LOCAL_BINS counts only"
#endif

#if WEIGHTS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define BIN_T ulong
#else
#define BIN_T uint
#endif

#include "half_bits.h"

#if HALF
#define VALUE(v) half_bits_to_float(v)
#else
#define VALUE(v) (v)
#endif
#if W_HALF
#define WEIGHT(v) ((double)half_bits_to_float(v))
#else
#define WEIGHT(v) ((double)(v))
#endif

// One more in bin b: a count, or the weight added to the bin's double (its bits in a ulong).
inline void add_to_bin(__global BIN_T* bins, const long b, __global const W* w, const long i)
{
#if WEIGHTS
    volatile __global ulong* p = (volatile __global ulong*)(bins + b);
    const double add = WEIGHT(w[i]);
    ulong old = 0, seen;   // a first guess of 0.0: no plain read racing with the swaps
    do {
        seen = old;
        old = atom_cmpxchg(p, seen, as_ulong(as_double(seen) + add));
    } while (old != seen);
#else
    atomic_inc((volatile __global uint*)(bins + b));
#endif
}

// The bin of element i, or -1 where it has none.
inline int bin_of(__global const T* restrict a, const long i, __global const EDGE_T* edges,
                  const int nbins)
{
    const EDGE_T v = (EDGE_T)VALUE(a[i]);
    const EDGE_T first = edges[0], last = edges[nbins];
    if (!(v >= first && v <= last))   // (NaN too)
        return -1;
#if UNIFORM
    int b = (int)((v - first) / (last - first) * (EDGE_T)nbins);
    b = min(max(b, 0), nbins - 1);
    if (v < edges[b])
        b -= 1;
    else if (v >= edges[b + 1] && b != nbins - 1)
        b += 1;
    return b;
#else
    int lo = 0, hi = nbins;   // the last edge not after v: edges[lo] <= v < edges[hi]
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v >= edges[mid]) lo = mid; else hi = mid;
    }
    return lo;
#endif
}

#if LOCAL_BINS
// Adds every element's bin (BIN_OF(i), -1 for none) to `bins` through a local count.
#define COUNT_LOCALLY(BIN_OF, nbins)                                                   \
    __local uint counts[LOCAL_BINS];                                                    \
    for (int b = get_local_id(0); b < (nbins); b += get_local_size(0))                 \
        counts[b] = 0;                                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {                  \
        const long b = BIN_OF(i);                                                       \
        if (b >= 0)                                                                     \
            atomic_inc(&counts[(int)b]);                                                \
    }                                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    for (int b = get_local_id(0); b < (nbins); b += get_local_size(0))                 \
        if (counts[b])                                                                  \
            atomic_add((volatile __global uint*)(bins + b), counts[b]);
#endif

__kernel void bincount(const long n, __global const T* restrict x, const long x_off,
                       __global const W* restrict w, const long w_off, const int nbins,
                       __global BIN_T* bins)
{
#if LOCAL_BINS
#define KEY_OF(i) ((long)x[x_off + (i)])
    COUNT_LOCALLY(KEY_OF, nbins)
#else
    const long i = get_global_id(0);
    if (i < n)
        add_to_bin(bins, (long)x[x_off + i], w + w_off, i);
#endif
}

__kernel void histogram(const long n, __global const T* restrict a, const long a_off,
                        __global const W* restrict w, const long w_off,
                        __global const EDGE_T* restrict edges, const int nbins,
                        __global BIN_T* bins)
{
#if LOCAL_BINS
#define BIN_AT(i) bin_of(a + a_off, (i), edges, nbins)
    COUNT_LOCALLY(BIN_AT, nbins)
#else
    const long i = get_global_id(0);
    if (i >= n)
        return;
    const int b = bin_of(a + a_off, i, edges, nbins);
    if (b >= 0)
        add_to_bin(bins, b, w + w_off, i);
#endif
}
