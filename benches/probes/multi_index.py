"""Indexing with two integer arrays, the softmax cross-entropy pair: ``P[np.arange(B), y]`` (a
gather) and ``g[np.arange(B), y] -= 1`` (gather, subtract, scatter), ``y`` on the device, timed
per call (a tight loop, the device synchronised at its end) on device arrays, on CuPy where it
is installed, and on NumPy; each result checked against NumPy first.

    python benches/probes/multi_index.py [--device NVIDIA] [--reps 200]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import clarray_gemm as cg

SHAPES = [(64, 10), (1024, 1000), (65536, 10), (8192, 32000)]


def _us(fn, sync, reps: int) -> float:
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t0) / reps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    try:
        import cupy
    except ImportError:
        cupy = None
    print(f"# {device}: us per call, float32, int64 labels on the device "
          "(gather P[r, y] | update g[r, y] -= 1)")
    for b, c in SHAPES:
        rng = np.random.default_rng(b + c)
        p = rng.random((b, c), dtype=np.float32)
        y = rng.integers(0, c, size=b)
        r = np.arange(b)
        dp, dy = cg.asarray(p, device=device), cg.asarray(y, device=device)
        dr = cg.asarray(r, device=device)
        want = p[r, y]
        assert np.array_equal(np.asarray(dp[dr, dy]), want)
        g = p.copy()
        g[r, y] -= 1
        dg = dp.copy()
        dg[dr, dy] -= 1
        assert np.array_equal(np.asarray(dg), g)

        def ours_set():
            dg[dr, dy] -= 1
        row = [f"B={b:6d} C={c:6d}",
               "ours {:9.1f} | {:9.1f}".format(
                   _us(lambda: dp[dr, dy], device.synchronize, args.reps),
                   _us(ours_set, device.synchronize, args.reps))]
        if cupy is not None:
            cp, cy, cr = cupy.asarray(p), cupy.asarray(y), cupy.arange(b)
            cg_ = cp.copy()
            assert np.array_equal(cupy.asnumpy(cp[cr, cy]), want)

            def cupy_set():
                cg_[cr, cy] -= 1
            sync = cupy.cuda.Device().synchronize
            row.append("CuPy {:9.1f} | {:9.1f}".format(_us(lambda: cp[cr, cy], sync, args.reps),
                                                       _us(cupy_set, sync, args.reps)))

        def numpy_set():
            g[r, y] -= 1
        row.append("NumPy {:9.1f} | {:9.1f}".format(_us(lambda: p[r, y], lambda: None, args.reps),
                                                    _us(numpy_set, lambda: None, args.reps)))
        print("   ".join(row))


if __name__ == "__main__":
    main()
