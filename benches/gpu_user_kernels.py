"""Users' kernels against CuPy's, NVIDIA: the per-call wall clock of an ElementwiseKernel and a
RawKernel at 64^2, ReductionKernel (an L2 norm) at 64^2, over the rows of 4096^2 and over 2^24
values, each against the same kernel in CuPy (CUDA C); and `fuse`d GELU (tanh form) and
`a * x + b * y - c` at 2^26 float32 against the same functions unfused and `cupy.fuse`d; the
same run.

    python3 benches/gpu_user_kernels.py
"""
import time

import cupy
import numpy as np

import clarray_gemm as cg


def per_call_us(f, sync, reps=2000):
    for _ in range(50):
        f()
        sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        sync()
        times.append(time.perf_counter() - start)
    return np.median(times) * 1e6


def main() -> None:
    a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    x, y, cx, cy = cg.asarray(a), cg.asarray(a), cupy.asarray(a), cupy.asarray(a)
    sync, csync = x.device.synchronize, cupy.cuda.runtime.deviceSynchronize
    rows = []
    ours = cg.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", "mad")
    theirs = cupy.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", "mad")
    rows.append(("ElementwiseKernel 64^2", per_call_us(lambda: ours(x, y), sync),
                 per_call_us(lambda: theirs(cx, cy), csync)))
    n = a.size
    raw = cg.RawKernel("__kernel void scale(__global float* y, const float s, const int n) "
                       "{ int i = get_global_id(0); if (i < n) y[i] *= s; }", "scale")
    craw = cupy.RawKernel(r'extern "C" __global__ void scale(float* y, const float s, '
                          r'const int n) { int i = blockDim.x * blockIdx.x + threadIdx.x; '
                          r'if (i < n) y[i] *= s; }', "scale")
    rows.append(("RawKernel 64^2", per_call_us(
        lambda: raw((n,), (256,), (x, np.float32(1.0), np.int32(n))), sync),
        per_call_us(lambda: craw((n // 256,), (256,), (cx, np.float32(1.0), np.int32(n))),
                    csync)))
    ours_r = cg.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
    theirs_r = cupy.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
    for shape, axis in (((64, 64), None), ((4096, 4096), 1), ((1 << 24,), None)):
        h = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        gx, hx = cg.asarray(h), cupy.asarray(h)
        rows.append((f"ReductionKernel {shape} axis={axis}",
                     per_call_us(lambda: ours_r(gx, axis=axis), sync, 200),
                     per_call_us(lambda: theirs_r(hx, axis=axis), csync, 200)))
    def gelu_of(xp):   # cupy.fuse traces cupy's ufuncs, ours NumPy's
        def gelu(v):
            return 0.5 * v * (1 + xp.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
        return gelu

    def combine(p, q, r, s, t):
        return p * q + r * s - t
    big = [np.random.default_rng(k).standard_normal(1 << 26).astype(np.float32) for k in (2, 3, 4)]
    g, h, c = (cg.asarray(v) for v in big)
    cgg, ch, cc = (cupy.asarray(v) for v in big)
    for name, func, cupy_func, ours_args, cupy_args in (
            ("gelu", gelu_of(np), gelu_of(cupy), (g,), (cgg,)),
            ("a * x + b * y - c", combine, combine, (2.0, g, 3.0, h, c),
             (2.0, cgg, 3.0, ch, cc))):
        fused, cupy_fused = cg.fuse(func), cupy.fuse(cupy_func)
        unfused_us = per_call_us(lambda: func(*ours_args), sync, 50)
        rows.append((f"fuse {name} 2^26 (unfused: {unfused_us:.0f} us)",
                     per_call_us(lambda: fused(*ours_args), sync, 50),
                     per_call_us(lambda: cupy_fused(*cupy_args), csync, 50)))
    print("| kernel | ours us | CuPy us | ratio (CuPy / ours) |\n|---|---|---|---|")
    for name, o, c in rows:
        print(f"| {name} | {o:.1f} | {c:.1f} | {c / o:.2f}x |")


if __name__ == "__main__":
    main()
