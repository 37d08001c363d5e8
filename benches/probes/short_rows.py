"""Reductions along short contiguous rows (the k-means step's ``np.sum(d, axis=-1)`` over 32
elements, ``np.argmin`` over 64) on a GPU with several lanes per row: each lane taking at least
``--per-lane`` elements (``ops/reduce_plan._ROW_ELEMENTS_PER_LANE_GPU``), beside CuPy.

    python benches/probes/short_rows.py [--per-lane 1 8 16 32]
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import pipelined_seconds
from clarray_gemm.kernels import plans
from clarray_gemm.ops import reduce_plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-lane", type=int, nargs="*", default=[1, 8, 16, 32])
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    import cupy as cp
    device = cg.get_device("NVIDIA")
    rng = np.random.default_rng(0)
    cases = [((131072, 64, 32), np.sum), ((131072, 64), np.argmin), ((65536, 256), np.sum),
             ((16384, 1024), np.max), ((8192, 2048), np.sum)]
    host = {shape: rng.standard_normal(shape).astype(np.float32) for shape, _ in cases}
    ours = {shape: cg.asarray(a, device=device) for shape, a in host.items()}
    theirs = {shape: cp.asarray(a) for shape, a in host.items()}
    ms = lambda op, sync: pipelined_seconds(op, sync, args.reps).seconds * 1e3  # noqa: E731
    cupy_ms = {(s, f): ms(lambda: f(theirs[s], axis=-1), cp.cuda.runtime.deviceSynchronize)
               for s, f in cases}
    print(f"{device}: ms per call (CuPy / ours)")
    for per_lane in args.per_lane:
        reduce_plan._ROW_ELEMENTS_PER_LANE_GPU = per_lane
        plans.clear_all()  # the reduce plans and the call plans holding them
        row = []
        for s, f in cases:
            t = ms(lambda: f(ours[s], axis=-1), device.synchronize)
            row.append(f"{f.__name__}{s} {t:.3f} ({cupy_ms[(s, f)] / t:.2f}x)")
        print(f"  {per_lane} per lane: " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
