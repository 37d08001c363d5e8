"""One fp32 product, M x K x N, with the default choice and with gpu_blocked forced to each given
parameter set, beside torch (cuBLAS, TF32 off) when it is installed: wall ms per call, queue
drained, every result checked against the default one.

    python benches/probes/gemm_preset_sweep.py --shape 3000 5000 700 \
        --params '{"PRESET": 7, "KSPLIT": 2}' '{"PRESET": 3}' [--device NVIDIA]
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import clarray_gemm as cg
from clock import median_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=3, metavar=("M", "K", "N"), required=True)
    parser.add_argument("--params", nargs="*", default=[], help="JSON objects of -D parameters")
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    M, K, N = args.shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    reference = np.asarray(x @ y)
    scale = np.linalg.norm(reference)
    print(f"# {device}: {M}x{K}x{N} float32 (MxKxN), wall ms per call, queue drained")
    print("| configuration | ms | relative difference to the default |\n|---|---|---|")
    print(f"| default: {cg.explain_matmul(x, y).splitlines()[1]} | "
          f"{median_us(lambda: x @ y, args.calls, sync=device.synchronize) / 1e3:.3f} | - |")
    for text in args.params:
        params = json.loads(text)
        call = lambda: cg.matmul(x, y, kernel="gpu_blocked", params=params)  # noqa: E731
        diff = np.linalg.norm(np.asarray(call()) - reference) / scale
        ms = median_us(call, args.calls, sync=device.synchronize) / 1e3
        print(f"| gpu_blocked {params} | {ms:.3f} | {diff:.1e} |")
    try:
        import torch
    except ImportError:
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    ms = median_us(lambda: ta @ tb, args.calls, sync=torch.cuda.synchronize) / 1e3
    print(f"| torch (cuBLAS) | {ms:.3f} | - |")


if __name__ == "__main__":
    main()
