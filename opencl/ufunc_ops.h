// One NumPy ufunc loop body per OP (selected with -DOP=OP_<NAME>), with NumPy's semantics:
// signed-integer overflow wraps (computed in the unsigned type UT), integer division by zero
// gives 0, shifts past the width give 0 (or -1), NaN propagates through maximum/minimum and
// is ignored by fmax/fmin, and float floor_divide/remainder/divmod follow npy_divmod exactly.
//
// Types (defined by the including kernel):
//   CT   the loop's input type (all inputs, except WHERE's condition)
//   RT   the loop's output type (uchar for bool results)
//   UT   the unsigned type of CT's width (CT itself for floats)
// Flags: IS_FLOAT, IS_SIGNED (signed integers), IS_BOOL (CT is bool), BITS (width of CT),
//        RECIP_ZERO (NumPy's integer reciprocal of 0 on this machine).
// Each OP defines `op(...)` taking NIN arguments; two-output ops (divmod) take a pointer too.

#define OP_ADD 1
#define OP_SUBTRACT 2
#define OP_MULTIPLY 3
#define OP_TRUE_DIVIDE 4
#define OP_FLOOR_DIVIDE 5
#define OP_REMAINDER 6
#define OP_FMOD 7
#define OP_DIVMOD 8
#define OP_POWER 9
#define OP_NEGATIVE 10
#define OP_POSITIVE 11
#define OP_ABSOLUTE 12
#define OP_SIGN 13
#define OP_RECIPROCAL 14
#define OP_SQUARE 15
#define OP_SQRT 16
#define OP_CBRT 17
#define OP_EQUAL 20
#define OP_NOT_EQUAL 21
#define OP_LESS 22
#define OP_LESS_EQUAL 23
#define OP_GREATER 24
#define OP_GREATER_EQUAL 25
#define OP_LOGICAL_AND 26
#define OP_LOGICAL_OR 27
#define OP_LOGICAL_XOR 28
#define OP_LOGICAL_NOT 29
#define OP_BITWISE_AND 30
#define OP_BITWISE_OR 31
#define OP_BITWISE_XOR 32
#define OP_INVERT 33
#define OP_LEFT_SHIFT 34
#define OP_RIGHT_SHIFT 35
#define OP_EXP 40
#define OP_EXP2 41
#define OP_EXPM1 42
#define OP_LOG 43
#define OP_LOG2 44
#define OP_LOG10 45
#define OP_LOG1P 46
#define OP_SIN 47
#define OP_COS 48
#define OP_TAN 49
#define OP_ARCSIN 50
#define OP_ARCCOS 51
#define OP_ARCTAN 52
#define OP_ARCTAN2 53
#define OP_HYPOT 54
#define OP_SINH 55
#define OP_COSH 56
#define OP_TANH 57
#define OP_ARCSINH 58
#define OP_ARCCOSH 59
#define OP_ARCTANH 60
#define OP_FLOOR 61
#define OP_CEIL 62
#define OP_TRUNC 63
#define OP_RINT 64
#define OP_ISNAN 70
#define OP_ISINF 71
#define OP_ISFINITE 72
#define OP_SIGNBIT 73
#define OP_COPYSIGN 74
#define OP_NEXTAFTER 75
#define OP_MAXIMUM 80
#define OP_MINIMUM 81
#define OP_FMAX 82
#define OP_FMIN 83
#define OP_CLIP 84
#define OP_WHERE 85
#define OP_FABS 86

// maximum/minimum/fmax/fmin on equal values (+0.0 against -0.0): NumPy's float16 loops keep the
// first operand, its float32 and float64 loops the second.
#if defined(RES_HALF) && RES_HALF
#define NP_GT(x, y) ((x) >= (y))
#define NP_LT(x, y) ((x) <= (y))
#else
#define NP_GT(x, y) ((x) > (y))
#define NP_LT(x, y) ((x) < (y))
#endif

// Float division rounded correctly (OpenCL allows 2.5 ulp for float): where the device has
// fp64 a float quotient is taken in double and rounded once, which is exact rounding for a
// 24-bit quotient (53 >= 2*24 + 2).
#if IS_FLOAT && BITS == 32 && defined(cl_khr_fp64)
#define FDIV(a, b) ((CT)((double)(a) / (double)(b)))
#else
#define FDIV(a, b) ((a) / (b))
#endif

// Integer products in at least 32 bits: uchar/ushort would be promoted to int, where overflow
// is undefined (+ 0u makes them unsigned); floats as they are (x + 0 would turn -0.0 into +0.0).
#if IS_FLOAT
#define WIDE(x) (x)
#else
#define WIDE(x) ((x) + 0u)
#endif

// npy_divmod: the floored quotient, and the remainder with the divisor's sign, for floats.
#if IS_FLOAT
inline CT float_divmod(const CT a, const CT b, CT* modulus)
{
    CT mod = fmod(a, b);
    if (b == (CT)0) {
        *modulus = mod;
        return FDIV(a, b);
    }
    CT div = FDIV(a - mod, b);
    if (mod != (CT)0) {
        if (isless(b, (CT)0) != isless(mod, (CT)0)) {
            mod += b;
            div -= (CT)1;
        }
    } else {
        mod = copysign((CT)0, b);
    }
    CT floordiv;
    if (div != (CT)0) {
        floordiv = floor(div);
        if (isgreater(div - floordiv, (CT)0.5)) floordiv += (CT)1;
    } else {
        floordiv = copysign((CT)0, FDIV(a, b));
    }
    *modulus = mod;
    return floordiv;
}
#else
// Integers: C truncates; NumPy floors. x % y is written x - q*y (see opencl/copy.cl).
inline CT int_floor_divide(const CT x, const CT y)
{
    if (y == 0) return 0;
#if IS_SIGNED
    if (y == (CT)-1) return (CT)((UT)0 - (UT)x);
    const CT q = x / y;
    const CT r = x - q * y;
    return (r != 0 && ((r < 0) != (y < 0))) ? q - 1 : q;
#else
    return x / y;
#endif
}

inline CT int_remainder(const CT x, const CT y)
{
    if (y == 0) return 0;
#if IS_SIGNED
    if (y == (CT)-1) return 0;
    const CT r = x - (x / y) * y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
#else
    return x - (x / y) * y;
#endif
}
#endif

#if OP == OP_ADD
inline RT op(const CT x, const CT y) { return (RT)((UT)x + (UT)y); }
#elif OP == OP_SUBTRACT
inline RT op(const CT x, const CT y) { return (RT)((UT)x - (UT)y); }
#elif OP == OP_MULTIPLY
inline RT op(const CT x, const CT y) { return (RT)(WIDE((UT)x) * (UT)y); }
#elif OP == OP_TRUE_DIVIDE
inline RT op(const CT x, const CT y) { return FDIV(x, y); }
#elif OP == OP_FLOOR_DIVIDE
#if IS_FLOAT
inline RT op(const CT x, const CT y)
{
    CT mod;
    return y != (CT)0 ? float_divmod(x, y, &mod) : FDIV(x, y);
}
#else
inline RT op(const CT x, const CT y) { return int_floor_divide(x, y); }
#endif
#elif OP == OP_REMAINDER
#if IS_FLOAT
inline RT op(const CT x, const CT y)
{
    CT mod;
    if (y == (CT)0) return fmod(x, y);
    float_divmod(x, y, &mod);
    return mod;
}
#else
inline RT op(const CT x, const CT y) { return int_remainder(x, y); }
#endif
#elif OP == OP_FMOD
#if IS_FLOAT
inline RT op(const CT x, const CT y) { return fmod(x, y); }
#else
inline RT op(const CT x, const CT y)
{
#if IS_SIGNED
    if (y == 0 || y == (CT)-1) return 0;
#else
    if (y == 0) return 0;
#endif
    return x - (x / y) * y;
}
#endif
#elif OP == OP_DIVMOD
#if IS_FLOAT
inline RT op(const CT x, const CT y, RT* mod) { return float_divmod(x, y, mod); }
#else
inline RT op(const CT x, const CT y, RT* mod)
{
    *mod = int_remainder(x, y);
    return int_floor_divide(x, y);
}
#endif
#elif OP == OP_POWER
#if IS_FLOAT
inline RT op(const CT x, const CT y) { return y == (CT)2 ? x * x : pow(x, y); }
#else
// Exponents are non-negative here (the host raises NumPy's ValueError otherwise).
inline RT op(const CT x, const CT y)
{
    UT base = (UT)x, result = 1;
    ulong e = (ulong)y;
    while (e) {
        if (e & 1) result = (UT)(WIDE(result) * base);
        base = (UT)(WIDE(base) * base);
        e >>= 1;
    }
    return (RT)result;
}
#endif
#elif OP == OP_NEGATIVE
#if IS_FLOAT
inline RT op(const CT x) { return -x; }
#else
inline RT op(const CT x) { return (RT)((UT)0 - (UT)x); }
#endif
#elif OP == OP_POSITIVE
inline RT op(const CT x) { return x; }
#elif OP == OP_ABSOLUTE || OP == OP_FABS
#if IS_FLOAT
inline RT op(const CT x) { return fabs(x); }
#elif IS_SIGNED
inline RT op(const CT x) { return x < 0 ? (RT)((UT)0 - (UT)x) : x; }
#else
inline RT op(const CT x) { return x; }
#endif
#elif OP == OP_SIGN
#if IS_FLOAT
inline RT op(const CT x) { return x > 0 ? (CT)1 : (x < 0 ? (CT)-1 : (x == 0 ? (CT)0 : x)); }
#elif IS_SIGNED
inline RT op(const CT x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
#else
inline RT op(const CT x) { return x > 0 ? 1 : 0; }
#endif
#elif OP == OP_RECIPROCAL
#if IS_FLOAT
inline RT op(const CT x) { return FDIV((CT)1, x); }
#elif IS_SIGNED
inline RT op(const CT x) { return x == 0 ? (RT)RECIP_ZERO : (x == 1 ? 1 : (x == -1 ? -1 : 0)); }
#else
inline RT op(const CT x) { return x == 0 ? (RT)RECIP_ZERO : (x == 1 ? 1 : 0); }
#endif
#elif OP == OP_SQUARE
inline RT op(const CT x) { return (RT)(WIDE((UT)x) * (UT)x); }
#elif OP == OP_SQRT
inline RT op(const CT x) { return sqrt(x); }
#elif OP == OP_CBRT
inline RT op(const CT x) { return cbrt(x); }
#elif OP == OP_EQUAL
inline RT op(const CT x, const CT y) { return x == y; }
#elif OP == OP_NOT_EQUAL
inline RT op(const CT x, const CT y) { return x != y; }
#elif OP == OP_LESS
inline RT op(const CT x, const CT y) { return x < y; }
#elif OP == OP_LESS_EQUAL
inline RT op(const CT x, const CT y) { return x <= y; }
#elif OP == OP_GREATER
inline RT op(const CT x, const CT y) { return x > y; }
#elif OP == OP_GREATER_EQUAL
inline RT op(const CT x, const CT y) { return x >= y; }
#elif OP == OP_LOGICAL_AND
inline RT op(const CT x, const CT y) { return x != 0 && y != 0; }
#elif OP == OP_LOGICAL_OR
inline RT op(const CT x, const CT y) { return x != 0 || y != 0; }
#elif OP == OP_LOGICAL_XOR
inline RT op(const CT x, const CT y) { return (x != 0) != (y != 0); }
#elif OP == OP_LOGICAL_NOT
inline RT op(const CT x) { return x == 0; }
#elif OP == OP_BITWISE_AND
inline RT op(const CT x, const CT y) { return x & y; }
#elif OP == OP_BITWISE_OR
inline RT op(const CT x, const CT y) { return x | y; }
#elif OP == OP_BITWISE_XOR
inline RT op(const CT x, const CT y) { return x ^ y; }
#elif OP == OP_INVERT
#if IS_BOOL
inline RT op(const CT x) { return !x; }
#else
inline RT op(const CT x) { return ~x; }
#endif
#elif OP == OP_LEFT_SHIFT
// Shifts of the width or more (negative counts included, as unsigned) give 0, as NumPy's.
inline RT op(const CT x, const CT y) { return (ulong)y < BITS ? (RT)((UT)x << (UT)y) : 0; }
#elif OP == OP_RIGHT_SHIFT
inline RT op(const CT x, const CT y) { return (ulong)y < BITS ? x >> y : (x < 0 ? (RT)-1 : 0); }
#elif OP == OP_EXP
inline RT op(const CT x) { return exp(x); }
#elif OP == OP_EXP2
inline RT op(const CT x) { return exp2(x); }
#elif OP == OP_EXPM1
inline RT op(const CT x) { return expm1(x); }
#elif OP == OP_LOG
inline RT op(const CT x) { return log(x); }
#elif OP == OP_LOG2
inline RT op(const CT x) { return log2(x); }
#elif OP == OP_LOG10
inline RT op(const CT x) { return log10(x); }
#elif OP == OP_LOG1P
inline RT op(const CT x) { return log1p(x); }
#elif OP == OP_SIN
inline RT op(const CT x) { return sin(x); }
#elif OP == OP_COS
inline RT op(const CT x) { return cos(x); }
#elif OP == OP_TAN
inline RT op(const CT x) { return tan(x); }
#elif OP == OP_ARCSIN
inline RT op(const CT x) { return asin(x); }
#elif OP == OP_ARCCOS
inline RT op(const CT x) { return acos(x); }
#elif OP == OP_ARCTAN
inline RT op(const CT x) { return atan(x); }
#elif OP == OP_ARCTAN2
inline RT op(const CT x, const CT y) { return atan2(x, y); }
#elif OP == OP_HYPOT
inline RT op(const CT x, const CT y) { return hypot(x, y); }
#elif OP == OP_SINH
inline RT op(const CT x) { return sinh(x); }
#elif OP == OP_COSH
inline RT op(const CT x) { return cosh(x); }
#elif OP == OP_TANH
inline RT op(const CT x) { return tanh(x); }
#elif OP == OP_ARCSINH
inline RT op(const CT x) { return asinh(x); }
#elif OP == OP_ARCCOSH
inline RT op(const CT x) { return acosh(x); }
#elif OP == OP_ARCTANH
inline RT op(const CT x) { return atanh(x); }
#elif OP == OP_FLOOR || OP == OP_CEIL || OP == OP_TRUNC || OP == OP_RINT
#if !IS_FLOAT
inline RT op(const CT x) { return x; }  // integer loops: the value itself
#elif OP == OP_FLOOR
inline RT op(const CT x) { return floor(x); }
#elif OP == OP_CEIL
inline RT op(const CT x) { return ceil(x); }
#elif OP == OP_TRUNC
inline RT op(const CT x) { return trunc(x); }
#else
inline RT op(const CT x) { return rint(x); }
#endif
#elif OP == OP_ISNAN || OP == OP_ISINF || OP == OP_ISFINITE || OP == OP_SIGNBIT
#if !IS_FLOAT
inline RT op(const CT x) { return OP == OP_ISFINITE ? 1 : (OP == OP_SIGNBIT ? x < 0 : 0); }
#elif OP == OP_ISNAN
inline RT op(const CT x) { return isnan(x) ? 1 : 0; }
#elif OP == OP_ISINF
inline RT op(const CT x) { return isinf(x) ? 1 : 0; }
#elif OP == OP_ISFINITE
inline RT op(const CT x) { return isfinite(x) ? 1 : 0; }
#else
inline RT op(const CT x) { return signbit(x) ? 1 : 0; }
#endif
#elif OP == OP_COPYSIGN
inline RT op(const CT x, const CT y) { return copysign(x, y); }
#elif OP == OP_NEXTAFTER
inline RT op(const CT x, const CT y) { return nextafter(x, y); }
// maximum/minimum: NaN wins; on ties the second operand (as NumPy's loops on this machine).
#elif OP == OP_MAXIMUM
#if IS_FLOAT
inline RT op(const CT x, const CT y) { return isnan(x) ? x : (isnan(y) ? y : (NP_GT(x, y) ? x : y)); }
#else
inline RT op(const CT x, const CT y) { return x > y ? x : y; }
#endif
#elif OP == OP_MINIMUM
#if IS_FLOAT
inline RT op(const CT x, const CT y) { return isnan(x) ? x : (isnan(y) ? y : (NP_LT(x, y) ? x : y)); }
#else
inline RT op(const CT x, const CT y) { return x < y ? x : y; }
#endif
// fmax/fmin: NaN loses unless both are NaN.
#elif OP == OP_FMAX
#if IS_FLOAT
inline RT op(const CT x, const CT y) { return isnan(y) ? x : (isnan(x) ? y : (NP_GT(x, y) ? x : y)); }
#else
inline RT op(const CT x, const CT y) { return x > y ? x : y; }
#endif
#elif OP == OP_FMIN
#if IS_FLOAT
inline RT op(const CT x, const CT y) { return isnan(y) ? x : (isnan(x) ? y : (NP_LT(x, y) ? x : y)); }
#else
inline RT op(const CT x, const CT y) { return x < y ? x : y; }
#endif
#elif OP == OP_CLIP
// NumPy's _NPY_CLIP: min(max(x, lo), hi) with NaN propagating from x, then from the bounds.
inline RT op(const CT x, const CT lo, const CT hi)
{
#if IS_FLOAT
    const CT m = isnan(x) ? x : (x > lo ? x : lo);
    return isnan(m) ? m : (m < hi ? m : hi);
#else
    const CT m = x > lo ? x : lo;
    return m < hi ? m : hi;
#endif
}
#elif OP == OP_WHERE
inline RT op(const uchar cond, const CT x, const CT y) { return cond ? x : y; }
#else
#error "unknown OP"
#endif
