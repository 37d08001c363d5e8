// A fused function with reductions (clarray_gemm.fuse, ops/fused_rows.py): one work-group (or,
// ROW_PER_ITEM, one work-item) per output row of the reductions, over the operands' axes
// permuted so that the reduced ones are innermost (a row is `cols` elements,
// `i = row * cols + c` their flat index). The group walks
// its row once per reduction (each stage's map expression may use the earlier stages' results:
// softmax's `exp(x - max)` summed after the max), combines the work-items' values in local
// memory, then walks the row once more to write the elementwise outputs, and its first
// work-item writes the per-row outputs. The row's repeated reads come from the caches: memory
// is read about once and written once, where the function as written reads and writes a
// temporary per operator.
//
// This template's markers (a name between at-signs) are replaced by ops/fused_rows.py:
// COMBINERS one combine function and one GROUP_REDUCE per reduction, NAME the kernel's name,
// PARAMS one parameter macro per argument, LOCALS the groups' local arrays, STRIDES the
// strided operands' stride arrays, LOADS one load per array operand (values unused in a loop
// are dead code the compiler drops), STAGES the reductions, STORES the elementwise outputs,
// ROW_STORES the per-row outputs.
//
// Parameters:
//   NDIM          dimensions of the permuted shape (1 to 8; operands that are not two strides
//                 index through them)
//   WG            work-items a group (a power of two)
//   ROW_PER_ITEM  1: a work-item walks a whole row alone (no local memory, no barriers: CPU
//                 drivers vectorise across the group's rows); 0: a work-group a row
#include "strided_offset.h"
#ifndef NDIM
#define NDIM 1
#endif
#ifndef WG
#define WG 256
#endif
#ifndef ROW_PER_ITEM
#define ROW_PER_ITEM 0
#endif

// a row's elements as a work-item walks them, and a stage's result from its work-items' values
#if ROW_PER_ITEM
#define ROW_INDEX get_global_id(0)
#define FIRST_C 0
#define STEP_C 1
#define GROUP_RESULT(fn, part, acc) (acc)
#define WRITES_ROW true
#else
#define ROW_INDEX get_group_id(0)
#define FIRST_C lid
#define STEP_C WG
#define GROUP_RESULT(fn, part, acc) fn(part, acc, lid)
#define WRITES_ROW (lid == 0)
#endif

// an operand as a row stride and a column stride (ROWS_ARG), or strided through the permuted
// shape (IN_ARG / OUT_ARG: its long8 element strides); a per-row output; a scalar by value
#define ROWS_ARG(T, name) , __global const T* restrict name##__p, const long name##__o, \
    const long name##__rs, const long name##__cs
#define ROWS_OUT_ARG(T, name) , __global T* restrict name##__p, const long name##__o, \
    const long name##__rs, const long name##__cs
#define IN_ARG(T, name) , __global const T* restrict name##__p, const long name##__o, \
    const long8 name##__s
#define OUT_ARG(T, name) , __global T* restrict name##__p, const long name##__o, \
    const long8 name##__s
#define ROW_ARG(T, name) , __global T* restrict name##__p, const long name##__o
#define SCALAR_ARG(T, name) , const T name

#define AT_R(name) (name##__o + row * name##__rs + c * name##__cs)
#define AT_S(name) (name##__o + offset_of(i, shp, name##__st, NDIM))
#define STRIDES_OF(name) const long name##__st[8] = UNPACK8(name##__s);

// fn(part, acc, lid): the work-group's values combined by `combine` in a tree in local memory;
// every work-item gets the result (the closing barrier lets the next stage reuse `part`)
#define GROUP_REDUCE(T, fn, combine) \
inline T fn(__local T* part, const T acc, const int lid) \
{ \
    part[lid] = acc; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    for (int h = WG / 2; h > 0; h >>= 1) { \
        if (lid < h) \
            part[lid] = combine(part[lid], part[lid + h]); \
        barrier(CLK_LOCAL_MEM_FENCE); \
    } \
    const T result = part[0]; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    return result; \
}

@COMBINERS@

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void @NAME@(const long rows, const long cols, const long8 shape @PARAMS@)
{
@LOCALS@
    const int lid = get_local_id(0);
    const long row = ROW_INDEX;
#if ROW_PER_ITEM
    if (row >= rows)
        return;
#endif
    const long shp[8] = UNPACK8(shape);
@STRIDES@
@STAGES@
    for (long c = FIRST_C; c < cols; c += STEP_C) {
        const long i = row * cols + c;
@LOADS@
@STORES@
    }
    if (WRITES_ROW) {
@ROW_STORES@
    }
}
