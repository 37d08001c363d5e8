"""fp32 ``x @ x`` on an NVIDIA GPU against cuBLAS (torch, TF32 off): wall clock per call as a
user times it (device arrays, queue drained after each call) first, device time second.

Usage on the GPU machine: ``python benches/gpu_gemm_wall.py [--sizes 1024 4096 8192]``.
The per-call overhead's targets: wall ratio >= 0.6 at 1024^3; at 4096^3 and 8192^3 the wall
ratio within 3% of the device-time ratio (the per-call overhead must not show at those sizes).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import clarray_gemm as cg  # noqa: E402
from clarray_gemm.bench.timing import (cuda_event_seconds, device_seconds,  # noqa: E402
                                       synced_seconds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[1024, 4096, 8192])
    args = ap.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = next(d for d in cg.devices() if d.info.is_gpu)
    print(f"device: {dev.name} ({dev.info.platform}); cuBLAS through torch {torch.__version__}")
    print("| n^3 | ours wall ms | cuBLAS wall ms | wall ratio | ours device ms | cuBLAS device ms "
          "| device ratio | wall/device ratio |\n|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        a = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
        x = cg.asarray(a, device=dev)
        t = torch.from_numpy(a).cuda()
        reps = 50 if n <= 2048 else 10
        ours_wall = synced_seconds(lambda: x @ x, dev.queue.finish, reps=reps).seconds
        ours_dev = device_seconds(dev, lambda: x @ x, reps=reps).seconds
        cub_wall = synced_seconds(lambda: t @ t, torch.cuda.synchronize, reps=reps).seconds
        cub_dev = cuda_event_seconds(lambda: torch.cuda.Event(enable_timing=True), lambda: t @ t,
                                     torch.cuda.synchronize, reps=reps).seconds
        wall, device = cub_wall / ours_wall, cub_dev / ours_dev
        print(f"| {n} | {ours_wall * 1e3:.3f} | {cub_wall * 1e3:.3f} | {wall:.3f}x | "
              f"{ours_dev * 1e3:.3f} | {cub_dev * 1e3:.3f} | {device:.3f}x | {wall / device:.3f} |")


if __name__ == "__main__":
    main()
