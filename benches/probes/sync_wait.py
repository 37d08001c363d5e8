"""How long the host waits for a finished launch on a GPU, by the way it waits: ``clFinish``,
``clWaitForEvents`` on the launch's event, or polling the event's status after a ``clFlush``
(the way CUDA's default spin-wait works), for a no-op kernel, for ``x @ x`` at each of
``--sizes`` (64^3 by default) and ``x + x`` 64^2 through the library; wall clock per call,
interleaved rounds, medians.

    python benches/probes/sync_wait.py [--device NVIDIA] [--calls 300] [--rounds 6] \
        [--sizes 64 100 128]
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


def per_call_us(call, calls: int) -> tuple[float, float]:
    """The mean of ``calls`` calls back to back, and the median of the same calls each timed
    on its own (the benches' way)."""
    clock = time.perf_counter
    each = []
    start = clock()
    for _ in range(calls):
        t0 = clock()
        call()
        each.append(clock() - t0)
    mean = (clock() - start) / calls
    return mean * 1e6, float(np.median(each)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64], help="x @ x sizes")
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
        "x + x 64^2, clFinish": lambda: (x + x, queue.finish()),
        "x + x 64^2, flush + poll a marker": lambda: (x + x, poll(queue,
                                                                  cl.enqueue_marker(queue))),
    }
    for n in args.sizes:
        m = cg.asarray(rng.standard_normal((n, n)).astype(np.float32), device=device)
        y = cg.asarray(rng.standard_normal((n, n)).astype(np.float32), device=device)
        cases.update({
            f"m @ y {n}^3 (two operands), clFinish": lambda m=m, y=y: (m @ y, queue.finish()),
            f"m @ m {n}^3, clFinish": lambda m=m: (m @ m, queue.finish()),
            f"m @ m {n}^3, clFinish after a flush": lambda m=m: (m @ m, queue.flush(),
                                                                 queue.finish()),
            f"m @ m {n}^3, flush + poll a marker": lambda m=m: (
                m @ m, poll(queue, cl.enqueue_marker(queue))),
            f"m @ m {n}^3, cg.synchronize()": lambda m=m: (m @ m, device.synchronize()),
            f"np.asarray(m @ m) {n}^3 (a blocking read)": lambda m=m: np.asarray(m @ m),
        })
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for call in cases.values():
        per_call_us(call, 20)
    for _ in range(args.rounds):
        for name, call in cases.items():
            times[name].append(per_call_us(call, args.calls))
    print(f"{device}: us per call, median of {args.rounds} rounds of {args.calls} calls: the "
          "round's mean, then the median of its calls timed one by one")
    for name, t in times.items():
        mean, each = np.median(np.array(t), axis=0)
        print(f"  {name:44} {mean:7.1f} {each:7.1f}")


if __name__ == "__main__":
    main()
