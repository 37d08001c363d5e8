"""``dmma``: float64 products on the FP64 tensor cores (``opencl/gemm_dmma.cl``).

On NVIDIA sm_80+ (``DeviceInfo.tensor_cores``) the kernel runs ``mma.sync.m8n8k4`` on doubles
through inline PTX (``MMA_PTX=1``): IEEE float64 fused multiply-adds, so no precision opt-in.
``EMULATE=1`` builds the same tiling with the warp-level product in plain OpenCL C: it runs on
any device with float64 (PoCL, Oclgrind) and is only ever chosen by force, for tests.
The steps of A and B go through a ring of ``STAGES`` local tiles filled by ``cp.async`` (0: as
deep as the device's local memory allows, up to 5). ``KPAIR=1`` (PTX path) pairs K steps so
that row-major A and column-major B fragments are read 16 bytes at a time (a third fewer
local-memory reads for A @ B). ``M16=1`` uses Hopper's ``mma.m16n8k8`` on doubles where it
applies (sm_90+, ``KPAIR=1``, ``WM`` a multiple of 16): one instruction for four ``m8n8k4``.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..dtypes import unsupported_dtype
from . import gemm_gpu
from .gemm import GemmProblem, prepared_standard, warp_tiled_sizes, warp_tiled_threads
from .programs import get_kernel
from .variant import Variant
from .constants import constant

__all__ = ["DMMA", "VARIANTS", "ksplit"]

SOURCE = "gemm_dmma.cl"
_PAD_K, _PAD_X = 4, 8     # as in the kernel: local row padding along K and along M/N (doubles)
_AUTO_STAGES = constant("gemm_dmma.auto_stages")   # the copy ring's depth where it fits


def _stage_bytes(problem: GemmProblem, p: Mapping[str, int]) -> int:
    """Local memory of one stage of the copy ring: an A tile and a B tile."""
    bm, bn, bk = p["BM"], p["BN"], p["BK"]
    a_tile = bk * (bm + _PAD_X) if problem.a.trans else bm * (bk + _PAD_K)
    b_tile = bn * (bk + _PAD_K) if problem.b.trans else bk * (bn + _PAD_X)
    return (a_tile + b_tile) * 8


def _stages(problem: GemmProblem, info: DeviceInfo, p: Mapping[str, int]) -> int:
    """STAGES, with 0 resolved: the deepest ring of up to _AUTO_STAGES that fits the device's
    local memory (at least 2)."""
    if p["STAGES"]:
        return int(p["STAGES"])
    per_stage = _stage_bytes(problem, p)
    return max(2, min(_AUTO_STAGES, info.static_local_bytes // per_stage))


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if np.dtype(p.dtype) != np.float64:
        return f"float64 only (not {np.dtype(p.dtype)})"
    why = unsupported_dtype(p.dtype, info)
    if why:
        return why
    if not params["EMULATE"] and not info.tensor_cores:
        cc = info.compute_capability
        return ("needs NVIDIA tensor cores (sm_80 or newer; this device: "
                + (f"sm_{cc[0]}{cc[1]}" if cc else info.vendor or "unknown")
                + "); EMULATE=1 runs the portable emulation")
    g = {k: int(params[k]) for k in ("BM", "BN", "BK", "WM", "WN")}
    if min(g.values()) < 1 or g["BM"] % g["WM"] or g["BN"] % g["WN"] or g["WM"] % 8 \
            or g["WN"] % 8 or g["BK"] % 4:
        return "needs BM % WM == BN % WN == 0, WM and WN multiples of 8, BK a multiple of 4"
    if not 0 <= int(params["KSPLIT"]) <= MAX_KSPLIT:
        return f"KSPLIT must be 0 (by shape) to {MAX_KSPLIT}"
    if params["FINISH_LAST"] not in (-1, 0, 1):
        return "FINISH_LAST must be -1 (by device), 0 (the default: slower on Hopper) or 1"
    if params["KPAIR"] and g["BK"] % 8:
        return "KPAIR=1 needs BK a multiple of 8"
    threads = warp_tiled_threads(g)
    if (g["BM"] * g["BK"]) % (2 * threads) or (g["BN"] * g["BK"]) % (2 * threads):
        return f"BM*BK and BN*BK must be multiples of {2 * threads} (16-byte chunks per thread)"
    if threads > info.max_work_group_size:
        return f"work-group of {threads} exceeds the device's {info.max_work_group_size}"
    stages = _stages(p, info, params)
    if not 2 <= stages <= 5:
        return "needs 2 <= STAGES <= 5 (0: as many as fit, up to 5)"
    nbytes = stages * _stage_bytes(p, g)
    if nbytes > info.static_local_bytes:
        return f"needs {nbytes} bytes of local memory, the device allows {info.static_local_bytes}"
    return None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above gpu_blocked (100) wherever the FP64 tensor cores exist; matrix-vector shapes leave
    # most of a tile idle, so gemv_split (60) keeps those.
    if not info.tensor_cores or np.dtype(p.dtype) != np.float64:
        return 0.0
    return 5.0 if min(p.M, p.N) < 16 else 150.0


MAX_KSPLIT = 16
# The shallowest K slice, in BK-deep steps (64 of K at BK 8): a slice walks its steps one
# after another, so a product of a few tiles is as slow as its deepest slice; the partial
# products' traffic is that of a few tiles.
MIN_SLICE_STEPS = 8
# Work-groups wanted per compute unit: tiles of 128 x 64 leave room for two resident.
_WANTED_PER_UNIT = 2


def ksplit(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> int:
    """K slices: ``params["KSPLIT"]``, or with 0 as many as bring the tiles to two work-groups
    per compute unit (at most MAX_KSPLIT), each slice at least MIN_SLICE_STEPS steps. 128 x 128 over a K of 4097 is
    otherwise two tiles walking 513 steps each on two of 132 units."""
    if params["KSPLIT"]:
        return int(params["KSPLIT"])
    tiles = -(-p.M // params["BM"]) * -(-p.N // params["BN"]) * p.batch
    wanted = _WANTED_PER_UNIT * max(info.compute_units, 1)
    steps = -(-p.K // params["BK"])
    if tiles >= wanted:
        return 1
    return max(1, min(MAX_KSPLIT, wanted // tiles, steps // MIN_SLICE_STEPS))


def defines_for(device: Device, p: GemmProblem, params: Mapping[str, int]) -> dict[str, object]:
    """The ``-D`` defines of the kernel for this problem on this device."""
    d: dict[str, object] = {k: int(params[k])
                            for k in ("BM", "BN", "BK", "WM", "WN", "GROUP_M", "KPAIR")}
    ptx = not params["EMULATE"] and device.info.tensor_cores
    # Hopper's m16n8k8 where it applies (sm_90+, paired K steps, warp rows in sixteens)
    m16 = (params["M16"] and ptx and device.info.compute_capability >= (9, 0)
           and params["KPAIR"] and params["WM"] % 16 == 0)
    d.update(MMA_PTX=int(ptx), M16=int(bool(m16)), STAGES=_stages(p, device.info, params),
             TRANS_A=int(p.a.trans), TRANS_B=int(p.b.trans),
             VEC_A=int(p.a.aligned(2)), VEC_B=int(p.b.aligned(2)))
    return d


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)``; with split-K the slices write their partial
    products to this thread's scratch buffer and the last slice of each tile (FINISH_LAST) or
    gemm_gpu.cl's reduction sums them into C."""
    ks = ksplit(p, device.info, params)
    if ks == 1:
        d = defines_for(device, p, params)
        gs, ls = warp_tiled_sizes(p, d)
        return prepared_standard(device, p, get_kernel(device, SOURCE, "gemm_dmma", d), gs, ls)

    def slices(work: GemmProblem, final):
        d = {**defines_for(device, work, params), "KSPLIT": ks,
             "FINISH_LAST": int(final is not None), "SPLIT_T": "double"}
        gs, ls = warp_tiled_sizes(work, d)
        return gemm_gpu.split_k_slices(device, work, get_kernel(device, SOURCE, "gemm_dmma", d),
                                       (gs[0], gs[1], gs[2] * ks), ls, final)
    return gemm_gpu.prepare_split_k(device, p, ks, slices, dtype=np.float64,
                                    finish_last=params["FINISH_LAST"])


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    return _prepare(device, p, params)(p.a.buffer, np.int64(p.a.offset), p.b.buffer,
                                       np.int64(p.b.offset), p.c.buffer)


DMMA = Variant(
    name="dmma", source=SOURCE, entry="gemm_dmma",
    summary="FP64 tensor cores: mma.sync.m8n8k4 (m16n8k8 on sm_90) on doubles via inline "
            "PTX, a cp.async ring of local tiles; EMULATE=1: the same tiling in plain OpenCL C",
    # 128x64x8 tiles of 64x32 per warp with paired K steps: the fastest of the configurations
    # swept on an H100 (benches/probes/dmma_sweep.py), with the register-staged double buffer
    # and with m16n8k8 and the cp.async ring.
    defaults={"BM": 128, "BN": 64, "BK": 8, "WM": 64, "WN": 32, "GROUP_M": 8, "KPAIR": 1,
              "M16": 1, "STAGES": 0, "EMULATE": 0, "KSPLIT": 0, "FINISH_LAST": 0},
    fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    resolved=lambda p, info, params: f"KSPLIT={ksplit(p, info, params)}",
    tunable={"BM": (64, 128), "BN": (64, 128), "BK": (8, 16, 32), "WM": (32, 64),
             "WN": (32, 64), "GROUP_M": (1, 8), "KPAIR": (0, 1), "M16": (0, 1),
             "STAGES": (2, 3, 4, 5), "KSPLIT": (0, 1, 2, 4, 8), "FINISH_LAST": (0, 1)},
)

VARIANTS: tuple[Variant[GemmProblem], ...] = (DMMA,)
