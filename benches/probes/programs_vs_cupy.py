"""The six `bench programs` programs, and a 512x256 -> 128 -> 10 tanh MLP step, on device arrays
against the same NumPy code on CuPy arrays: wall clock per call with the queue drained (median of
200 calls), and the host fallbacks each made (expected: none). Needs cupy.

    python3 benches/probes/programs_vs_cupy.py
"""
from __future__ import annotations

import time

import cupy
import numpy as np

import clarray_gemm as cg
from clarray_gemm.bench import programs

REPS = 200


def wall_us(call, sync) -> float:
    """Median wall clock of ``call`` with ``sync`` after each, in microseconds."""
    for _ in range(5):
        call()
    sync()
    times = []
    for _ in range(REPS):
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def small_mlp_inputs(rng: np.random.Generator) -> tuple:
    """x (512 x 256), y (512 x 10) and the weights of a 256 -> 128 -> 10 MLP."""
    def normal(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)
    return normal(512, 256), normal(512, 10), normal(256, 128), normal(128), normal(128, 10), \
        normal(10)


def to(module, host):
    """``host`` (arrays, nested in tuples) as device arrays of ``module``."""
    if isinstance(host, tuple):
        return tuple(to(module, x) for x in host)
    return cg.asarray(host) if module is cg else cupy.asarray(host)


def main() -> None:
    device = cg.default_device()
    print(device)
    rows = [(p.name, p.fn, p.inputs) for p in programs.PROGRAMS]
    rows.append(("MLP 512x256 -> 128 -> 10", programs.mlp_step, small_mlp_inputs))
    for name, fn, make in rows:
        host = make(np.random.default_rng(0))
        ours, theirs = to(cg, host), to(cupy, host)
        cg.reset_host_calls()
        us = wall_us(lambda: fn(*ours), device.synchronize)
        peer = wall_us(lambda: fn(*theirs), cupy.cuda.runtime.deviceSynchronize)
        print(f"{name:36s} ours {us:8.1f} us  CuPy {peer:8.1f} us  ratio {peer / us:5.2f}x  "
              f"host calls {cg.on_host_calls()}", flush=True)


if __name__ == "__main__":
    main()
