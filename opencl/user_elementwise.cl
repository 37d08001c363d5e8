// A user's elementwise kernel (clarray_gemm.ElementwiseKernel, CuPy's signature): this template
// with its markers (a name between at-signs, below) replaced by clarray_gemm/ops/user_kernels.py:
// TYPEDEFS binds the type placeholders (typedef float T;), PREAMBLE is the user's preamble,
// PARAMS lists one parameter macro per argument, LOADS one load or reference per argument,
// OPERATION is the user's code, STORES writes back the outputs held in locals (bool ones),
// UNDEFS drops the reference macros. In the operation, `i` is the element's index (C order over
// the broadcast shape) and `n` the number of elements; an input names its element's value, an
// output its element (a reference: it can be read and written), a raw argument a pointer to
// the array's first element.
//
// Parameters:
//   NDIM   dimensions of the broadcast shape (1 to 8; strided operands index through them)
#include "strided_offset.h"
#ifndef NDIM
#define NDIM 1
#endif

// kernel parameters: an operand's buffer, its element offset and its element strides (long8,
// innermost last)
#define IN_ARG(T, name) , __global const T* restrict name##__p, const long name##__o, \
    const long8 name##__s
#define OUT_ARG(T, name) , __global T* name##__p, const long name##__o, const long8 name##__s
#define RAW_ARG(T, name) , __global T* name##__p, const long name##__o
#define SCALAR_ARG(T, name) , const T name

// the element's offset in an operand: contiguous over the broadcast shape, or strided
#define AT_C(name) (name##__o + i)
#define AT_S(name) (name##__o + offset_of(i, shp, name##__st, NDIM))
#define STRIDES_OF(name) const long name##__st[8] = UNPACK8(name##__s);

@TYPEDEFS@
@PREAMBLE@

__kernel void @NAME@(const long n, const long8 shape @PARAMS@)
{
    const long i = get_global_id(0);
    if (i >= n)
        return;
    const long shp[8] = UNPACK8(shape);
@LOADS@
    {
@OPERATION@
    ;
    }
@STORES@
}
@UNDEFS@
