// The copy-ring primitives of the tensor-core kernels (gemm_mma.cl, gemm_wgmma.cl, gemm_dmma.cl):
// cp.async groups committed per step and waited for by count. The includer defines MMA_PTX (1:
// NVIDIA inline PTX; 0: the emulation, whose copies are synchronous, so both are empty) and
// CP_ASYNC_LEFT, the committed groups a copy_wait leaves in flight (0 to 3; an expression such
// as STAGES - 2 is fine).
#ifndef CP_ASYNC_H
#define CP_ASYNC_H

#if MMA_PTX
// The shared-window address of a __local pointer (NVIDIA: __local pointers are shared-space
// addresses, so the integer value is what ldmatrix's and cp.async's [addr] expect).
#define SHARED_ADDR(p) ((uint)(size_t)(p))
// cp.async.wait_group takes an immediate: CP_ASYNC_LEFT as a literal.
#if CP_ASYNC_LEFT == 0
#define CP_ASYNC_LEFT_TEXT "0"
#elif CP_ASYNC_LEFT == 1
#define CP_ASYNC_LEFT_TEXT "1"
#elif CP_ASYNC_LEFT == 2
#define CP_ASYNC_LEFT_TEXT "2"
#elif CP_ASYNC_LEFT == 3
#define CP_ASYNC_LEFT_TEXT "3"
#else
#error "cp_async.h: CP_ASYNC_LEFT must be 0 to 3"
#endif
#endif

inline void copy_commit(void)
{
#if MMA_PTX
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Until at most CP_ASYNC_LEFT committed copy groups are in flight.
inline void copy_wait(void)
{
#if MMA_PTX
    asm volatile("cp.async.wait_group " CP_ASYNC_LEFT_TEXT ";" ::: "memory");
#endif
}

#endif
