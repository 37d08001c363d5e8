"""The attention program of benches/gpu_device_programs.py (4096 x 1024 float32) step by step
on our arrays and on CuPy's: wall clock per step in rounds of calls ended by one
synchronisation, so that the step where we lose shows.

    python benches/probes/attention_pieces.py [--tokens 4096] [--dim 1024]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import pipelined_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    import cupy as cp
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((args.tokens, args.dim)).astype(np.float32) for _ in range(3))
    scale = 1.0 / math.sqrt(args.dim)
    libs = {"ours": ([cg.asarray(a, device=device) for a in (q, k, v)], device.synchronize),
            "cupy": ([cp.asarray(a) for a in (q, k, v)], cp.cuda.runtime.deviceSynchronize)}
    rows = {}
    for lib, ((qq, kk, vv), sync) in libs.items():
        s0 = qq @ kk.T
        s = s0 * scale
        m = np.max(s, axis=-1, keepdims=True)
        e = np.exp(s - m)
        total = np.sum(e, axis=-1, keepdims=True)
        steps = [("q @ k.T", lambda: qq @ kk.T), ("* scale", lambda: s0 * scale),
                 ("max(axis=-1)", lambda: np.max(s, axis=-1, keepdims=True)),
                 ("s - max", lambda: s - m), ("exp", lambda: np.exp(s)),
                 ("sum(axis=-1)", lambda: np.sum(e, axis=-1, keepdims=True)),
                 ("w /= sum", lambda: np.divide(e, total, out=e)), ("w @ v", lambda: e @ vv)]
        for _ in range(2):  # the second pass is kept: the first one pays for fresh buffers
            for name, op in steps:
                rows.setdefault(name, {})[lib] = pipelined_seconds(op, sync,
                                                                   args.reps).seconds * 1e3
    print(f"{device}: attention {args.tokens}x{args.dim} step by step (ms; CuPy / ours)")
    for name, t in rows.items():
        print(f"  {name:14} ours {t['ours']:.3f}  cupy {t['cupy']:.3f}  {t['cupy'] / t['ours']:.2f}x")


if __name__ == "__main__":
    main()
