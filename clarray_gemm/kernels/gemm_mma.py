"""The tensor-core GEMM (``opencl/gemm_mma.cl``): float16 and bfloat16 products, and float32
products in TF32 where the caller opted in (``precision="tf32"``).

On NVIDIA sm_80+ (``DeviceInfo.tensor_cores``) the kernel runs ``mma.sync`` and ``ldmatrix``
through inline PTX (``MMA_PTX=1``); nowhere else is that PTX compiled. ``EMULATE=1`` builds
the same tiling with the warp-level product emulated in plain OpenCL C (``MMA_PTX=0``): it
runs on any device (PoCL, Oclgrind) and is only ever chosen by force, for tests.

The problem's dtype is the operands' dtype: float16 (C float16), bfloat16 (C float32, NumPy's
result type with ml_dtypes) or float32 with ``precision == "tf32"`` (C float32).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..dtypes import bfloat16_dtype
from .gemm import (GemmProblem, prepared_standard, standard_args, warp_tiled_sizes,
                   warp_tiled_threads)
from .programs import get_kernel
from .variant import Variant

__all__ = ["MMA", "mma_elem", "output_dtype", "operand_refusal", "device_arch",
           "TENSOR_CORE_KERNELS", "VARIANTS"]

SOURCE = "gemm_mma.cl"
TENSOR_CORE_KERNELS = ("mma", "wgmma")
"""Kernels that take float16 and bfloat16 operands as they are (``gemm_wgmma.py`` too)."""
_F16, _BF16, _TF32 = 1, 2, 3


def mma_elem(problem: GemmProblem) -> int | None:
    """The kernel's ``ELEM`` for this problem (1 float16, 2 bfloat16, 3 TF32), or None."""
    dt = np.dtype(problem.dtype)
    if dt == np.float16:
        return _F16
    if dt == np.float32 and problem.precision == "tf32":
        return _TF32
    bf16 = bfloat16_dtype()
    return _BF16 if bf16 is not None and dt == bf16 else None


def output_dtype(operand_dtype: np.dtype) -> np.dtype:
    """The dtype the kernel writes C in for operands of ``operand_dtype``."""
    return np.dtype(np.float16) if np.dtype(operand_dtype) == np.float16 else np.dtype(np.float32)


SMALL_TILE = 64
"""Products whose M and N are both this or less take SMALL_TILE-square tiles (warps of half
that): a batch of 64 x 64 products in 128 x 128 tiles leaves three quarters of each tile's
loads and multiplies on zeros."""


def _geometry(problem: GemmProblem, params: Mapping[str, int]) -> dict[str, int]:
    """The tile defines with the zeros resolved: BK 32 for 16-bit operands, 16 for TF32; BM
    and BN 64 where M and N are both SMALL_TILE or less, else 128; WM and WN half of BM and
    BN."""
    elem = mma_elem(problem)
    bk = params["BK"] or (16 if elem == _TF32 else 32)
    edge = SMALL_TILE if max(problem.M, problem.N) <= SMALL_TILE else 2 * SMALL_TILE
    bm, bn = params["BM"] or edge, params["BN"] or edge
    return {"BM": bm, "BN": bn, "BK": bk, "WM": params["WM"] or bm // 2,
            "WN": params["WN"] or bn // 2, "STAGES": params["STAGES"]}


def _tile_bytes(p: GemmProblem, g: Mapping[str, int]) -> int:
    """Local memory of the copy ring: STAGES tiles of A (BM x BK) and B (BK x BN)."""
    itemsize = 4 if mma_elem(p) == _TF32 else 2
    return g["STAGES"] * (g["BM"] + g["BN"]) * g["BK"] * itemsize


def _local_limit(info: DeviceInfo, dynamic: bool) -> int:
    """Local memory a work-group may use: the device's figure, or for a __local argument on
    NVIDIA the shared memory per block of the architecture (227 KB sm_90, 163 KB sm_80)."""
    cc = info.compute_capability
    if not dynamic or not info.tensor_cores or cc is None:
        return info.local_mem_bytes
    return max(info.local_mem_bytes, (227 if cc >= (9, 0) else 163) * 1024)


def operand_refusal(p: GemmProblem) -> str | None:
    """Why a tensor-core kernel cannot take the problem's operands, or None."""
    if mma_elem(p) is not None:
        return None
    return (f"float16 or bfloat16 operands, or float32 with precision 'tf32', only "
            f"(not {np.dtype(p.dtype)} at precision {p.precision!r})")


def device_arch(info: DeviceInfo) -> str:
    """The device as a refusal names it: ``sm_90``, or its vendor."""
    cc = info.compute_capability
    return f"sm_{cc[0]}{cc[1]}" if cc else info.vendor or "unknown"


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    why = operand_refusal(p)
    if why:
        return why
    elem = mma_elem(p)
    if not params["EMULATE"] and not info.tensor_cores:
        return (f"needs NVIDIA tensor cores (sm_80 or newer; this device: {device_arch(info)}); "
                f"EMULATE=1 runs the portable emulation")
    g = _geometry(p, params)
    if min(g.values()) < 1 or g["BM"] % g["WM"] or g["BN"] % g["WN"] or g["WM"] % 16 \
            or g["WN"] % 16 or g["BK"] % 16:
        return "needs BM % WM == BN % WN == 0 and WM, WN, BK multiples of 16"
    if not 2 <= g["STAGES"] <= 5:
        return "needs 2 <= STAGES <= 5"
    epc = 4 if elem == _TF32 else 8
    for name in ("BM", "BN", "BK"):
        chunks = g[name] // epc   # 16-byte chunks along a local tile row (swizzle unit)
        if g[name] % epc or not (chunks in (1, 2, 4) or chunks % 8 == 0):
            return f"needs {name} / {epc} in (1, 2, 4) or a multiple of 8 (swizzled tile rows)"
    threads = warp_tiled_threads(g)
    if (g["BM"] * g["BK"]) % (epc * threads) or (g["BN"] * g["BK"]) % (epc * threads):
        return f"BM*BK and BN*BK must be multiples of {epc * threads} (16-byte chunks per thread)"
    if threads > info.max_work_group_size:
        return f"work-group of {threads} exceeds the device's {info.max_work_group_size}"
    nbytes, limit = _tile_bytes(p, g), _local_limit(info, bool(params["DYN_LOCAL"]))
    if nbytes > limit:
        return f"needs {nbytes} bytes of local memory, the device allows {limit}"
    return None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above every other kernel wherever it runs natively: for float16/bfloat16 it is the only
    # kernel, for TF32 the caller asked for tensor cores.
    return 200.0 if info.tensor_cores and mma_elem(p) is not None else 0.0


def defines_for(device: Device, p: GemmProblem, params: Mapping[str, int]) -> dict[str, object]:
    """The ``-D`` defines of the kernel for this problem on this device."""
    elem = mma_elem(p)
    epc = 4 if elem == _TF32 else 8
    d: dict[str, object] = dict(_geometry(p, params))
    d.update(ELEM=elem, MMA_PTX=int(not params["EMULATE"] and device.info.tensor_cores),
             TRANS_A=int(p.a.trans), TRANS_B=int(p.b.trans), GROUP_M=params["GROUP_M"],
             VEC_A=int(p.a.aligned(epc)), VEC_B=int(p.b.aligned(epc)),
             VEC_C=int(p.c.aligned(2)), DYN_LOCAL=int(bool(params["DYN_LOCAL"])),
             NPERM=int(bool(params["NPERM"]) and elem == _TF32 and not p.b.trans
                       and d["WN"] % 32 == 0),
             SIMULATOR=int(device.info.is_simulator))
    return d


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    d = defines_for(device, p, params)
    kernel = get_kernel(device, SOURCE, "gemm_mma", d)
    gs, ls = warp_tiled_sizes(p, d)
    extra = (cl.LocalMemory(_tile_bytes(p, d)),) if d["DYN_LOCAL"] else ()  # type: ignore[arg-type]
    return kernel(device.queue, gs, ls, *standard_args(p), *extra)


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    d = defines_for(device, p, params)
    gs, ls = warp_tiled_sizes(p, d)
    kernel = get_kernel(device, SOURCE, "gemm_mma", d)
    if not d["DYN_LOCAL"]:
        return prepared_standard(device, p, kernel, gs, ls)
    tiles = cl.LocalMemory(_tile_bytes(p, d))  # type: ignore[arg-type]
    return prepared_standard(device, p, kernel, gs, ls, extra=(tiles,))


MMA = Variant(
    name="mma", source=SOURCE, entry="gemm_mma",
    summary="tensor cores: mma.sync (float16, bfloat16, TF32) via inline PTX, ldmatrix, "
            "cp.async into a STAGES-deep ring of swizzled local tiles; EMULATE=1: the same "
            "tiling in plain OpenCL C",
    # NPERM 0: on the H100 the permuted TF32 B layout ran 1.39 ms at 4096^3 against 1.21 ms
    # without it (benches/gpu_tensor_cores.py, 2026-11-23); it stays forcible.
    # (BM, BN, BK, WM, WN 0: by shape, see _geometry)
    defaults={"BM": 0, "BN": 0, "BK": 0, "WM": 0, "WN": 0, "STAGES": 3, "GROUP_M": 8,
              "DYN_LOCAL": 0, "NPERM": 0, "EMULATE": 0},
    fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    tunable={"BM": (64, 128), "BN": (64, 128, 256), "WM": (32, 64), "WN": (32, 64),
             "STAGES": (2, 3, 4), "GROUP_M": (1, 8)},
)

VARIANTS: tuple[Variant[GemmProblem], ...] = (MMA,)
