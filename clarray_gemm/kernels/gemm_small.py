"""``small``: GEMM products small enough to stage the whole of K in local memory at once
(``opencl/gemm_small.cl``): one barrier per work-group instead of one per K step, and one
element of C per work-item, so a small product costs one round of global loads beside the
launch. Ranked first on GPUs for float32 products with K up to ``KMAX`` that are either one
product of at most ``SINGLE_MAX_ELEMENTS`` elements or a batch of matrices of at most one tile.

H100, 2026-11-26, float32, each launch's own START->END (``benches/probes/kernel_events.py
--sizes 32 64 100 128``), against gpu_blocked: 64^3 7.7 / 8.4 us, 100^3 9.4 / 10.5 us, 128^3
9.9 / 11.0 us; wall clock for 4000 x 16^3 33.5 us against 50.3 us (torch 32.5). Batches of
larger matrices lose (256 x 64^3 48.7 us against 24.2 us of device time): there gpu_blocked's
register tiles do more per load."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..device import Device, DeviceInfo
from ..dtypes import bfloat16_dtype
from .gemm import GemmProblem, base_defines, dtype_supported, prepared_standard
from .programs import get_kernel
from .variant import Variant

__all__ = ["SMALL", "VARIANTS", "SINGLE_MAX_ELEMENTS", "SIXTEEN_BIT_KERNELS", "io16"]

SIXTEEN_BIT_KERNELS = ("mma", "wgmma", "small", "thin", "shallow", "gemv_split")
"""Kernels that take float16 and bfloat16 operands as they are (the others get float32
copies)."""

SINGLE_MAX_ELEMENTS = 128 * 128
"""Elements of C up to which a single product (no batch) ranks ``small`` first."""


def io16(p: GemmProblem) -> int:
    """The kernel's IO16 for the problem's operands: 1 float16, 2 bfloat16, 0 otherwise."""
    dt = np.dtype(p.dtype)
    if dt == np.float16:
        return 1
    bf16 = bfloat16_dtype()
    return 2 if bf16 is not None and dt == bf16 else 0


def _local_bytes(p: GemmProblem, params: Mapping[str, int]) -> int:
    itemsize = 4 if io16(p) else p.itemsize   # 16-bit operands are staged as float
    return 2 * params["TS"] * params["KMAX"] * itemsize


def _defines(p: GemmProblem, params: Mapping[str, int]) -> dict[str, object]:
    sixteen = io16(p)
    if sixteen:
        return {"IO16": sixteen, "TRANS_A": int(p.a.trans), "TRANS_B": int(p.b.trans), **params}
    return {**base_defines(p), **params}


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    ts, wpt, kmax = params["TS"], params["WPT"], params["KMAX"]
    if min(ts, wpt, kmax) < 1 or ts % wpt:
        return "TS must be a multiple of WPT (both positive), KMAX positive"
    if p.K > kmax:
        return f"K = {p.K} is deeper than KMAX = {kmax}, the K it stages at once"
    why = None if io16(p) else dtype_supported(p, info)
    if why:
        return why
    if (ts // wpt) ** 2 > info.max_work_group_size:
        return (f"needs work-groups of {(ts // wpt) ** 2} work-items "
                f"(device allows {info.max_work_group_size})")
    if _local_bytes(p, params) > info.local_mem_bytes:
        return (f"needs {_local_bytes(p, params)} bytes of local memory "
                f"(device has {info.local_mem_bytes})")
    return None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above gpu_blocked (100) on GPUs for the float32 products whose time is latency. Not on
    # CPUs or simulators (the cpu kernel and naive take these), not for integers (gpu_blocked
    # reads 8- and 16-bit ones without widened copies) nor matrix-vector shapes (gemv's).
    if (not info.is_gpu or info.is_simulator or np.dtype(p.dtype) != np.float32
            or min(p.M, p.N) == 1):
        return 0.0
    if p.K > SMALL.defaults["KMAX"] or p.M * p.N * p.K <= 1024:  # naive's (rank 1) below
        return 0.0
    one_tile = max(p.M, p.N) <= SMALL.defaults["TS"]
    single = p.batch == 1 and min(p.M, p.N) >= 16 and p.M * p.N <= SINGLE_MAX_ELEMENTS
    return 150.0 if one_tile or single else 0.0


def _geometry(p: GemmProblem, params: Mapping[str, int]) -> tuple[tuple, tuple]:
    ts, ls = params["TS"], params["TS"] // params["WPT"]
    return (-(-p.N // ts) * ls, -(-p.M // ts) * ls, p.batch), (ls, ls, 1)


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]):
    return _prepare(device, p, params)(p.a.buffer, np.int64(p.a.offset), p.b.buffer,
                                       np.int64(p.b.offset), p.c.buffer)


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    kernel = get_kernel(device, SMALL.source, SMALL.entry, _defines(p, params))
    return prepared_standard(device, p, kernel, *_geometry(p, params))


SMALL = Variant(
    name="small", source="gemm_small.cl", entry="gemm_small",
    summary="small products: the whole of K staged in local memory at once, one barrier "
            "(float16 and bfloat16 operands read as they are, computed in float32)",
    defaults={"TS": 16, "WPT": 1, "KMAX": 128}, fits=_fits, rank=_rank, launch=_launch,
    prepare=_prepare,
    tunable={"TS": (16, 32), "WPT": (1, 2), "KMAX": (64, 128, 256)},
)

VARIANTS: tuple[Variant[GemmProblem], ...] = (SMALL,)
