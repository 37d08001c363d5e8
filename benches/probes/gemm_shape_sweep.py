"""One product shape under several forced kernels and parameters on an NVIDIA GPU: wall clock
per call (queue drained) beside torch (cuBLAS, TF32 off), each configuration's error against
float64, and what the library picks by itself.

    python benches/probes/gemm_shape_sweep.py --shape 10000x8x8x8 \\
        --configs '{"kernel": "naive"}' '{"kernel": "gpu_blocked", "params": {"KSPLIT": 2}}'

A shape is ``BxMxKxN`` (a batch of B products; torch.bmm) or ``MxKxN``. ``--orient tn`` stores
A transposed (the operand is a contiguous K x M array's ``.T``), ``nt`` B, ``tt`` both.
``--registers`` rebuilds every program the run built with ``-cl-nv-verbose`` and prints each
kernel's registers and spills (NVIDIA), with the defines that differ between the builds.
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
    parser.add_argument("--registers", action="store_true")
    parser.add_argument("--uniform", action="store_true", help="operands from [0, 1), not N(0, 1)")
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
        draw = rng.random if args.uniform else rng.standard_normal
        a = draw(lead + (m, k)).astype(dtype)
        b = draw(lead + (k, n)).astype(dtype)
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
    if args.registers:
        print_registers(device)


def print_registers(device) -> None:
    """ptxas's register and spill lines for every program built so far."""
    import pyopencl as cl
    from clarray_gemm.kernels import programs
    keys = [k for k in programs.built_programs() if k[0] is device]
    shared = set.intersection(*(set(k[2]) for k in keys)) if keys else set()
    for key in keys:
        _, source, defines, options = key
        prog = cl.Program(device.context, programs.source_text(source)).build(
            options=programs._options(dict(defines), options) + ["-cl-nv-verbose"])
        log = prog.get_build_info(device.context.devices[0], cl.program_build_info.LOG)
        lines = [ln.strip() for ln in log.splitlines()
                 if "registers" in ln or "spill" in ln or "Compiling entry" in ln]
        print(f"{source} {sorted(set(defines) - shared)}: " + " | ".join(lines), flush=True)


if __name__ == "__main__":
    main()
