"""Whether the buffers' placement changes what a small kernel costs on a GPU: every buffer the
library allocates is ``READ_WRITE | ALLOC_HOST_PTR`` (ours, ``--flags host``) or plain
``READ_WRITE`` (the driver places it, ``--flags plain``). Printed per case: the wall clock per
call (queue drained, median) and, on a profiling queue, the launches' own START->END (median).
The raw no-op launch of ``opencl/bench_noop.cl`` is timed on a buffer of either kind in both
runs.

    python benches/probes/buffer_placement.py --flags plain --sizes 64 100 256 1024 --gemv 4096
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.memory import buffers
from clarray_gemm.sources import source_text
from clock import median_us
from kernel_events import kernel_us, record_launches
from small_gemm import product_operands

FLAGS = {"host": cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR,
         "plain": cl.mem_flags.READ_WRITE}


def raw_noop(device: cg.Device, flags: int, calls: int) -> tuple[float, float]:
    """The no-op kernel on a 64-byte buffer of ``flags``: launch + finish wall (µs) on the
    device's queue, and START->END (µs) on a profiling queue of its own."""
    program = cl.Program(device.context, source_text("bench_noop.cl")).build()
    kernel = program.bench_noop
    scratch = cl.Buffer(device.context, flags, 64)
    kernel.set_arg(0, scratch)

    def launch():
        cl.enqueue_nd_range_kernel(device.queue, kernel, (1,), None)
        device.queue.finish()
    wall = median_us(launch, calls)
    queue = cl.CommandQueue(device.context,
                            properties=cl.command_queue_properties.PROFILING_ENABLE)
    spans = []
    for _ in range(calls):
        event = cl.enqueue_nd_range_kernel(queue, kernel, (1,), None)
        event.wait()
        spans.append((event.profile.end - event.profile.start) * 1e-3)
    del scratch
    return wall, statistics.median(spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--flags", choices=sorted(FLAGS), default="host")
    parser.add_argument("--sizes", type=int, nargs="*", default=[64, 100, 256, 1024])
    parser.add_argument("--gemv", type=int, nargs="*", default=[4096])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    buffers._FLAGS = FLAGS[args.flags]
    device = cg.get_device(args.device)
    print(f"# {device}: library buffers {args.flags!r}; wall = median per call, queue drained; "
          f"kernels = START->END summed per call, median")
    for name, flags in FLAGS.items():
        wall, span = raw_noop(device, flags, args.calls)
        print(f"raw no-op on a {name} buffer: wall {wall:6.2f} us, START->END {span:6.2f} us")
    rng = np.random.default_rng(0)
    cases = []
    for n in args.sizes:
        _, _, x, y, _ = product_operands(rng, (n, n), device)
        cases.append((f"x @ y {n}^3", lambda x=x, y=y: x @ y))
    for n in args.gemv:
        _, _, x, _, _ = product_operands(rng, (n, n), device)
        v = cg.asarray(rng.standard_normal(n).astype(np.float32), device=device)
        cases.append((f"x @ v {n}^2", lambda x=x, v=v: x @ v))
    walls = [median_us(call, args.calls, sync=device.synchronize) for _, call in cases]
    device.enable_profiling()
    with record_launches():
        for (text, call), wall in zip(cases, walls):
            us, launches = kernel_us(call, device, args.calls)
            print(f"{text:16} wall {wall:8.2f} us, kernels {us:8.2f} us in {launches} launch(es)",
                  flush=True)


if __name__ == "__main__":
    main()
