"""Reductions of 2^26 float32 elements on a GPU under several work-group counts: wall clock per
call in rounds of calls ended by one synchronisation, beside ``x.copy()``, as
benches/gpu_device_programs.py reports them (``ops/reduce_plan``'s constants, set per run).

    python benches/probes/reduce_sweep.py [--device NVIDIA] [--groups 528 1024 2048]
        [--per-unit 4 8 16]   # rows of 2^26 / R elements (R = 1, 8, 64, 512) with this many
                              # work-groups per compute unit (_GROUPS_PER_UNIT_GPU)

``--groups G``: a full reduction (np.sum, np.max, np.argmax of the whole array) with at most G
work-groups (_MAX_GROUPS).
"""
from __future__ import annotations

import argparse

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.timing import pipelined_seconds
from clarray_gemm.kernels import plans
from clarray_gemm.ops import reduce_plan


def us_per_call(op, sync, reps: int) -> float:
    return pipelined_seconds(op, sync, reps).seconds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="NVIDIA")
    parser.add_argument("--groups", type=int, nargs="*", default=[528, 1024, 2048])
    parser.add_argument("--per-unit", type=int, nargs="*", default=[])
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    n = 1 << 26
    x = cg.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32), device=device)
    sync = device.synchronize
    copy_us = us_per_call(lambda: x.copy(), sync, args.calls)
    share = lambda us: f"{4 * n / us / (2 * 4 * n / copy_us):.0%}"  # noqa: E731
    print(f"{device}: copy {copy_us:.1f} us ({2 * 4 * n / copy_us / 1e3:.0f} GB/s)")
    kept = reduce_plan._MAX_GROUPS, reduce_plan._GROUPS_PER_UNIT_GPU, reduce_plan._TREE_GROUPS
    for groups in args.groups:
        reduce_plan._MAX_GROUPS, reduce_plan._GROUPS_PER_UNIT_GPU = groups, groups
        reduce_plan._TREE_GROUPS = groups
        plans.clear_all()  # the reduce plans and the call plans holding them
        row = [f"{name} {share(us_per_call(lambda: fn(x), sync, args.calls))}"
               for name, fn in (("sum", np.sum), ("max", np.max), ("argmax", np.argmax))]
        print(f"  at most {groups} work-groups: " + " | ".join(row), flush=True)
    reduce_plan._MAX_GROUPS, reduce_plan._GROUPS_PER_UNIT_GPU, reduce_plan._TREE_GROUPS = kept
    for per_unit in args.per_unit:
        reduce_plan._GROUPS_PER_UNIT_GPU = per_unit
        plans.clear_all()  # the reduce plans and the call plans holding them
        row = []
        for rows in (1, 8, 64, 512):
            xr = x.reshape(rows, -1)
            for name, fn in (("sum", np.sum), ("argmax", np.argmax)):
                us = us_per_call(lambda: fn(xr, axis=-1), sync, args.calls)
                row.append(f"{rows}x {name} {share(us)}")
        print(f"  {per_unit} per unit: " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
