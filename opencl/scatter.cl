// np.add.at on the device: target[pos[i]] += values[i] for every i, atomically, so that
// repeated positions all add (in no set order: float sums may round differently from NumPy's
// loop, which adds in index order). Global size (n).
//
// Parameters:
//   T     the target's element type: int, uint (atomic_add), long, ulong (atom_add,
//         cl_khr_int64_base_atomics), float (compare-and-swap on its bits), double (the same on
//         64 bits, cl_khr_int64_base_atomics)
//   HOW   0: atomic add of 32-bit integers, 1: of 64-bit integers, 2: float, 3: double
//   V     the values' type: T, or double for a float target whose sums NumPy forms in float64
//         (each sum then rounded to float, as NumPy's loop stores it)
#ifndef T
#define T int
#endif
#ifndef V
#define V T
#endif
#ifndef HOW
#define HOW 0
#endif

#if HOW == 1 || HOW == 3
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

inline void add_at(__global T* p, const V v)
{
#if HOW == 0
    atomic_add((volatile __global T*)p, v);
#elif HOW == 1
    atom_add((volatile __global T*)p, v);
#elif HOW == 2
    volatile __global uint* bits = (volatile __global uint*)p;
    uint old = 0u, seen;   // a first guess of 0.0: no plain read racing with the swaps
    do {
        seen = old;
        old = atomic_cmpxchg(bits, seen, as_uint((float)(as_float(seen) + v)));
    } while (old != seen);
#else
    volatile __global ulong* bits = (volatile __global ulong*)p;
    ulong old = 0UL, seen;
    do {
        seen = old;
        old = atom_cmpxchg(bits, seen, as_ulong(as_double(seen) + v));
    } while (old != seen);
#endif
}

__kernel void scatter_add(const long n, __global const long* restrict pos,
                          __global const V* restrict values, __global T* target,
                          const long target_off)
{
    const long i = get_global_id(0);
    if (i < n)
        add_at(target + target_off + pos[i], values[i]);
}
