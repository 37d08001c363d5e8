"""Batches of large products (128 to 4096 rows, own and shared B) ranked two ways by the
kernel-choice table: by its batched points (``measured.LARGE_BATCHED`` set to infinity) and
by the single point nearest to batch * M rows (the shipped value), with torch beside them
(cuBLAS, TF32 off); every answer checked on its first rows. The evidence of the tuned
constant ``measured.large_batched``.

    python benches/probes/large_batches.py
"""
import sys

import numpy as np
import torch

import clarray_gemm as cg
from clarray_gemm.dtypes import bfloat16_dtype
from clarray_gemm.kernels import measured, plans
from clock import median_us

dev = cg.get_device(sys.argv[1] if len(sys.argv) > 1 else "NVIDIA")
torch.backends.cuda.matmul.allow_tf32 = False
rng = np.random.default_rng(0)
cases = [(8, 4096, 1024, 1024, True), (64, 512, 256, 128, True), (32, 128, 512, 512, True),
         (16, 512, 64, 512, False), (16, 512, 512, 64, False), (8, 1024, 1024, 1024, False),
         (4, 2048, 256, 2048, False), (128, 256, 64, 256, False)]
for name in ("float16", "bfloat16", "float32", "float64"):
    dt = bfloat16_dtype() if name == "bfloat16" else np.dtype(name)
    tdt = getattr(torch, name)
    for batch, M, K, N, shared in cases:
        a = rng.uniform(-1, 1, (batch, M, K)).astype(np.float32)
        b = rng.uniform(-1, 1, (K, N) if shared else (batch, K, N)).astype(np.float32)
        x, y = cg.asarray(a.astype(dt), device=dev), cg.asarray(b.astype(dt), device=dev)
        ta, tb = torch.from_numpy(a).cuda().to(tdt), torch.from_numpy(b).cuda().to(tdt)
        out = []
        for large in (1e9, 2.0):
            measured.LARGE_BATCHED = large; plans.clear_all()
            got = np.asarray(x @ y)[:, :8].astype(np.float64)
            ref = np.matmul(a[:, :8], b)
            err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
            t = median_us(lambda: x @ y, 20, sync=dev.synchronize)
            out.append(f"{'batched points' if large > 100 else 'single points'} {t:.1f}"
                       + ("" if err < 2e-2 else " WRONG"))
        tt = median_us(lambda: ta @ tb, 20, sync=torch.cuda.synchronize)
        print(name, batch, M, K, N, "shared B" if shared else "own B", " / ".join(out),
              f"/ torch {tt:.1f} us", flush=True)
