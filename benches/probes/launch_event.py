"""What a launch's event costs: a no-op kernel (argument set once) enqueued through pyopencl
(which always asks the driver for an event and wraps it), and through the OpenCL C API by
ctypes with and without an event, on a queue without profiling, in interleaved rounds.

    python benches/probes/launch_event.py [--device NVIDIA] [--calls 250] [--rounds 8]
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import os

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.sources import source_text
from clock import median_us


def opencl_library() -> ctypes.CDLL:
    """The OpenCL loader pyopencl's extension module uses (its wheel bundles one)."""
    here = os.path.dirname(cl.__file__)
    found = sorted(glob.glob(os.path.join(here, ".libs", "libOpenCL*.so*"))
                   + glob.glob(os.path.join(os.path.dirname(here), "pyopencl.libs",
                                            "libOpenCL*.so*")))
    return ctypes.CDLL(found[0] if found else "libOpenCL.so.1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--calls", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    ctx = device.context
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, source_text("bench_noop.cl")).build().bench_noop
    scratch = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
    kernel.set_arg(0, scratch)
    lib = opencl_library()
    lib.clEnqueueNDRangeKernel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint,
                                           ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
    lib.clReleaseEvent.argtypes = [ctypes.c_void_p]
    q, k = ctypes.c_void_p(queue.int_ptr), ctypes.c_void_p(kernel.int_ptr)
    gsize = (ctypes.c_size_t * 1)(1)
    event = ctypes.c_void_p()

    def without_event() -> None:
        assert lib.clEnqueueNDRangeKernel(q, k, 1, None, gsize, None, 0, None, None) == 0

    def with_event() -> None:
        assert lib.clEnqueueNDRangeKernel(q, k, 1, None, gsize, None, 0, None,
                                          ctypes.byref(event)) == 0
        lib.clReleaseEvent(event)

    calls = {"pyopencl enqueue_nd_range_kernel": lambda: cl.enqueue_nd_range_kernel(
                 queue, kernel, (1,), None),
             "C API, with an event (released)": with_event,
             "C API, no event": without_event}
    results: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            results[name].append(median_us(call, args.calls))
            queue.finish()  # the queue never fills: a block, then a drain
    print(f"# {device}: one launch, median us, best of the interleaved rounds")
    for name, values in results.items():
        print(f"{min(values):7.1f}  {name}")


if __name__ == "__main__":
    main()
