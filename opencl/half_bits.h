// float16 values held as their bits (ushort), converted as NumPy's npy_half_to_float,
// npy_float_to_half and npy_double_to_half do. Reading: vload_half from a private copy (exact;
// half only as a pointee: no cl_khr_fp16). Writing: integer and exact float arithmetic, bit for
// bit NumPy's (round to nearest even, overflow to inf, NaN payloads kept, a NaN never turned
// into inf) on every device, where vstore_half leaves NaN bits to the implementation.
#ifndef HALF_BITS_H
#define HALF_BITS_H

inline float half_bits_to_float(const ushort h)
{
    return vload_half(0, (const __private half*)&h);   // exact (the spec's conversion)
}

inline ushort half_bits_from_float(const float x)
{
    const uint u = as_uint(x), a = u & 0x7FFFFFFFu;
    const ushort sign = (ushort)((u >> 16) & 0x8000u);
    if (a >= 0x7F800000u) {   // inf, NaN (its payload's top bits; a NaN stays one)
        const uint r = 0x7C00u + ((a & 0x7FFFFFu) >> 13);
        return sign | (ushort)(r == 0x7C00u && a != 0x7F800000u ? 0x7C01u : r);
    }
    if (a >= 0x477FF000u)     // 65520 and above round to inf
        return sign | 0x7C00u;
    if (a >= 0x38800000u)     // normal: round at bit 13 (ties to even), rebias
        return sign | (ushort)((a + 0xFFFu + ((a >> 13) & 1u) - 0x38000000u) >> 13);
    return sign | (ushort)rint(as_float(a) * 0x1p24f);   // subnormal: units of 2^-24 (exact)
}

#if defined(cl_khr_fp64) && defined(IS_FP64) && IS_FP64   // (the fp64 pragma comes with IS_FP64)
inline double half_bits_to_double(const ushort h)
{
    return (double)half_bits_to_float(h);
}

inline ushort half_bits_from_double(const double x)
{
    const ulong u = as_ulong(x), a = u & 0x7FFFFFFFFFFFFFFFUL;
    const ushort sign = (ushort)((u >> 48) & 0x8000u);
    if (a >= 0x7FF0000000000000UL) {
        const uint r = 0x7C00u + (uint)((a & 0xFFFFFFFFFFFFFUL) >> 42);
        return sign | (ushort)(r == 0x7C00u && a != 0x7FF0000000000000UL ? 0x7C01u : r);
    }
    if (a >= 0x40EFFE0000000000UL)
        return sign | 0x7C00u;
    if (a >= 0x3F10000000000000UL)
        return sign | (ushort)((a + 0x1FFFFFFFFFFUL + ((a >> 42) & 1UL)
                                - ((ulong)(1023 - 15) << 52)) >> 42);
    return sign | (ushort)rint(as_double(a) * 0x1p24);
}
#endif

// half_bits_from_float / half_bits_from_double by the source's type name
#define HALF_BITS_FROM_(T) half_bits_from_##T
#define HALF_BITS_FROM(T) HALF_BITS_FROM_(T)

#endif  // HALF_BITS_H
