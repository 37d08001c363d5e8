"""Sample problems for the tuner and the benchmarks: random operands in fresh device buffers,
the problem description a catalogue launches, and a check of the output against NumPy.

``poison`` fills the output with NaN bytes before a checked run, so a kernel that skips
elements cannot pass on a previous run's result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyopencl as cl

from ..device import Device
from ..drivers import calls
from ..memory import new_buffer
from .gemm import GemmOperand, GemmProblem

__all__ = ["WrongResult", "BenchProblem", "bench_problem", "conv_bench_problem"]


class WrongResult(RuntimeError):
    """A candidate computed a result that differs from NumPy's."""


def _random(shape: tuple[int, ...], dt: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dt.kind in "iu":
        return rng.integers(0, 8, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _to_device(device: Device, host: np.ndarray) -> cl.Buffer:
    buf = new_buffer(device, host.nbytes)
    calls.copy(device.queue, buf, host, is_blocking=True)
    return buf


def _compare(got: np.ndarray, ref: np.ndarray, dt: np.dtype) -> None:
    if dt.kind in "iu":
        if not np.array_equal(got, ref.astype(dt)):
            raise WrongResult("wrong result (differs from NumPy)")
        return
    rel = float(np.linalg.norm(got - ref) / max(float(np.linalg.norm(ref)), 1e-300))
    if not (np.isfinite(rel) and rel < (1e-4 if dt == np.float32 else 1e-10)):
        raise WrongResult(f"wrong result (relative error {rel:.2e})")


@dataclass
class BenchProblem:
    """A problem in fresh device buffers with its host operands: ``poison`` fills the output
    with NaN bytes, so a kernel that skips elements fails ``check`` against NumPy."""

    problem: Any
    device: Device
    operands: tuple[np.ndarray, ...]
    out: cl.Buffer
    out_shape: tuple[int, ...]
    reference: Callable[[], np.ndarray]
    label: str

    @property
    def a(self) -> np.ndarray:
        return self.operands[0]

    @property
    def b(self) -> np.ndarray:
        return self.operands[1]

    def poison(self) -> None:
        nbytes = int(np.prod(self.out_shape)) * self.problem.itemsize
        calls.fill(self.device.queue, self.out, np.uint8(0xFF), 0, nbytes)

    def result(self) -> np.ndarray:
        out = np.empty(self.out_shape, self.problem.dtype)
        calls.copy(self.device.queue, out, self.out, is_blocking=True)
        return out

    def check(self) -> None:
        """Raise :class:`WrongResult` unless the output matches NumPy."""
        _compare(self.result(), self.reference(), np.dtype(self.problem.dtype))


def bench_problem(device: Device, M: int, N: int, K: int, dtype: Any = np.float32,
                  seed: int = 0) -> BenchProblem:
    """Random operands of a contiguous ``(M, K) @ (K, N)`` product in fresh device buffers."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    a, b = _random((M, K), dt, rng), _random((K, N), dt, rng)
    c = new_buffer(device, M * N * dt.itemsize)
    problem = GemmProblem(1, M, N, K, dt, GemmOperand(_to_device(device, a), 0, K, M * K),
                          GemmOperand(_to_device(device, b), 0, N, K * N),
                          GemmOperand(c, 0, N, M * N))
    ref = (lambda: a @ b) if dt.kind in "iu" else (lambda: a.astype(np.float64) @ b)
    return BenchProblem(problem, device, (a, b), c, (M, N), ref, f"{M}x{K} @ {K}x{N}")


def conv_bench_problem(device: Device, n: int, m: int, dtype: Any = np.float32,
                       seed: int = 0) -> BenchProblem:
    """Random signal (``n``) and mask (``m``) of a full 1-D correlation in fresh device buffers
    (the kernels correlate; ``np.convolve`` flips the mask before it calls them)."""
    from . import conv
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    x, w = _random((n,), dt, rng), _random((m,), dt, rng)
    length = n + m - 1
    out = new_buffer(device, length * dt.itemsize)
    problem = conv.ConvProblem(n, m, m - 1, length, dt, _to_device(device, x), 0,
                               _to_device(device, w), out)
    ref = ((lambda: np.correlate(x.astype(np.int64), w.astype(np.int64), "full"))
           if dt.kind in "iu" else
           (lambda: np.correlate(x.astype(np.float64), w.astype(np.float64), "full")))
    return BenchProblem(problem, device, (x, w), out, (length,), ref, f"n={n}, m={m}")
