"""Host/OpenCL crossovers: per device, family and dtype, the problem size from which the OpenCL
kernel beats NumPy on the host mapping (dispatch's host path reads them through
:func:`clarray_gemm.kernels.tuned.crossover`).

For each family, NumPy on host arrays and the library's kernel forced through the public API
(the kernel dispatch ranks first for that size, device operands, the queue drained after each
call) are timed at ascending sizes, NumPy before and after the kernel (the faster counts). The
crossover is the smallest size from which the kernel wins at every larger measured size;
"never" when it loses at the largest.

* ``matmul``: ``n x n @ n x n``, size in flops (``2 n**3``);
* ``elementwise``: ``x + y`` of ``n`` elements, size in elements;
* ``convolve``: ``np.convolve`` of ``n`` samples with a 31-tap mask, size ``n * m``;
* ``convolve_fft`` / ``convolve_fft_short``: the host's overlap-add FFT against the direct
  kernel for a 2**20- / 2**16-sample signal, size the mask length ``m`` (from it dispatch takes
  the FFT where a kernel would run, for signals from / under 2**18 samples);
* ``convolve_host_fft``: the host's overlap-add FFT against NumPy's direct ``np.convolve`` for
  a 2**14-sample signal, size ``m`` (from it dispatch takes the FFT on the host path).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..bench.progress import Progress
from ..bench.timing import host_seconds
from ..device import Device, get_device
from ..kernels import conv, gemm, tuned
from ..kernels.samples import bench_problem, conv_bench_problem
from ..kernels import plans
from ..kernels.crossover import host_path
from ..kernels.tuned import CROSSOVER_FAMILIES, crossover_key
from .search import save_store

__all__ = ["SIZES", "QUICK_SIZES", "CONV_MASK", "Point", "Crossover", "crossover_size",
           "measure_crossovers", "Timer"]

CONV_MASK = 31

SIZES: dict[str, tuple[int, ...]] = {
    "matmul": (16, 32, 64, 128, 256, 512, 1024),        # n of n x n @ n x n
    "elementwise": tuple(4**k for k in range(5, 12)),   # 1 Ki .. 4 Mi elements
    "convolve": tuple(4**k for k in range(5, 11)),      # signal lengths 1 Ki .. 1 Mi
    "convolve_fft": (15, 31, 63, 127, 255, 511, 1023),  # mask lengths, signal 2**20
    "convolve_fft_short": (3, 7, 15, 31, 63, 127, 255),  # mask lengths, signal 2**16
    "convolve_host_fft": (3, 7, 15, 23, 31, 63, 127),   # mask lengths, signal 2**14
}
QUICK_SIZES: dict[str, tuple[int, ...]] = {
    "matmul": (16, 64, 256), "elementwise": (4**5, 4**7, 4**9), "convolve": (4**5, 4**7),
    "convolve_fft": (31, 255), "convolve_fft_short": (7, 63), "convolve_host_fft": (7, 63)}
SIMULATOR_SIZES: dict[str, tuple[int, ...]] = {
    "matmul": (8, 16), "elementwise": (256, 1024), "convolve": (256,), "convolve_fft": (8,),
    "convolve_fft_short": (8,), "convolve_host_fft": (8,)}
"""On a simulator (Oclgrind) every kernel is slow: a token measurement only."""


@dataclass(frozen=True)
class Point:
    """One size: the problem size (in the family's unit) and both median times."""

    size: float
    numpy_s: float
    kernel_s: float

    @property
    def kernel_wins(self) -> bool:
        return self.kernel_s < self.numpy_s


@dataclass
class Crossover:
    """The measured crossover of one (family, dtype): ``size`` is ``math.inf`` for "never"."""

    family: str
    dtype: str
    kernel: str
    size: float
    points: list[Point] = field(default_factory=list)

    @property
    def unit(self) -> str:
        return CROSSOVER_FAMILIES[self.family]


def crossover_size(points: Sequence[Point]) -> float:
    """The smallest size from which the kernel wins at every larger size; inf if it loses at
    the largest (or nothing was measured)."""
    size = math.inf
    for p in sorted(points, key=lambda p: p.size, reverse=True):
        if not p.kernel_wins:
            break
        size = p.size
    return size


# A case: (problem size, NumPy on host arrays, the kernel on device arrays, the kernel's name)
Case = tuple[float, Callable[[], Any], Callable[[], Any], str]


def _data(shape: tuple[int, ...], dt: np.dtype, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dt)


def _matmul_case(device: Device, n: int, dt: np.dtype) -> Case:
    import clarray_gemm as cg
    name = gemm.choose(device, bench_problem(device, n, n, n, dt).problem).variant.name
    a, b = _data((n, n), dt, 0), _data((n, n), dt, 1)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    return (2.0 * n**3, lambda: a @ b,
            lambda: (cg.matmul(x, y, kernel=name), device.queue.finish()), name)


def _elementwise_case(device: Device, n: int, dt: np.dtype) -> Case:
    import clarray_gemm as cg
    a, b = _data((n,), dt, 0), _data((n,), dt, 1)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    return (float(n), lambda: a + b, lambda: (np.add(x, y), device.queue.finish()),
            "elementwise")


def _convolve_case(device: Device, n: int, dt: np.dtype) -> Case:
    import clarray_gemm as cg
    name = conv.choose(device, conv_bench_problem(device, n, CONV_MASK, dt).problem).variant.name
    a, w = _data((n,), dt, 0), _data((CONV_MASK,), dt, 1)
    x, v = cg.asarray(a, device=device), cg.asarray(w, device=device)
    return (float(n * CONV_MASK), lambda: np.convolve(a, w),
            lambda: (cg.convolve(x, v, kernel=name), device.queue.finish()), name)


CONV_FFT_SIGNALS = {"convolve_fft": 2**20, "convolve_fft_short": 2**16}


def _convolve_fft_case(family: str) -> Callable[[Device, int, np.dtype], Case]:
    def case(device: Device, m: int, dt: np.dtype) -> Case:
        return _convolve_fft(device, CONV_FFT_SIGNALS[family], m, dt)
    return case


def _convolve_fft(device: Device, n: int, m: int, dt: np.dtype) -> Case:
    """The host's overlap-add FFT (``kernel="host_fft"``, NumPy arrays in) against the kernel
    dispatch runs for an n-sample signal and an m-tap mask (size: m)."""
    import clarray_gemm as cg
    name = conv.choose(device, conv_bench_problem(device, n, m, dt).problem).variant.name
    a, w = _data((n,), dt, 0), _data((m,), dt, 1)
    x, v = cg.asarray(a, device=device), cg.asarray(w, device=device)
    return (float(m), lambda: (cg.convolve(x, v, kernel=name), device.queue.finish()),
            lambda: np.asarray(cg.convolve(a, w, kernel="host_fft")), "host_fft")


HOST_FFT_SIGNAL = 2**14


def _convolve_host_fft(device: Device, m: int, dt: np.dtype) -> Case:
    """The host's overlap-add FFT against NumPy's direct ``np.convolve``, both on NumPy arrays
    in and out (size: m), as ``_convolve_fft`` times the FFT."""
    import clarray_gemm as cg
    a, w = _data((HOST_FFT_SIGNAL,), dt, 0), _data((m,), dt, 1)
    return (float(m), lambda: np.convolve(a, w),
            lambda: np.asarray(cg.convolve(a, w, kernel="host_fft")), "host_fft")


CASES: dict[str, Callable[[Device, int, np.dtype], Case]] = {
    "matmul": _matmul_case, "elementwise": _elementwise_case, "convolve": _convolve_case,
    "convolve_fft": _convolve_fft_case("convolve_fft"),
    "convolve_fft_short": _convolve_fft_case("convolve_fft_short"),
    "convolve_host_fft": _convolve_host_fft}

Timer = Callable[[Callable[[], Any], float], float]
"""Median seconds of a call within a budget (tests replace it)."""


def _median_seconds(op: Callable[[], Any], budget_s: float) -> float:
    return host_seconds(op, budget_s=budget_s).seconds


def _measure(device: Device, family: str, dt: np.dtype, sizes: Iterable[int],
             budget_s: float, timer: Timer, bar: Progress) -> Crossover:
    points, names = [], []
    for n in sizes:
        bar.note(f"{family} {dt.name} {n}")
        size, numpy_op, kernel_op, name = CASES[family](device, n, dt)
        names.append(name)
        first = timer(numpy_op, budget_s)
        with host_path(False):  # the kernel, whatever the stored or default crossover says
            ours = timer(kernel_op, budget_s)
        again = timer(numpy_op, budget_s)
        points.append(Point(size, min(first, again), ours))
        bar.update()
    kernels = sorted(set(names), key=names.index)
    return Crossover(family, dt.name, "/".join(kernels), crossover_size(points), points)


def _dtypes(device: Device, dtypes: Sequence[Any] | None) -> list[np.dtype]:
    if dtypes is not None:
        return [np.dtype(d) for d in dtypes]
    return [np.dtype(np.float32)] + ([np.dtype(np.float64)] if device.info.fp64 else [])


def measure_crossovers(device: Device | str | int | None = None, *,
                       families: Sequence[str] | None = None,
                       dtypes: Sequence[Any] | None = None, quick: bool = False,
                       sizes: dict[str, Sequence[int]] | None = None,
                       budget_s: float | None = None, timer: Timer | None = None,
                       progress: bool = True, save: bool = True) -> list[Crossover]:
    """Measure and store the crossovers of ``families`` (default: matmul, elementwise,
    convolve) for ``dtypes`` (default: float32, and float64 where the device has fp64).
    ``sizes`` replaces the per-family size lists (:data:`SIZES`, :data:`QUICK_SIZES` with
    ``quick``, :data:`SIMULATOR_SIZES` on a simulator); ``timer`` replaces the wall-clock
    measurement (tests use it). While a crossover is measured it is absent from the store, so
    that dispatch takes the kernel where nothing forces it (``x + y``)."""
    device = get_device(device)
    fams = list(families) if families else list(CROSSOVER_FAMILIES)
    base = (SIMULATOR_SIZES if device.info.is_simulator else QUICK_SIZES if quick else SIZES)
    table = {**base, **(sizes or {})}
    budget = budget_s if budget_s is not None else (0.02 if quick else 0.1)
    timer = timer or _median_seconds
    dts = _dtypes(device, dtypes)
    store = tuned.store_for(device)
    results = []
    with Progress(sum(len(table[f]) for f in fams) * len(dts), "crossover", progress,
                  unit="size") as bar:
        for fam in fams:
            for dt in dts:
                result = _measure(device, fam, dt, table[fam], budget, timer, bar)
                results.append(result)
                store.crossover[crossover_key(fam, dt)] = {
                    "size": "never" if math.isinf(result.size) else result.size,
                    "unit": result.unit, "kernel": result.kernel,
                    "points": [[p.size, p.numpy_s, p.kernel_s] for p in result.points],
                    "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    if save:
        save_store(store)
        tuned.forget(store.path)
    plans.clear_all()  # plans made before hold the old crossovers
    return results
