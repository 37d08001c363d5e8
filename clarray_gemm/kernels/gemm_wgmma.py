"""The warpgroup tensor-core GEMM (``opencl/gemm_wgmma.cl``): float16 and bfloat16 products on
NVIDIA Hopper (``DeviceInfo.warpgroup_mma``) through ``wgmma.mma_async``, whose operands are read
straight from swizzled local tiles by descriptor.

``EMULATE=1`` builds the same tiles and copy ring with the warpgroup product computed in plain
OpenCL C from the layouts the instruction reads (``MMA_PTX=0``): it runs on any device (PoCL,
Oclgrind) and is only ever chosen by force, for tests.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from .gemm import GemmProblem, prepared_standard, standard_args
from .gemm_mma import mma_elem
from .programs import get_kernel
from .variant import Variant

__all__ = ["WGMMA", "VARIANTS"]

SOURCE = "gemm_wgmma.cl"
# NVIDIA's OpenCL reports 48 KiB of local memory, but a kernel's static __local arrays may take
# the 227 KiB a Hopper block can have (148 KiB measured on the H100; a __local argument above
# 48 KiB is refused).
_LOCAL_LIMIT = 227 * 1024


def _threads(params: Mapping[str, int]) -> int:
    return 128 * params["WGS"]


def _tile_bytes(params: Mapping[str, int]) -> int:
    return params["STAGES"] * (params["BM"] + params["BN"]) * params["BK"] * 2


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    elem = mma_elem(p)
    if elem not in (1, 2):
        return f"float16 or bfloat16 operands only (not {np.dtype(p.dtype)})"
    if not params["EMULATE"] and not info.warpgroup_mma:
        cc = info.compute_capability
        return ("needs NVIDIA Hopper (sm_90) for wgmma; this device: "
                + (f"sm_{cc[0]}{cc[1]}" if cc else info.vendor or "unknown")
                + "; EMULATE=1 runs the portable emulation")
    bm, bn, bk, wgs, stages = (params[k] for k in ("BM", "BN", "BK", "WGS", "STAGES"))
    if wgs < 1 or bm % (64 * wgs) or bm // (64 * wgs) not in (1, 2):
        return "needs BM = 64 * WGS or 128 * WGS"
    if bn not in (64, 128, 256) or bk not in (16, 32, 64):
        return "needs BN in (64, 128, 256) and BK in (16, 32, 64)"
    if not 2 <= stages <= 5 or params["WG_INFLIGHT"] not in (0, 1) \
            or stages - 1 - params["WG_INFLIGHT"] < 1:
        return "needs 2 <= STAGES <= 5, WG_INFLIGHT 0 or 1 and STAGES - 1 - WG_INFLIGHT >= 1"
    threads = _threads(params)
    if (bm * bk // 8) % threads or (bn * bk // 8) % threads:
        return f"BM*BK/8 and BN*BK/8 must be multiples of the work-group size {threads}"
    if threads > info.max_work_group_size:
        return f"work-group of {threads} exceeds the device's {info.max_work_group_size}"
    limit = _LOCAL_LIMIT if info.is_nvidia else info.local_mem_bytes
    if _tile_bytes(params) > limit:
        return f"needs {_tile_bytes(params)} bytes of local memory, the device allows {limit}"
    return None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above mma (200) wherever wgmma runs: the same products at twice its tensor-core rate.
    return 210.0 if info.warpgroup_mma and mma_elem(p) in (1, 2) else 0.0


def defines_for(device: Device, p: GemmProblem, params: Mapping[str, int]) -> dict[str, object]:
    """The ``-D`` defines of the kernel for this problem on this device."""
    d: dict[str, object] = {k: params[k] for k in ("BM", "BN", "BK", "WGS", "STAGES",
                                                   "WG_INFLIGHT", "GROUP_M")}
    ptx = int(not params["EMULATE"] and device.info.warpgroup_mma)
    # NVIDIA's OpenCL compiler targets sm_90: wgmma needs the sm_90a rebuild (drivers/build.py)
    d.update(ELEM=mma_elem(p), MMA_PTX=ptx, SM90A_PTX=ptx,
             TRANS_A=int(p.a.trans), TRANS_B=int(p.b.trans), VEC_A=int(p.a.aligned(8)),
             VEC_B=int(p.b.aligned(8)), VEC_C=int(p.c.aligned(2)),
             SIMULATOR=int(device.info.is_simulator))
    for name in ("MN_LBO", "MN_SBO"):   # descriptor strides: forcible, for probes
        if params.get(name):
            d[name] = params[name]
    return d


def _sizes(p: GemmProblem, d: Mapping[str, object]) -> tuple[tuple, tuple]:
    threads = 128 * d["WGS"]  # type: ignore[operator]
    tiles_n, tiles_m = -(-p.N // d["BN"]), -(-p.M // d["BM"])  # type: ignore[operator]
    return (threads * tiles_n, tiles_m, p.batch), (threads, 1, 1)


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    d = defines_for(device, p, params)
    kernel = get_kernel(device, SOURCE, "gemm_wgmma", d)
    gs, ls = _sizes(p, d)
    return kernel(device.queue, gs, ls, *standard_args(p))


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    d = defines_for(device, p, params)
    gs, ls = _sizes(p, d)
    return prepared_standard(device, p, get_kernel(device, SOURCE, "gemm_wgmma", d), gs, ls)


WGMMA = Variant(
    name="wgmma", source=SOURCE, entry="gemm_wgmma",
    summary="Hopper tensor cores: wgmma.mma_async (float16, bfloat16) via inline PTX reading "
            "swizzled local tiles by descriptor, cp.async into a STAGES-deep ring; EMULATE=1: "
            "the same tiles in plain OpenCL C",
    # 128 x 256 tiles, four 32-deep stages (96 KiB): 463 / 543 TF/s at 4096^3 / 8192^3 on the
    # H100, the fastest of the 16 configurations swept (benches/runs/h100-wgmma-s9.md).
    defaults={"BM": 128, "BN": 256, "BK": 32, "WGS": 2, "STAGES": 4, "WG_INFLIGHT": 1,
              "GROUP_M": 8, "MN_LBO": 0, "MN_SBO": 0, "EMULATE": 0},
    fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    tunable={"BM": (64, 128, 256), "BN": (64, 128, 256), "BK": (16, 32, 64), "WGS": (1, 2),
             "STAGES": (2, 3, 4, 5), "WG_INFLIGHT": (0, 1), "GROUP_M": (1, 8)},
)

VARIANTS: tuple[Variant[GemmProblem], ...] = (WGMMA,)
