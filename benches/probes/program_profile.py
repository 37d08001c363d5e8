"""Where one of the latency bench's programs spends its time on a device: OpenCL commands per
call (launches, copies, maps, finishes), wall time per call, and a cProfile of repeated calls.

    python benches/probes/program_profile.py "power iteration" [--device NVIDIA] [--calls 20]
"""
from __future__ import annotations

import argparse
import collections
import time

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.bench import programs
from clock import profile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program", help="a name of bench/programs.py's PROGRAMS")
    parser.add_argument("--device", default=None)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    prog = next(p for p in programs.PROGRAMS if p.name == args.program)
    inputs = programs.to_device(prog.inputs(np.random.default_rng(0)), device)

    def call():
        return programs.to_host(prog.fn(*inputs))

    call()
    counts: collections.Counter = collections.Counter()
    for name in ("enqueue_nd_range_kernel", "enqueue_copy", "enqueue_map_buffer",
                 "enqueue_fill_buffer"):
        real = getattr(cl, name)
        setattr(cl, name, (lambda real, name: lambda *a, **k: (counts.update([name]),
                                                                real(*a, **k))[1])(real, name))
    real_finish = cl.CommandQueue.finish
    cl.CommandQueue.finish = lambda q: (counts.update(["finish"]), real_finish(q))[1]
    call()
    print(f"# {prog.name} on {device}: OpenCL commands per call: {dict(counts)}")
    times = []
    for _ in range(args.calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    print(f"wall per call: median {np.median(times) * 1e3:.2f} ms")
    print(profile(call, args.calls, 18))


if __name__ == "__main__":
    main()
