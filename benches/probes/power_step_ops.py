"""Each operation of a power-iteration step (1024^2 float32) on a device: wall time with the
queue drained, the enqueue alone (calls back to back), and device time.

    python benches/probes/power_step_ops.py [--device NVIDIA] [--calls 300]

Device time switches the device to a profiling queue, so it is measured last.
"""
from __future__ import annotations

import argparse
import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import device_seconds
from clock import median_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    rng = np.random.default_rng(0)
    a = cg.asarray(rng.standard_normal((1024, 1024)).astype(np.float32), device=device)
    v = cg.asarray(np.ones(1024, np.float32), device=device)
    w = a @ v
    norm = np.linalg.norm(w)
    ops = {"a @ v": lambda: a @ v, "w * w": lambda: w * w, "np.sum(w)": lambda: np.sum(w),
           "np.sqrt(0-d)": lambda: np.sqrt(norm), "w / norm": lambda: w / norm,
           "np.linalg.norm(w)": lambda: np.linalg.norm(w),
           "step: w / norm(a @ v)": lambda: w / np.linalg.norm(a @ v)}
    rows = {}
    for label, op in ops.items():
        drained = median_us(op, args.calls, sync=device.synchronize)
        enqueued = median_us(op, args.calls)
        device.synchronize()
        rows[label] = (drained, enqueued)
    print(f"# {device}: µs per call")
    print("| op | wall, queue drained | enqueue only | device |")
    print("|---|---|---|---|")
    for label, op in ops.items():
        device_us = device_seconds(device, op, reps=20).seconds * 1e6
        print(f"| {label} | {rows[label][0]:.1f} | {rows[label][1]:.1f} | {device_us:.1f} |")
    print(cg.explain_matmul(a, v))


if __name__ == "__main__":
    main()
