// PTX wrappers of gemm_mma.cl (included under MMA_PTX=1, NVIDIA sm_80+): ldmatrix, 16-byte
// local loads and mma.sync for the including kernel's ELEM (1 float16, 2 bfloat16, 3 TF32) and
// local element type LT. SHARED_ADDR(p) is a __local pointer's shared-window address.
#ifndef MMA_PTX_H
#define MMA_PTX_H

inline void ldmatrix_x4(uint* r, __local const LT* p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SHARED_ADDR(p)));
}

inline void ldmatrix_x4_trans(uint* r, __local const LT* p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(SHARED_ADDR(p)));
}

// 16 bytes of local memory in one load (LLVM splits a plain uint4 load whose lanes are used
// apart, and cannot tell that swizzled addresses stay 16-byte aligned).
inline uint4 ld_shared_v4(__local const LT* p)
{
    uint x, y, z, w;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(SHARED_ADDR(p)));
    return (uint4)(x, y, z, w);
}

// The instruction for ELEM (1 float16, 2 bfloat16, else TF32); its operands are the same.
#if ELEM == 1
#define MMA_SYNC_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#elif ELEM == 2
#define MMA_SYNC_OP "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#else
#define MMA_SYNC_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
#endif

// Not volatile: a pure function of registers, which the compiler may schedule between the
// (volatile, memory-reading) ldmatrix loads.
inline void mma_sync(float* d, const uint* a, const uint* b)
{
    asm(MMA_SYNC_OP "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(d[0]), "f"(d[1]), "f"(d[2]), "f"(d[3]));
}

#endif
