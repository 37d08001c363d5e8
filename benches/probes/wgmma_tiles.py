"""``wgmma``'s tiles and K steps over products of short K and narrow or batched outputs: the
tiles chosen by shape beside forced ones (128 x 256, 128 x 128, 128 x 64 and 64 x 64; K steps
of 32 and 64), ``x @ y`` as called, and torch (cuBLAS, TF32 off) in the same run. The evidence
of the tuned constant ``wgmma.short_k_16bit``.

    python benches/probes/wgmma_tiles.py --device NVIDIA [--json out.json]
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.peers import CudaPeers
from clarray_gemm.dtypes import bfloat16_dtype
from clock import median_us

FORCED = {"by shape": {},
          "128x256 BK32": dict(BM=128, BN=256, WGS=2, BK=32),
          "128x256 BK64": dict(BM=128, BN=256, WGS=2, BK=64),
          "128x128 BK32": dict(BM=128, BN=128, WGS=2, BK=32),
          "128x128 BK64": dict(BM=128, BN=128, WGS=2, BK=64),
          "128x64 BK32": dict(BM=128, BN=64, WGS=2, BK=32),
          "128x64 BK64": dict(BM=128, BN=64, WGS=2, BK=64),
          "64x64 BK32": dict(BM=64, BN=64, WGS=1, BK=32),
          "64x64 BK64": dict(BM=64, BN=64, WGS=1, BK=64)}
"""The configurations timed beside each other (name: ``params=`` of ``matmul``)."""


def cases(K: int) -> list[tuple[str, tuple, tuple]]:
    """(label, A's shape, B's shape) of the products timed at one K."""
    return [(f"4097 x {K} x 4097", (4097, K), (K, 4097)),
            (f"4096 x {K} x 4096", (4096, K), (K, 4096)),
            (f"256 x {K} x 33", (256, K), (K, 33)),
            (f"160000 x {K} x 64", (160000, K), (K, 64)),
            (f"1024 x {K} x 1024", (1024, K), (K, 1024)),
            (f"10000 x 64 x {K} @ {K} x 64", (10000, 64, K), (K, 64)),
            (f"16384 x {K} x 256", (16384, K), (K, 256))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="NVIDIA")
    ap.add_argument("--ks", type=int, nargs="+", default=[16, 33, 64, 128, 256, 512, 1024, 4097])
    ap.add_argument("--dtypes", nargs="+", default=["float16", "bfloat16"])
    ap.add_argument("--json")
    args = ap.parse_args()
    device = cg.get_device(args.device)
    peers = CudaPeers.on(device)
    rng = np.random.default_rng(0)
    rows = []
    for name in args.dtypes:
        dt = bfloat16_dtype() if name == "bfloat16" else np.dtype(name)
        for K in args.ks:
            for label, sa, sb in cases(K):
                a = rng.uniform(-1, 1, sa).astype(dt)
                b = rng.uniform(-1, 1, sb).astype(dt)
                x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
                want = a[..., :3, :].astype(np.float64) @ b.astype(np.float64)
                us = {}
                for form, params in [("as called", None), *FORCED.items()]:
                    call = (lambda: x @ y) if params is None else (
                        lambda p=params: cg.matmul(x, y, kernel="wgmma", params=p))
                    try:
                        got = np.asarray(call())[..., :3, :].astype(np.float64)
                    except ValueError:
                        continue   # the configuration does not fit this product
                    err = np.linalg.norm(got - want) / np.linalg.norm(want)
                    assert err < 2e-2, (name, label, form, err)
                    us[form] = round(median_us(call, 30, sync=device.synchronize), 1)
                if peers is not None:
                    us["torch"] = round(min(t for _, t in peers.matmul_times(a, b, 0.05)) * 1e6, 1)
                rows.append({"dtype": name, "case": label, "us": us})
                print(f"{name:8s} {label:26s} " + "  ".join(f"{k} {v}" for k, v in us.items()),
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
