"""``shallow``: wide products of a shallow K (``opencl/gemm_shallow.cl``), whose time is the
writing of C.

A work-item owns one column of C over RPT consecutive rows, so every store of a warp is one
contiguous run of C whatever the row length's alignment; the register-tiled kernels store
blocks whose rows a warp touches a few elements at a time. Takes every dtype the GEMM kernels
take, float16 and bfloat16 operands as they are (computed in float32) and 8- and 16-bit
integers narrow in memory. Every ``-D`` parameter can be forced with ``params=``; 0 means
"chosen by the shape".
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from .gemm import GemmProblem, base_defines, dtype_supported, prepared_standard
from .gemm_small import io16
from .programs import get_kernel
from .variant import Variant

__all__ = ["SHALLOW", "VARIANTS", "MAX_K", "resolve"]

SOURCE = "gemm_shallow.cl"
DEFAULTS = {"KMAX": 0, "RPT": 0, "WG": 0}
MAX_K = 16
"""The deepest K taken where KMAX is chosen by the shape (a forced KMAX takes more)."""
# Work-groups wanted per compute unit before RPT grows (rows per work-item trade parallelism
# for fewer loads of the B column and fewer barriers).
_GROUPS_PER_UNIT = 4
_MAX_RPT = 16
_MAX_WG = 256


def _pow2_at_least(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def resolve(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> dict[str, int]:
    """Every ``-D`` parameter for ``p``: KMAX K rounded up to a power of two (the unrolled sums
    run no steps past it), WG the columns rounded up to a power of two (32 to 256), RPT the
    most rows (up to 16) that still leave the device a few work-groups per unit."""
    kmax = params["KMAX"] or _pow2_at_least(max(p.K, 1))
    wg = params["WG"] or min(_MAX_WG, max(32, _pow2_at_least(p.N)))
    rpt = params["RPT"]
    if not rpt:
        columns = -(-p.N // wg) * p.batch
        rpt = _MAX_RPT
        while rpt > 1 and columns * -(-p.M // rpt) < _GROUPS_PER_UNIT * info.compute_units:
            rpt //= 2
    return {"KMAX": kmax, "RPT": rpt, "WG": wg}


def _defines(p: GemmProblem, d: Mapping[str, int]) -> dict[str, object]:
    sixteen = io16(p)
    base = ({"IO16": sixteen, "TRANS_A": int(p.a.trans), "TRANS_B": int(p.b.trans)}
            if sixteen else base_defines(p))
    return {**base, **d}


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if min(params.values()) < 0:
        return "KMAX, RPT and WG must be positive (or 0: by shape)"
    if params["KMAX"] and p.K > params["KMAX"]:
        return f"K = {p.K} is deeper than KMAX = {params['KMAX']}, the K it holds in registers"
    if not params["KMAX"] and p.K > MAX_K:
        return f"K = {p.K} is deeper than {MAX_K}, the deepest it takes (unless KMAX is forced)"
    why = None if io16(p) else dtype_supported(p, info)
    if why:
        return why
    if p.batch_inner:
        return "one batch level of operands only"
    wg = resolve(p, info, params)["WG"]
    if wg > info.max_work_group_size:
        return f"work-group of {wg} exceeds the device's {info.max_work_group_size}"
    return None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # GPUs, where no measurement decides: above gpu_blocked (100) for the products whose C is
    # large and K a few steps; a measured table places it everywhere else.
    if not info.is_gpu or info.is_simulator or p.K > 8 or p.M * p.N < 1 << 20:
        return 0.0
    return 120.0


def _geometry(p: GemmProblem, d: Mapping[str, int]) -> tuple[tuple, tuple]:
    wg, rpt = d["WG"], d["RPT"]
    return (-(-p.N // wg) * wg, -(-p.M // rpt), p.batch), (wg, 1, 1)


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    d = resolve(p, device.info, params)
    kernel = get_kernel(device, SOURCE, "gemm_shallow", _defines(p, d))
    return prepared_standard(device, p, kernel, *_geometry(p, d))


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    return _prepare(device, p, params)(p.a.buffer, np.int64(p.a.offset), p.b.buffer,
                                       np.int64(p.b.offset), p.c.buffer)


def _resolved_text(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str:
    d = resolve(p, info, params)
    return ", ".join(f"{k}={d[k]}" for k in ("KMAX", "RPT", "WG"))


SHALLOW = Variant(
    name="shallow", source=SOURCE, entry="gemm_shallow",
    summary="wide products of a shallow K (up to 16): one column of C per work-item over RPT "
            "rows, every warp's store one contiguous run; float16/bfloat16 and narrow integers "
            "read as they are",
    defaults=DEFAULTS, fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    resolved=_resolved_text,
    tunable={"RPT": (1, 2, 4, 8, 16), "WG": (32, 64, 128, 256)},
)
VARIANTS: tuple[Variant[GemmProblem], ...] = (SHALLOW,)
