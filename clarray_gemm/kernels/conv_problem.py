"""What every 1-D convolution kernel shares: the problem description, the catalogue, the dtype
and resource rules (the direct kernels' argument convention is in ``conv_direct._prepared``).

All kernels compute one formula, a correlation with zero "ghost cells" outside the input:

    out[k] = sum_{j<m} x[k + j - pad] * w[j]        for k in range(L)

``ops/convolve.py`` maps NumPy's ``convolve``/``correlate`` and their modes onto it (the mask is
reversed for ``convolve``; ``pad`` and ``L`` come from the mode) and describes the call as a
:class:`ConvProblem`. The direct kernels (``conv_direct.py``) share the calling convention of
``opencl/conv_basic.cl``; the FFT path (``conv_fft.py``) runs a sequence of launches.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import DeviceInfo
from ..dtypes import unsupported_dtype
from .variant import Catalogue

__all__ = ["ConvProblem", "CATALOGUE", "launch_counts", "dtype_supported", "INT_MAX"]

INT_MAX = 2**31 - 1

launch_counts: Counter = Counter()
"""How many times each variant was launched in this process (tests use it to prove that a call
ran on the device, and which kernel it ran)."""


@dataclass(frozen=True)
class ConvProblem:
    """``out[k] = sum_{j<m} x[x_offset + k + j - pad] * w[j]`` for ``k < length``, ``x`` taken
    as zero outside ``[0, n)``; ``w`` and ``out`` are contiguous from element 0."""

    n: int
    m: int
    pad: int
    length: int
    dtype: np.dtype
    x: cl.Buffer
    x_offset: int
    w: cl.Buffer
    out: cl.Buffer

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def macs(self) -> int:
        """Multiply-adds a direct kernel does, about (exact for "full" and "valid")."""
        return min(self.length, self.n) * self.m


CATALOGUE: Catalogue[ConvProblem] = Catalogue("convolve")


def round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def dtype_supported(problem: ConvProblem, info: DeviceInfo) -> str | None:
    """Why no convolution kernel takes this problem's dtype or lengths, or None."""
    why = unsupported_dtype(problem.dtype, info, min_itemsize=4)
    if why:
        return why
    if problem.n + problem.m > INT_MAX:
        return "lengths beyond 2**31 (the kernels index with int)"
    return None


def wg_fits(params: Mapping[str, int], info: DeviceInfo) -> str | None:
    if params["WG"] > info.max_work_group_size:
        return f"work-group {params['WG']} larger than the device allows"
    return None


def local_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int],
               elements: int) -> str | None:
    """Local memory for ``elements`` elements, then the dtype and work-group rules."""
    need = elements * p.itemsize
    if need > info.local_mem_bytes:
        return f"needs {need} bytes of local memory, the device has {info.local_mem_bytes}"
    return dtype_supported(p, info) or wg_fits(params, info)
