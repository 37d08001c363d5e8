// Random numbers from Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011), counter-based: block b of a draw is philox(counter (b, call), key), so every
// value depends only on the key, the draw's number and the value's index, on every device.
//
//   philox_fill  out[out_off + i], i < n: value i % PER_BLOCK of block i / PER_BLOCK, one block
//                (four 32-bit words) per work-item.
//   philox_gamma out[out_off + i], i < n: a standard gamma variate of shape shapes[i * step]
//                (NumPy's algorithms: Marsaglia and Tsang's for shape > 1, its exponential
//                rejection for shape < 1), a work-item a value; its k-th block is philox of
//                counter (i, k, call): each attempt of the rejection draws its own.
//
// Parameters:
//   OUT_T        the output's element type
//   DIST         1 uniform on [0, 1), 2 standard normal (Box-Muller), 3 standard exponential,
//                4 integers low + [0, range) (range 0: every 64-bit value)
//   WIDE         1: 64 bits a value (double outputs, integers), two values a block; 0: 32 bits
//                (float outputs), four a block
//   AFFINE       1 (with WIDE, double outputs): a result x is stored as shift + scale * x, as
//                NumPy's uniform, normal and exponential compute theirs
// Words to numbers as NumPy's generators make them: 24 high bits for a float in [0, 1), 53 for
// a double ((a >> 5) * 2^26 + (b >> 6)) * 2^-53; a normal's first uniform is taken in (0, 1]
// (one ulp up) so that its logarithm is finite.
#pragma OPENCL FP_CONTRACT OFF

#ifndef OUT_T
#define OUT_T float
#endif
#ifndef DIST
#define DIST 1
#endif
#ifndef WIDE
#define WIDE 0
#endif
#ifndef AFFINE
#define AFFINE 0
#endif
#if AFFINE && !WIDE
#error "AFFINE needs WIDE (double outputs)"
#endif
#define DIST_UNIFORM 1
#define DIST_NORMAL 2
#define DIST_EXPONENTIAL 3
#define DIST_INTEGERS 4
#define PER_BLOCK (WIDE ? 2 : 4)

// The ten rounds: each multiplies two words by the Philox constants, swaps and mixes in the key,
// and the key is bumped by the Weyl constants between rounds.
inline uint4 philox4x32_10(uint4 c, uint2 k)
{
    for (int round = 0; round < 10; ++round) {
        if (round) {
            k.x += 0x9E3779B9u;
            k.y += 0xBB67AE85u;
        }
        const uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
        const uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
        c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

#if WIDE
typedef double REAL;
// A double in [0, 1) from two words (53 bits); `up` 1: in (0, 1]
inline double unit(const uint a, const uint b, const int up)
{
    return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6) + (double)up) * 0x1.0p-53;
}
#else
typedef float REAL;
inline float unit(const uint a, const int up)
{
    return (float)((a >> 8) + (uint)up) * 0x1.0p-24f;
}
#endif

__kernel void philox_fill(const long n, const uint key0, const uint key1, const uint call0,
                          const uint call1, __global OUT_T* restrict out, const long out_off
#if AFFINE
                          , const double shift, const double scale
#endif
#if DIST == DIST_INTEGERS
                          , const ulong low, const ulong range
#endif
                          )
{
    const long block = get_global_id(0);
    const long first = block * PER_BLOCK;
    if (first >= n)
        return;
    const uint4 r = philox4x32_10((uint4)((uint)block, (uint)(block >> 32), call0, call1),
                                  (uint2)(key0, key1));
#if DIST == DIST_INTEGERS
    const ulong w[2] = {((ulong)r.x << 32) | r.y, ((ulong)r.z << 32) | r.w};
    OUT_T v[2];
    for (int j = 0; j < 2; ++j)   // the high word of w * range: below `range`, nearly uniform
        v[j] = (OUT_T)(range ? low + mul_hi(w[j], range) : w[j]);   // (wrapping: low's bits)
#else
    REAL v[PER_BLOCK];
#if DIST == DIST_UNIFORM && WIDE
    v[0] = unit(r.x, r.y, 0);
    v[1] = unit(r.z, r.w, 0);
#elif DIST == DIST_UNIFORM
    v[0] = unit(r.x, 0); v[1] = unit(r.y, 0); v[2] = unit(r.z, 0); v[3] = unit(r.w, 0);
#elif DIST == DIST_EXPONENTIAL && WIDE
    v[0] = -log(unit(r.x, r.y, 1));
    v[1] = -log(unit(r.z, r.w, 1));
#elif DIST == DIST_EXPONENTIAL
    v[0] = -log(unit(r.x, 1)); v[1] = -log(unit(r.y, 1));
    v[2] = -log(unit(r.z, 1)); v[3] = -log(unit(r.w, 1));
#elif DIST == DIST_NORMAL && WIDE
    {
        const double radius = sqrt(-2.0 * log(unit(r.x, r.y, 1)));
        const double turn = 2.0 * unit(r.z, r.w, 0);
        v[0] = radius * cospi(turn);
        v[1] = radius * sinpi(turn);
    }
#elif DIST == DIST_NORMAL
    for (int j = 0; j < 2; ++j) {
        const uint a = j ? r.z : r.x, b = j ? r.w : r.y;
        const float radius = sqrt(-2.0f * log(unit(a, 1)));
        const float turn = 2.0f * unit(b, 0);
        v[2 * j] = radius * cospi(turn);
        v[2 * j + 1] = radius * sinpi(turn);
    }
#else
#error "unknown DIST"
#endif
#endif
    for (int j = 0; j < PER_BLOCK; ++j) {
        if (first + j < n) {
#if AFFINE
            out[out_off + first + j] = (OUT_T)(shift + scale * (double)v[j]);
#else
            out[out_off + first + j] = (OUT_T)v[j];
#endif
        }
    }
}

#if WIDE
// Uniform in [0, 1) (`up` 1: (0, 1]) and standard normal (Box-Muller) from one block each
inline REAL draw_unit(const uint4 r, const int up)
{
    return unit(r.x, r.y, up);
}
inline REAL draw_normal(const uint4 r)
{
    return sqrt(-2.0 * log(unit(r.x, r.y, 1))) * cospi(2.0 * unit(r.z, r.w, 0));
}
#else
inline REAL draw_unit(const uint4 r, const int up)
{
    return unit(r.x, up);
}
inline REAL draw_normal(const uint4 r)
{
    return sqrt(-2.0f * log(unit(r.x, 1))) * cospi(2.0f * unit(r.y, 0));
}
#endif

__kernel void philox_gamma(const long n, const uint key0, const uint key1, const uint call0,
                           const uint call1, __global OUT_T* restrict out, const long out_off,
                           __global const REAL* restrict shapes, const long shapes_off,
                           const long step)
{
    const long i = get_global_id(0);
    if (i >= n)
        return;
    const uint2 key = (uint2)(key0, key1);
    const uint lo = (uint)i, hi = (uint)(i >> 32) & 0xFFFFu;   // (i < 2^48)
    uint k = 0;
#define NEXT() philox4x32_10((uint4)(lo, hi | (k++ << 16), call0, call1), key)
    const REAL shape = shapes[shapes_off + i * step];
    REAL value;
    if (shape == (REAL)1) {
        value = -log(draw_unit(NEXT(), 1));
    } else if (shape == (REAL)0) {
        value = 0;
    } else if (shape < (REAL)1) {   // NumPy's: a uniform and an exponential an attempt
        for (;;) {
            const REAL u = draw_unit(NEXT(), 0);
            const REAL v = -log(draw_unit(NEXT(), 1));
            if (u <= (REAL)1 - shape) {
                const REAL x = pow(u, (REAL)1 / shape);
                if (x <= v) {
                    value = x;
                    break;
                }
            } else {
                const REAL y = -log(((REAL)1 - u) / shape);
                const REAL x = pow((REAL)1 - shape + shape * y, (REAL)1 / shape);
                if (x <= v + y) {
                    value = x;
                    break;
                }
            }
        }
    } else {   // Marsaglia and Tsang, as NumPy writes it
        const REAL b = shape - (REAL)1 / (REAL)3;
        const REAL c = (REAL)1 / sqrt((REAL)9 * b);
        for (;;) {
            REAL x, v;
            do {
                x = draw_normal(NEXT());
                v = (REAL)1 + c * x;
            } while (v <= (REAL)0);
            v = v * v * v;
            const REAL u = draw_unit(NEXT(), 0);
            if (u < (REAL)1 - (REAL)0.0331 * (x * x) * (x * x)) {
                value = b * v;
                break;
            }
            if (log(u) < (REAL)0.5 * x * x + b * ((REAL)1 - v + log(v))) {
                value = b * v;
                break;
            }
        }
    }
#undef NEXT
    out[out_off + i] = (OUT_T)value;
}
