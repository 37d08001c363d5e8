"""The FP64 tensor-core kernel (``dmma``) under forced parameters on an NVIDIA GPU: wall clock
per call at the given sizes beside torch (cuBLAS) float64, and each configuration's error.

    python benches/probes/dmma_sweep.py --sizes 2048 4096 --params '{"BK": 16}' '{"M16": 0}' ...
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import clarray_gemm as cg
from clock import median_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--params", nargs="*", default=["{}"], help="JSON, one per configuration")
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    import torch
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        ref = (ta @ tb).cpu().numpy()
        peer = median_us(lambda: ta @ tb, args.calls, sync=torch.cuda.synchronize)
        flop = 2.0 * n ** 3
        print(f"{n}^3 torch float64: {peer / 1e3:.3f} ms ({flop / peer / 1e6:.1f} TF/s)",
              flush=True)
        for text in args.params:
            params = json.loads(text)
            try:
                got = np.asarray(cg.matmul(x, y, kernel="dmma", params=params))
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                us = median_us(lambda: cg.matmul(x, y, kernel="dmma", params=params), args.calls,
                               sync=device.synchronize)
            except Exception as exc:  # noqa: BLE001  (a sweep reports every configuration)
                print(f"  {params}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
                continue
            print(f"  {params}: {us / 1e3:.3f} ms ({flop / us / 1e6:.1f} TF/s, "
                  f"{peer / us:.3f}x cuBLAS), error {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
