"""Feasibility of float32 products as three TF32 tensor-core products (3xTF32: A = A_hi + A_lo,
B = B_hi + B_lo, each part rounded to TF32; A @ B ~ A_lo @ B_hi + A_hi @ B_lo + A_hi @ B_hi),
emulated through the existing TF32 path as one product over a K three times as deep,
[A_lo | A_hi | A_hi] @ [B_hi; B_lo; B_hi], split on the host. Wall clock per call against torch
(cuBLAS, TF32 off) and our float32 kernel, and each one's error against float64 on normal and on
uniform [0, 1) data (all-positive sums show a biased accumulation).

    python benches/probes/split_tf32.py --sizes 4096 8192 --configs '{}' '{"BN": 128, "PROMOTE": 2}'

Each ``--configs`` entry is one set of forced ``wgmma`` parameters for the 3xTF32 row.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

import clarray_gemm as cg
from clock import median_us


def tf32(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to TF32 (10 mantissa bits), to nearest, ties to even."""
    bits = x.view(np.uint32).astype(np.uint64)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & ~np.uint64(0x1FFF)
    return bits.astype(np.uint32).view(np.float32)


def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = tf32(x)
    return hi, tf32((x - hi).astype(np.float32))


def rel_error(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--configs", nargs="*", default=["{}"])
    args = parser.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        for data in ("normal", "uniform"):
            draw = rng.standard_normal if data == "normal" else rng.random
            a = draw((n, n)).astype(np.float32)
            b = draw((n, n)).astype(np.float32)
            a_hi, a_lo = split(a)
            b_hi, b_lo = split(b)
            a3 = np.concatenate([a_lo, a_hi, a_hi], axis=1)
            b3 = np.concatenate([b_hi, b_lo, b_hi], axis=0)
            x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
            x3, y3 = cg.asarray(a3, device=device), cg.asarray(b3, device=device)
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            ref = a.astype(np.float64) @ b.astype(np.float64)
            sync = device.synchronize
            rows = {
                "torch fp32": (lambda: ta @ tb, torch.cuda.synchronize,
                               lambda: (ta @ tb).cpu().numpy()),
                "ours fp32": (lambda: x @ y, sync, lambda: np.asarray(x @ y)),
                "ours 1xTF32": (lambda: cg.matmul(x, y, precision="tf32"), sync,
                                lambda: np.asarray(cg.matmul(x, y, precision="tf32"))),
            }
            for text in args.configs:
                params = json.loads(text) or None

                def three(params=params):
                    return cg.matmul(x3, y3, precision="tf32", kernel="wgmma", params=params)
                rows[f"ours 3xTF32 {text}"] = (three, sync, lambda three=three: np.asarray(three()))
            peer = None
            for label, (call, wait, value) in rows.items():
                us = median_us(call, args.calls, sync=wait)
                peer = peer or us
                err = rel_error(value().astype(np.float64), ref)
                print(f"{n}^3 {data} {label}: {us:.1f} us, {peer / us:.3f}x torch, "
                      f"error {err:.2e}", flush=True)


if __name__ == "__main__":
    main()
