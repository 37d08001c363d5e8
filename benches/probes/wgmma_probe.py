"""The wgmma kernel on an NVIDIA Hopper GPU, one configuration per process (a faulting build or
launch cannot take the others down): its build log (registers, spills, ptxas warnings), its
results against float64 products for every operand orientation at odd sizes, and its wall
clock at the given sizes beside torch (cuBLAS) and the mma kernel.

    python benches/probes/wgmma_probe.py --params '{"BM": 128, ...}' [--dtype float16|bfloat16|tf32]
        [--sizes 4096 8192] [--peers]
"""
from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.drivers.build import retarget_sm90a
from clarray_gemm.dtypes import bfloat16_dtype
from clarray_gemm.kernels import gemm_wgmma
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem
from clarray_gemm.sources import source_text
from clock import median_us


PRECISION = None   # "tf32" with --dtype tf32


def build_log(device, params: dict, dtype, ptx_path: str = "") -> str:
    """ptxas's lines for the kernel built with these parameters (row-major operands)."""
    op = GemmOperand(buffer=None, offset=0, ld=256, batch_stride=0)
    problem = GemmProblem(batch=1, M=256, N=256, K=256, dtype=np.dtype(dtype), a=op, b=op, c=op,
                          precision=PRECISION or "highest")
    if PRECISION == "tf32":   # the problem the kernel runs: A and B packed K-major
        problem = gemm_wgmma.tf32_packed(problem)[0]
    d = gemm_wgmma.defines_for(device, problem, dict(gemm_wgmma.WGMMA.defaults, **params))
    prg = cl.Program(device.context, source_text("gemm_wgmma.cl"))
    opts = [f"-D{k}={v}" for k, v in sorted(d.items())]
    t0 = time.perf_counter()
    try:
        prg.build(options=opts)
        if ptx_path:
            with open(ptx_path, "wb") as f:
                f.write(prg.get_info(cl.program_info.BINARIES)[0])
        prg = retarget_sm90a(device.context, prg, ["-cl-nv-verbose"])
    except Exception as exc:  # noqa: BLE001  (the log is the point)
        return f"BUILD FAILED {type(exc).__name__}: {str(exc)[-3000:]}"
    text = prg.get_build_info(device.cl_device, cl.program_build_info.LOG)
    keep = [ln.strip() for ln in text.splitlines()
            if any(w in ln for w in ("registers", "spill", "smem", "arning", "wgmma"))]
    return f"built in {time.perf_counter() - t0:.1f} s: " + " | ".join(keep)


def check(device, params: dict, dtype) -> float:
    """The worst relative Frobenius error over orientations and odd sizes."""
    rng = np.random.default_rng(1)
    worst = 0.0
    for (M, K, N), (ta, tb) in itertools.product(
            [(33, 70, 65), (257, 129, 300), (1, 17, 200), (128, 64, 128)],
            [(0, 0), (1, 0), (0, 1), (1, 1)]):
        a = rng.standard_normal((K, M) if ta else (M, K)).astype(dtype)
        b = rng.standard_normal((N, K) if tb else (K, N)).astype(dtype)
        ref = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        z = cg.matmul(x.T if ta else x, y.T if tb else y, kernel="wgmma", params=params,
                      precision=PRECISION)
        err = float(np.linalg.norm(np.asarray(z).astype(np.float64) - ref) / np.linalg.norm(ref))
        if err > 1e-2:
            print(f"  WRONG {M}x{K}x{N} trans {ta}{tb}: {err:.2e}", flush=True)
        worst = max(worst, err)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="{}")
    parser.add_argument("--dtype", default="float16")
    parser.add_argument("--sizes", type=int, nargs="*", default=[])
    parser.add_argument("--peers", action="store_true", help="time torch and mma too")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--ptx", default="", help="write the sm_90 PTX of the build here")
    parser.add_argument("--check", type=int, default=1, help="0: skip the correctness pass")
    parser.add_argument("--a-colmajor", action="store_true", help="time with A column-major")
    parser.add_argument("--b-colmajor", action="store_true", help="time with B column-major")
    args = parser.parse_args()
    device = cg.get_device("NVIDIA")
    global PRECISION
    if args.dtype == "tf32":   # float32 operands, the TF32 opt-in
        dtype, PRECISION = np.dtype(np.float32), "tf32"
    else:
        dtype = bfloat16_dtype() if args.dtype == "bfloat16" else np.dtype(args.dtype)
    params = json.loads(args.params)
    print(f"## wgmma {params} {args.dtype}", flush=True)
    print("  " + build_log(device, params, dtype, args.ptx), flush=True)
    if args.check:
        print(f"  worst error {check(device, params, dtype):.2e}", flush=True)
    rng = np.random.default_rng(0)
    for n in args.sizes:
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        x = (cg.asarray(np.ascontiguousarray(a.T), device=device).T if args.a_colmajor
             else cg.asarray(a, device=device))
        y = (cg.asarray(np.ascontiguousarray(b.T), device=device).T if args.b_colmajor
             else cg.asarray(b, device=device))
        flop = 2.0 * n ** 3
        rows = {"wgmma": lambda: cg.matmul(x, y, kernel="wgmma", params=params,
                                           precision=PRECISION)}
        if args.peers:
            rows["mma"] = lambda: cg.matmul(x, y, kernel="mma", precision=PRECISION)
            rows["default"] = lambda: cg.matmul(x, y, precision=PRECISION)
        for name, call in rows.items():
            us = median_us(call, args.calls, sync=device.synchronize)
            print(f"  {n}^3 {name}: {us / 1e3:.3f} ms ({flop / us / 1e6:.0f} TF/s)", flush=True)
        if args.peers:
            import torch
            torch.backends.cuda.matmul.allow_tf32 = PRECISION == "tf32"
            tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(args.dtype,
                                                                            torch.float32)
            ta = torch.from_numpy(a.astype(np.float32)).cuda().to(tdt)
            tb = torch.from_numpy(b.astype(np.float32)).cuda().to(tdt)
            us = median_us(lambda: ta @ tb, args.calls, sync=torch.cuda.synchronize)
            print(f"  {n}^3 torch: {us / 1e3:.3f} ms ({flop / us / 1e6:.0f} TF/s)", flush=True)


if __name__ == "__main__":
    main()
