"""Batches of small products over one shared B (``(batch, n, n) @ (n, n)``) and wide products
of short K (``M x N x K`` with M = N = 4097): each fitting kernel forced, on the batch as
given and on its rows folded into one product (``(batch * n, n) @ (n, n)``), torch beside
them (cuBLAS, TF32 off). Answers which form and kernel each shape should take.
``--as-called``: instead, ``x @ y`` as a user calls it (the package's own choice of form and
kernel) beside the same batch kept batched (A's matrices one row apart, which no product
folds) and folded by hand (``x.reshape(-1, K) @ y``), for the grid's batches and a few
batched linear layers (``(batch, tokens, K) @ (K, N)``).

    python benches/probes/shared_b_batches.py --device NVIDIA --json out.json
    python benches/probes/shared_b_batches.py --device NVIDIA --as-called
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.peers import CudaPeers
from clarray_gemm.dtypes import bfloat16_dtype
from clarray_gemm.tuning.choices import measure_point
from clock import median_us

KERNELS = {
    "float16": ("wgmma", "mma", "small", "thin", "shallow", "gemv_split"),
    "bfloat16": ("wgmma", "mma", "small", "thin", "shallow", "gemv_split"),
    "float32": ("tf32x3", "gpu_blocked", "small", "thin", "shallow", "vec", "tiled"),
    "float64": ("dmma", "gpu_blocked", "small", "thin", "shallow"),
}


def dtype_of(name: str) -> np.dtype:
    return bfloat16_dtype() if name == "bfloat16" else np.dtype(name)


def best(times: dict[str, float]) -> tuple[str, float]:
    name = min(times, key=times.get)
    return name, times[name]


LAYERS = ((64, 512, 256, 128), (32, 128, 512, 512), (8, 4096, 1024, 1024), (256, 64, 64, 10))
"""(batch, tokens, K, N) of the batched linear layers ``--as-called`` adds."""


def as_called(device, dtypes, batches, sides, peers, rng) -> list[dict]:
    """``x @ y`` as called, kept batched and folded by hand, and torch, per case (µs)."""
    rows = []
    cases = [(b, n, n, n) for b in batches for n in sides] + list(LAYERS)
    for name in dtypes:
        dt = dtype_of(name)
        for batch, M, K, N in cases:
            a = rng.uniform(-1, 1, (batch, M + 1, K)).astype(dt)   # one spare row a matrix
            b = rng.uniform(-1, 1, (K, N)).astype(dt)
            y = cg.asarray(b, device=device)
            spaced = cg.asarray(a, device=device)[:, :M]           # batch stride (M + 1) K
            x = cg.asarray(np.ascontiguousarray(a[:, :M]), device=device)
            flat = x.reshape(-1, K)
            want = a[:, :M].astype(np.float64) @ b.astype(np.float64)
            times = {}
            for form, call in (("as called", lambda: x @ y), ("batched", lambda: spaced @ y),
                               ("folded", lambda: flat @ y)):
                got = np.asarray(call()).reshape(want.shape).astype(np.float64)
                err = np.linalg.norm(got - want) / np.linalg.norm(want)
                assert err < 2e-2, (name, batch, M, K, N, form, err)
                times[form] = median_us(call, 30, sync=device.synchronize)
            peer = dict(peers.matmul_times(np.ascontiguousarray(a[:, :M]), b, 0.03)) if peers else {}
            times["peer"] = min(peer.values()) * 1e6 if peer else float("nan")
            folded = "one product of" in cg.explain_matmul(x, y)
            rows.append({"dtype": name, "case": f"{batch} x {M}x{K} @ {K}x{N}", "us": times,
                         "folds": folded})
            print(f"{name:8s} {rows[-1]['case']:26s} " + "  ".join(
                f"{k} {v:7.1f}" for k, v in times.items()) + ("  (folds)" if folded else ""),
                flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtypes", nargs="+", default=list(KERNELS))
    ap.add_argument("--batches", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--sides", type=int, nargs="+", default=[8, 16, 33, 64])
    ap.add_argument("--wide-k", type=int, nargs="+", default=[17, 33, 64])
    ap.add_argument("--budget", type=float, default=0.03)
    ap.add_argument("--json", default=None)
    ap.add_argument("--as-called", action="store_true")
    args = ap.parse_args()
    device = cg.get_device(args.device) if args.device else cg.default_device()
    peers = CudaPeers.on(device)
    rng = np.random.default_rng(0)
    rows = []
    print(f"device: {device}")
    if args.as_called:
        rows = as_called(device, args.dtypes, args.batches, args.sides, peers, rng)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
        return
    for name in args.dtypes:
        dt = dtype_of(name)
        kernels = KERNELS[name]
        for batch in args.batches:
            for n in args.sides:
                a = rng.uniform(-1, 1, (batch, n, n)).astype(dt)
                b = rng.uniform(-1, 1, (n, n)).astype(dt)
                x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
                default = cg.explain_matmul(x, y).splitlines()[0][:60]
                batched = measure_point(device, a, b, kernels, args.budget)
                folded = measure_point(device, a.reshape(-1, n), b, kernels, args.budget)
                peer = dict(peers.matmul_times(a, b, args.budget)) if peers else {}
                row = {"dtype": name, "case": f"{batch} x {n}^3 shared B", "batched": batched,
                       "folded": folded, "peers": peer, "default": default}
                rows.append(row)
                bk, bt = best(batched) if batched else ("-", float("nan"))
                fk, ft = best(folded) if folded else ("-", float("nan"))
                pt = min(peer.values()) if peer else float("nan")
                print(f"{name:8s} {row['case']:24s} batched {bk:11s} {bt * 1e6:8.1f}  folded "
                      f"{fk:11s} {ft * 1e6:8.1f}  peer {pt * 1e6:8.1f}  | default: {default}",
                      flush=True)
        for k in args.wide_k:
            if name == "float64":
                continue
            a = rng.uniform(-1, 1, (4097, k)).astype(dt)
            b = rng.uniform(-1, 1, (k, 4097)).astype(dt)
            names = tuple(dict.fromkeys(kernels + ("gpu_blocked", "tf32x3", "wgmma", "mma")))
            times = measure_point(device, a, b, names, args.budget)
            peer = dict(peers.matmul_times(a, b, args.budget)) if peers else {}
            pt = min(peer.values()) if peer else float("nan")
            rows.append({"dtype": name, "case": f"4097 x 4097 x {k}", "times": times,
                         "peers": peer})
            print(f"{name:8s} 4097x4097x{k:<4d} " + " ".join(
                f"{kk}={v * 1e6:.1f}" for kk, v in sorted(times.items(), key=lambda kv: kv[1]))
                + f"  peer {pt * 1e6:.1f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
