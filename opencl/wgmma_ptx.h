// wgmma.mma_async wrappers of gemm_wgmma.cl (included under MMA_PTX=1, NVIDIA sm_90a): one
// warpgroup-wide m64nNkK product per call (K: 16 for 16-bit operands, 8 for TF32), A and B read
// from shared memory through descriptors, float32 accumulators in d[0 .. N/2 - 1] (the
// instruction names one register per accumulator: the lists below, 32 at a time). Every line is
// marked SM90A (see clarray_gemm/drivers/build.py: the compiler's PTX targets sm_90, the marks
// become instructions in its sm_90a rebuild). The includer defines WG_TYPE (f16, bf16 or tf32),
// WG_K (k16 or k8), WG_TRANS (the transpose immediates ", tnsp-a, tnsp-b" of 16-bit operands;
// empty for TF32, which has none) and SM90A.
#ifndef WGMMA_PTX_H
#define WGMMA_PTX_H

// Accumulators d[i .. i + 31] as read-write operands, and their operand names %i .. %i+31.
#define WG_D8(i) "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), \
                 "+f"(d[(i) + 4]), "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define WG_D32(i) WG_D8(i), WG_D8((i) + 8), WG_D8((i) + 16), WG_D8((i) + 24)
#define WG_R0_31 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_R32_63 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_R64_95 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define WG_R96_127 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, " \
    "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, " \
    "%120, %121, %122, %123, %124, %125, %126, %127"

inline void wgmma_n64(float* d, const ulong desc_a, const ulong desc_b)
{
    asm volatile(SM90A "{\n" SM90A ".reg .pred p;\n" SM90A "setp.ne.b32 p, %34, 0;\n"
                 SM90A "wgmma.mma_async.sync.aligned.m64n64" WG_K ".f32." WG_TYPE "." WG_TYPE " {"
                 WG_R0_31 "}, %32, %33, p, 1, 1" WG_TRANS ";\n" SM90A "}\n"
                 : WG_D32(0)
                 : "l"(desc_a), "l"(desc_b), "r"(1));
}

inline void wgmma_n128(float* d, const ulong desc_a, const ulong desc_b)
{
    asm volatile(SM90A "{\n" SM90A ".reg .pred p;\n" SM90A "setp.ne.b32 p, %66, 0;\n"
                 SM90A "wgmma.mma_async.sync.aligned.m64n128" WG_K ".f32." WG_TYPE "." WG_TYPE " {"
                 WG_R0_31 ", " WG_R32_63 "}, %64, %65, p, 1, 1" WG_TRANS ";\n" SM90A "}\n"
                 : WG_D32(0), WG_D32(32)
                 : "l"(desc_a), "l"(desc_b), "r"(1));
}

inline void wgmma_n256(float* d, const ulong desc_a, const ulong desc_b)
{
    asm volatile(SM90A "{\n" SM90A ".reg .pred p;\n" SM90A "setp.ne.b32 p, %130, 0;\n"
                 SM90A "wgmma.mma_async.sync.aligned.m64n256" WG_K ".f32." WG_TYPE "." WG_TYPE " {"
                 WG_R0_31 ", " WG_R32_63 ", " WG_R64_95 ", " WG_R96_127
                 "}, %128, %129, p, 1, 1" WG_TRANS ";\n" SM90A "}\n"
                 : WG_D32(0), WG_D32(32), WG_D32(64), WG_D32(96)
                 : "l"(desc_a), "l"(desc_b), "r"(1));
}

#endif
