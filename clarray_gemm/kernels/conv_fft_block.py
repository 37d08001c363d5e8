"""Overlap-save FFT convolution in work-group-sized blocks (``opencl/conv_fft_block.cl``): the
mask's spectrum in one small launch, then every block pair transformed, multiplied and
transformed back by one work-group in local memory. Two launches per call whatever the signal's
length, where the ``fft`` variant makes one per radix pass over the whole zero-padded signal.

The block length P (a power of two, ``P - m + 1`` new outputs per block, two blocks per complex
transform) is the one of least estimated cost among those the device's local memory and
work-group size allow (``block_length``); ``params={"P": ...}`` forces one. On NVIDIA Hopper
the transform's local array is a static ``__local`` array, so it may take the 227 KiB of
``DeviceInfo.static_local_bytes`` (P = 16384 in float32, 8192 in float64), where elsewhere the
reported local memory bounds it.

NaN and infinities give NumPy's pattern: each work-group loads non-finite inputs as zeros,
records where they were and computes the outputs whose window covers one directly (every
output when the mask holds one).
"""
from __future__ import annotations

import threading
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..dtypes import dtype_defines
from ..memory import new_buffer
from .conv_problem import INT_MAX, ConvProblem, dtype_supported, launch_counts
from .plans import PlanCache
from .programs import get_kernel
from .variant import Variant

__all__ = ["block_length", "fft_block_preferred", "FFT_BLOCK_MIN_MASK", "VARIANT", "VARIANTS"]

NSPECIAL = 32
"""Positions of non-finite inputs a work-group records (``NSPECIAL`` in the kernel); with more,
every output of its block pair is computed directly."""
_MAX_LOG2P = 16

FFT_BLOCK_MIN_MASK = ((2**24, 224), (2**22, 288), (2**20, 576), (0, 896))
"""(signal length, mask length) rows: on a GPU fft_block replaces the direct gpu kernel from
the mask length of the first row whose signal length the call's reaches. The direct kernel's
time grows with n * m, the block FFT's with n alone (for masks well inside a block), so the
crossing mask shrinks as the signal grows. NVIDIA H100, float32 "full", wall ms of the launches
(kernels.conv.run, queue drained; benches/probes/conv_fft_block_sweep.py, 2026-11-25), gpu vs
fft_block at its best block length:
  N = 2**24: m = 191 0.199 vs 0.219, m = 255 0.222 vs 0.191, m = 383 0.301 vs 0.188
  N = 2**22: m = 255 0.071 vs 0.072, m = 383 0.095 vs 0.071, m = 511 0.116 vs 0.074
  N = 2**20: m = 511 0.046 vs 0.048, m = 1023 0.069 vs 0.048
  N = 2**16: m = 511 0.037 vs 0.046, m = 1023 0.049 vs 0.044 (N = 4096: 0.048 vs 0.043)"""


def _local_bytes(P: int, itemsize: int) -> int:
    """Local memory of conv_fft_block.cl: the padded transform array and the specials list."""
    return (P + P // 16) * 2 * itemsize + (NSPECIAL + 2) * 4


def _largest_block(info: DeviceInfo, itemsize: int, npt: int) -> int:
    """The largest P the device's local memory and work-group size allow (0 if none)."""
    P = 1 << _MAX_LOG2P
    while P >= npt and (_local_bytes(P, itemsize) > info.static_local_bytes
                        or P // npt > info.max_work_group_size):
        P //= 2
    return P if P >= npt else 0


def _groups(p: ConvProblem, P: int) -> int:
    """Work-groups of a call: one per pair of blocks of P - m + 1 new outputs."""
    blocks = -(-p.length // (P - p.m + 1))
    return -(-blocks // 2)


# Work per transformed point by block length, measured on an NVIDIA H100 in float32 (ps per
# point at N = 2**24, m = 255, where groups fill the device many times over: P = 2048 17.7,
# 4096 21.1, 8192 29.9, 16384 21.3), scaled so that P = 2048 keeps the generic log2 P + 2.
# Its compiler gives the 512 work-items of P = 8192 100 registers each: one group (16 warps)
# per multiprocessor, where the other lengths keep 24 to 32 warps busy.
_HOPPER_FP32_WEIGHT = {2048: 13.0, 4096: 15.5, 8192: 22.0, 16384: 15.6}


def _weight(P: int, itemsize: int, info: DeviceInfo) -> float:
    """The work of one transformed point of a block of P (log2 P + 2 where not measured)."""
    if info.warpgroup_mma and itemsize == 4 and P in _HOPPER_FP32_WEIGHT:
        return _HOPPER_FP32_WEIGHT[P]
    return P.bit_length() + 1


def block_length(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> int | str:
    """The transform length P for this problem (``params["P"]`` when set), or why none fits.

    Among the powers of two from the mask's length up to the device's limit, the one of least
    ``groups * P * weight(P) + compute units * P * (log2 P + 2)``: the work of all block pairs
    (weight: log2 P + 2, or the H100's measured figures), and the latency of one group, which
    decides the time while there are fewer groups than compute units. H100, float32, wall ms
    of the launches with P forced (benches/probes/conv_fft_block_sweep.py, 2026-11-25):
    N = 2**24, m = 255: P = 2048 0.170, 4096 0.189, 8192 0.259, 16384 0.182; m = 1023: 4096
    0.195, 16384 0.211 (chosen); m = 4095: 16384 0.227; N = 2**20, m = 4095: 8192 0.051,
    16384 0.061; N = 4096, m = 2047: 4096 0.046, 8192 0.050."""
    npt = params["NPT"]
    largest = _largest_block(info, p.itemsize, npt)
    forced = params.get("P", 0)
    if forced:
        if forced & (forced - 1) or forced < npt:
            return f"P={forced} is not a power of two >= NPT={npt}"
        if forced > largest:
            return (f"P={forced} needs {_local_bytes(forced, p.itemsize)} bytes of local memory "
                    f"and {forced // npt} work-items; the device allows blocks up to P={largest}")
        if forced < p.m:
            return f"P={forced} is shorter than the mask ({p.m} taps)"
        return forced
    if largest < p.m:
        return (f"a mask of {p.m} taps needs blocks longer than the P={largest} that local "
                f"memory ({info.static_local_bytes} bytes) and work-groups allow")
    best, cost = 0, None
    P = max(npt, 1 << (p.m - 1).bit_length())
    while P <= largest:
        c = P * (_groups(p, P) * _weight(P, p.itemsize, info)
                 + info.compute_units * (P.bit_length() + 1))
        if cost is None or c < cost:
            best, cost = P, c
        P *= 2
    return best


def _fits(p: ConvProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if np.dtype(p.dtype).kind != "f":
        return "integer results must be exact; the FFT path is for floating dtypes only"
    if params["NPT"] not in (16, 32):
        return f"NPT={params['NPT']} is not 16 or 32"
    why = dtype_supported(p, info)
    if why:
        return why
    P = block_length(p, info, params)
    if isinstance(P, str):
        return P
    if p.n + P + 2 * p.length > INT_MAX:
        return "lengths beyond 2**31 (the kernels index with int)"
    return None


def fft_block_preferred(p: ConvProblem) -> bool:
    """True when fft_block is expected to beat the direct gpu kernel on a GPU: float dtypes,
    masks at least as long as FFT_BLOCK_MIN_MASK gives for the signal's length."""
    if np.dtype(p.dtype).kind != "f":
        return False
    return p.m >= next(m for n, m in FFT_BLOCK_MIN_MASK if p.n >= n)


def _rank(p: ConvProblem, info: DeviceInfo) -> float:
    # Only real GPUs with their own local memory: on CPU drivers (PoCL) and Oclgrind it runs
    # when forced by name, never by choice.
    if (not info.is_gpu or info.is_simulator or info.local_mem_is_global
            or np.dtype(p.dtype).kind != "f"):
        return 0.0
    return 9.8 if fft_block_preferred(p) else 0.4


_SCRATCH: dict[int, tuple[cl.Buffer, int, cl.Buffer]] = {}
# The spectrum and status buffers are shared by every call on a device: one call's two launches
# must reach the in-order queue together.
_LOCK = threading.Lock()


def _scratch(device: Device, nbytes: int) -> tuple[cl.Buffer, cl.Buffer]:
    """The device's spectrum buffer (at least ``nbytes``, the largest asked for kept) and its
    status int."""
    key = device.cl_device.int_ptr
    kept = _SCRATCH.get(key)
    if kept is None or kept[1] < nbytes:
        status = kept[2] if kept else new_buffer(device, 4)
        kept = _SCRATCH[key] = (new_buffer(device, nbytes), nbytes, status)
    return kept[0], kept[2]


# (device, n, m, pad, length, dtype, NPT, P) -> what a call launches: built once, so that a
# repeated call costs two enqueues.
_PLANS: PlanCache[tuple] = PlanCache("convolve-fft-block")


def _plan(device: Device, p: ConvProblem, npt: int, forced: int) -> tuple:
    """(spectrum launcher, blocks launcher, work-group size, blocks' global size, spectrum
    bytes, fixed scalar arguments)."""
    P = block_length(p, device.info, {"NPT": npt, "P": forced})
    defines = {"T": dtype_defines(p.dtype)["T"], "IS_FP64": int(np.dtype(p.dtype) == np.float64),
               "LOG2P": P.bit_length() - 1, "NPT": npt, "NSPECIAL": NSPECIAL}
    wg = P // npt
    i32 = np.int32
    return (get_kernel(device, "conv_fft_block.cl", "fft_block_spectrum", defines),
            get_kernel(device, "conv_fft_block.cl", "fft_block", defines),
            wg, _groups(p, P) * wg, 2 * P * p.itemsize,
            (i32(p.n), i32(p.m), i32(p.pad), i32(p.length), i32(P - p.m + 1)))


def _prepare(device: Device, problem: ConvProblem, params: Mapping[str, int]):
    """``run(x, x_offset, w, out)``: the call's two launches on its buffers, everything else
    resolved once (the plan for the problem's lengths and dtype)."""
    p = problem
    npt, forced = params["NPT"], params.get("P", 0)
    key = (device, p.n, p.m, p.pad, p.length, p.dtype, npt, forced)
    plan = _PLANS.find(key) or _PLANS.get(key, lambda: _plan(device, p, npt, forced))
    spectrum, blocks, wg, size, nbytes, (n, m, pad, length, B) = plan
    q, int64, lsize, spectrum_size, blocks_size = device.queue, np.int64, (wg,), (wg,), (size,)

    def run(x: cl.Buffer, x_offset: int, w: cl.Buffer, out: cl.Buffer) -> cl.Event:
        with _LOCK:
            spec, status = _scratch(device, nbytes)
            spectrum(q, spectrum_size, lsize, w, m, spec, status)
            launch_counts["fft_block"] += 1
            return blocks(q, blocks_size, lsize, x, int64(x_offset), n, spec, status, w, m,
                          pad, out, length, B)
    return run


def _launch(device: Device, problem: ConvProblem, params: Mapping[str, int]) -> cl.Event:
    return _prepare(device, problem, params)(problem.x, problem.x_offset, problem.w,
                                             problem.out)


VARIANT = Variant(
    name="fft_block",
    source="conv_fft_block.cl",
    entry="fft_block",
    summary="overlap-save FFT, two real blocks per complex transform, each block pair "
            "transformed in one work-group's local memory (P=0: block length from a cost model)",
    defaults={"NPT": 16, "P": 0},
    fits=_fits,
    rank=_rank,
    launch=_launch,
    tunable={"NPT": (16, 32), "P": (0, 4096, 8192, 16384)},
    prepare=_prepare,
)
VARIANTS: tuple[Variant[ConvProblem], ...] = (VARIANT,)
