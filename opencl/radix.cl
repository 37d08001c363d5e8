// Sorting long rows: a least-significant-digit radix sort of (key, index) pairs over all rows at
// once. Each value becomes an unsigned key whose order is NumPy's (floats: sign-magnitude turned
// monotone, -0.0 as 0.0, every NaN the largest key), sorted RB bits a pass; passes over the row
// number's digits follow the key's, so the rows come out each sorted in place. Every pass is
// stable, so equal keys keep their order: NumPy's stable sort (kind="stable"), bit for bit.
// A pass is three launches over tiles of TILE = WG * ITEMS elements:
//   radix_count    counts[d * groups + g] = the elements of tile g whose digit is d.
//                  Global size (groups * WG), local (WG).
//   radix_scan     each digit's counts over the tiles turned into their exclusive prefix sums,
//                  totals[d] = the digit's count. Global size (RADIX * WG), local (WG).
//   radix_scatter  tile g's elements to their places: the digits before d (the totals' prefix),
//                  the tiles before g (its count's prefix), then the elements before it in the
//                  tile, ranked in local memory (a counter per digit and work-item: each
//                  work-item ranks its ITEMS consecutive elements). Global size as radix_count.
// The first pass reads the source (T, converting its values to keys, indices 0, 1, ...); the
// last writes the result: the values (gathered from the source by index), or the indices in
// their rows (ARG, long). Integer sorts without ARG on one row carry no indices (PAIRS 0): the
// key turns back into the value.
//
// Parameters:
//   T        the source type (float, double, an integer type; float16 as its bits: HALF)
//   KB       bits of a key (8 * the element's size); KEY64 1 when KB is 64
//   IS_FLOAT 1: a float type (with HALF: float16 bits); SIGNED 1: a signed integer type
//   RB       bits of a digit (RADIX = 2^RB counters a work-item in local memory)
//   WG       work-items of a group (the host picks WG and ITEMS to fit local memory)
//   ITEMS    elements a work-item ranks in radix_scatter
//   PAIRS    1: indices travel with the keys
//   ARG      1: write the indices (np.argsort)
#ifndef T
#define T float
#endif
#ifndef KB
#define KB 32
#endif
#ifndef KEY64
#define KEY64 0
#endif
#ifndef IS_FLOAT
#define IS_FLOAT 1
#endif
#ifndef HALF
#define HALF 0
#endif
#ifndef SIGNED
#define SIGNED 0
#endif
#ifndef RB
#define RB 8
#endif
#ifndef WG
#define WG 64
#endif
#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef PAIRS
#define PAIRS 1
#endif
#ifndef ARG
#define ARG 0
#endif

#if KEY64
#define KT ulong
#else
#define KT uint
#endif
#if ARG
#define OUT_T long
#else
#define OUT_T T
#endif
#if ARG && !PAIRS
#error "ARG needs PAIRS"
#endif
#if (WG & (WG - 1)) != 0
#error "WG must be a power of two"
#endif

#define RADIX (1 << RB)
#define MASK ((KT)(RADIX - 1))
#define TILE (WG * ITEMS)
#define CSTRIDE (WG + 2)   // a digit's counters, padded: the scan's reads fall in distinct banks
#define SIGN_BIT ((KT)1 << (KB - 1))
#if KEY64
#define KEY_ALL (~(KT)0)
#else
#define KEY_ALL ((KT)(0xFFFFFFFFu >> (32 - KB)))
#endif

// The key of a value: unsigned, ordered as NumPy sorts the values.
inline KT to_key(const T v)
{
#if HALF
    const uint b = v, mag = b & 0x7FFFu;
    if (mag > 0x7C00u) return 0xFFFFu;     // NaN: last, all equal
    if (mag == 0u) return 0x8000u;         // -0.0 == 0.0
    return (b & 0x8000u) ? (~b & 0xFFFFu) : (b | 0x8000u);
#elif IS_FLOAT && KEY64
    if (isnan(v)) return KEY_ALL;
    if (v == 0.0) return SIGN_BIT;
    const ulong b = as_ulong(v);
    return (b & SIGN_BIT) ? ~b : (b | SIGN_BIT);
#elif IS_FLOAT
    if (isnan(v)) return KEY_ALL;
    if (v == 0.0f) return SIGN_BIT;
    const uint b = as_uint(v);
    return (b & SIGN_BIT) ? ~b : (b | SIGN_BIT);
#elif SIGNED
    return ((KT)v & KEY_ALL) ^ SIGN_BIT;
#else
    return (KT)v;
#endif
}

#if !PAIRS
// The value of an integer's key (to_key's inverse).
inline T from_key(const KT k)
{
#if SIGNED
    return (T)(k ^ SIGN_BIT);
#else
    return (T)k;
#endif
}
#endif

// Element e's digit in this pass: the key's bits at `shift`, or (row passes) the row number's.
inline uint digit_of(const KT key, const int id, const int shift, const int row_pass,
                     const int n)
{
    if (row_pass)
        return ((uint)(id / n) >> shift) & (RADIX - 1);
    return (uint)((key >> shift) & MASK);
}

// Exclusive prefix sums of v[0 .. RADIX-1] in place (local; all WG work-items call it).
inline void scan_digits(__local int* v, __local int* part)
{
    const int lid = get_local_id(0);
    const int per = (RADIX + WG - 1) / WG;
    int sum = 0;
    for (int j = 0; j < per; ++j) {
        const int d = lid * per + j;
        if (d < RADIX) sum += v[d];
    }
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < WG; off <<= 1) {   // inclusive scan of the parts
        const int add = lid >= off ? part[lid - off] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int run = part[lid] - sum;
    for (int j = 0; j < per; ++j) {
        const int d = lid * per + j;
        if (d < RADIX) {
            const int c = v[d];
            v[d] = run;
            run += c;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void radix_count(const int total, const int n, const int shift, const int row_pass,
                 const int first, __global const T* restrict src, const long src_off,
                 __global const KT* restrict keys, __global const int* restrict ids,
                 __global int* restrict counts)
{
    __local int hist[RADIX];
    const int lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    for (int d = lid; d < RADIX; d += WG)
        hist[d] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int start = g * TILE, stop = min(start + TILE, total);
    for (int i = start + lid; i < stop; i += WG) {
        const KT key = first ? to_key(src[src_off + i]) : keys[i];
#if PAIRS
        const int id = first ? i : ids[i];
#else
        const int id = 0;
#endif
        atomic_inc(&hist[digit_of(key, id, shift, row_pass, n)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = lid; d < RADIX; d += WG)
        counts[d * groups + g] = hist[d];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void radix_scan(const int groups, __global int* restrict counts, __global int* restrict totals)
{
    __local int part[WG];
    const int lid = get_local_id(0), d = get_group_id(0);
    __global int* row = counts + (long)d * groups;
    const int per = (groups + WG - 1) / WG, lo = min(lid * per, groups),
              hi = min(lo + per, groups);
    int sum = 0;
    for (int j = lo; j < hi; ++j)
        sum += row[j];
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < WG; off <<= 1) {
        const int add = lid >= off ? part[lid - off] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int run = part[lid] - sum;
    for (int j = lo; j < hi; ++j) {
        const int c = row[j];
        row[j] = run;
        run += c;
    }
    if (lid == WG - 1)
        totals[d] = part[WG - 1];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void radix_scatter(const int total, const int n, const int shift, const int row_pass,
                   const int first, const int last, __global const T* restrict src,
                   const long src_off, __global const KT* restrict keys_in,
                   __global const int* restrict ids_in, __global const int* restrict counts,
                   __global const int* restrict totals, __global KT* restrict keys_out,
                   __global int* restrict ids_out, __global OUT_T* restrict out)
{
    __local ushort cnt[RADIX * CSTRIDE];   // [digit][work-item]: counts, then where each goes
    __local KT stage_k[TILE];
    __local int stage_i[PAIRS ? TILE : 1];
    __local int offset[RADIX];             // the digit's place in the output less in the tile
    __local int start[RADIX];              // the digit's first place in the tile
    __local int part[WG];
    const int lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    const int base = g * TILE, size = min(TILE, total - base);

    for (int i = lid; i < RADIX * CSTRIDE / 2; i += WG)
        ((__local uint*)cnt)[i] = 0u;
    for (int i = lid; i < TILE; i += WG) {   // the tile, read whole rows at a time
        if (i < size) {
            stage_k[i] = first ? to_key(src[src_off + base + i]) : keys_in[base + i];
#if PAIRS
            stage_i[i] = first ? base + i : ids_in[base + i];
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Each work-item counts the digits of its ITEMS consecutive elements.
    KT key[ITEMS];
    int id[ITEMS];
    uint dig[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int e = lid * ITEMS + j;
        if (e < size) {
            key[j] = stage_k[e];
#if PAIRS
            id[j] = stage_i[e];
#else
            id[j] = 0;
#endif
            dig[j] = digit_of(key[j], id[j], shift, row_pass, n);
            cnt[dig[j] * CSTRIDE + lid] += 1;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Per digit, the work-items' counts become exclusive prefix sums, start[d] the digit's total.
    for (int d = lid; d < RADIX; d += WG) {
        int run = 0;
        for (int t = 0; t < WG; ++t) {
            const int c = cnt[d * CSTRIDE + t];
            cnt[d * CSTRIDE + t] = (ushort)run;
            run += c;
        }
        start[d] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_digits(start, part);
    for (int d = lid; d < RADIX; d += WG)
        offset[d] = totals[d];
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_digits(offset, part);
    for (int d = lid; d < RADIX; d += WG)
        offset[d] += counts[d * groups + g] - start[d];

    // Each element to its place in the tile, ordered by digit (stable: work-items in order, each
    // its elements in order).
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int e = lid * ITEMS + j;
        if (e < size) {
            const int at = start[dig[j]] + cnt[dig[j] * CSTRIDE + lid];
            cnt[dig[j] * CSTRIDE + lid] += 1;
            stage_k[at] = key[j];
#if PAIRS
            stage_i[at] = id[j];
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Out in tile order: a digit's run of elements lands in a run of places.
    for (int i = lid; i < size; i += WG) {
        const KT k = stage_k[i];
#if PAIRS
        const int e = stage_i[i];
#else
        const int e = 0;
#endif
        const int to = offset[digit_of(k, e, shift, row_pass, n)] + i;
        if (last) {
#if ARG
            out[to] = e % n;
#elif PAIRS
            out[to] = src[src_off + e];
#else
            out[to] = from_key(k);
#endif
        } else {
            keys_out[to] = k;
#if PAIRS
            ids_out[to] = e;
#endif
        }
    }
}
