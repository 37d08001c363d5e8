"""Each operation of the power-iteration program timed inside its loop (``w = a @ v``,
``np.linalg.norm(w)``, ``w / n``), on NumPy arrays and on device arrays: inside that loop every
call follows a 4 MiB product that has evicted much of what Python touches, so an operation costs
several times what it costs in a tight loop of its own.

    python benches/probes/power_iteration_ops.py [--device Portable] [--rounds 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench.programs import _power_inputs


def per_op_us(a, v, programs: int = 300, steps: int = 40) -> list[float]:
    clock = time.perf_counter
    spent = [0.0, 0.0, 0.0]
    for _ in range(programs):
        x = v
        for _ in range(steps):
            t0 = clock()
            w = a @ x
            t1 = clock()
            n = np.linalg.norm(w)
            t2 = clock()
            x = w / n
            t3 = clock()
            spent[0] += t1 - t0
            spent[1] += t2 - t1
            spent[2] += t3 - t2
    return [s / (programs * steps) * 1e6 for s in spent]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    device = cg.get_device(args.device)
    a, v = _power_inputs(np.random.default_rng(0))
    da, dv = cg.asarray(a, device=device), cg.asarray(v, device=device)
    print(f"# {device}: us per operation inside the loop (a @ v | norm | divide)")
    for _ in range(args.rounds):
        numpy_us, ours_us = per_op_us(a, v), per_op_us(da, dv)
        print("NumPy " + " | ".join(f"{t:.2f}" for t in numpy_us)
              + "    ours " + " | ".join(f"{t:.2f}" for t in ours_us))


if __name__ == "__main__":
    main()
