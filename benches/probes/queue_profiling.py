"""What a queue with ``CL_QUEUE_PROFILING_ENABLE`` costs per command: a no-op launch (alone, and
with its finish), and a blocking 16 KiB read, on a profiling queue and on a plain one of the
same context, in interleaved rounds.

    python benches/probes/queue_profiling.py [--device NVIDIA] [--calls 3000]
"""
from __future__ import annotations

import argparse

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.sources import source_text
from clock import median_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    ctx = device.context
    kernel = cl.Program(ctx, source_text("bench_noop.cl")).build().bench_noop
    scratch = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
    kernel.set_arg(0, scratch)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
    buf, host = cl.Buffer(ctx, flags, 16384), np.empty(16384, np.uint8)
    queues = {"profiling": cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE),
              "plain": cl.CommandQueue(ctx)}
    rows: dict[str, dict[str, list[float]]] = {k: {} for k in queues}
    for _ in range(3):
        for name, q in queues.items():
            cells = {
                "launch": lambda: cl.enqueue_nd_range_kernel(q, kernel, (1,), None),
                "launch + finish": lambda: (cl.enqueue_nd_range_kernel(q, kernel, (1,), None),
                                            q.finish()),
                "blocking read 16 KiB": lambda: cl.enqueue_copy(q, host, buf, is_blocking=True),
            }
            for label, call in cells.items():
                rows[name].setdefault(label, []).append(median_us(call, args.calls))
                q.finish()
    print(f"# {device}: median us per call, best of 3 interleaved rounds")
    for name, cells in rows.items():
        print(f"{name:10s} " + "; ".join(f"{k} {min(v):.1f}" for k, v in cells.items()))


if __name__ == "__main__":
    main()
