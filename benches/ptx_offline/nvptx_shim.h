// Minimal OpenCL builtins for check_mma_ptx.sh (clang to PTX without libclc): only what
// gemm_mma.cl calls.
size_t __attribute__((overloadable)) get_local_id(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_tid_x() : d == 1 ? __nvvm_read_ptx_sreg_tid_y() : __nvvm_read_ptx_sreg_tid_z(); }
size_t __attribute__((overloadable)) get_group_id(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_ctaid_x() : d == 1 ? __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z(); }
void __attribute__((overloadable)) barrier(cl_mem_fence_flags f) { __nvvm_barrier_sync(0); }
uint __attribute__((overloadable)) min(uint a, uint b) { return a < b ? a : b; }
void __attribute__((overloadable)) vstore_half_rte(float v, size_t i, __global half* p) {
    ushort h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v)); ((__global ushort*)p)[i] = h; }
