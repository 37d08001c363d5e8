// NumPy's scalar conversions, bit for bit as NumPy gives them on x86-64, including the values
// C and OpenCL C leave undefined (float -> integer out of range or NaN), so that every device
// gives the same answer as the host.
//
// Include this file with three macros defined; it defines one function and may be included
// several times (once per conversion a kernel needs):
//   NP_CAST_SRC   source type (OpenCL C scalar name: char .. ulong, float, double; other
//                 types, such as half, convert as OpenCL C does)
//   NP_CAST_DST   destination type (same names; a bool destination is the caller's `!= 0`)
//   NP_CAST_NAME  the function's name:  NP_CAST_DST NP_CAST_NAME(NP_CAST_SRC x)
//
// The rules (what NumPy's casting loops compile to with gcc/clang on x86-64):
//   float -> int64, uint32:        cvttsd2si to 64 bits, then modulo 2^bits; NaN and values
//                                  outside [-2^63, 2^63) give -2^63 ("integer indefinite")
//   float -> int32, int16, int8,
//            uint16, uint8:        cvttsd2si to 32 bits, then modulo 2^bits; NaN and values
//                                  outside [-2^31, 2^31) give -2^31
//   float -> uint64:               x >= 2^63 ? cvtt64(x - 2^63) ^ 2^63 : cvtt64(x)
//   int -> int:                    modulo 2^bits (two's complement wrap, sign extension)
//   int -> float, float -> float:  rounding to nearest even (OpenCL C's default for these)
// NumPy's vectorised float64 -> uint32 loop (AVX2) disagrees with its own scalar loop for
// values outside [-2^31, 2^32): the result depends on the element's position in the array.
// Here the scalar loop's answer is the rule, for every element.
#ifndef NP_CAST_TRAITS
#define NP_CAST_TRAITS

#define NP_CAT_(a, b) a##b
#define NP_CAT(a, b) NP_CAT_(a, b)

#define NP_SIGNED 1
#define NP_UNSIGNED 2
#define NP_FLOATING 3
#define NP_KIND(t) NP_CAT(NP_KIND_, t)
#define NP_KIND_char NP_SIGNED
#define NP_KIND_short NP_SIGNED
#define NP_KIND_int NP_SIGNED
#define NP_KIND_long NP_SIGNED
#define NP_KIND_uchar NP_UNSIGNED
#define NP_KIND_ushort NP_UNSIGNED
#define NP_KIND_uint NP_UNSIGNED
#define NP_KIND_ulong NP_UNSIGNED
#define NP_KIND_float NP_FLOATING
#define NP_KIND_double NP_FLOATING

#define NP_IS_INT(t) (NP_KIND(t) == NP_SIGNED || NP_KIND(t) == NP_UNSIGNED)

#define NP_BITS(t) NP_CAT(NP_BITS_, t)
#define NP_BITS_char 8
#define NP_BITS_uchar 8
#define NP_BITS_short 16
#define NP_BITS_ushort 16
#define NP_BITS_int 32
#define NP_BITS_uint 32
#define NP_BITS_long 64
#define NP_BITS_ulong 64
#define NP_BITS_float 32
#define NP_BITS_double 64

#define NP_UNSIGNED_OF(t) NP_CAT(NP_UNSIGNED_OF_, t)
#define NP_UNSIGNED_OF_char uchar
#define NP_UNSIGNED_OF_uchar uchar
#define NP_UNSIGNED_OF_short ushort
#define NP_UNSIGNED_OF_ushort ushort
#define NP_UNSIGNED_OF_int uint
#define NP_UNSIGNED_OF_uint uint
#define NP_UNSIGNED_OF_long ulong
#define NP_UNSIGNED_OF_ulong ulong

// v modulo 2^bits of integer type t: conversion to an unsigned type is defined as modulo in C,
// and as_<t> reinterprets the bits (a plain signed narrowing is implementation-defined).
#define NP_WRAP(t, v) NP_CAT(as_, t)((NP_UNSIGNED_OF(t))(v))

// cvttsd2si / cvttss2si: truncation toward zero; the minimum for NaN and out-of-range values.
// The bounds are powers of two, exact in float and double; the unselected conversion of an
// out-of-range value is never used.
#define NP_CVTT64(x) ((trunc(x) >= -0x1p63f && trunc(x) < 0x1p63f) ? (long)(x) : LONG_MIN)
#define NP_CVTT32(x) ((trunc(x) >= -0x1p31f && trunc(x) < 0x1p31f) ? (int)(x) : INT_MIN)

#endif  // NP_CAST_TRAITS

inline NP_CAST_DST NP_CAST_NAME(const NP_CAST_SRC x)
{
#if NP_KIND(NP_CAST_SRC) == NP_FLOATING && NP_IS_INT(NP_CAST_DST)
#if NP_KIND(NP_CAST_DST) == NP_UNSIGNED && NP_BITS(NP_CAST_DST) == 64
    return x >= 0x1p63f ? (ulong)NP_CVTT64(x - 0x1p63f) ^ 0x8000000000000000UL
                        : (ulong)NP_CVTT64(x);
#elif NP_BITS(NP_CAST_DST) == 64 || (NP_KIND(NP_CAST_DST) == NP_UNSIGNED && NP_BITS(NP_CAST_DST) == 32)
    return NP_WRAP(NP_CAST_DST, NP_CVTT64(x));
#else
    return NP_WRAP(NP_CAST_DST, NP_CVTT32(x));
#endif
#elif NP_IS_INT(NP_CAST_SRC) && NP_IS_INT(NP_CAST_DST)
    return NP_WRAP(NP_CAST_DST, x);
#else
    return (NP_CAST_DST)x;
#endif
}

#undef NP_CAST_SRC
#undef NP_CAST_DST
#undef NP_CAST_NAME
