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
from ..kernels.samples import WrongResult, conv_bench_problem
from . import peers
from .report import Row, skip_note
from .timing import device_seconds, host_seconds

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


def _kernel_row(device: Device, bench: Any, name: str, params: dict | None, label: str,
                budget_s: float, size: str, n: int) -> Row:
    from ..kernels import conv
    from ..ops.convolve import convolve
    p = bench.problem
    moved = (p.n + p.m + p.length) * p.itemsize
    row = Row(label, size, moved, "GB/s", n=n)
    try:
        choice = conv.choose(device, p, name, params)
        bench.poison()
        conv.run(device, p, name, params)
        bench.check()
    except (ValueError, RuntimeError, WrongResult) as exc:
        row.note = skip_note(exc)
        return row
    row.device = device_seconds(device, lambda: conv.run(device, p, name, params),
                                budget_s=budget_s, warmup=0)
    x, w = bench.operands
    mask = w[::-1].copy()  # the bench problem correlates with w; np.convolve flips its mask
    row.e2e = host_seconds(lambda: np.asarray(convolve(x, mask, kernel=name, params=params)),
                           budget_s=budget_s)
    gflops = 2 * p.length * p.m / row.device.seconds * 1e-9
    row.note = (", ".join(f"{k}={v}" for k, v in sorted(choice.params.items()))
                + f"; {gflops:.1f} GFLOP/s direct-equivalent")
    return row


def run(device: Device, sizes: Iterable[int], kernels: Sequence[str] | None = None,
        dtype: Any = np.float32, mask: int = DEFAULT_MASK, budget_s: float = 0.5,
        with_peers: bool = True, progress: Any = None) -> list[Row]:
    """Measure every convolution kernel (or ``kernels``) and NumPy at each signal length."""
    from ..kernels import conv
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
        for name in names:
            if progress is not None:
                progress.note(f"{name} {size}")
            variant = conv.CATALOGUE[name]
            if conv.CATALOGUE.tuned_params(device, variant, p):
                rows.append(_kernel_row(device, bench, name, None, f"{name} (tuned)", budget_s,
                                        size, n))
                rows.append(_kernel_row(device, bench, name, dict(variant.defaults),
                                        f"{name} (defaults)", budget_s, size, n))
            else:
                rows.append(_kernel_row(device, bench, name, None, name, budget_s, size, n))
            if progress is not None:
                progress.update()
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
