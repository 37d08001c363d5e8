// One NumPy ufunc loop (or np.where / np.clip) over broadcast, strided operands.
//
//   out0[i] (, out1[i]) = op((CT) in0[i], (CT) in1[i], (CT) in2[i])   where mask[i] (if MASKED)
//
// for every multi-index i of the broadcast shape. Operands are addressed like opencl/copy.cl:
// element offset + sum_d i_d * stride_d over the NDIM innermost of 8 dimensions (stride 0
// broadcasts; NDIM is the layout class: 1 for contiguous or flat-broadcast operands, where the
// index is one multiply). The op itself is one function of opencl/ufunc_ops.h (-DOP=OP_<NAME>).
//
// Parameters:
//   IN0_T, IN1_T, IN2_T   operand element types (storage); unused operands repeat IN0_T
//   OUT0_T, OUT1_T        output element types (storage)
//   CT, RT, UT            loop input, loop output and unsigned compute types (ufunc_ops.h)
//   NIN, NOUT             operand counts (1-3, 1-2)
//   IN<k>_TO_BOOL         1: operand k is converted to the bool loop type by (x != 0)
//   OUT<k>_TO_BOOL        1: output k is stored as bool from a non-bool loop type
//   RES_BOOL              1: the loop's output type is bool (results normalised to 0/1)
//   IN<k>_HALF, OUT<k>_HALF  1: operand k is stored as float16 (its type ushort: the bits),
//                         loaded exactly into a float CT, stored rounded to nearest even
//   RES_HALF              1: the loop is NumPy's float16 one: computed in float (CT, RT
//                         float) and each result rounded to float16 once, as NumPy's are
//   COND_T                WHERE: the condition's storage type
//   MASKED                1: a `where=` mask (uchar) selects the elements written
//   NDIM                  merged dimensions (0-8)
//   IDX32                 1: fewer than 2^31 elements, index decomposition in 32 bits
//   FLAT_ST<k>            elementwise_flat only: input k's element stride, 0 or 1
//   PER_ITEM              elements per work-item, a work-group's
//                         local size apart (coalesced), all loaded before any is stored: a
//                         GPU needs several loads in flight per work-item to reach its memory
//                         bandwidth with one-input loops such as np.exp
#pragma OPENCL FP_CONTRACT OFF

#ifndef IN0_T
#define IN0_T float
#endif
#ifndef IN1_T
#define IN1_T IN0_T
#endif
#ifndef IN2_T
#define IN2_T IN0_T
#endif
#ifndef CT
#define CT float
#endif
#ifndef RT
#define RT CT
#endif
#ifndef UT
#define UT CT
#endif
#ifndef OUT0_T
#define OUT0_T RT
#endif
#ifndef OUT1_T
#define OUT1_T OUT0_T
#endif
#ifndef NIN
#define NIN 2
#endif
#ifndef NOUT
#define NOUT 1
#endif
#ifndef NDIM
#define NDIM 8
#endif
#ifndef IS_FLOAT
#define IS_FLOAT 1
#endif
#ifndef IS_SIGNED
#define IS_SIGNED 0
#endif
#ifndef IS_BOOL
#define IS_BOOL 0
#endif
#ifndef BITS
#define BITS 32
#endif
#ifndef RECIP_ZERO
#define RECIP_ZERO 0
#endif
#ifndef MASKED
#define MASKED 0
#endif
#ifndef IN0_HALF
#define IN0_HALF 0
#endif
#ifndef IN1_HALF
#define IN1_HALF 0
#endif
#ifndef IN2_HALF
#define IN2_HALF 0
#endif
#ifndef OUT0_HALF
#define OUT0_HALF 0
#endif
#ifndef OUT1_HALF
#define OUT1_HALF 0
#endif
#ifndef RES_HALF
#define RES_HALF 0
#endif
#ifndef OP
#define OP OP_ADD
#endif
#ifndef FLAT_ST0
#define FLAT_ST0 1
#endif
#ifndef FLAT_ST1
#define FLAT_ST1 1
#endif
#ifndef FLAT_ST2
#define FLAT_ST2 1
#endif
#ifndef PER_ITEM
#define PER_ITEM 1
#endif

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#include "ufunc_ops.h"

#include "half_bits.h"

// Conversions into the loop type and out of it are NumPy's casts (numpy_cast.h), bool ones
// `!= 0`.
#define NP_CAST_SRC IN0_T
#define NP_CAST_DST CT
#define NP_CAST_NAME load0
#include "numpy_cast.h"
#define NP_CAST_SRC IN1_T
#define NP_CAST_DST CT
#define NP_CAST_NAME load1
#include "numpy_cast.h"
#define NP_CAST_SRC IN2_T
#define NP_CAST_DST CT
#define NP_CAST_NAME load2
#include "numpy_cast.h"
#define NP_CAST_SRC RT
#define NP_CAST_DST OUT0_T
#define NP_CAST_NAME store0
#include "numpy_cast.h"
#define NP_CAST_SRC RT
#define NP_CAST_DST OUT1_T
#define NP_CAST_NAME store1
#include "numpy_cast.h"

#if OP == OP_WHERE
#define LOAD0(v) ((uchar)((v) != 0))
#elif IN0_HALF
#define LOAD0(v) ((CT)half_bits_to_float(v))
#elif IN0_TO_BOOL
#define LOAD0(v) ((CT)((v) != 0))
#else
#define LOAD0(v) load0(v)
#endif
#if IN1_HALF
#define LOAD1(v) ((CT)half_bits_to_float(v))
#elif IN1_TO_BOOL
#define LOAD1(v) ((CT)((v) != 0))
#else
#define LOAD1(v) load1(v)
#endif
#if IN2_HALF
#define LOAD2(v) ((CT)half_bits_to_float(v))
#elif IN2_TO_BOOL
#define LOAD2(v) ((CT)((v) != 0))
#else
#define LOAD2(v) load2(v)
#endif
#if RES_BOOL
#define RESULT(r) ((RT)((r) != 0))
#elif RES_HALF   // a float16 loop's result: rounded once, then cast on from there
#define RESULT(r) half_bits_to_float(half_bits_from_float(r))
#else
#define RESULT(r) (r)
#endif
#if OUT0_TO_BOOL
#define STORE0(r) ((OUT0_T)((r) != 0))
#elif OUT0_HALF
#define STORE0(r) HALF_BITS_FROM(RT)(r)
#else
#define STORE0(r) store0(r)
#endif
#if OUT1_TO_BOOL
#define STORE1(r) ((OUT1_T)((r) != 0))
#elif OUT1_HALF
#define STORE1(r) HALF_BITS_FROM(RT)(r)
#else
#define STORE1(r) store1(r)
#endif

// op on element (i0, i1, i2) of the inputs, stored at (o0, o1) of the outputs. Operands a loop
// does not have are never read or written. No `restrict` here: inlining a function with
// restrict parameters emits llvm.experimental.noalias.scope.decl, which Oclgrind rejects.
// op on the input values v0, v1, v2 (those the loop has), stored at (o0, o1) of the outputs.
inline void apply_values(const IN0_T v0, const IN1_T v1, const IN2_T v2,
                         __global OUT0_T* out0, const long o0, __global OUT1_T* out1,
                         const long o1)
{
#if NIN == 1
    const RT r = RESULT(op(LOAD0(v0)));
#elif NIN == 2 && NOUT == 2
    RT r1;
    const RT r = RESULT(op(LOAD0(v0), LOAD1(v1), &r1));
    out1[o1] = STORE1(RESULT(r1));
#elif NIN == 2
    const RT r = RESULT(op(LOAD0(v0), LOAD1(v1)));
#else
    const RT r = RESULT(op(LOAD0(v0), LOAD1(v1), LOAD2(v2)));
#endif
    out0[o0] = STORE0(r);
}

#if NIN > 1
#define READ1(i) in1[i]
#else
#define READ1(i) ((IN1_T)0)
#endif
#if NIN > 2
#define READ2(i) in2[i]
#else
#define READ2(i) ((IN2_T)0)
#endif

inline void apply_op(__global const IN0_T* in0, const long i0,
                     __global const IN1_T* in1, const long i1,
                     __global const IN2_T* in2, const long i2,
                     __global OUT0_T* out0, const long o0, __global OUT1_T* out1, const long o1)
{
    apply_values(in0[i0], READ1(i1), READ2(i2), out0, o0, out1, o1);
}

#define STRIDES(v) {v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7}
#include "flat_index.h"

// The operands' element offsets of multi-index number i of the broadcast shape.
inline void offsets_of(const long i, const long8 shape,
                       const long off0, const long8 st0, const long off1, const long8 st1,
                       const long off2, const long8 st2, const long ooff0, const long8 ost0,
                       const long ooff1, const long8 ost1, const long moff, const long8 mst,
                       long* i0, long* i1, long* i2, long* o0, long* o1, long* m)
{
    *i0 = off0; *i1 = off1; *i2 = off2; *o0 = ooff0; *o1 = ooff1; *m = moff;
#if NDIM == 1
    *i0 += i * st0.s7;
    *i1 += i * st1.s7;
    *i2 += i * st2.s7;
    *o0 += i * ost0.s7;
    *o1 += i * ost1.s7;
    *m += i * mst.s7;
#elif NDIM > 1
    const long shp[8] = STRIDES(shape);
    const long s0[8] = STRIDES(st0);
    const long s1[8] = STRIDES(st1);
    const long s2[8] = STRIDES(st2);
    const long so0[8] = STRIDES(ost0);
    const long so1[8] = STRIDES(ost1);
    const long sm[8] = STRIDES(mst);
    flat_index_t rem = (flat_index_t)i;
    for (int d = 7; d > 8 - NDIM; --d) {
        const long idx = next_index(&rem, shp[d]);
        *i0 += idx * s0[d];
        *i1 += idx * s1[d];
        *i2 += idx * s2[d];
        *o0 += idx * so0[d];
        *o1 += idx * so1[d];
        *m += idx * sm[d];
    }
    // the outermost dimension's index is what remains (an integer division costs tens of
    // instructions on a GPU: a 3-D broadcast was bound by them)
    const int d = 8 - NDIM;
    *i0 += rem * s0[d];
    *i1 += rem * s1[d];
    *i2 += rem * s2[d];
    *o0 += rem * so0[d];
    *o1 += rem * so1[d];
    *m += rem * sm[d];
#endif
}

#define OFFSET_ARGS shape, off0, st0, off1, st1, off2, st2, ooff0, ost0, ooff1, ost1, moff, mst

__kernel void elementwise(const long n, const long8 shape,
                          __global const IN0_T* restrict in0, const long off0, const long8 st0,
                          __global const IN1_T* restrict in1, const long off1, const long8 st1,
                          __global const IN2_T* restrict in2, const long off2, const long8 st2,
                          __global OUT0_T* out0, const long ooff0, const long8 ost0,
                          __global OUT1_T* out1, const long ooff1, const long8 ost1,
                          __global const uchar* restrict mask, const long moff, const long8 mst)
{
    long i0, i1, i2, o0, o1, m;
#if PER_ITEM > 1
    // as in elementwise_flat: PER_ITEM elements a local size apart, all loaded first
    const long step = get_local_size(0);
    const long first = get_group_id(0) * (PER_ITEM * step) + get_local_id(0);
    IN0_T v0[PER_ITEM];
    IN1_T v1[PER_ITEM];
    IN2_T v2[PER_ITEM];
    long at0[PER_ITEM], at1[PER_ITEM];
    uchar live[PER_ITEM];
    #pragma unroll
    for (int j = 0; j < PER_ITEM; ++j) {
        const long i = first + j * step;
        offsets_of(min(i, n - 1), OFFSET_ARGS, &i0, &i1, &i2, &o0, &o1, &m);
        v0[j] = in0[i0];
        v1[j] = READ1(i1);
        v2[j] = READ2(i2);
        at0[j] = o0;
        at1[j] = o1;
#if MASKED
        live[j] = i < n && mask[m];
#else
        live[j] = i < n;
#endif
    }
    #pragma unroll
    for (int j = 0; j < PER_ITEM; ++j)
        if (live[j])
            apply_values(v0[j], v1[j], v2[j], out0, at0[j], out1, at1[j]);
#else
    const long i = get_global_id(0);
    if (i >= n) return;
    offsets_of(i, OFFSET_ARGS, &i0, &i1, &i2, &o0, &o1, &m);
#if MASKED
    if (!mask[m]) return;
#endif
    apply_op(in0, i0, in1, i1, in2, i2, out0, o0, out1, o1);
#endif
}

// The flat layout class (at most one merged dimension, no mask, every element stride 0 or 1):
// element i of operand k is at its offset + i * FLAT_ST<k>, strides compiled in, so a call
// passes only the length, the buffers and their offsets (each kernel argument costs host time).
__kernel void elementwise_flat(const long n,
                               __global const IN0_T* restrict in0, const long off0
#if NIN > 1
                               , __global const IN1_T* restrict in1, const long off1
#endif
#if NIN > 2
                               , __global const IN2_T* restrict in2, const long off2
#endif
                               , __global OUT0_T* out0, const long ooff0
#if NOUT > 1
                               , __global OUT1_T* out1, const long ooff1
#endif
                               )
{
#if NIN < 2
    __global const IN1_T* in1 = (__global const IN1_T*)in0;
    const long off1 = 0;
#endif
#if NIN < 3
    __global const IN2_T* in2 = (__global const IN2_T*)in0;
    const long off2 = 0;
#endif
#if NOUT < 2
    __global OUT1_T* out1 = (__global OUT1_T*)out0;
    const long ooff1 = 0;
#endif
#if PER_ITEM > 1
    const long step = get_local_size(0);
    const long first = get_group_id(0) * (PER_ITEM * step) + get_local_id(0);
    IN0_T v0[PER_ITEM];
    IN1_T v1[PER_ITEM];
    IN2_T v2[PER_ITEM];
    #pragma unroll
    for (int j = 0; j < PER_ITEM; ++j) {
        const long i = min(first + j * step, n - 1);   // past n: a valid element, never stored
        v0[j] = in0[off0 + i * FLAT_ST0];
        v1[j] = READ1(off1 + i * FLAT_ST1);
        v2[j] = READ2(off2 + i * FLAT_ST2);
    }
    #pragma unroll
    for (int j = 0; j < PER_ITEM; ++j) {
        const long i = first + j * step;
        if (i < n)
            apply_values(v0[j], v1[j], v2[j], out0, ooff0 + i, out1, ooff1 + i);
    }
#else
    const long i = get_global_id(0);
    if (i >= n) return;
    apply_op(in0, off0 + i * FLAT_ST0, in1, off1 + i * FLAT_ST1, in2, off2 + i * FLAT_ST2,
             out0, ooff0 + i, out1, ooff1 + i);
#endif
}

// The transposed layout class on GPUs (NDIM 2 or 3: [batch,] rows, columns; see
// transpose_tile.h): inputs whose elements run along the rows against the outputs' order
// (TILED<k>) are staged through local memory. Strides are (batch, row, column, -) in elements.
#include "transpose_tile.h"
#ifndef TILED0
#define TILED0 0
#endif
#ifndef TILED1
#define TILED1 0
#endif
#ifndef TILED2
#define TILED2 0
#endif

__kernel __attribute__((reqd_work_group_size(TILE, TILE_ROWS, 1)))
void elementwise_tiled(const long rows, const long cols,
                       __global const IN0_T* restrict in0, const long off0, const long4 st0,
                       __global const IN1_T* restrict in1, const long off1, const long4 st1,
                       __global const IN2_T* restrict in2, const long off2, const long4 st2,
                       __global OUT0_T* out0, const long ooff0, const long4 ost0,
                       __global OUT1_T* out1, const long ooff1, const long4 ost1)
{
    const int lx = get_local_id(0), ly = get_local_id(1);
    const long c0 = get_group_id(0) * (long)TILE, r0 = get_group_id(1) * (long)TILE;
    const long batch = get_group_id(2);
    const long b0 = off0 + batch * st0.x, b1 = off1 + batch * st1.x, b2 = off2 + batch * st2.x;
#if TILED0
    __local IN0_T tile0[TILE][TILE + 1];
    STAGE_TILE(tile0, in0, b0, st0);
#endif
#if TILED1
    __local IN1_T tile1[TILE][TILE + 1];
    STAGE_TILE(tile1, in1, b1, st1);
#endif
#if TILED2
    __local IN2_T tile2[TILE][TILE + 1];
    STAGE_TILE(tile2, in2, b2, st2);
#endif
#if TILED0 || TILED1 || TILED2
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const long c = c0 + lx;
    IN0_T v0[TILE_STEPS];
    IN1_T v1[TILE_STEPS];
    IN2_T v2[TILE_STEPS];
    #pragma unroll
    for (int s = 0; s < TILE_STEPS; ++s) {  // all loads before any store (loads in flight)
        const int i = ly + s * TILE_ROWS;
        const long rr = r0 + i;
        // past the edge nothing is read: an in-place operation's element belongs to the
        // work-item that writes it
        const bool inside = rr < rows && c < cols;
#if TILED0
        v0[s] = tile0[lx][i];
#else
        v0[s] = inside ? in0[b0 + rr * st0.y + c * st0.z] : (IN0_T)0;
#endif
#if TILED1
        v1[s] = tile1[lx][i];
#else
        v1[s] = inside ? READ1(b1 + rr * st1.y + c * st1.z) : (IN1_T)0;
#endif
#if TILED2
        v2[s] = tile2[lx][i];
#else
        v2[s] = inside ? READ2(b2 + rr * st2.y + c * st2.z) : (IN2_T)0;
#endif
    }
    const long ob0 = ooff0 + batch * ost0.x, ob1 = ooff1 + batch * ost1.x;
    #pragma unroll
    for (int s = 0; s < TILE_STEPS; ++s) {
        const long r = r0 + ly + s * TILE_ROWS;
        if (r < rows && c < cols)
            apply_values(v0[s], v1[s], v2[s], out0, ob0 + r * ost0.y + c * ost0.z,
                         out1, ob1 + r * ost1.y + c * ost1.z);
    }
}
