"""Split kernels finished by their last work-group against their second launch
(``opencl/last_group.h``): each kernel forced with FINISH_LAST 0 and 1 on products with a small
M and a long K, and the full reductions' plans with and without, wall time per call with the
queue drained, torch (cuBLAS, TF32 off) beside them where it is installed. The defaults of
``kernels/flags.py`` (LAST_GROUP_MAX_READS, LAST_GROUP_MAX_BYTES) come from this probe.

    python benches/probes/finish_last.py [--device NVIDIA]
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import synced_seconds
from clarray_gemm.ops import reduce_plan

BUDGET_S = 0.15
PRODUCTS = [(np.float16, 10, 1024, 256, "wgmma"), (np.float16, 33, 4097, 127, "wgmma"),
            (np.float16, 127, 4097, 4097, "wgmma"), (np.float16, 1, 1024, 127, "gemv_split"),
            (np.float16, 1, 4097, 1024, "gemv_split"), (np.float16, 10, 1024, 1024, "thin"),
            (np.float32, 10, 1024, 256, "gpu_blocked"), (np.float32, 33, 4097, 127, "gpu_blocked"),
            (np.float32, 127, 4097, 4097, "gpu_blocked"), (np.float32, 1, 4097, 10, "gemv_split"),
            (np.float32, 4097, 4097, 10, "thin"), (np.float64, 33, 4097, 127, "dmma"),
            (np.float64, 127, 4097, 4097, "dmma"), (np.float64, 10, 1024, 1024, "gpu_blocked")]
REDUCTIONS = [(1000, 1000), (4096, 4096), (100003,), (37, 1000)]


def us(call, sync) -> float:
    return synced_seconds(call, sync, budget_s=BUDGET_S).seconds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    args = parser.parse_args()
    dev = cg.get_device(args.device)
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    print("| product (M x K x N) | kernel | FINISH_LAST 0 us | 1 us | automatic us | torch us |")
    print("|---|---|---|---|---|---|")
    for dt, m, k, n, kernel in PRODUCTS:
        a, b = rng.random((m, k)).astype(dt), rng.random((k, n)).astype(dt)
        x, y = cg.asarray(a, device=dev), cg.asarray(b, device=dev)
        cells = []
        for last in (0, 1):
            params = {"FINISH_LAST": last}
            try:
                cg.matmul(x, y, kernel=kernel, params=params)
                call = lambda: cg.matmul(x, y, kernel=kernel, params=params)  # noqa: E731
                cells.append(f"{us(call, dev.synchronize):.1f}")
            except ValueError as exc:
                cells.append(str(exc)[:40])
        cells.append(f"{us(lambda: x @ y, dev.synchronize):.1f}")
        if torch is not None and torch.cuda.is_available():
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            cells.append(f"{us(lambda: ta @ tb, torch.cuda.synchronize):.1f}")
        else:
            cells.append("-")
        print(f"| {np.dtype(dt).name} {m} x {k} x {n} | {kernel} | " + " | ".join(cells) + " |")
    print("\n| full reduction, float32 | groups | sum 2 launches / 1 us | argmin 2 / 1 us |")
    print("|---|---|---|---|")
    f32, i64 = np.dtype(np.float32), np.dtype(np.int64)
    for shape in REDUCTIONS:
        x = cg.asarray(rng.random(shape).astype(np.float32), device=dev)
        axes = tuple(range(x.ndim))
        times = {}
        for rop, out in (("sum", f32), ("argmin", i64)):
            for last in (False, True):
                plan = reduce_plan.ReducePlan(rop, x, axes, f32, out, False, dev, finish_last=last)
                times[rop, last] = us(lambda: plan.run(x), dev.synchronize)
        print(f"| {' x '.join(map(str, shape))} | {plan.groups} | {times['sum', False]:.1f} / "
              f"{times['sum', True]:.1f} | {times['argmin', False]:.1f} / "
              f"{times['argmin', True]:.1f} |")


if __name__ == "__main__":
    main()
