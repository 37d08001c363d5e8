"""Host time of one kernel enqueue made with an event (pyopencl) and without one (the ICD
loader's ``clEnqueueNDRangeKernel`` through ctypes, a null event pointer), and of the whole
``a + b`` on two 10 x 10 device arrays with each. ``enqueue.eventless_vendors`` in
``clarray_gemm/kernels/tuned_constants.json`` lists the drivers where the second is cheaper.

    python benches/probes/eventless_enqueue.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.drivers import eventless
from clarray_gemm.kernels.programs import get_kernel


def host_us(queue: cl.CommandQueue, call, n: int = 3000) -> float:
    """Best of five rounds of ``n`` enqueues, host time per call (the queue drained between)."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            call()
        best = min(best, (time.perf_counter() - start) / n)
        queue.finish()
    return best * 1e6


def enqueues() -> None:
    device = cg.default_device()
    queue = device.queue
    kernel = cl.Kernel(get_kernel(device, "bench_noop.cl", "bench_noop").program, "bench_noop")
    scratch = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64)
    kernel.set_args(scratch)
    enqueue = eventless.kernel_enqueue()
    if enqueue is None:
        sys.exit("no ICD loader found in this process: every enqueue goes through pyopencl")
    gs, ls = eventless.sizes((64,)), eventless.sizes((64,))
    handle = kernel.int_ptr
    rows = [("pyopencl enqueue (an event)",
             lambda: cl.enqueue_nd_range_kernel(queue, kernel, (64,), (64,))),
            ("ctypes enqueue, no event",
             lambda: enqueue(queue.int_ptr, handle, 1, None, gs, ls, 0, None, None))]
    print(device)
    for name, call in rows:
        print(f"{name:32s} {host_us(queue, call):7.2f} us")


def whole_operator(flag: str) -> float:
    """``a + b`` host time per call in a child with ``CLARRAY_GEMM_EVENTLESS=flag``."""
    code = ("import time, numpy as np, clarray_gemm as cg\n"
            "a = cg.asarray(np.ones((10, 10), np.float32)); b = a + 1\n"
            "best = 1e9\n"
            "for _ in range(5):\n"
            "    s = time.perf_counter()\n"
            "    for _ in range(3000): a + b\n"
            "    best = min(best, (time.perf_counter() - s) / 3000); a.device.synchronize()\n"
            "print(best * 1e6)\n")
    env = dict(os.environ, CLARRAY_GEMM_EVENTLESS=flag, CLARRAY_GEMM_HOST_PATH="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.split()[-1])


if __name__ == "__main__":
    enqueues()
    for flag, name in (("0", "with events"), ("1", "without events")):
        print(f"a + b, 10 x 10 float32, {name:15s} {whole_operator(flag):7.2f} us host per call")
