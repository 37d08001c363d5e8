"""The tensor-core GEMM kernels at one size on an NVIDIA GPU, each by name: wall clock per call
(queue drained, median) and the error against float64, for float16 (``mma``), float32 with TF32
(``mma``, ``wgmma``) and float64 (``dmma``), in both operand orientations. For before/after
comparisons of a kernel change in one run (the same machine, the same clocks).

    python benches/probes/tensor_core_kernels.py --size 4096 --calls 20
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clock import median_us

# (dtype, matmul precision, kernel forced by name or None for the library's pick)
CASES = (("float16", "highest", None), ("float16", "highest", "mma"), ("float32", "tf32", None),
         ("float32", "tf32", "mma"), ("float64", "highest", None))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    n = args.size
    for dtype, precision, forced in CASES:
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        for orient in ("nn", "tn"):
            x = (cg.asarray(np.ascontiguousarray(a.T), device=device).T if orient == "tn"
                 else cg.asarray(a, device=device))
            y = cg.asarray(b, device=device)
            with cg.precision(precision):
                kernel = next((line.split(":", 1)[1].strip() for line in
                               cg.explain_matmul(x, y, kernel=forced).splitlines()
                               if "kernel:" in line), "?")
                got = np.asarray(cg.matmul(x, y, kernel=forced)).astype(np.float64)
                us = median_us(lambda: cg.matmul(x, y, kernel=forced), args.calls,
                               sync=device.synchronize)
            err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
            print(f"{dtype:8s} {precision:8s} {orient} {n}^3: {us / 1e3:8.3f} ms  "
                  f"error {err:.1e}  {kernel[:60]}", flush=True)


if __name__ == "__main__":
    main()
