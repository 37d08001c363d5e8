"""Where the wall clock of one ``a @ b`` call on device arrays goes beside its device time: the
median per call (queue drained), the kernel's device time, and a cProfile of the calls.

    python benches/probes/matmul_call_profile.py --case "1x8192x8192" --case "8192x8192x1" \
        [--dtype uint8]

A case ``MxKxN`` with M == 1 (or N == 1) uses a 1-D left (right) operand; integer operands hold
small random values (0..4).
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import device_seconds
from clock import median_us, profile
from small_gemm import random_operand


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", required=True)
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    device = cg.get_device(args.device)
    rng = np.random.default_rng(0)
    for case in args.case:
        m, k, n = (int(d) for d in case.split("x"))
        a = random_operand(rng, (k,) if m == 1 else (m, k), args.dtype)
        b = random_operand(rng, (k,) if n == 1 else (k, n), args.dtype)
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        print(f"## {case} {args.dtype}: {cg.explain_matmul(x, y).splitlines()[1]}")
        wall = median_us(lambda: x @ y, args.calls, sync=device.synchronize)
        dev = device_seconds(device, lambda: x @ y, reps=10).seconds * 1e6
        print(f"wall {wall:.1f} us, device {dev:.1f} us")
        print(profile(lambda: (x @ y, device.synchronize()), args.calls, 12))


if __name__ == "__main__":
    main()
