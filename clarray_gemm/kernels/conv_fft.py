"""The FFT path of the 1-D convolution: zero-padded power-of-two Stockham FFTs (radix 8/4/2) of
signal and mask, a pointwise product and an inverse FFT (``opencl/conv_fft.cl``), and the rule
for when it beats the direct kernels (its cost does not grow with the mask length).

NaN and infinities give NumPy's pattern: the packing pass stores them as zeros and records
where they were, and the extraction computes the outputs whose window covers one directly
(all of them when the mask holds one or more than ``NSPECIAL`` signal values are non-finite).
"""
from __future__ import annotations

import threading
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..dtypes import dtype_defines
from ..memory import new_buffer
from .conv_problem import (INT_MAX, ConvProblem, dtype_supported, launch_counts, round_up,
                           wg_fits)
from .programs import get_kernel
from .variant import Variant
from .constants import constant

__all__ = ["FFT_MAC_RATIO", "FFT_MIN_MASK", "fft_length", "fft_preferred", "VARIANT",
           "VARIANTS"]

# When the FFT path replaces the direct kernels: the direct cost is about min(L, n) * m
# multiply-adds, the FFT's about P * log2(P) (three transforms of P = 2**ceil(log2(n + m - 1))
# points), and the FFT wins when the first exceeds FFT_MAC_RATIO times the second (the measured
# break-even, tuning data). FFT_MIN_MASK keeps short masks on the direct kernels whatever n is.
FFT_MAC_RATIO = constant("conv.fft_mac_ratio")
FFT_MIN_MASK = constant("conv.fft_min_mask")


def fft_length(problem: ConvProblem) -> int:
    """The power-of-two transform length: at least n + m - 1, so no wrap-around."""
    return 1 << max(problem.n + problem.m - 2, 1).bit_length()


def _fft_fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if np.dtype(p.dtype).kind != "f":
        return "integer results must be exact; the FFT path is for floating dtypes only"
    P = fft_length(p)
    if 2 * P * p.itemsize > info.max_alloc_bytes or 3 * 2 * P * p.itemsize > info.global_mem_bytes:
        return f"three complex buffers of {P} elements do not fit in device memory"
    if P > INT_MAX:
        return "transform longer than 2**31"
    return dtype_supported(p, info) or wg_fits(params, info)


def fft_preferred(p: ConvProblem, ratio: float = FFT_MAC_RATIO) -> bool:
    """True when the FFT path is expected to beat the direct kernels: when the direct kernels'
    multiply-adds exceed ``ratio`` times P log2 P (FFT_MAC_RATIO: measured on a CPU)."""
    if np.dtype(p.dtype).kind != "f" or p.m < FFT_MIN_MASK:
        return False
    P = fft_length(p)
    return p.macs > ratio * P * (P.bit_length() - 1)


def _fft_rank(p: ConvProblem, info: DeviceInfo) -> float:
    return 9.0 if fft_preferred(p) else 0.5


_TWIDDLES: dict[tuple, tuple[cl.Buffer, list]] = {}
_TWIDDLES_KEPT = 4


def _passes(P: int) -> list[tuple[int, int]]:
    """The (radix, span) of each Stockham pass: radix 8 while it divides, then 4 or 2."""
    out, p = [], 1
    while p < P:
        radix = 8 if P // p >= 8 else P // p
        out.append((radix, p))
        p *= radix
    return out


def _twiddles(device: Device, kernels: dict, P: int, dtype: np.dtype, wg: int
              ) -> tuple[cl.Buffer, list[tuple[int, int, int]]]:
    """The twiddle table and, per pass, (radix, span, offset of its segment
    exp(-2 pi i e / (radix*span)), e < radix*span); built on the device once per
    (device, P, dtype), the few most recent tables kept."""
    key = (device.cl_device.int_ptr, P, np.dtype(dtype).str)
    entry = _TWIDDLES.pop(key, None)
    if entry is None:
        segments, total = [], 0
        for radix, p in _passes(P):
            segments.append((radix, p, total))
            total += radix * p
        table = new_buffer(device, total * 2 * np.dtype(dtype).itemsize)
        for radix, p, off in segments:
            n = radix * p
            kernels["fft_twiddles"](device.queue, (round_up(n, wg),), (wg,), table,
                                    np.int32(off), np.int32(n))
        entry = (table, segments)
        while len(_TWIDDLES) >= _TWIDDLES_KEPT:
            _TWIDDLES.pop(next(iter(_TWIDDLES)))
    _TWIDDLES[key] = entry
    return entry


def _fft_transform(device: Device, kernels: dict, src: cl.Buffer, tmp: cl.Buffer,
                   twiddles: tuple, P: int, sign: int, wg: int) -> tuple[cl.Buffer, cl.Buffer]:
    """Stockham FFT of ``src`` (length P); returns (buffer holding the result, the other)."""
    table, segments = twiddles
    for radix, p, off in segments:
        items = P // radix
        kernels[f"fft_radix{radix}"](device.queue, (round_up(items, wg),), (wg,), src, tmp,
                                     table, np.int32(off), np.int32(P), np.int32(p),
                                     np.int32(sign))
        src, tmp = tmp, src
    return src, tmp


NSPECIAL = 32
"""Positions of non-finite signal values the FFT path records (``NSPECIAL`` in conv_fft.cl);
with more, every output is computed directly."""
_STATUS_INTS = 4 + NSPECIAL
_STATUS: dict[int, cl.Buffer] = {}

_SCRATCH: dict[int, tuple[int, str, tuple[cl.Buffer, ...]]] = {}
# The FFT's launches must reach the in-order queue as one block, since they share the scratch
# buffers (a second thread's launches in between would overwrite them).
_FFT_LOCK = threading.Lock()


def _scratch(device: Device, P: int, dtype: np.dtype) -> tuple[cl.Buffer, ...]:
    """Three complex work buffers of P elements, kept for the next call of the same size (the
    queue is in order, so a call can reuse them as soon as its launches are enqueued)."""
    key = device.cl_device.int_ptr
    kept = _SCRATCH.get(key)
    if kept is None or kept[0] != P or kept[1] != np.dtype(dtype).str:
        cbytes = 2 * P * np.dtype(dtype).itemsize
        kept = (P, np.dtype(dtype).str, tuple(new_buffer(device, cbytes) for _ in range(3)))
        _SCRATCH[key] = kept
    return kept[2]


def _status(device: Device) -> cl.Buffer:
    """The device's status buffer of the non-finite check (conv_fft.cl's ``status[]``)."""
    key = device.cl_device.int_ptr
    buf = _STATUS.get(key)
    if buf is None:
        buf = _STATUS[key] = new_buffer(device, _STATUS_INTS * 4)
    return buf


def _fft_launch(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
    with _FFT_LOCK:
        return _fft_enqueue(device, problem, params)


def _fft_enqueue(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
    p = problem
    defines = {"T": dtype_defines(p.dtype)["T"], "IS_FP64": int(np.dtype(p.dtype) == np.float64),
               "NSPECIAL": NSPECIAL}
    names = ("fft_twiddles", "fft_clear_status", "fft_pack", "fft_radix2", "fft_radix4", "fft_radix8", "fft_cmul",
             "fft_extract")
    k = {name: get_kernel(device, "conv_fft.cl", name, defines) for name in names}
    P = fft_length(p)
    wg = min(params["WG"], P)
    a, b, c = _scratch(device, P, p.dtype)
    grid = (round_up(P, wg),)
    i32 = np.int32
    q = device.queue
    table = _twiddles(device, k, P, p.dtype, wg)
    status = _status(device)
    k["fft_clear_status"](q, (round_up(_STATUS_INTS, wg),), (wg,), status, i32(_STATUS_INTS))
    k["fft_pack"](q, grid, (wg,), p.x, np.int64(p.x_offset), i32(p.n), i32(0), a, i32(P),
                  status)
    fx, free = _fft_transform(device, k, a, b, table, P, 1, wg)
    k["fft_pack"](q, grid, (wg,), p.w, np.int64(0), i32(p.m), i32(1), c, i32(P), status)
    fw, _ = _fft_transform(device, k, c, free, table, P, 1, wg)
    scale = np.dtype(p.dtype).type(1.0 / P)
    k["fft_cmul"](q, grid, (wg,), fx, fw, i32(P), scale)
    y, _ = _fft_transform(device, k, fx, fw, table, P, -1, wg)
    launch_counts["fft"] += 1
    return k["fft_extract"](q, (round_up(p.length, wg),), (wg,), y, i32(p.m - 1 - p.pad),
                            p.out, i32(p.length), p.x, np.int64(p.x_offset), i32(p.n), p.w,
                            i32(p.m), i32(p.pad), status)


VARIANT = Variant(
    name="fft",
    source="conv_fft.cl",
    entry="fft_radix4",
    summary="zero-padded power-of-two Stockham FFT (radix 8/4/2), pointwise product, inverse FFT",
    defaults={"WG": 64},
    fits=_fft_fits,
    rank=_fft_rank,
    launch=_fft_launch,
    tunable={"WG": (64, 128, 256)},
)
VARIANTS: tuple[Variant[ConvProblem], ...] = (VARIANT,)
