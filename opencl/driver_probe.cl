// Driver probe: the language features the kernel catalogues rely on, in small kernels that a
// broken compiler back end fails on (vector fma/mad of every width, double, 64-bit integers,
// images). clarray_gemm.drivers.probe builds and runs them, in a child process, before a driver
// is used; the real catalogue kernels are built and run there too.
//
// Parameters: HAS_FP64 1 when the device has cl_khr_fp64, HAS_IMAGES 1 when it has images.
#ifndef HAS_FP64
#define HAS_FP64 0
#endif
#ifndef HAS_IMAGES
#define HAS_IMAGES 0
#endif
#if HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// out = fma(a, b, c) + mad(b, c, a), in vectors of N lanes.
#define VECTOR_FMA(TYPE, N)                                                                  \
    __kernel void fma_##TYPE##N(__global const TYPE* a, __global const TYPE* b,              \
                                __global const TYPE* c, __global TYPE* out) {                \
        size_t i = get_global_id(0);                                                         \
        TYPE##N x = vload##N(i, a), y = vload##N(i, b), z = vload##N(i, c);                  \
        vstore##N(fma(x, y, z) + mad(y, z, x), i, out);                                      \
    }

VECTOR_FMA(float, 4)
VECTOR_FMA(float, 8)
VECTOR_FMA(float, 16)
#if HAS_FP64
VECTOR_FMA(double, 4)
VECTOR_FMA(double, 8)
#endif

// 64-bit integer multiply, add, shift and xor, wrapping (out = a * b + ((a >> 3) ^ b)).
__kernel void int64_ops(__global const long* a, __global const long* b, __global long* out) {
    size_t i = get_global_id(0);
    long x = a[i], y = b[i];
    out[i] = (long)((ulong)x * (ulong)y + (ulong)((x >> 3) ^ y));
}

#if HAS_IMAGES
// out[y * width + x] = the red channel of pixel (x, y) of an RGBA float image.
__kernel void image_read(__read_only image2d_t img, __global float* out) {
    const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imagef(img, s, (int2)(x, y)).x;
}
#endif
