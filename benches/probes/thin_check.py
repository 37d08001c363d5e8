"""Skinny products on a GPU: the default choice, the ``thin`` kernel forced (default and a few
parameter sets) and torch/CuPy, wall clock per call with the queue drained, in one run.

    python benches/probes/thin_check.py [--dtypes float64 float32 float16 bfloat16]
"""
from __future__ import annotations

import argparse
import re

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.peers import CudaPeers
from clarray_gemm.bench.timing import per_call_seconds
from clarray_gemm.dtypes import bfloat16_dtype

SHAPES = [(10, 4097, 4097), (33, 4097, 4097), (4097, 7, 4097), (4097, 33, 4097),
          (7, 10, 4097), (256, 10, 4097), (1024, 7, 4097), (7, 1024, 4097), (127, 4097, 1024),
          (4097, 1, 4097), (1, 127, 4097), (4097, 4097, 10), (512, 10, 128), (128, 10, 512)]
VARIANTS = [{}, {"JB": 12}, {"JB": 20}, {"KSPLIT": 32}, {"KSPLIT": 4}, {"WG": 256}]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32", "float16", "bfloat16"])
    ap.add_argument("--budget", type=float, default=0.05)
    ap.add_argument("--shapes", nargs="+", metavar="MxNxK", help="instead of the list above")
    args = ap.parse_args()
    device = cg.default_device()
    peers = CudaPeers.on(device)
    rng = np.random.default_rng(0)
    print(f"{device.name} | {device.info.platform}")
    for name in args.dtypes:
        dt = bfloat16_dtype() if name == "bfloat16" else np.dtype(name)
        print(f"\n{name}: M x N x K | peer us | default us (kernel) | thin variants us")
        shapes = [tuple(map(int, s.split("x"))) for s in args.shapes] if args.shapes else SHAPES
        for M, N, K in shapes:
            a = rng.uniform(-1, 1, (M, K)).astype(dt)
            b = rng.uniform(-1, 1, (K, N)).astype(dt)
            x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
            sync = device.queue.finish
            times = peers.matmul_times(a, b, args.budget) if peers else []
            peer = min((t for _, t in times), default=float("nan"))
            found = re.search(r"kernel: (\w+)", cg.explain_matmul(x, y))
            kernel = found.group(1) if found else "host"
            default = per_call_seconds(lambda: (x @ y, sync()), args.budget)
            row = []
            for params in VARIANTS:
                try:
                    t = per_call_seconds(lambda: (cg.matmul(x, y, kernel="thin", params=params),
                                                  sync()), args.budget)
                    row.append(f"{t * 1e6:.1f}")
                except ValueError:
                    row.append("-")
            print(f"{M}x{N}x{K} | {peer * 1e6:.1f} | {default * 1e6:.1f} ({kernel}) | "
                  + " ".join(row), flush=True)


if __name__ == "__main__":
    main()
