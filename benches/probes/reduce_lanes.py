"""Reduction bandwidth at 2^26 float32 against the device's copy bandwidth, for the accumulators
per lane (``LANE_ACCS`` of opencl/reduce.cl) and the elements a lane reduces before a reduction
is split in two launches (``_PER_LANE`` of ops/reduce_plan.py): which setting brings
``np.argmax`` to the others' bandwidth; then, at the defaults, vector loads (``VEC_RED``: an
aligned run, ``x[:-1]``) against scalar ones (the same run one element off, ``x[1:]``, where
the kernel falls back to scalar loads).

    python benches/probes/reduce_lanes.py [--device NVIDIA] [--log2n 26]
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.kernels.plans import clear_all
from clarray_gemm.ops import reduce_plan
from clock import median_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--log2n", type=int, default=26)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    queue = device.queue
    n = 1 << args.log2n
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x = cg.asarray(host, device=device)
    src, dst = x.storage.kernel_buffer(), cg.empty(n, np.float32, device=device)
    copy_s = median_us(lambda: cl.enqueue_copy(queue, dst.storage.kernel_buffer(write=True),
                                                src), 30, sync=queue.finish) / 1e6
    copy_gbs = 2 * host.nbytes / copy_s / 1e9
    print(f"# {device}: copy {copy_gbs:.0f} GB/s (read + write); reductions read {host.nbytes >> 20} MiB")
    defines = reduce_plan._defines
    per_lane = reduce_plan._PER_LANE
    calls = {"argmax": np.argmax, "max": np.max, "sum": np.sum}
    expected = {"argmax": int(np.argmax(host)), "max": float(np.max(host))}
    print("| LANE_ACCS | _PER_LANE | " + " | ".join(f"{k} GB/s (of copy)" for k in calls) + " |")
    print("|---|---|" + "---|" * len(calls))
    for lanes, chunk in itertools.product((4, 8, 16), (32, 128)):
        reduce_plan._defines = (lambda *a, _l=lanes: dict(defines(*a), LANE_ACCS=_l))
        reduce_plan._PER_LANE = chunk
        clear_all()
        cells = []
        for name, fn in calls.items():
            got = fn(x)
            if name in expected:
                assert float(np.asarray(got)) == expected[name], (name, lanes, chunk)
            gbs = host.nbytes / median_us(lambda: fn(x), 30, sync=queue.finish) * 1e-3
            cells.append(f"{gbs:.0f} ({gbs / copy_gbs:.0%})")
        print(f"| {lanes} | {chunk} | " + " | ".join(cells) + " |")
    reduce_plan._defines, reduce_plan._PER_LANE = defines, per_lane
    clear_all()
    print("\n| reduction (defaults) | vector loads GB/s (of copy) | scalar loads GB/s (of copy) |")
    print("|---|---|---|")
    wide = cg.asarray(host.astype(np.float64), device=device)
    ints = cg.asarray((host * 1000).astype(np.int32), device=device)
    rows = {"argmax": (np.argmax, x), "argmin": (np.argmin, x), "max": (np.max, x),
            "sum": (np.sum, x), "sum int32": (np.sum, ints), "sum float64": (np.sum, wide),
            "argmax float64": (np.argmax, wide)}
    for name, (fn, arr) in rows.items():
        cells = []
        for view in (arr[:-1], arr[1:]):
            gbs = view.nbytes / median_us(lambda: fn(view), 30, sync=queue.finish) * 1e-3
            cells.append(f"{gbs:.0f} ({gbs / copy_gbs:.0%})")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
