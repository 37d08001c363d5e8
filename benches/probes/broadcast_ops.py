"""Elementwise operations that take the strided kernel (broadcast, transposed, masked operands)
on a GPU with 1 and 4 elements per work-item (``ops/elementwise._PER_ITEM_GPU``) and with the
transposed layout class (``elementwise_tiled``, ``transposed_copy``) on and off, beside CuPy: wall clock per call in
rounds of calls ended by one synchronisation, and the share of a copy's bandwidth the bytes
that must move reach.

    python benches/probes/broadcast_ops.py [--per-item 1 4] [--tiled on off]
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import pipelined_seconds
from clarray_gemm.kernels import copy as copy_kernels, plans
from clarray_gemm.ops import elementwise


def cases(lib, host: dict) -> list:
    x, m, bias, y, pts, cen, b3, y64 = (
        lib.asarray(host[k]) for k in ("x", "m", "bias", "y", "pts", "cen", "b3", "y64"))
    x64 = y64.T.copy()
    return [("x - m (rows broadcast)", lambda: x - m, 2 * x.nbytes),
            ("x + bias (a row)", lambda: x + bias, 2 * x.nbytes),
            ("x + y.T (transposed)", lambda: x + y.T, 3 * x.nbytes),
            ("y.T * 2 (transposed, one input)", lambda: y.T * 2.0, 2 * x.nbytes),
            ("np.where(x > 0, x, y.T)", lambda: np.where(x > 0, x, y.T), 4 * x.nbytes),
            ("float64 x + y.T", lambda: x64 + y64.T, 3 * x64.nbytes),
            ("b3.transpose(0, 2, 1) + 1 (64 x 512^2)", lambda: b3.transpose(0, 2, 1) + 1.0,
             2 * b3.nbytes),
            ("y.T.copy() (the copy kernel)", lambda: y.T.copy(), 2 * x.nbytes),
            ("y[:, ::2].copy() (strided copy)", lambda: y[:, ::2].copy(), x.nbytes),
            ("b3[:, ::2, 1:].copy() (3-D strided copy)", lambda: b3[:, ::2, 1:].copy(),
             b3.nbytes // 2),
            ("points[:, None] - centroids[None]", lambda: pts[:, None, :] - cen[None, :, :],
             pts.nbytes + pts.shape[0] * cen.nbytes),
            ("x / m in place", lambda: np.divide(x, m, out=x), 2 * x.nbytes)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-item", type=int, nargs="*", default=[1, 4])
    parser.add_argument("--tiled", nargs="*", default=["on", "off"], choices=["on", "off"])
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    import cupy as cp
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    host = {"x": f(4096, 4096), "m": f(4096, 1), "bias": f(4096), "y": f(4096, 4096),
            "pts": f(131072, 32), "cen": f(64, 32), "b3": f(64, 512, 512),
            "y64": f(4096, 4096).astype(np.float64)}
    ours_lib = type("ours", (), {"asarray": staticmethod(lambda a: cg.asarray(a, device=device))})
    copy_x = cg.asarray(host["x"], device=device)
    copy_ms = pipelined_seconds(lambda: copy_x.copy(), device.synchronize,
                                args.reps).seconds * 1e3
    gbps = lambda nbytes, ms: nbytes / ms / 1e6  # noqa: E731
    copy_gbps = gbps(2 * copy_x.nbytes, copy_ms)
    theirs = {name: pipelined_seconds(op, cp.cuda.runtime.deviceSynchronize,
                                      args.reps).seconds * 1e3
              for name, op, _ in cases(cp, host)}
    print(f"{device}: ms per call; copy {copy_ms:.3f} ms ({copy_gbps:.0f} GB/s)")
    tile_layout = copy_kernels.tile_layout
    for tiled in args.tiled:
        copy_kernels.tile_layout = elementwise.tile_layout = (
            tile_layout if tiled == "on" else lambda *_: None)
        for per_item in args.per_item:
            elementwise._PER_ITEM_GPU = per_item
            plans.clear_all()
            for name, op, nbytes in cases(ours_lib, host):
                ms = pipelined_seconds(op, device.synchronize, args.reps).seconds * 1e3
                print(f"  tiled {tiled:3} PER_ITEM {per_item} {name:40} {ms:.3f} ms "
                      f"({gbps(nbytes, ms) / copy_gbps:.0%} of copy), CuPy {theirs[name]:.3f} ms"
                      f" ({theirs[name] / ms:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
