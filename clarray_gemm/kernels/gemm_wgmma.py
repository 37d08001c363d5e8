"""The warpgroup tensor-core GEMM (``opencl/gemm_wgmma.cl``): float16 and bfloat16 products, and
float32 products in TF32 where the caller opted in (``precision="tf32"``), on NVIDIA Hopper
(``DeviceInfo.warpgroup_mma``) through ``wgmma.mma_async``, whose operands are read straight from
swizzled local tiles by descriptor.

TF32 operands must be K-major and are read as they lie, low bits dropped; so a TF32 product first
packs A (row-major) and B (column-major) rounded to TF32 into a scratch buffer
(``opencl/operand_pack.cl``), which keeps the documented TF32 bound of ``ops/precision.py``.

A 16-bit operand whose rows do not start on 16 bytes (a leading dimension such as 4097) cannot be
copied by ``cp.async`` chunks: the kernel reads it element by element, at a fraction of its rate.
For large products such an operand is first copied into a scratch buffer with its rows padded to
16 bytes (``PACK_A``/``PACK_B``: -1 by size, 0 never, 1 always), one strided copy each.

``EMULATE=1`` builds the same tiles and copy ring with the warpgroup product computed in plain
OpenCL C from the layouts the instruction reads (``MMA_PTX=0``): it runs on any device (PoCL,
Oclgrind) and is only ever chosen by force, for tests.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..drivers import KernelBuildError
from . import gemm_gpu
from .copy import copy_plan
from .gemm import GemmOperand, GemmProblem, prepared_standard, split_workspace
from .gemm_mma import device_arch, mma_elem, operand_refusal
from .constants import constant
from .programs import get_kernel
from .variant import Variant

__all__ = ["WGMMA", "VARIANTS"]

SOURCE = "gemm_wgmma.cl"
PACK_SOURCE = "operand_pack.cl"
_TF32 = 3

_rebuild_failed: dict[DeviceInfo, str] = {}
"""Devices whose driver could not build the kernel's sm_90a rebuild, and why: the variant stops
fitting there, and an automatic choice moves to the next kernel (``ops/matmul.py``)."""


def _kernel(device: Device, defines: Mapping[str, object]):
    try:
        return get_kernel(device, SOURCE, "gemm_wgmma", defines)
    except KernelBuildError as exc:
        if defines.get("SM90A_PTX"):
            _rebuild_failed[device.info] = exc.reason
        raise




def _threads(params: Mapping[str, int]) -> int:
    return 128 * params["WGS"]


def _esize(elem: int | None) -> int:
    return 4 if elem == _TF32 else 2


def _bk(elem: int | None, params: Mapping[str, int]) -> int:
    """BK, with 0 resolved: 64 for 16-bit operands, 32 for TF32 (128-byte tile rows);
    :func:`tile_shape` resolves it by K for 16-bit products first."""
    return params["BK"] or (32 if elem == _TF32 else 64)


def _tile_bytes(params: Mapping[str, int], elem: int | None = 1) -> int:
    return (params["STAGES"] * (params["BM"] + params["BN"]) * _bk(elem, params)
            * _esize(elem))


_CHUNK = 8   # 16-bit elements per cp.async chunk (16 bytes)
TILE_SHAPES = ((128, 256, 2), (128, 128, 2), (128, 64, 2), (64, 64, 1))
"""(BM, BN, WGS) that BM = BN = WGS = 0 chooses from by shape, largest first."""
SMALL_TILES_MAX_K = 1024
_SHORT_K = constant("wgmma.short_k_16bit")
"""Where 16-bit products of short K take smaller tiles and K steps (see the tuned constant)."""


def tile_shape(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> Mapping[str, int]:
    """``params`` with BM, BN, WGS (and, for 16-bit operands, BK) resolved: those given kept,
    zeros by shape. For 16-bit operands, tiles that reach no 64-element step past M or N (64 x
    64 matrices in 128 x 256 tiles are seven eighths padding), of them the largest that still
    give half the compute units a tile (a 1024^3 float16 product makes 32 tiles of 128 x 256
    for 132 units and runs 1.6x faster in 128 x 64 ones; H200, 2026-11-28), at most
    ``wgmma.short_k_16bit``'s ``unaligned_tile`` where an operand is read element by element
    (rows not on 16 bytes) and K <= SMALL_TILES_MAX_K. Past that K over such an operand the
    largest: smaller tiles read the operands more often, and those reads dominate (127 x 4097
    x 4097: 116 us in 17 large tiles split 7-fold, 169 us in 130 small). TF32: the largest.
    BK: 32 up to ``bk32_max_k`` (two steps in flight instead of one), else 64."""
    elem = mma_elem(p)
    if params["BM"] and params["BN"] and params["WGS"] and (params["BK"] or elem == _TF32):
        return params
    bm, bn, wgs = TILE_SHAPES[0]
    if elem != _TF32:
        aligned = p.a.aligned(_CHUNK) and p.b.aligned(_CHUNK)
        short = p.K <= SMALL_TILES_MAX_K
        m_steps, n_steps = -(-p.M // 64) * 64, -(-p.N // 64) * 64
        most = _SHORT_K["unaligned_tile"] if short and not aligned else TILE_SHAPES[0][:2]
        fitting = [t for t in TILE_SHAPES if t[0] <= min(m_steps, most[0])
                   and t[1] <= min(n_steps, most[1])] or TILE_SHAPES[-1:]
        bm, bn, wgs = fitting[0]
        if aligned or short:
            for bm, bn, wgs in fitting:
                if 2 * -(-p.M // bm) * -(-p.N // bn) * p.batch >= info.compute_units:
                    break
    bk = params["BK"]
    if not bk and elem != _TF32:
        bk = 32 if p.K <= _SHORT_K["bk32_max_k"] else 64
    return {**params, "BM": params["BM"] or bm, "BN": params["BN"] or bn,
            "WGS": params["WGS"] or wgs, "BK": bk}


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    params = tile_shape(p, info, params)
    why = operand_refusal(p)
    if why:
        return why
    if not params["EMULATE"] and not info.warpgroup_mma:
        return (f"needs NVIDIA Hopper (sm_90) for wgmma; this device: {device_arch(info)}; "
                f"EMULATE=1 runs the portable emulation")
    if not params["EMULATE"] and info in _rebuild_failed:
        return f"this driver could not build its sm_90a rebuild ({_rebuild_failed[info]})"
    elem = mma_elem(p)
    if not 0 <= params.get("KSPLIT", 0) <= MAX_KSPLIT:
        return f"KSPLIT must be 0 (by shape) to {MAX_KSPLIT}"
    if any(params.get(k, -1) not in (-1, 0, 1) for k in ("PACK_A", "PACK_B")):
        return "PACK_A and PACK_B must be -1 (by size), 0 or 1"
    if params.get("FINISH_LAST", -1) not in (-1, 0, 1):
        return "FINISH_LAST must be -1 (by device), 0 (the default: slower on Hopper) or 1"
    if params.get("STAGE_C", -1) not in (-1, 0, 1):
        return ("STAGE_C must be -1 (where C's rows do not start on a pair of elements), 0 (C "
                "stored from the accumulators) or 1 (through local memory)")
    bm, bn, wgs, stages = (params[k] for k in ("BM", "BN", "WGS", "STAGES"))
    bk, esize = _bk(elem, params), _esize(elem)
    if wgs < 1 or bm % (64 * wgs) or bm // (64 * wgs) not in (1, 2):
        return "needs BM = 64 * WGS or 128 * WGS"
    if bn not in (64, 128, 256) or bk * esize not in (32, 64, 128):
        return (f"needs BN in (64, 128, 256) and BK in "
                f"{tuple(b // esize for b in (32, 64, 128))} (tile rows of 32, 64 or 128 bytes)")
    if not 2 <= stages <= 5 or params["WG_INFLIGHT"] not in (0, 1) \
            or stages - 1 - params["WG_INFLIGHT"] < 1:
        return "needs 2 <= STAGES <= 5, WG_INFLIGHT 0 or 1 and STAGES - 1 - WG_INFLIGHT >= 1"
    threads = _threads(params)
    epc = 16 // esize
    if (bm * bk // epc) % threads or (bn * bk // epc) % threads:
        return (f"BM*BK/{epc} and BN*BK/{epc} (16-byte chunks) must be multiples of the "
                f"work-group size {threads}")
    if threads > info.max_work_group_size:
        return f"work-group of {threads} exceeds the device's {info.max_work_group_size}"
    limit = info.static_local_bytes
    if _tile_bytes(params, elem) > limit:
        return (f"needs {_tile_bytes(params, elem)} bytes of local memory, the device allows "
                f"{limit}")
    return None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above mma (200) wherever wgmma runs: the same products at twice its tensor-core rate.
    return 210.0 if info.warpgroup_mma and mma_elem(p) is not None else 0.0


def defines_for(device: Device, p: GemmProblem, params: Mapping[str, int]) -> dict[str, object]:
    """The ``-D`` defines of the kernel for this problem on this device."""
    elem = mma_elem(p)
    d: dict[str, object] = {k: params[k] for k in ("BM", "BN", "WGS", "STAGES", "WG_INFLIGHT",
                                                   "GROUP_M", "PROMOTE")}
    epc = 16 // _esize(elem)
    ptx = int(not params["EMULATE"] and device.info.warpgroup_mma)
    # NVIDIA's OpenCL compiler targets sm_90: wgmma needs the sm_90a rebuild (drivers/build.py)
    d.update(ELEM=elem, BK=_bk(elem, params), MMA_PTX=ptx, SM90A_PTX=ptx,
             TRANS_A=int(p.a.trans), TRANS_B=int(p.b.trans), VEC_A=int(p.a.aligned(epc)),
             VEC_B=int(p.b.aligned(epc)), VEC_C=int(p.c.aligned(2)), STAGE_C=_stage_c(p, params),
             SIMULATOR=int(device.info.is_simulator))
    for name in ("MN_LBO", "MN_SBO"):   # descriptor strides: forcible, for probes
        if params.get(name):
            d[name] = params[name]
    return d


def _sizes(p: GemmProblem, d: Mapping[str, object]) -> tuple[tuple, tuple]:
    threads = 128 * d["WGS"]  # type: ignore[operator]
    tiles_n, tiles_m = -(-p.N // d["BN"]), -(-p.M // d["BM"])  # type: ignore[operator]
    return (threads * tiles_n, tiles_m, p.batch), (threads, 1, 1)


def tf32_packed(p: GemmProblem) -> tuple[GemmProblem, int]:
    """The TF32 problem the kernel runs after packing (A row-major then B column-major in one
    scratch buffer, rows of K rounded up to whole 16-byte chunks; an operand shared by every
    batch packed once), and the scratch bytes it needs."""
    kp = -(-p.K // 4) * 4
    a_batches = p.batch if p.a.batch_stride else 1
    a = GemmOperand(None, 0, kp, p.M * kp if p.a.batch_stride else 0, False)
    b = GemmOperand(None, a_batches * p.M * kp, kp, p.N * kp if p.b.batch_stride else 0, True)
    b_batches = p.batch if p.b.batch_stride else 1
    return replace(p, a=a, b=b), 4 * (a_batches * p.M + b_batches * p.N) * kp


def pack_launches(device: Device, p: GemmProblem, packed: GemmProblem,
                  defines: tuple[Mapping[str, int], Mapping[str, int]]) -> list[tuple]:
    """``(kernel, global size, rows, ld, batch stride, offset in the scratch buffer)`` of the
    operand_pack.cl launches that copy A and B into ``packed``'s K-major layout, each built
    with its own extra ``defines`` (A's first)."""
    i32, i64 = np.int32, np.int64
    packs = []
    # X(r, k) of A is A(m, k); of B, B(k, n) with r = n: transposed unless B is column-major
    for rows, op, trans, at, extra in ((p.M, p.a, p.a.trans, packed.a.offset, defines[0]),
                                       (p.N, p.b, not p.b.trans, packed.b.offset, defines[1])):
        kernel = get_kernel(device, PACK_SOURCE, "operand_pack",
                            {"TRANS": int(trans), "VEC": int(op.aligned(4)), **extra})
        batches = p.batch if op.batch_stride else 1
        size = (32 * -(-p.K // 32), 8 * -(-rows // 32), batches)
        packs.append((kernel, size, i32(rows), i32(op.ld), i64(op.batch_stride), i64(at)))
    return packs


def _prepare_tf32(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """Pack A and B (operand_pack.cl, rounded to TF32), then the product of the packed operands."""
    packed, nbytes = tf32_packed(p)
    d = defines_for(device, packed, params)
    gs, ls = _sizes(packed, d)
    product = prepared_standard(device, packed, _kernel(device, d), gs, ls)
    i32, i64 = np.int32, np.int64
    kp, a_at, b_at = i32(packed.a.ld), i64(packed.a.offset), i64(packed.b.offset)
    packs = pack_launches(device, p, packed, ({"ROUND_TF32": 1}, {"ROUND_TF32": 1}))
    k = i32(p.K)

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        scratch = split_workspace(device, nbytes)
        q = device.queue
        for (kernel, size, rows, ld, stride, at), buf, off in zip(packs, (a_buf, b_buf),
                                                                   (a_off, b_off)):
            kernel(q, size, (32, 8, 1), rows, k, buf, i64(off), ld, stride, scratch, at, kp)
        return product(scratch, a_at, scratch, b_at, c_buf)
    return run


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    return _prepare(device, p, params)(p.a.buffer, np.int64(p.a.offset), p.b.buffer,
                                       np.int64(p.b.offset), p.c.buffer)


MAX_KSPLIT = 16
MIN_SLICE_STEPS = 4
# Where packing an unaligned 16-bit operand pays (tuned constant wgmma.pack_16bit)
PACK_MIN_MACS = int(constant("wgmma.pack_16bit")["min_macs"])
PACK_MIN_REUSE = int(constant("wgmma.pack_16bit")["min_reuse"])
# How many small tiles' work-groups a compute unit counts for when split-K fills the units
_SPLIT_SLOTS = constant("wgmma.split_slots")


def ksplit(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> int:
    """K slices of a 16-bit product: ``params["KSPLIT"]``, or with 0 as many as fill the
    compute units that the tiles leave idle (where they fill at most half of them; a unit runs
    two tiles of 64 x 64 at once: tuned constant ``wgmma.split_slots``), each slice
    at least MIN_SLICE_STEPS K steps. One tile over a K of 4096 is otherwise 64 steps in a row on
    one compute unit (H200, float16 7 x 127 x 4097: 248 us against torch's 33)."""
    if mma_elem(p) == _TF32:
        return 1
    if params.get("KSPLIT"):
        return int(params["KSPLIT"])
    params = tile_shape(p, info, params)
    tiles = -(-p.M // params["BM"]) * -(-p.N // params["BN"]) * p.batch
    # work-groups a compute unit runs at once: small tiles share one
    small = params["BM"] * params["BN"] <= _SPLIT_SLOTS["small_tile"]
    units = max(info.compute_units, 1) * (_SPLIT_SLOTS["small_per_unit"] if small else 1)
    steps = -(-p.K // _bk(mma_elem(p), params))
    if 2 * tiles > units:
        return 1
    return max(1, min(MAX_KSPLIT, units // tiles, steps // MIN_SLICE_STEPS))


def packs(p: GemmProblem, params: Mapping[str, int]) -> tuple[bool, bool]:
    """Whether A and B are copied to 16-byte rows first: ``PACK_A``/``PACK_B`` 1, or -1 where
    the product has at least PACK_MIN_MACS multiply-adds and the operand is read by at least
    PACK_MIN_REUSE tiles' worth of the other side (N for A, M for B): then the copy's time is
    small beside the element-wise reads it saves. Never an operand already aligned, a TF32 one
    (packed anyway) or one of two batch levels."""
    if mma_elem(p) == _TF32:
        return False, False
    big = p.batch * p.M * p.N * p.K >= PACK_MIN_MACS
    out = []
    for key, op, reuse in (("PACK_A", p.a, p.N), ("PACK_B", p.b, p.M)):
        want = int(params.get(key, -1))
        if want < 0:
            want = int(big and reuse >= PACK_MIN_REUSE)
        out.append(bool(want) and not op.aligned(_CHUNK) and not op.inner_stride)
    return out[0], out[1]


def _packed_layout(p: GemmProblem, pack_a: bool, pack_b: bool):
    """The problem over the packed operands (rows padded to whole chunks, A then B from the
    start of the packing scratch buffer), its scratch bytes, and per packed operand the copy's
    ``(shape, source strides, destination strides, destination offset)``."""
    copies, at, ops = [], 0, {}
    for name, op, rows, cols, pack in (("a", p.a, p.M, p.K, pack_a), ("b", p.b, p.K, p.N, pack_b)):
        if not pack:
            continue
        if op.trans:
            rows, cols = cols, rows
        ld = -(-cols // _CHUNK) * _CHUNK
        batches = p.batch if op.batch_stride else 1
        ops[name] = GemmOperand(None, at, ld, rows * ld if op.batch_stride else 0, op.trans)
        copies.append(((batches, rows, cols), (op.batch_stride, op.ld, 1), (rows * ld, ld, 1), at))
        at += -(-batches * rows * ld // _CHUNK) * _CHUNK
    return replace(p, **ops), 2 * at, copies


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)``: the unaligned operands packed first (see
    :func:`packs`), then the product; with split-K the slices write float32 partial products
    to this thread's scratch buffer and the last slice of each tile (FINISH_LAST) or
    gemm_gpu.cl's reduction sums them into C (rounding a float16 C once)."""
    params = tile_shape(p, device.info, params)
    if mma_elem(p) == _TF32:
        return _prepare_tf32(device, p, params)
    pack_a, pack_b = packs(p, params)
    if not (pack_a or pack_b):
        return _prepare_product(device, p, params)
    packed, nbytes, layout = _packed_layout(p, pack_a, pack_b)
    bits = np.dtype(np.uint16)   # a bit copy, whichever 16-bit type
    copies = iter([(copy_plan(device, shape, bits, src, bits, dst), np.int64(at))
                   for shape, src, dst, at in layout])
    copy_a = next(copies) if pack_a else None   # (copy, offset in the scratch buffer)
    copy_b = next(copies) if pack_b else None
    product = _prepare_product(device, packed, params)

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        scratch = split_workspace(device, nbytes, slot=1)
        if copy_a is not None:
            copy_a[0](a_buf, int(a_off), scratch, int(copy_a[1]))
            a_buf, a_off = scratch, copy_a[1]
        if copy_b is not None:
            copy_b[0](b_buf, int(b_off), scratch, int(copy_b[1]))
            b_buf, b_off = scratch, copy_b[1]
        return product(a_buf, a_off, b_buf, b_off, c_buf)
    return run


def _prepare_product(device: Device, p: GemmProblem, params: Mapping[str, int]):
    ks = ksplit(p, device.info, params)
    if ks == 1:
        d = defines_for(device, p, params)
        gs, ls = _sizes(p, d)
        return prepared_standard(device, p, _kernel(device, d), gs, ls)

    def slices(work: GemmProblem, final):
        d = {**defines_for(device, work, params), "KSPLIT": ks,
             "FINISH_LAST": int(final is not None), "FINAL_HALF": int(mma_elem(p) == 1)}
        gs, ls = _sizes(work, d)
        return gemm_gpu.split_k_slices(device, work, _kernel(device, d),
                                       (gs[0], gs[1], gs[2] * ks), ls, final)
    return gemm_gpu.prepare_split_k(device, p, ks, slices, half_c=mma_elem(p) == 1,
                                    finish_last=params["FINISH_LAST"])


def _stage_c(p: GemmProblem, params: Mapping[str, int]) -> int:
    """STAGE_C resolved: -1 stages C where its rows do not start on a pair of elements (the
    fragment stores then go element by element); where they do, the fragment stores measured
    faster (benches/RESULTS.md, H200 GEMM grid, "C through local memory")."""
    stage = params.get("STAGE_C", -1)
    return int(not p.c.aligned(2)) if stage == -1 else stage


def staged_c(p: GemmProblem, params: Mapping[str, int], ks: int = 1) -> bool:
    """Whether the kernel stores C through local memory (STAGE_C and the BM x BN tile of C,
    rows skewed by 16 bytes, fits in the ring; the same test as gemm_wgmma.cl's STAGED)."""
    elem = mma_elem(p)
    size = 2 if elem == 1 and ks == 1 else 4    # float16 C, else float32 (or partial sums)
    tile = params["BM"] * (params["BN"] + 16 // size) * size
    return bool(_stage_c(p, params)) and tile <= _tile_bytes(params, elem)


def _resolved(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str:
    params = tile_shape(p, info, params)
    ks = ksplit(p, info, params)
    return ("BM={BM} BN={BN} WGS={WGS} ".format(**params) + f"BK={_bk(mma_elem(p), params)} "
            + "KSPLIT={} PACK_A={:d} PACK_B={:d} ".format(ks, *packs(p, params))
            + f"STAGE_C={int(staged_c(p, params, ks))}")


WGMMA = Variant(
    name="wgmma", source=SOURCE, entry="gemm_wgmma",
    summary="Hopper tensor cores: wgmma.mma_async (float16, bfloat16, TF32 from operands "
            "packed rounded) via inline PTX reading swizzled local tiles by descriptor, "
            "cp.async into a STAGES-deep ring; EMULATE=1: the same tiles in plain OpenCL C",
    # 128 x 256 tiles, four stages of 128-byte K rows (192 KiB): float16 556 / 648 TF/s at
    # 4096^3 / 8192^3 on the H100, the fastest configuration swept; 32-deep steps (96 KiB) gave
    # 460 / 543 (2026-11-25, benches/probes/wgmma_sweep.sh and wgmma_probe.py).
    # (BK 0: 64 for 16-bit operands, 32 for TF32; BM, BN, WGS 0: see tile_shape.)
    # (KSPLIT 0: by shape, see ksplit)
    defaults={"BM": 0, "BN": 0, "BK": 0, "WGS": 0, "STAGES": 4, "WG_INFLIGHT": 1,
              "GROUP_M": 8, "MN_LBO": 0, "MN_SBO": 0, "EMULATE": 0, "PROMOTE": 0, "KSPLIT": 0,
              "PACK_A": -1, "PACK_B": -1, "FINISH_LAST": 0, "STAGE_C": -1},
    fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    resolved=lambda p, info, params: _resolved(p, info, params),
    tunable={"BM": (0, 64, 128, 256), "BN": (0, 64, 128, 256), "BK": (8, 16, 32, 64),
             "WGS": (0, 1, 2),
             "STAGES": (2, 3, 4, 5), "WG_INFLIGHT": (0, 1), "GROUP_M": (1, 8),
             "KSPLIT": (0, 1, 2, 4, 8), "PACK_A": (-1, 0, 1), "PACK_B": (-1, 0, 1),
             "FINISH_LAST": (0, 1), "STAGE_C": (-1, 0, 1)},
)

VARIANTS: tuple[Variant[GemmProblem], ...] = (WGMMA,)
