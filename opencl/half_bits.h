// float16 values held as their bits (ushort): read exactly as float, written rounded to nearest
// even from float or double, through vload_half / vstore_half_rte (no cl_khr_fp16 needed: half
// appears only as the pointee of a pointer to a private scalar).
#ifndef HALF_BITS_H
#define HALF_BITS_H

inline float half_bits_to_float(const ushort h)
{
    return vload_half(0, (const __private half*)&h);
}

inline ushort half_bits_from_float(const float x)
{
    ushort h;
    vstore_half_rte(x, 0, (__private half*)&h);
    return h;
}

#if defined(cl_khr_fp64) && defined(IS_FP64) && IS_FP64   // (the fp64 pragma comes with IS_FP64)
inline ushort half_bits_from_double(const double x)
{
    ushort h;
    vstore_half_rte(x, 0, (__private half*)&h);
    return h;
}
#endif

// half_bits_from_float / half_bits_from_double by the source's type name
#define HALF_BITS_FROM_(T) half_bits_from_##T
#define HALF_BITS_FROM(T) HALF_BITS_FROM_(T)

#endif  // HALF_BITS_H
