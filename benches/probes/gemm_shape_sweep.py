"""One product shape under several forced kernels and parameters on an NVIDIA GPU: wall clock
per call (queue drained) beside torch (cuBLAS, TF32 off), each configuration's error against
float64, and what the library picks by itself.

    python benches/probes/gemm_shape_sweep.py --shape 10000x8x8x8 \\
        --configs '{"kernel": "naive"}' '{"kernel": "gpu_blocked", "params": {"KSPLIT": 2}}'

A shape is ``BxMxKxN`` (a batch of B products; torch.bmm) or ``MxKxN``. ``--orient tn`` stores
A transposed (the operand is a contiguous K x M array's ``.T``), ``nt`` B, ``tt`` both.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import clarray_gemm as cg
from clock import median_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", required=True, help="BxMxKxN or MxKxN")
    parser.add_argument("--configs", nargs="*", default=[], help="JSON: kernel and params")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--orient", default="nn", choices=["nn", "tn", "nt", "tt"])
    args = parser.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    dtype = np.dtype(args.dtype)
    for shape in args.shape:
        dims = [int(d) for d in shape.split("x")]
        batch, (m, k, n) = (dims[0], dims[1:]) if len(dims) == 4 else (None, dims)
        lead = () if batch is None else (batch,)
        a = rng.standard_normal(lead + (m, k)).astype(dtype)
        b = rng.standard_normal(lead + (k, n)).astype(dtype)
        x, y = (cg.asarray(np.ascontiguousarray(v.swapaxes(-1, -2)), device=device).swapaxes(-1, -2)
                if t == "t" else cg.asarray(v, device=device) for v, t in zip((a, b), args.orient))
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
        peer = median_us(lambda: ta @ tb, args.calls, sync=torch.cuda.synchronize)
        print(f"{shape} {dtype} {args.orient}: torch {peer:.1f} us", flush=True)
        picked = cg.explain_matmul(x, y).splitlines()
        print("  default picks: " + " | ".join(line for line in picked if "kernel:" in line
                                                 or "parameters:" in line), flush=True)
        for text in ["{}"] + args.configs:
            config = json.loads(text)
            kernel, params = config.get("kernel"), config.get("params")
            try:
                got = np.asarray(cg.matmul(x, y, kernel=kernel, params=params))
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                us = median_us(lambda: cg.matmul(x, y, kernel=kernel, params=params), args.calls,
                               sync=device.synchronize)
            except Exception as exc:  # noqa: BLE001  (a sweep reports every configuration)
                print(f"  {config or 'default'}: {type(exc).__name__}: {str(exc)[:200]}",
                      flush=True)
                continue
            print(f"  {config or 'default'}: {us:.1f} us, {peer / us:.3f}x torch, "
                  f"error {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
