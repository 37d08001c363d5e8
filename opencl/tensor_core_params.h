// The parameters the tensor-core GEMM kernels (gemm_mma.cl, gemm_wgmma.cl, gemm_dmma.cl) share,
// with their defaults; each kernel lists its own tiling parameters. Meanings are in each kernel's
// header comment: MMA_PTX (inline PTX, or the same tiling in plain OpenCL C), VEC_A / VEC_B
// (16-byte global loads), GROUP_M (tile-rows walked together), and for the 16-bit and TF32
// kernels ELEM (the element kind), VEC_C (paired C stores) and SIMULATOR (Oclgrind).
#ifndef TENSOR_CORE_PARAMS_H
#define TENSOR_CORE_PARAMS_H
#ifndef MMA_PTX
#define MMA_PTX 0
#endif
#ifndef VEC_A
#define VEC_A 0
#endif
#ifndef VEC_B
#define VEC_B 0
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef ELEM
#define ELEM 1
#endif
#ifndef VEC_C
#define VEC_C 0
#endif
#ifndef SIMULATOR
#define SIMULATOR 0
#endif
#endif
