"""Where the host path wins: per device, operation family and dtype, the problem size below
which NumPy on the buffers' host mapping beats an OpenCL kernel.

Only devices whose memory is the host's (``DeviceInfo.host_unified_memory``: CPU drivers,
integrated GPUs) have a host path: there NumPy reads and writes the same bytes a kernel would,
with no copy. Sizes are in the family's work unit: flops (2·M·N·K per product) for ``matmul``,
output elements for ``elementwise`` (gathers and joins too), input elements for ``reduce``
(reductions and scans), multiply-adds (N·m) for ``convolve``; ``convolve_fft`` and
``convolve_fft_short`` are mask lengths (from them the host's overlap-add FFT replaces the
direct kernel, for signals of at least / under ``FFT_LONG_SIGNAL`` samples);
``convolve_host_fft`` is the mask length from which, below the ``convolve`` crossover, the
host's FFT replaces NumPy's direct ``np.convolve`` (signals of ``HOST_FFT_MIN_SIGNAL`` samples
and more: shorter ones never pay for the transforms).

``python -m clarray_gemm tune`` measures the crossovers of a device and stores them with the
tuning data; until then the defaults below hold. They come from measurements on PoCL (2-core
AMD EPYC): a PoCL launch with its completion costs ~180 us, so elementwise work never wins there,
OpenBLAS beats every GEMM kernel at every size, and the direct convolution kernels win from
about N·m = 2^20 multiply-adds (NumPy's direct ``np.convolve`` is single-threaded).
"""
from __future__ import annotations

import contextlib
import math

from typing import Callable, Iterator

import numpy as np

from .. import _dispatch, settings
from ..device import Device
from . import plans
from .constants import constant

__all__ = ["FFT_LONG_SIGNAL", "HOST_FFT_MIN_SIGNAL", "crossover", "has_host_path",
           "host_wins", "prefer_host", "set_tuned_lookup", "host_path", "host_path_enabled"]

_enabled = settings.host_path()


def host_path_enabled() -> bool:
    """Whether small work may run on the host path (``CLARRAY_GEMM_HOST_PATH=0`` disables it)."""
    return _enabled


@contextlib.contextmanager
def host_path(enabled: bool) -> Iterator[None]:
    """Allow or forbid the host path inside a ``with`` block (process-wide): with it off,
    every operation that has a kernel runs one, as ``kernel=`` does for one call."""
    global _enabled
    previous, _enabled = _enabled, bool(enabled)
    plans.clear_all()
    try:
        yield
    finally:
        _enabled = previous
        plans.clear_all()

NEVER = math.inf  # the kernel never wins: always the host path
FFT_LONG_SIGNAL = 1 << 18
"""Signals from this length use the ``convolve_fft`` crossover, shorter ones
``convolve_fft_short``."""
HOST_FFT_MIN_SIGNAL = 4096
"""Signals from this length may take the host FFT below the ``convolve`` crossover (the
``convolve_host_fft`` crossover); shorter ones never pay for the transforms."""

# "convolve_fft" (signals of 2**18 samples and more) and "convolve_fft_short" (shorter signals)
# are the mask lengths from which the host's overlap-add FFT (ops/convolve_host.py) replaces the
# direct kernel where one would run (N*m above the "convolve" crossover): a launch with its wait
# costs PoCL milliseconds on a loaded machine, so on short signals the FFT wins from shorter
# masks. "convolve_host_fft": the mask length from which NumPy's direct loop gives way to the
# host FFT when both run on the host. "fuse": elements from which a fused expression
# (ops/fusion.py) runs its kernel where single ufuncs stay on the host (one pass replaces
# several of NumPy's). The measured values and their evidence are tuning data.
_DEFAULTS_CPU = {"matmul": NEVER, "elementwise": NEVER, "convolve": float(1 << 20),
                 "reduce": NEVER, "convolve_fft": float(constant("crossover.convolve_fft_cpu")),
                 "convolve_fft_short": float(constant("crossover.convolve_fft_short_cpu")),
                 "convolve_host_fft": float(constant("crossover.convolve_host_fft")),
                 "fuse": float(constant("crossover.fuse_cpu"))}
# CPU drivers with cheap launches (DeviceInfo.cheap_launches: Intel's CPU runtime): the direct
# kernel keeps short signals against the host FFT up to longer masks.
_DEFAULTS_CPU_CHEAP = dict(_DEFAULTS_CPU, convolve_fft_short=float(
    constant("crossover.convolve_fft_short_cheap")))
# Integrated GPUs: a launch costs tens of microseconds, the GPU wins once work amortises it.
_DEFAULTS_IGPU = {"matmul": 2.0 * 128 ** 3, "elementwise": float(1 << 18),
                  "convolve": float(1 << 18), "reduce": float(1 << 18), "convolve_fft": NEVER,
                  "convolve_fft_short": NEVER,
                  "convolve_host_fft": float(constant("crossover.convolve_host_fft")),
                  "fuse": float(1 << 18)}

# (device, family, dtype) -> measured size or None; installed by the tuning store.
_tuned_lookup: Callable[[Device, str, np.dtype], float | None] = lambda d, f, t: None


# Resolved crossovers, cleared with the plans (``plans.clear_all``) when tuning stores new ones.
_RESOLVED: plans.PlanCache[tuple[float, bool]] = plans.PlanCache("crossover")


def set_tuned_lookup(lookup: Callable[[Device, str, np.dtype], float | None]) -> None:
    """Install the tuning store's reader of measured crossovers."""
    global _tuned_lookup
    _tuned_lookup = lookup


def has_host_path(device: Device) -> bool:
    """Whether small work may run as NumPy on ``device``'s buffers (unified memory, the host
    path enabled, not a simulator)."""
    return _enabled and device.info.host_unified_memory and not device.info.is_simulator


def crossover(device: Device, family: str, dtype: np.dtype) -> tuple[float, bool]:
    """(size below which the host path runs, whether it was measured on this device);
    0 where the device has no host path."""
    key = (device, family, dtype)
    return _RESOLVED.find(key) or _RESOLVED.get(key, lambda: _resolve(device, family, dtype))


def _resolve(device: Device, family: str, dtype: np.dtype) -> tuple[float, bool]:
    if not has_host_path(device):  # cached too: ``host_path()`` clears the cache it changes
        return 0.0, False
    measured = _tuned_lookup(device, family, np.dtype(dtype))
    if measured is not None:
        return float(measured), True
    info = device.info
    defaults = ((_DEFAULTS_CPU_CHEAP if info.cheap_launches else _DEFAULTS_CPU) if info.is_cpu
                else _DEFAULTS_IGPU)
    return defaults[family], False


def host_wins(device: Device, family: str, dtype: np.dtype, work: float) -> bool:
    """Whether the host path runs a problem of ``work`` units (:func:`prefer_host` without its
    reason: the per-call check of operations that need no text)."""
    return work < crossover(device, family, dtype)[0]


def prefer_host(device: Device, family: str, dtype: np.dtype, work: float) -> str | None:
    """Why the host path runs a problem of ``work`` units, or None when a kernel should."""
    limit, measured = crossover(device, family, dtype)
    if work >= limit:
        return None
    source = "measured on this device" if measured else "default estimate for this device type"
    if limit == NEVER:
        return f"host NumPy on the mapped buffers: no {family} kernel beats it on this device ({source})"
    return (f"host NumPy on the mapped buffers: below the {_units(family, limit)} crossover "
            f"({source})")


def _units(family: str, size: float) -> str:
    if family == "matmul":
        return f"{round((size / 2) ** (1 / 3))}^3 product"
    if family == "convolve":
        return f"N*m = {size:.3g}"
    return f"{size:.3g}-element"


def _copy_on_host(device: Device, dtype: np.dtype, size: int) -> bool:
    # crossover()'s cache read here: every small slice assignment asks
    found = _RESOLVED.find((device, "elementwise", dtype))
    return size < (found or crossover(device, "elementwise", dtype))[0]


_dispatch.register_copy_on_host(_copy_on_host)
