"""The 1-D convolution benchmark: every convolution kernel (tuned and with its defaults, when a
tuning is stored) and NumPy's ``np.convolve``, at several signal lengths and one mask width.
NumPy is timed before and after our kernels and its faster median is the one compared with.

Rates are GB/s of the bytes a call must move at least (signal, mask and result once each); the
note column gives GFLOP/s of the direct method (2 * outputs * taps) as well.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from ..device import Device
from ..kernels import conv
from ..kernels.samples import conv_bench_problem
from ..ops.convolve import convolve
from . import peers
from .kernel_rows import KernelBench, rows_of_kernels
from .report import Row

__all__ = ["available", "default_sizes", "run", "DEFAULT_MASK"]

DEFAULT_MASK = 31


def available() -> bool:
    """True when this installation runs ``np.convolve`` on the device."""
    from .._dispatch import FUNCTIONS
    return np.convolve in FUNCTIONS


def default_sizes(device: Device) -> tuple[int, ...]:
    """Signal lengths that finish in a few minutes on this kind of device."""
    if device.info.is_simulator:
        return (1024, 4096)
    if device.info.is_gpu:
        return (2**16, 2**20, 2**24)
    return (2**14, 2**17, 2**20)


def _spec(bench: Any) -> KernelBench:
    p = bench.problem
    x, w = bench.operands
    mask = w[::-1].copy()  # the bench problem correlates with w; np.convolve flips its mask

    def gflops(row: Row) -> str:
        return f"; {2 * p.length * p.m / row.device.seconds * 1e-9:.1f} GFLOP/s direct-equivalent"
    return KernelBench(conv.CATALOGUE, conv.run,
                       lambda name, params: np.asarray(convolve(x, mask, kernel=name,
                                                                params=params)),
                       (p.n + p.m + p.length) * p.itemsize, "GB/s", gflops)


def run(device: Device, sizes: Iterable[int], kernels: Sequence[str] | None = None,
        dtype: Any = np.float32, mask: int = DEFAULT_MASK, budget_s: float = 0.5,
        with_peers: bool = True, progress: Any = None) -> list[Row]:
    """Measure every convolution kernel (or ``kernels``) and NumPy at each signal length."""
    names = list(kernels) if kernels else conv.CATALOGUE.names()
    rows: list[Row] = []
    for n in sizes:
        size = f"n={n}, m={mask}"
        bench = conv_bench_problem(device, n, mask, dtype)
        p = bench.problem
        moved = (p.n + p.m + p.length) * p.itemsize
        numpy_row = None
        if with_peers:
            x, w = bench.operands
            res = peers.numpy_convolve(x, w[::-1].copy(), budget_s)
            numpy_row = Row(res.name, size, moved, "GB/s", res.device, res.e2e, "peer", n=n)
        spec = _spec(bench)
        rows.extend(rows_of_kernels(device, bench, spec, names, budget_s, size, n, progress))
        if numpy_row is not None:
            again = peers.numpy_convolve(x, w[::-1].copy(), budget_s).e2e
            numpy_row.e2e = min(numpy_row.e2e, again, key=lambda t: t.seconds)
            for r in rows:
                if r.size == size and r.device:
                    r.ratios["x NumPy"] = numpy_row.e2e.seconds / r.device.seconds
                    if r.e2e:
                        r.ratios["e2e x NumPy"] = numpy_row.e2e.seconds / r.e2e.seconds
            rows.append(numpy_row)
    return rows
