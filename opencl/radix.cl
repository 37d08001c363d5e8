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
//                  (A tile's count of a digit is then the next tile's prefix less its own.)
//   radix_scatter  tile g's elements to their places: the digits before d (the totals' prefix),
//                  the tiles before g (its count's prefix), then the elements before it in the
//                  tile, ranked in local memory in ITEMS rounds of WG elements (the round's
//                  work-items vote on bit masks, a mask a digit). Global size as radix_count.
// The first pass reads the source (T, converting its values to keys, indices 0, 1, ...); the
// last writes the result: the values (turned back from the keys; a float's zeros and NaNs,
// whose keys lose their bits, gathered from the source by index), or the indices in their rows
// (ARG, long). Integer sorts without ARG on one row carry no indices (PAIRS 0): the
// key turns back into the value.
//
// Parameters:
//   T        the source type (float, double, an integer type; float16 as its bits: HALF)
//   KB       bits of a key (8 * the element's size); KEY64 1 when KB is 64
//   IS_FLOAT 1: a float type (with HALF: float16 bits); SIGNED 1: a signed integer type
//   RB       bits of a digit (RADIX = 2^RB counters a work-item in local memory)
//   WG       work-items of a group (the host picks WG and ITEMS to fit local memory)
//   ITEMS    rounds of WG elements in a tile
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
#define ELEM(r) ((r) * WG + lid)
#define MASK ((KT)(RADIX - 1))
#define TILE (WG * ITEMS)
#define VOTE_WORDS ((WG + 31) / 32)
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

// The value of a key (to_key's inverse): exact for every integer, and for every float but the
// zeros and NaNs (keys SIGN_BIT and KEY_ALL, shared by -0.0 and 0.0, by every NaN's bits).
inline T from_key(const KT k)
{
#if HALF
    return (T)((k & 0x8000u) ? (k & 0x7FFFu) : (~k & 0xFFFFu));
#elif IS_FLOAT && KEY64
    return as_double((k & SIGN_BIT) ? (k & ~SIGN_BIT) : ~k);
#elif IS_FLOAT
    return as_float((k & SIGN_BIT) ? (k & ~SIGN_BIT) : ~k);
#elif SIGNED
    return (T)(k ^ SIGN_BIT);
#else
    return (T)k;
#endif
}

// Whether the value must come from the source: a float's zero or NaN (their keys lose the bits).
inline bool from_source(const KT k)
{
#if IS_FLOAT
    return k == SIGN_BIT || k == KEY_ALL;
#else
    return false;
#endif
}

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

// The scratch of a sort lives in one buffer of words: keys (KT) and indices of the two sides
// the passes alternate between, the counts and the totals, each part at an offset in words.
#define KEYS_AT(at) ((__global KT*)(work + (at)))
#define IDS_AT(at) ((__global int*)(work + (at)))

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void radix_count(const int total, const int n, const int shift, const int row_pass,
                 const int first, __global const T* restrict src, const long src_off,
                 __global uint* restrict work, const long keys_at, const long ids_at,
                 const long counts_at)
{
    __local int hist[RADIX];
    __global const KT* keys = KEYS_AT(keys_at);
    __global const int* ids = IDS_AT(ids_at);
    __global int* counts = IDS_AT(counts_at);
    const int lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    const int base = g * TILE, size = min(TILE, total - base);
    for (int d = lid; d < RADIX; d += WG)
        hist[d] = 0;
    uint dig[ITEMS];
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {   // every load in flight before the first count
        const int e = ELEM(r);
        if (e < size) {
            if (row_pass)
                dig[r] = digit_of(0, ids[base + e], shift, 1, n);
            else
                dig[r] = digit_of(first ? to_key(src[src_off + base + e]) : keys[base + e], 0,
                                  shift, 0, n);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int r = 0; r < ITEMS; ++r)
        if (ELEM(r) < size)
            atomic_inc(&hist[dig[r]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = lid; d < RADIX; d += WG)
        counts[d * groups + g] = hist[d];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void radix_scan(const int groups, __global uint* restrict work, const long counts_at,
                const long totals_at)
{
    __local int part[WG];
    const int lid = get_local_id(0), d = get_group_id(0);
    __global int* row = IDS_AT(counts_at) + (long)d * groups;
    int carry = 0;
    for (int at = 0; at < groups; at += 4 * WG) {   // blocks of 4 * WG counts, 4 a work-item
        const int j = at + 4 * lid;
        int c[4], sum = 0;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            c[k] = j + k < groups ? row[j + k] : 0;
            sum += c[k];
        }
        part[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = 1; off < WG; off <<= 1) {
            const int add = lid >= off ? part[lid - off] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            part[lid] += add;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        int run = carry + part[lid] - sum;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if (j + k < groups)
                row[j + k] = run;
            run += c[k];
        }
        carry += part[WG - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        IDS_AT(totals_at)[d] = carry;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void radix_scatter(const int total, const int n, const int shift, const int row_pass,
                   const int first, const int last, const int scanned,
                   __global const T* restrict src, const long src_off,
                   __global uint* restrict work, const long keys_in_at, const long ids_in_at,
                   const long keys_out_at, const long ids_out_at, const long counts_at,
                   const long totals_at, __global OUT_T* restrict out)
{
    __local uint voters[VOTE_WORDS * RADIX];   // [work-item word][digit]: a round's votes
    __local int next[RADIX];     // the digit's next place in the tile
    __local int prior[RADIX];    // (scanned 0) the digit's elements in the tiles before
    __local int offset[RADIX];   // the digit's place in the output less its place in the tile
    __local int part[WG];
    __local KT stage_k[TILE];
    __local int stage_i[PAIRS ? TILE : 1];
    __global const KT* keys_in = KEYS_AT(keys_in_at);
    __global const int* ids_in = IDS_AT(ids_in_at);
    __global KT* keys_out = KEYS_AT(keys_out_at);
    __global int* ids_out = IDS_AT(ids_out_at);
    __global const int* counts = IDS_AT(counts_at);
    const int lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    const int base = g * TILE, size = min(TILE, total - base);
    const int word = lid / 32;
    const uint bit = 1u << (lid % 32);

    for (int i = lid; i < RADIX * VOTE_WORDS; i += WG)
        voters[i] = 0u;
    for (int d = lid; d < RADIX; d += WG) {
        __global const int* row = counts + d * groups;
        if (scanned) {   // radix_scan's prefix sums: the tile's count is the next one's less its
            const int total_d = IDS_AT(totals_at)[d];
            next[d] = (g + 1 < groups ? row[g + 1] : total_d) - row[g];
            offset[d] = total_d;
        } else {         // radix_count's counts (few tiles): the prefix summed here
            int before = 0, all = 0;
            for (int t = 0; t < groups; ++t) {
                const int c = row[t];
                before += t < g ? c : 0;
                all += c;
            }
            next[d] = row[g];
            offset[d] = all;
            prior[d] = before;
        }
    }
    // The tile's elements, ITEMS a work-item (ELEM).
    KT key[ITEMS];
    int id[ITEMS];
    uint dig[ITEMS];
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const int e = ELEM(r);
        if (e < size) {
            key[r] = first ? to_key(src[src_off + base + e]) : keys_in[base + e];
#if PAIRS
            id[r] = first ? base + e : ids_in[base + e];
#else
            id[r] = 0;
#endif
            dig[r] = digit_of(key[r], id[r], shift, row_pass, n);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_digits(next, part);     // the digits' first places in the tile
    scan_digits(offset, part);   // the digits' first places in the output
    for (int d = lid; d < RADIX; d += WG)
        offset[d] += (scanned ? counts[d * groups + g] : prior[d]) - next[d];

    // Round by round, each element's place among its digit's: the digit's next place plus the
    // round's elements of that digit at lower work-items (votes in a bit mask a digit), so
    // equal digits keep their order.
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const bool valid = ELEM(r) < size;
        if (valid)
            atomic_or(&voters[word * RADIX + dig[r]], bit);
        barrier(CLK_LOCAL_MEM_FENCE);
        int rank = 0, votes = 0;
        if (valid) {
            __local const uint* v = voters + dig[r];
            for (int w = 0; w < VOTE_WORDS; ++w) {
                const int c = popcount(v[w * RADIX]);
                rank += w < word ? c : 0;
                votes += c;
            }
            rank += popcount(v[word * RADIX] & (bit - 1u));
            const int at = next[dig[r]] + rank;
            stage_k[at] = key[r];
#if PAIRS
            stage_i[at] = id[r];
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (valid && rank == 0) {   // the digit's first voter moves it on and clears the votes
            next[dig[r]] += votes;
            for (int w = 0; w < VOTE_WORDS; ++w)
                voters[w * RADIX + dig[r]] = 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }


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
            // the key's value, but for the zeros and NaNs: no gather from the source
            out[to] = from_source(k) ? src[src_off + e] : from_key(k);
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
