"""Elementwise, reduction, scan and indexing functions on the default device against NumPy:
ratio NumPy time / our time per function and size, on the same data (the target on PoCL: never
below 0.8).

    python benches/bench_device_funcs.py [--sizes 10 16 20] [--no-host-path]

Times: median of 7 rounds of R calls, each round ended by ``queue.finish()``, NumPy and ours
measured in turn three times and the fastest median of each kept (one measurement of a
64-call round swings 2-4x on a shared 2-core machine); results are device arrays, NumPy's are
ndarrays. ``--no-host-path`` forces the kernels (``cg.host_path(False)``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import clarray_gemm as cg  # noqa: E402
from clarray_gemm.bench.timing import pipelined_seconds  # noqa: E402

CASES = {
    "x + y": lambda x, y: x + y,
    "np.exp(x)": lambda x, y: np.exp(x),
    "np.where(x > 0, x, y)": lambda x, y: np.where(x > 0, x, y),
    "x ** 2": lambda x, y: x ** 2,
    "np.sum(x)": lambda x, y: np.sum(x),
    "x.max(axis=-1, keepdims=True)": lambda x, y: x.max(axis=-1, keepdims=True),
    "np.argmin(x, axis=1)": lambda x, y: np.argmin(x, axis=1),
    "np.mean(x, axis=0)": lambda x, y: np.mean(x, axis=0),
    "np.cumsum(x, axis=1)": lambda x, y: np.cumsum(x, axis=1),
    "np.concatenate([x, y])": lambda x, y: np.concatenate([x, y]),
    "x[x > 0]": lambda x, y: x[x > 0],
}


def timed(fn, sync, reps: int) -> float:
    """Median seconds per call: 7 rounds of ``reps`` calls, each ended by ``sync``."""
    return pipelined_seconds(fn, sync, reps, rounds=7).seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 16, 20],
                        help="log2 of the element counts (arrays of 2^(s/2) x 2^(s/2))")
    parser.add_argument("--no-host-path", action="store_true")
    args = parser.parse_args()
    device = cg.default_device()
    sync = device.synchronize
    print(f"device: {device}; host path {'off' if args.no_host_path else 'on'}\n")
    print("| function | " + " | ".join(f"2^{s}" for s in args.sizes) + " |")
    print("|---|" + "---:|" * len(args.sizes))
    rng = np.random.default_rng(0)
    with cg.host_path(not args.no_host_path):
        for label, fn in CASES.items():
            ratios = []
            for s in args.sizes:
                shape = (1 << (s // 2), 1 << (s - s // 2))
                a = rng.standard_normal(shape).astype(np.float32)
                b = rng.standard_normal(shape).astype(np.float32)
                x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
                reps = max(3, min(200, (1 << 22) >> s))
                t_numpy = t_ours = float("inf")
                for _ in range(3):
                    t_numpy = min(t_numpy, timed(lambda: fn(a, b), lambda: None, reps))
                    t_ours = min(t_ours, timed(lambda: fn(x, y), sync, reps))
                ratios.append(t_numpy / t_ours)
            print(f"| {label} | " + " | ".join(f"{r:.2f}" for r in ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
