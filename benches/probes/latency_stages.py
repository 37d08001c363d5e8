"""Where the time of two latency rows goes on a GPU: ``x + y`` (64^2) and ``np.asarray(x @ y)``
(64^3), float32, device operands. Each stage is timed alone (median of many calls), beside the
raw pyopencl calls it stands on, and each row is profiled with cProfile.

    python benches/probes/latency_stages.py [--device NVIDIA] [--calls 2000]
"""
from __future__ import annotations

import argparse

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.bench.raw_opencl import RawOpenCL
from clarray_gemm.memory import Storage
from clock import median_us, profile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    queue, n = device.queue, args.calls
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    raw = RawOpenCL(device)
    host = np.empty(a.nbytes, np.uint8)
    finished = x @ y
    queue.finish()
    print(f"# {device}: stage medians (us), {n} calls each")
    rows = [
        ("raw: no-op launch + finish", raw.launch_finish),
        ("raw: blocking read 16 KiB", lambda: cl.enqueue_copy(queue, host, raw.buffer(a.nbytes),
                                                            is_blocking=True)),
        ("raw: blocking map 16 KiB", lambda: raw.map_read(a.nbytes)),
        ("queue.finish() (idle)", queue.finish),
        ("Storage(device, 16 KiB)", lambda: Storage(device, a.nbytes)),
        ("x + y (no finish)", lambda: x + y),
        ("x + y; finish", lambda: (x + y, queue.finish())),
        ("x @ y (no finish)", lambda: x @ y),
        ("x @ y; finish", lambda: (x @ y, queue.finish())),
        ("np.asarray(z), z finished, read again each call", lambda: np.asarray(finished)),
        ("np.asarray(x @ y)", lambda: np.asarray(x @ y)),
    ]
    fresh = [x @ y for _ in range(n + 20)]
    queue.finish()
    rows.insert(-1, ("np.asarray(z), z finished, first read", lambda: np.asarray(fresh.pop())))
    for label, call in rows:
        print(f"{median_us(call, n):9.1f}  {label}")
    print("\n## cProfile: x + y; finish")
    print(profile(lambda: (x + y, queue.finish()), n))
    print("## cProfile: np.asarray(x @ y)")
    print(profile(lambda: np.asarray(x @ y), n))


if __name__ == "__main__":
    main()
