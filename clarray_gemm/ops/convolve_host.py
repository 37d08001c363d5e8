"""The host strategies of ``np.convolve`` / ``np.correlate`` on devices whose memory is the
host's: NumPy's own direct loops, or an overlap-add FFT convolution with ``numpy.fft``, run on
the buffers' host mapping and written into a host-resident device buffer.

The overlap-add cuts the signal into blocks of ``B`` samples and transforms each with a real
FFT of ``P = B + m - 1`` points (``P`` 2-3-5-smooth, chosen by :func:`block_length`'s cost
model: P log2 P per B outputs), multiplies by the mask's spectrum (cached for a repeated mask)
and adds the inverse transforms' tails into the next block. The transforms are scipy.fft's when
scipy is installed (float32 natively, ``workers=`` one thread per core), else numpy.fft's in
float64 with the blocks spread over threads (NumPy's FFT releases the GIL).

NaN and infinities: a transform spreads one to every output, where NumPy's direct loops spoil
only the outputs whose window covers it. So non-finite signal values are transformed as zeros
and the outputs whose window covers one are recomputed with NumPy's direct ``np.convolve`` on
the slice they need; a non-finite mask value makes the whole call NumPy's direct loops.
"""
from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from .. import settings

__all__ = ["block_length", "fft_convolve_full", "fft_cost", "smooth_length"]

_SPECTRA: dict[tuple, np.ndarray] = {}
_SPECTRA_KEPT = 8
_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None
# Below this many transform points in all, one thread. 2-core Intel Xeon, PoCL's host, float32,
# scipy.fft, ms for one / two threads: N = 2^16 m = 31 0.22 / 0.62, m = 1023 0.36 / 0.41;
# N = 2^18 2.0-2.5 / 2.0-3.3; N = 2^20 6.3-7.5 / 6.4-6.6; N = 2^22 36 / 25.
_THREAD_MIN_POINTS = 1 << 20
# Per-block cost beyond P log2 P (row set-up, the spectrum product, the overlap-add), in the
# same units: keeps short masks from tiny transforms.
_BLOCK_OVERHEAD = 512


@lru_cache(maxsize=None)
def _smooth_numbers(limit: int) -> tuple[int, ...]:
    out = []
    p2 = 1
    while p2 <= limit:
        p3 = p2
        while p3 <= limit:
            p5 = p3
            while p5 <= limit:
                out.append(p5)
                p5 *= 5
            p3 *= 3
        p2 *= 2
    return tuple(sorted(out))


def smooth_length(n: int) -> int:
    """The smallest 2-3-5-smooth number >= n (what pocketfft transforms fastest)."""
    limit = 1 << max(n - 1, 1).bit_length()
    return next(p for p in _smooth_numbers(limit) if p >= n)


def fft_cost(n: int, m: int, P: int) -> float:
    """Modelled cost (in P log2 P units) of the overlap-add of n samples with blocks of P."""
    blocks = -(-n // (P - m + 1))
    return blocks * (P * math.log2(P) + _BLOCK_OVERHEAD)


@lru_cache(maxsize=1024)
def block_length(n: int, m: int) -> int:
    """The transform length P of the overlap-add: the 2-3-5-smooth P >= 2m with the least
    modelled cost (one transform of the whole problem where that is cheaper)."""
    whole = smooth_length(n + m - 1)
    best, best_cost = whole, fft_cost(n, m, whole)
    limit = min(whole, 1 << max(8 * m, 64).bit_length())
    for P in _smooth_numbers(1 << max(limit - 1, 1).bit_length()):
        if P < 2 * m or P > limit:
            continue
        cost = fft_cost(n, m, P)
        if cost < best_cost:
            best, best_cost = P, cost
    return best


def _backend() -> tuple[Callable, Callable, dict, bool]:
    """(rfft, irfft, extra keywords, whether float32 stays float32): ``scipy.fft`` when it is
    installed (float32 natively, ``workers=`` threads), else ``numpy.fft`` in float64 (NumPy's
    float32 transforms measured 2-7x slower than its float64 ones, PoCL machine, NumPy 2.4)."""
    sfft = _scipy_fft()
    if sfft is None:
        return np.fft.rfft, np.fft.irfft, {}, False
    return sfft.rfft, sfft.irfft, {"workers": _cores()}, True


@lru_cache(maxsize=1)
def _scipy_fft() -> Any:
    """``scipy.fft``, imported on first use (None without scipy): an import statement per call
    cost about a microsecond."""
    try:
        import scipy.fft as sfft
    except ImportError:
        return None
    return sfft


def _cores() -> int:
    """Threads for the transforms: ``CLARRAY_GEMM_HOST_THREADS``, else the cores this process
    may run on (a dask worker given one core of a shared CPU device is given one thread)."""
    limit = settings.host_threads()
    if limit is not None:
        return limit
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _spectrum(h: np.ndarray, P: int) -> np.ndarray:
    """rfft(h, P), cached for the few most recent (mask, P)."""
    key = (h.dtype.str, P, h.tobytes())
    with _LOCK:
        spec = _SPECTRA.pop(key, None)
    if spec is None:
        spec = _backend()[0](h, P)
    with _LOCK:
        while len(_SPECTRA) >= _SPECTRA_KEPT:
            _SPECTRA.pop(next(iter(_SPECTRA)))
        _SPECTRA[key] = spec
    return spec


def _pool() -> ThreadPoolExecutor | None:
    global _POOL
    if _cores() < 2:
        return None
    if _POOL is None:
        _POOL = ThreadPoolExecutor(_cores(), thread_name_prefix="clarray-conv")
    return _POOL


def _overlap_add(x: np.ndarray, h: np.ndarray, P: int) -> np.ndarray:
    """The full convolution of finite x and h by overlap-add with transforms of P points."""
    rfft, irfft, kw, keeps_float32 = _backend()
    out_dtype = x.dtype
    if not keeps_float32:
        x, h = x.astype(np.float64, copy=False), h.astype(np.float64, copy=False)
    n, m = len(x), len(h)
    B = P - m + 1
    blocks = -(-n // B)
    if blocks * P < _THREAD_MIN_POINTS and kw:
        kw = {}                                         # threads cost more than they save
    spec = _spectrum(h, P)
    if blocks == 1:  # P >= n + m - 1: one transform of the whole signal, no block grid
        return irfft(rfft(x, P, **kw) * spec, P, **kw)[:n + m - 1].astype(out_dtype, copy=False)
    whole = n // B
    rows = x[:whole * B].reshape(whole, B)             # a view; rfft pads each row to P
    if whole < blocks:
        last = np.zeros((1, B), dtype=x.dtype)
        last[0, :n - whole * B] = x[whole * B:]
        rows = np.concatenate([rows, last]) if whole else last

    def work(lo: int, hi: int) -> np.ndarray:
        return irfft(rfft(rows[lo:hi], P, axis=1, **kw) * spec, P, axis=1, **kw)

    pool = None if kw else _pool()
    if pool is None or blocks < 2 or blocks * P < _THREAD_MIN_POINTS:
        parts = [(0, blocks, work(0, blocks))]
    else:
        cuts = np.linspace(0, blocks, _cores() + 1).astype(int)
        spans = [(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]
        futures = [pool.submit(work, lo, hi) for lo, hi in spans]
        parts = [(lo, hi, f.result()) for (lo, hi), f in zip(spans, futures)]
    grid = np.empty((blocks + 1, B), dtype=out_dtype)  # one spare row for the last tail
    grid[blocks] = 0
    tail = m - 1
    for lo, hi, y in parts:
        grid[lo:hi] = y[:, :B]
    for lo, hi, y in parts:
        if tail:
            grid[lo + 1:hi + 1, :tail] += y[:, B:]
    return grid.reshape(-1)[:n + m - 1]


def fft_convolve_full(x: np.ndarray, h: np.ndarray, direct: Callable[..., np.ndarray]
                      = np.convolve) -> np.ndarray:
    """``np.convolve(x, h, "full")`` for real float x and h (len(h) <= len(x)) by overlap-add,
    with NumPy's NaN and infinity pattern (see the module's docstring)."""
    n, m = len(x), len(h)
    # A finite sum proves every element finite (NaN and inf propagate through it); a sum that
    # overflowed only sends finite data down the slower path, which gives the same result.
    with np.errstate(over="ignore", invalid="ignore"):  # NumPy's loops warn of neither
        h_finite = np.isfinite(np.add.reduce(h)) or np.isfinite(h).all()
        x_finite = np.isfinite(np.add.reduce(x))
    if not h_finite:
        return direct(x, h)
    if x_finite:
        return _overlap_add(x, h, block_length(n, m))
    finite = np.isfinite(x)
    bad = np.flatnonzero(~finite)
    full = _overlap_add(np.where(finite, x, x.dtype.type(0)), h, block_length(n, m))
    _recompute(full, x, h, bad, direct)
    return full


def _recompute(full: np.ndarray, x: np.ndarray, h: np.ndarray, bad: np.ndarray,
               direct: Callable[..., np.ndarray]) -> None:
    """Overwrite the full-convolution outputs that cover a non-finite input of ``x`` (at the
    sorted positions ``bad``) with NumPy's direct result on the slice each run of them needs."""
    n, m = len(x), len(h)
    # output f covers input i when i <= f < i + m: the runs [i, i + m), merged where they touch
    starts, ends = bad, bad + m
    split = np.flatnonzero(starts[1:] > ends[:-1]) + 1
    for run in np.split(np.arange(len(bad)), split):
        f0, f1 = int(starts[run[0]]), int(ends[run[-1]])
        a, b = max(0, f0 - m + 1), min(n, f1)
        full[f0:f1] = direct(x[a:b], h)[f0 - a:f1 - a]
