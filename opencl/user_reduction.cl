// A user's reduction (clarray_gemm.ReductionKernel, CuPy's signature): this template with its
// markers (a name between at-signs, below) replaced by clarray_gemm/ops/user_kernels.py:
// TYPEDEFS binds the type placeholders and `_type_reduce` (the accumulator's type), PREAMBLE is
// the user's preamble, PARAMS lists one parameter macro per input (as user_elementwise.cl's),
// LOADS one load per input, MAP the map expression (a value of the inputs), REDUCE the reduce
// expression of `a` and `b`, IDENTITY the identity, POST the post-map expression (`a` the
// reduced value, the output's name its element, `n` the number of elements it reduced),
// OUT_TYPE and OUT the output's type and name.
// A work-group reduces one output element, or a chunk of it (SPLIT: a second launch combines the
// chunks): its work-items walk the reduced elements (the operands' axes permuted so that the
// reduced ones are innermost), then a tree in local memory.
//
// Parameters:
//   NDIM   dimensions of the permuted shape (1 to 8)
//   WG     work-items a group (a power of two)
//   SPLIT  1: several work-groups a row, their partial results to a second pass
#include "strided_offset.h"
#ifndef NDIM
#define NDIM 1
#endif
#ifndef WG
#define WG 256
#endif
#ifndef SPLIT
#define SPLIT 0
#endif

#define IN_ARG(T, name) , __global const T* restrict name##__p, const long name##__o, \
    const long8 name##__s
#define SCALAR_ARG(T, name) , const T name
#define STRIDES_OF(name) const long name##__st[8] = UNPACK8(name##__s);
#define AT_S(name) (name##__o + offset_of(i, shp, name##__st, NDIM))
#define AT_C(name) (name##__o + i)

@TYPEDEFS@
@PREAMBLE@

inline _type_reduce user_reduce(const _type_reduce a, const _type_reduce b)
{
    return (@REDUCE@);
}

// Work-group (s, row) reduces the elements [s * chunk, (s + 1) * chunk) of its row: into the
// output (SPLIT 0: one group a row) or into partial[row * groups + s] for NAME_finish.
// The work-group's values combined by a tree in local memory: part[0] holds the result.
inline void user_combine(__local _type_reduce* part, const _type_reduce acc, const int lid)
{
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = WG / 2; h > 0; h >>= 1) {
        if (lid < h)
            part[lid] = user_reduce(part[lid], part[lid + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// The post-map expression: `a` the reduced value, the output's name its element, `n` the
// number of elements it reduced.
inline void user_post_map(const _type_reduce a, __global @OUT_TYPE@* out__p, const long at,
                          const long n)
{
#define @OUT@ (out__p[at])
    @POST@;
#undef @OUT@
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void @NAME@(const long rows, const long cols, const long chunk, const long8 shape @PARAMS@,
            __global @OUT_TYPE@* out__p, const long out__o, __global _type_reduce* partial)
{
    __local _type_reduce part[WG];
    const int lid = get_local_id(0);
    const long s = get_group_id(0), row = get_group_id(1);
    const long shp[8] = UNPACK8(shape);
    const long n = cols;   // the elements each output reduces
@STRIDES@
    _type_reduce acc = (_type_reduce)(@IDENTITY@);
    const long end = min(cols, (s + 1) * chunk);
    for (long c = s * chunk + lid; c < end; c += WG) {
        const long i = row * cols + c;
@LOADS@
        acc = user_reduce(acc, (_type_reduce)(@MAP@));
    }
    user_combine(part, acc, lid);
    if (lid == 0) {
#if SPLIT
        partial[row * get_num_groups(0) + s] = part[0];
#else
        user_post_map(part[0], out__p, out__o + row, n);
#endif
    }
}

// The second pass of a split reduction: a work-group a row over its groups' partials, then the
// post-map expression.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void @NAME@_finish(const long groups, __global const _type_reduce* restrict partial,
                   __global @OUT_TYPE@* out__p, const long out__o, const long cols)
{
    const long n = cols;
    __local _type_reduce part[WG];
    const int lid = get_local_id(0);
    const long row = get_group_id(0);
    _type_reduce acc = (_type_reduce)(@IDENTITY@);
    for (long g = lid; g < groups; g += WG)
        acc = user_reduce(acc, partial[row * groups + g]);
    user_combine(part, acc, lid);
    if (lid == 0) {
        user_post_map(part[0], out__p, out__o + row, n);
    }
}
