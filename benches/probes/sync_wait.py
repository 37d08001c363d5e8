"""How long the host waits for a finished launch on a GPU, by the way it waits: ``clFinish``,
``clWaitForEvents`` on the launch's event, or polling the event's status after a ``clFlush``
(the way CUDA's default spin-wait works), for a no-op kernel and for ``x @ y`` 64^3 and
``x + y`` 64^2 through the library; wall clock per call, interleaved rounds, medians.

    python benches/probes/sync_wait.py [--device NVIDIA] [--calls 300] [--rounds 6]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pyopencl as cl

import clarray_gemm as cg

COMPLETE = cl.command_execution_status.COMPLETE


def poll(queue: cl.CommandQueue, event: cl.Event) -> None:
    """Flush, then spin until ``event`` has completed."""
    queue.flush()
    while event.command_execution_status != COMPLETE:
        pass


def per_call_us(call, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    queue = device.queue
    program = cl.Program(device.context, "__kernel void noop(__global float* x) {}").build()
    noop = program.noop
    buf = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64)
    noop.set_args(buf)
    rng = np.random.default_rng(0)
    x = cg.asarray(rng.standard_normal((64, 64)).astype(np.float32), device=device)
    launch = lambda: cl.enqueue_nd_range_kernel(queue, noop, (64,), (64,))  # noqa: E731
    cases = {
        "no-op, clFinish": lambda: (launch(), queue.finish()),
        "no-op, clWaitForEvents": lambda: launch().wait(),
        "no-op, flush + poll the event": lambda: poll(queue, launch()),
        "x @ x 64^3, clFinish": lambda: (x @ x, queue.finish()),
        "x @ x 64^3, flush + poll a marker": lambda: (x @ x, poll(queue,
                                                                   cl.enqueue_marker(queue))),
        "x + x 64^2, clFinish": lambda: (x + x, queue.finish()),
        "x + x 64^2, flush + poll a marker": lambda: (x + x, poll(queue,
                                                                  cl.enqueue_marker(queue))),
        "np.asarray(x @ x) (a blocking map)": lambda: np.asarray(x @ x),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for call in cases.values():
        per_call_us(call, 20)
    for _ in range(args.rounds):
        for name, call in cases.items():
            times[name].append(per_call_us(call, args.calls))
    print(f"{device}: us per call (median of {args.rounds} rounds of {args.calls})")
    for name, t in times.items():
        print(f"  {name:40} {np.median(t):7.1f}")


if __name__ == "__main__":
    main()
