"""Whether a kernel built by NVIDIA's OpenCL compiler (PTX target sm_90) can run sm_90a
instructions: the instructions written as PTX comments marked "SM90A:", the PTX retargeted to
sm_90a and the marks removed, and the result loaded as a program binary."""
import re

import numpy as np
import pyopencl as cl

SRC = """
__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void k(__global float* x) {
    float v = x[get_global_id(0)];
    asm volatile("// SM90A: wgmma.fence.sync.aligned;\\n"
                 "// SM90A: { .reg .pred p; setp.ne.b32 p, %1, 0; @p add.f32 %0, %0, 1.0; }"
                 : "+f"(v) : "r"(1) : "memory");
    x[get_global_id(0)] = v + 1.0f;
}
"""
dev = [d for p in cl.get_platforms() for d in p.get_devices() if "NVIDIA" in p.name][0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, SRC).build()
ptx = prg.get_info(cl.program_info.BINARIES)[0].decode()
print([l for l in ptx.splitlines() if "SM90A" in l])
ptx2 = re.sub(r"//\s*SM90A:\s*", "", ptx).replace(".target sm_90,", ".target sm_90a,", 1)
print([l for l in ptx2.splitlines() if "wgmma" in l or "setp" in l or l.startswith(".target")])
p2 = cl.Program(ctx, [dev], [ptx2.encode()]).build()
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                hostbuf=np.zeros(256, np.float32))
p2.k(q, (256,), (128,), buf)
out = np.empty(256, np.float32)
cl.enqueue_copy(q, out, buf)
print("ran: expect 2.0 everywhere:", np.unique(out))
