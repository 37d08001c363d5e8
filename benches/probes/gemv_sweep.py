"""A forced sweep of ``gemv_split``'s parameters for GEMV on a GPU (``A @ x`` and ``x @ A``,
float32, 8192^2 and 4096^2, the GEMV rows of ``benches/gpu_gemm_shapes.py``): wall time per
call with the queue drained, as GB/s of the matrix read and as a fraction of the
device-to-device copy bandwidth measured in the same run (``clEnqueueCopyBuffer`` of 256 MiB,
bytes read + written).

    python benches/probes/gemv_sweep.py [--device NVIDIA] [--sizes 8192 4096] [--defaults-only]
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.bench.timing import synced_seconds

BUDGET_S = 0.25


def copy_gbps(dev: cg.Device, nbytes: int = 1 << 28) -> float:
    src = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(dev.queue, src, np.float32(1), 0, nbytes)
    wall = synced_seconds(lambda: cl.enqueue_copy(dev.queue, dst, src), dev.queue.finish,
                          budget_s=BUDGET_S).seconds
    return 2 * nbytes / wall / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8192, 4096])
    parser.add_argument("--defaults-only", action="store_true",
                        help="time the default parameters only (no sweep)")
    args = parser.parse_args()
    dev = cg.get_device(args.device)
    copy = copy_gbps(dev)
    print(f"# {dev}: copy {copy:.0f} GB/s (read + write, wall)")
    rng = np.random.default_rng(0)
    grid = {"rows": [dict(WG=w, LANES=l, KSPLIT=k) for w, l, k in itertools.product(
                (64, 128, 256, 512), (0, 8, 16, 32), (0, 1, 2, 4, 8))],
            "cols": [dict(WG=w, RT=r, KSPLIT=k) for w, r, k in itertools.product(
                (64, 128, 256, 512), (0, 4, 16), (0, 1, 2, 4, 8))]}
    for n in args.sizes:
        a = cg.asarray(rng.standard_normal((n, n)).astype(np.float32), device=dev)
        x = cg.asarray(rng.standard_normal(n).astype(np.float32), device=dev)
        ref_rows, ref_cols = np.asarray(a) @ np.asarray(x), np.asarray(x) @ np.asarray(a)
        for orient, configs in grid.items():
            call = (lambda p: cg.matmul(a, x, kernel="gemv_split", params=p)) if orient == "rows" \
                else (lambda p: cg.matmul(x, a, kernel="gemv_split", params=p))
            ref = ref_rows if orient == "rows" else ref_cols
            results = []
            for params in [{}] + ([] if args.defaults_only else configs):
                try:
                    got = np.asarray(call(params))
                except (ValueError, cl.Error) as exc:
                    continue
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                wall = synced_seconds(lambda: call(params), dev.queue.finish,
                                      budget_s=BUDGET_S).seconds
                gbps = 4 * n * n / wall / 1e9
                results.append((wall, params, gbps, err))
            default = results[0]
            best = sorted(results)[:6]
            print(f"\n## {n}^2 {orient} ({'A @ x' if orient == 'rows' else 'x @ A'}): default "
                  f"{default[0] * 1e6:.1f} us, {default[2]:.0f} GB/s, "
                  f"{100 * default[2] / copy:.0f}% of copy")
            for wall, params, gbps, err in best:
                print(f"  {params}: {wall * 1e6:.1f} us, {gbps:.0f} GB/s "
                      f"({100 * gbps / copy:.0f}%), err {err:.1e}")


if __name__ == "__main__":
    main()
