// 16-bit operands read as they are and computed in float (included before scalar_types.h):
//   IO16 1  float16 operands and result: read with vload_half, the result rounded once with
//           vstore_half_rte (no cl_khr_fp16 needed), as the tensor-core kernels round theirs
//   IO16 2  bfloat16 operands (their 16 bits are a float's high half), a float32 result, as
//           NumPy's bfloat16 products give
//   IO16 0  (default) operands and result of type T
// IN16 / OUT16: the operands' and the result's element types in memory; LOAD16(p): the element
// at p as a float; STORE16(p, v): v stored at p. Pointers are ushort for both 16-bit forms
// (arithmetic on half pointers needs cl_khr_fp16).
#ifndef IO16
#define IO16 0
#endif
#if IO16
#define T float
#define ACC float
#define IN16 ushort
#endif
#if IO16 == 1
#define OUT16 ushort
#define LOAD16(p) vload_half(0, (__global const half*)(p))
#define STORE16(p, value) vstore_half_rte((value), 0, (__global half*)(p))
#elif IO16 == 2
#define OUT16 float
#define LOAD16(p) as_float((uint)*(p) << 16)
#define STORE16(p, value) (*(p) = (value))
#endif
