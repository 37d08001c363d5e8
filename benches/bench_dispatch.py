"""Python work of a repeated small call, with the device's work taken out.

OpenCL's enqueue is replaced by a no-op, so what remains is this package's own cost per call:
the plan lookup, argument setting, allocation and result wrapping. Target: <= 20 us per call on a
2-core CI machine. Usage: ``python benches/bench_dispatch.py`` (any device; PoCL by default).
"""
from __future__ import annotations

import time

import numpy as np
import pyopencl as cl

import clarray_gemm as cg


def per_call_us(fn, calls: int = 3000, repeats: int = 5) -> float:
    """Best of ``repeats`` averages over ``calls`` calls, in microseconds."""
    for _ in range(50):
        fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def main() -> None:
    device = cg.default_device()
    a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    x = cg.asarray(a)
    rows = []
    with cg.host_path(False):
        x @ x, x + x, x + 1.0  # build the plans and programs with real launches
        cg.matmul(x, x, kernel="gpu_blocked")
        device.queue.finish()
        real = cl.enqueue_nd_range_kernel
        cl.enqueue_nd_range_kernel = lambda *args, **kwargs: None
        try:
            rows.append(("x @ x, 64^3 float32, kernel path", per_call_us(lambda: x @ x)))
            rows.append(("matmul(x, x, kernel='gpu_blocked'), 64^3 float32 (the GPU default)",
                         per_call_us(lambda: cg.matmul(x, x, kernel="gpu_blocked"))))
            rows.append(("x + x, 64^2 float32, kernel path", per_call_us(lambda: x + x)))
            rows.append(("x + 1.0, 64^2 float32, kernel path", per_call_us(lambda: x + 1.0)))
        finally:
            cl.enqueue_nd_range_kernel = real
    if device.info.host_unified_memory:
        with cg.host_path(True):
            small = cg.asarray(a[:16, :16])
            rows.append(("x @ x, 16^3 float32, host path (NumPy's time included)",
                         per_call_us(lambda: small @ small)))
            rows.append(("numpy a @ a, 16^3 (for reference)",
                         per_call_us(lambda: a[:16, :16] @ a[:16, :16])))
    print(f"device: {device!r}")
    print("| call (launches stubbed) | us per call |\n|---|---|")
    for name, us in rows:
        print(f"| {name} | {us:.1f} |")


if __name__ == "__main__":
    main()
