// A user's reduction (clarray_gemm.ReductionKernel, CuPy's signature): this template with its
// markers (a name between at-signs, below) replaced by clarray_gemm/ops/user_kernels.py:
// TYPEDEFS binds the type placeholders and `_type_reduce` (the accumulator's type), PREAMBLE is
// the user's preamble, PARAMS lists one parameter macro per input (as user_elementwise.cl's),
// LOADS one load per input, MAP the map expression (a value of the inputs), REDUCE the reduce
// expression of `a` and `b`, IDENTITY the identity, POST the post-map expression (`a` the
// reduced value, the output's name its element), OUT_TYPE and OUT the output's type and name.
// A work-group reduces one output element: its work-items walk the reduced elements (the
// operands' axes permuted so that the reduced ones are innermost), then a tree in local memory.
//
// Parameters:
//   NDIM   dimensions of the permuted shape (1 to 8)
//   WG     work-items a group (a power of two)
#include "strided_offset.h"
#ifndef NDIM
#define NDIM 1
#endif
#ifndef WG
#define WG 256
#endif

#define IN_ARG(T, name) , __global const T* restrict name##__p, const long name##__o, \
    const long8 name##__s
#define SCALAR_ARG(T, name) , const T name
#define STRIDES_OF(name) const long name##__st[8] = UNPACK8(name##__s);
#define AT_S(name) (name##__o + offset_of(i, shp, name##__st, NDIM))

@TYPEDEFS@
@PREAMBLE@

inline _type_reduce user_reduce(const _type_reduce a, const _type_reduce b)
{
    return (@REDUCE@);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void @NAME@(const long rows, const long cols, const long8 shape @PARAMS@,
            __global @OUT_TYPE@* out__p, const long out__o)
{
    __local _type_reduce part[WG];
    const int lid = get_local_id(0);
    const long row = get_group_id(0);
    const long shp[8] = UNPACK8(shape);
    const long n = rows * cols;
@STRIDES@
    _type_reduce acc = (_type_reduce)(@IDENTITY@);
    for (long c = lid; c < cols; c += WG) {
        const long i = row * cols + c;
@LOADS@
        acc = user_reduce(acc, (_type_reduce)(@MAP@));
    }
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            part[lid] = user_reduce(part[lid], part[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        const _type_reduce a = part[0];
#define @OUT@ (out__p[out__o + row])
        @POST@;
#undef @OUT@
    }
}
