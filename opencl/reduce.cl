// Reductions (sum, prod, max, min, any, all, argmax, argmin) and scans (cumsum, cumprod) over
// strided operands, with NumPy's accumulator types and NaN rules.
//
// An input element is addressed by (o, r): o indexes the kept dimensions (NDIM_OUT merged
// dimensions, shape `oshape`, input strides `ostride`), r the reduced ones (NDIM_RED, `rshape`,
// `rstride`); strides are in elements, leading unused dimensions have extent 1.
//
// Kernels:
//   reduce       ROWS (output, chunk) slots per work-group, WG / ROWS lanes each: lanes stride
//                through the chunk of r, then a tree in local memory. With PARTIAL the group writes its partial result (and
//                index) to `out[o * groups + g]`; a second launch with FROM_PARTIALS reduces them.
//   reduce_cols  one work-item per (output, chunk), r in order: for kept dimensions that are
//                innermost in memory (axis=0 of a C array), where neighbouring work-items read
//                neighbours. PARTIAL / FROM_PARTIALS split it into two launches as for `reduce`
//                (partials laid out chunk-major: out[g * n_out + o]).
//   scan         one work-group per line of the scanned axis (the only reduced dimension): lanes
//                take consecutive chunks, a prefix over the chunk totals, then each lane rescans.
//
// Parameters:
//   IN_T, OUT_T  input / output element types; ACC the accumulator (NumPy's reduction dtype),
//                UACC its unsigned type for integers (sums and products wrap like NumPy's)
//   IN_HALF, OUT_HALF  1: the input / output is float16, held as its bits (its T ushort; ACC
//                float): read exactly, the result rounded once to nearest even, as NumPy's
//                float16 reductions accumulate in float
//   ROP          ROP_SUM, ROP_PROD, ROP_MAX, ROP_MIN, ROP_ANY, ROP_ALL, ROP_ARGMAX, ROP_ARGMIN
//   IDENTITY     the accumulator's start value (e.g. -INFINITY, LONG_MIN; +0.0 for float sums, as NumPy)
//   IS_FLOAT     ACC is a floating type (NaN rules); MEAN: divide the result by `count`
//   SQUARE_IN    sums of squares: each input element is squared (in ACC) as it is loaded
//   CENTRED      with SQUARE_IN: each element minus its output's centre before squaring, the
//                centres (ACC, one per output in the kept shape's C order) passed in idx_in's
//                place (unused by non-arg reductions): np.var / np.std in one reduction after
//                the mean, where subtracting, squaring and summing took three more launches
//   SQRT_OUT     the result's square root: with SQUARE_IN, np.linalg.norm in one reduction
//                (three launches, a multiply, a sum and a square root, cost a GPU ~3x the time)
//   WG           work-group size (a power of two); NDIM_OUT, NDIM_RED as above
//   PARTIAL, FROM_PARTIALS  the two launches of a split reduction (see above)
//   FINISH_LAST  `reduce` with PARTIAL and ROWS 1: a split reduction in one launch
//                (last_group.h). Each work-group writes its partial (OUT_T is then ACC) and
//                counts itself done in `counters[o]`; the last of an output's groups reduces
//                the partials into `final_out` (FINAL_T, float16 bits with FINAL_HALF) and sets
//                the counter back to zero.
//   LANE_ACCS    independent accumulators per lane in `reduce`, combined in index order
//   ROWS         `reduce`: outputs per work-group, WG / ROWS lanes each (short reduced axes:
//                one 32-lane work-group per output would leave most of a GPU's slots idle)
//   VEC_RED      `reduce` with one contiguous reduced dimension (NDIM_RED 1, its stride 1 at
//                run time): lanes load whole vectors of 4 elements where a chunk starts on a
//                multiple of 4 elements (16 or 32 bytes a load; four times the bytes in flight
//                per load, which scalar loads left argmax at ~68% of a GPU's copy bandwidth)
#pragma OPENCL FP_CONTRACT OFF

#define ROP_SUM 1
#define ROP_PROD 2
#define ROP_MAX 3
#define ROP_MIN 4
#define ROP_ANY 5
#define ROP_ALL 6
#define ROP_ARGMAX 7
#define ROP_ARGMIN 8

#ifndef IN_T
#define IN_T float
#endif
#ifndef ACC
#define ACC float
#endif
#ifndef UACC
#define UACC ACC
#endif
#ifndef OUT_T
#define OUT_T ACC
#endif
#ifndef ROP
#define ROP ROP_SUM
#endif
#ifndef IS_FLOAT
#define IS_FLOAT 1
#endif
#ifndef WG
#define WG 256
#endif
#ifndef NDIM_OUT
#define NDIM_OUT 8
#endif
#ifndef NDIM_RED
#define NDIM_RED 8
#endif
#ifndef IDENTITY
#define IDENTITY 0
#endif
#ifndef LANE_ACCS
#define LANE_ACCS 4
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef VEC_RED
#define VEC_RED 0
#endif
#include "last_group.h"
#ifndef FINAL_T
#define FINAL_T OUT_T
#endif
#if FINISH_LAST && (!PARTIAL || ROWS != 1)
#error "FINISH_LAST needs PARTIAL and ROWS 1"
#endif
#if VEC_RED && (FROM_PARTIALS || NDIM_RED != 1)
#error "VEC_RED needs one reduced dimension of the input itself (not the partials)"
#endif
#define VEC4_OF_(t) t##4
#define VEC4_OF(t) VEC4_OF_(t)  // expands IN_T first
#define IN_T4 VEC4_OF(IN_T)
#define LANES (WG / ROWS)
#if (LANES & (LANES - 1)) != 0 || LANES * ROWS != WG
#error "WG / ROWS must be a power of two (the lane tree halves it)"
#endif
#define IS_ARG (ROP == ROP_ARGMAX || ROP == ROP_ARGMIN)

#ifndef SQUARE_IN
#define SQUARE_IN 0
#endif
#ifndef SQRT_OUT
#define SQRT_OUT 0
#endif
#ifndef CENTRED
#define CENTRED 0
#endif

#ifndef IN_HALF
#define IN_HALF 0
#endif
#ifndef OUT_HALF
#define OUT_HALF 0
#endif
#include "half_bits.h"
// VAL(v): an input element's value; TO_OUT(x): a result as the output's element.
#if IN_HALF
#define VAL(v) half_bits_to_float(v)
#else
#define VAL(v) (v)
#endif
#if OUT_HALF
#define TO_OUT(x) half_bits_from_float((float)(x))
#else
#define TO_OUT(x) ((OUT_T)(x))
#endif
#ifndef FINAL_HALF
#define FINAL_HALF OUT_HALF
#endif
// TO_FINAL(x): a result as the element of the reduction's result (OUT_T but with FINISH_LAST)
#if FINAL_HALF
#define TO_FINAL(x) half_bits_from_float((float)(x))
#else
#define TO_FINAL(x) ((FINAL_T)(x))
#endif

#if ROP == ROP_ANY || ROP == ROP_ALL
#define LOAD(v) ((ACC)(VAL(v) != 0))
#elif SQUARE_IN && CENTRED
inline ACC squared(const ACC v) { return v * v; }
#define LOAD(v) squared((ACC)VAL(v) - centre_)
#elif SQUARE_IN
inline ACC squared(const ACC v) { return v * v; }
#define LOAD(v) squared((ACC)VAL(v))
#else
#define LOAD(v) ((ACC)VAL(v))
#endif

// Combining a (earlier) with b.
inline ACC combine(const ACC a, const ACC b)
{
#if ROP == ROP_SUM
    return (ACC)((UACC)a + (UACC)b);
#elif ROP == ROP_PROD
    return (ACC)((UACC)a * (UACC)b);
#elif ROP == ROP_MAX && IS_FLOAT
    return isnan(a) ? a : (isnan(b) ? b : (b > a ? b : a));
#elif ROP == ROP_MIN && IS_FLOAT
    return isnan(a) ? a : (isnan(b) ? b : (b < a ? b : a));
#elif ROP == ROP_MAX
    return b > a ? b : a;
#elif ROP == ROP_MIN
    return b < a ? b : a;
#elif ROP == ROP_ANY
    return a | b;
#elif ROP == ROP_ALL
    return a & b;
#else
    return a;  // arg reductions use better() below
#endif
}

// Arg reductions: whether (vb, ib) beats (va, ia). The first NaN wins, then the extreme value,
// then the lower index.
inline bool better(const ACC va, const long ia, const ACC vb, const long ib)
{
#if IS_FLOAT
    if (isnan(va)) return isnan(vb) && ib < ia;
    if (isnan(vb)) return true;
#endif
#if ROP == ROP_ARGMAX
    return vb > va || (vb == va && ib < ia);
#else
    return vb < va || (vb == va && ib < ia);
#endif
}

#include "strided_offset.h"

// One element v (input offset `at`, reduced index r) into an accumulator (acc, best).
#if IS_ARG && FROM_PARTIALS
#define ELEMENT_INDEX(at, r) idx_in[at]
#else
#define ELEMENT_INDEX(at, r) (r)
#endif
#if IS_ARG && !FROM_PARTIALS
// One accumulator sees its elements in increasing index order, so a later element wins only when
// strictly better: ties keep the earlier index, and a NaN, once held, is never replaced.
inline bool later_wins(const ACC held, const ACC v)
{
#if IS_FLOAT && ROP == ROP_ARGMAX
    return !(v <= held) && !isnan(held);  // v > held, or v is the first NaN
#elif IS_FLOAT
    return !(v >= held) && !isnan(held);
#elif ROP == ROP_ARGMAX
    return v > held;
#else
    return v < held;
#endif
}
#define ACCUMULATE(acc, best, v, at, r) do { \
        if ((best) < 0 || later_wins((acc), (v))) { (acc) = (v); (best) = (r); } \
    } while (0)
#elif IS_ARG
#define ACCUMULATE(acc, best, v, at, r) do { \
        const long ir_ = ELEMENT_INDEX(at, r); \
        if ((best) < 0 || better((acc), (best), (v), ir_)) { (acc) = (v); (best) = ir_; } \
    } while (0)
#else
#define ACCUMULATE(acc, best, v, at, r) ((acc) = combine((acc), (v)))
#endif

inline FINAL_T finish(const ACC v, const long count)
{
#if MEAN && SQRT_OUT
    return TO_FINAL(sqrt(v / (ACC)count));
#elif MEAN
    return TO_FINAL(v / (ACC)count);
#elif SQRT_OUT
    return TO_FINAL(sqrt(v));
#else
    return TO_FINAL(v);
#endif
}

// The tree over a work-group's ROWS rows of LANES lanes in local memory: lane 0 of each row
// ends with the row's result (and, for arg reductions, its index).
#if IS_ARG
#define TREE_STEP(vals, idxs, lid, step) do { \
        const long ib = idxs[lid + step]; \
        if (ib >= 0 && (idxs[lid] < 0 || better(vals[lid], idxs[lid], vals[lid + step], ib))) { \
            vals[lid] = vals[lid + step]; \
            idxs[lid] = ib; \
        } \
    } while (0)
#else
#define TREE_STEP(vals, idxs, lid, step) (vals[lid] = combine(vals[lid], vals[lid + step]))
#endif
#define LANE_TREE(vals, idxs, lid, lane) do { \
        barrier(CLK_LOCAL_MEM_FENCE); \
        for (int step = LANES / 2; step > 0; step >>= 1) { \
            if (lane < step) TREE_STEP(vals, idxs, lid, step); \
            barrier(CLK_LOCAL_MEM_FENCE); \
        } \
    } while (0)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(const long n_red, const long chunk, const long groups, const long count,
            const long8 oshape, const long8 ostride, const long8 rshape, const long8 rstride,
            __global const IN_T* restrict in, const long in_off,
            __global const long* restrict idx_in,
            __global OUT_T* restrict out, const long out_off, const long8 out_stride,
            __global long* restrict idx_out, const long n_slots
#if FINISH_LAST
            , __global FINAL_T* restrict final_out, __global volatile int* restrict counters
#endif
            )
{
    __local ACC vals[WG];
#if IS_ARG
    __local long idxs[WG];
#endif
    const long osh[8] = UNPACK8(oshape), ost[8] = UNPACK8(ostride), ust[8] = UNPACK8(out_stride);
    const long rsh[8] = UNPACK8(rshape), rst[8] = UNPACK8(rstride);
    const int lid = get_local_id(0);
    // LANES is a power of two: a mask and a shift, not a division and its remainder (LLVM
    // turns that pair into a `freeze`, which Oclgrind cannot run)
    const int lane = lid & (LANES - 1);
    const long slot = get_group_id(0) * ROWS + (long)((uint)lid / (uint)LANES);
    const bool live = slot < n_slots;  // the last work-group's spare rows read nothing
    const long o = slot / groups;
    const long g = slot - o * groups;
    const long base = in_off + offset_of(o, osh, ost, NDIM_OUT);
    const long begin = g * chunk;
    const long end = live ? min(begin + chunk, n_red) : begin;
#if CENTRED
    const ACC centre_ = live ? ((__global const ACC*)idx_in)[o] : (ACC)0;
#endif
    // LANE_ACCS independent accumulators per lane: one accumulator makes each load wait for
    // the previous combine (for max/argmax a chain of NaN tests), which left a large GPU at
    // 65-70% of its bandwidth. They are combined in index order before the tree.
    ACC accs[LANE_ACCS];
    long bests[LANE_ACCS];
    for (int u = 0; u < LANE_ACCS; ++u) {
        accs[u] = IDENTITY;
        bests[u] = -1;
    }
    long r = begin + lane;
#if VEC_RED
    // Whole vectors: accumulator u of a lane takes vectors lane + u*LANES, then every
    // LANE_ACCS*LANES-th after it, so each accumulator still sees its elements in index order;
    // the last (end - begin) % 4 elements are left to the scalar loops below.
    if (rst[7] == 1 && ((base + begin) & 3) == 0) {
        __global const IN_T4* vin = (__global const IN_T4*)(in + base + begin);
        const long nvec = (end - begin) >> 2;
        long q = lane;
        for (; q + (LANE_ACCS - 1) * LANES < nvec; q += LANE_ACCS * LANES) {
#pragma unroll
            for (int u = 0; u < LANE_ACCS; ++u) {
                const long qu = q + u * LANES, r0 = begin + 4 * qu;
                const IN_T4 x = vin[qu];
                ACCUMULATE(accs[u], bests[u], LOAD(x.s0), r0, r0);
                ACCUMULATE(accs[u], bests[u], LOAD(x.s1), r0 + 1, r0 + 1);
                ACCUMULATE(accs[u], bests[u], LOAD(x.s2), r0 + 2, r0 + 2);
                ACCUMULATE(accs[u], bests[u], LOAD(x.s3), r0 + 3, r0 + 3);
            }
        }
        for (int u = 0; q < nvec; q += LANES, ++u) {  // fewer than LANE_ACCS vectors left
            const long r0 = begin + 4 * q;
            const IN_T4 x = vin[q];
            ACCUMULATE(accs[u], bests[u], LOAD(x.s0), r0, r0);
            ACCUMULATE(accs[u], bests[u], LOAD(x.s1), r0 + 1, r0 + 1);
            ACCUMULATE(accs[u], bests[u], LOAD(x.s2), r0 + 2, r0 + 2);
            ACCUMULATE(accs[u], bests[u], LOAD(x.s3), r0 + 3, r0 + 3);
        }
        r = begin + 4 * nvec + lane;  // the scalar tail: after every vector of the chunk
    }
#endif
    for (; r + (LANE_ACCS - 1) * LANES < end; r += LANE_ACCS * LANES) {
#pragma unroll
        for (int u = 0; u < LANE_ACCS; ++u) {
            const long ru = r + u * LANES;
            const long at = base + offset_of(ru, rsh, rst, NDIM_RED);
            const ACC v = LOAD(in[at]);
            ACCUMULATE(accs[u], bests[u], v, at, ru);
        }
    }
    for (int u = 0; r < end; r += LANES, ++u) {  // the tail: fewer than LANE_ACCS elements
        const long at = base + offset_of(r, rsh, rst, NDIM_RED);
        const ACC v = LOAD(in[at]);
        ACCUMULATE(accs[u], bests[u], v, at, r);
    }
    ACC acc = accs[0];
    long best = bests[0];
    for (int u = 1; u < LANE_ACCS; ++u) {
#if IS_ARG
        if (bests[u] >= 0 && (best < 0 || better(acc, best, accs[u], bests[u]))) {
            acc = accs[u];
            best = bests[u];
        }
#else
        acc = combine(acc, accs[u]);
#endif
    }
    vals[lid] = acc;
#if IS_ARG
    idxs[lid] = best;
#endif
    LANE_TREE(vals, idxs, lid, lane);
    if (lane == 0 && live) {
#if PARTIAL
        out[slot] = TO_OUT(vals[lid]);
#if IS_ARG
        idx_out[slot] = idxs[lid];
#endif
#elif IS_ARG
        out[out_off + offset_of(o, osh, ust, NDIM_OUT)] = (OUT_T)idxs[lid];
#else
        out[out_off + offset_of(o, osh, ust, NDIM_OUT)] = finish(vals[lid], count);
#endif
    }
#if FINISH_LAST
    // (ROWS 1: the work-group is slot o * groups + g; every one is live)
    __local int last;
    LAST_GROUP_ARRIVE(counters + o, groups, last);
    if (last) {  // the same for every lane of the group
        // other groups' partials, read past any cache this compute unit holds
        __global volatile const ACC* parts = (__global volatile const ACC*)out + o * groups;
        ACC fin = IDENTITY;
        long fbest = -1;
        for (long q = lane; q < groups; q += LANES) {
            const ACC v = parts[q];
#if IS_ARG
            const long iq = ((__global volatile const long*)idx_out)[o * groups + q];
            if (iq >= 0 && (fbest < 0 || better(fin, fbest, v, iq))) {
                fin = v;
                fbest = iq;
            }
#else
            fin = combine(fin, v);
#endif
        }
        vals[lid] = fin;
#if IS_ARG
        idxs[lid] = fbest;
#endif
        LANE_TREE(vals, idxs, lid, lane);
        if (lid == 0) {
#if IS_ARG
            final_out[out_off + offset_of(o, osh, ust, NDIM_OUT)] = (FINAL_T)idxs[0];
#else
            final_out[out_off + offset_of(o, osh, ust, NDIM_OUT)] = finish(vals[0], count);
#endif
            counters[o] = 0;  // ready for the next launch
        }
    }
#endif
}

__kernel void reduce_cols(const long n_out, const long n_red, const long chunk, const long count,
                          const long8 oshape, const long8 ostride,
                          const long8 rshape, const long8 rstride,
                          __global const IN_T* restrict in, const long in_off,
                          __global const long* restrict idx_in,
                          __global OUT_T* restrict out, const long out_off, const long8 out_stride,
                          __global long* restrict idx_out)
{
    const long o = get_global_id(0);
    if (o >= n_out) return;
    const long g = get_global_id(1);
    const long osh[8] = UNPACK8(oshape), ost[8] = UNPACK8(ostride), ust[8] = UNPACK8(out_stride);
    const long rsh[8] = UNPACK8(rshape), rst[8] = UNPACK8(rstride);
    const long base = in_off + offset_of(o, osh, ost, NDIM_OUT);
    const long end = min((g + 1) * chunk, n_red);
#if CENTRED
    const ACC centre_ = ((__global const ACC*)idx_in)[o];
#endif
    ACC acc = IDENTITY;
    long best = -1;
    for (long r = g * chunk; r < end; ++r) {
        const long at = base + offset_of(r, rsh, rst, NDIM_RED);
        const ACC v = LOAD(in[at]);
#if IS_ARG
#if FROM_PARTIALS
        const long ir = idx_in[at];
#else
        const long ir = r;
#endif
        if (best < 0 || better(acc, best, v, ir)) {
            acc = v;
            best = ir;
        }
#else
        acc = combine(acc, v);
#endif
    }
#if PARTIAL
    out[g * n_out + o] = TO_OUT(acc);
#if IS_ARG
    idx_out[g * n_out + o] = best;
#endif
#else
    const long at = out_off + offset_of(o, osh, ust, NDIM_OUT);
#if IS_ARG
    out[at] = (OUT_T)best;
#else
    out[at] = finish(acc, count);
#endif
#endif
}

// Scans: r runs along one dimension (rshape.s7 = n_red, rstride.s7 its input stride,
// out_rstride its output stride).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan(const long n_red, const long8 oshape, const long8 ostride, const long rstride,
          __global const IN_T* restrict in, const long in_off,
          __global OUT_T* restrict out, const long out_off, const long8 out_stride,
          const long out_rstride)
{
    __local ACC totals[WG];
    const long osh[8] = UNPACK8(oshape), ost[8] = UNPACK8(ostride), ust[8] = UNPACK8(out_stride);
    const long o = get_group_id(0);
    const int lid = get_local_id(0);
    const long chunk = (n_red + WG - 1) / WG;
    const long begin = min(lid * chunk, n_red);
    const long end = min(begin + chunk, n_red);
    const long src = in_off + offset_of(o, osh, ost, NDIM_OUT);
    const long dst = out_off + offset_of(o, osh, ust, NDIM_OUT);
#if CENTRED   // (scans are never centred; the program of a centred reduction compiles it too)
    const ACC centre_ = (ACC)0;
#endif
    ACC acc = IDENTITY;
    for (long r = begin; r < end; ++r) acc = combine(acc, LOAD(in[src + r * rstride]));
    totals[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {  // exclusive prefix of the chunk totals, in order
        ACC running = IDENTITY;
        for (int l = 0; l < WG; ++l) {
            const ACC t = totals[l];
            totals[l] = running;
            running = combine(running, t);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    acc = totals[lid];
    for (long r = begin; r < end; ++r) {
        acc = (r == 0) ? LOAD(in[src]) : combine(acc, LOAD(in[src + r * rstride]));
        out[dst + r * out_rstride] = (OUT_T)acc;
    }
}
