"""``gpu_blocked``: the register-blocked GPU GEMM of ``opencl/gemm_gpu.cl``.

A work-group computes a BM x BN tile of C (for large products 128 x 128 with 128 work-items of
16 x 8 values each), staging K steps of A and B in double-buffered local memory. The launcher picks,
per shape, the tile preset and the number of K slices (split-K, summed by a second small kernel)
so that small or skinny products still fill the GPU; every choice is a ``-D`` parameter that can
be forced with ``params=``. Operands are read in place in any layout (``TRANS_A``/``TRANS_B``):
aligned ones with 16-byte vector loads, others with scalar loads. One exception: in large
float32 products a row-major A and a column-major B are first copied into scratch space with
rows along K (``PACK_A``/``PACK_B``, by ``opencl/operand_pack.cl``), which the kernel stores
into its local tiles as whole vectors.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..memo import Memo
from ..dtypes import FLOATING, dtype_defines, unsupported_dtype
from .constants import constant, int_keyed
from .flags import finish_in_last_group, group_counters
from .gemm import GemmOperand, GemmProblem, base_defines, prepared_standard, split_workspace
from .programs import BoundLaunch, get_kernel
from .variant import Variant

__all__ = ["PRESETS", "resolve", "VARIANT", "VARIANTS"]

SOURCE = "gemm_gpu.cl"
PACK_SOURCE = "operand_pack.cl"

# Integers multiply-add in their unsigned type (wrapping as NumPy's); 8-byte ones take the float64
# presets (twice the registers of a 4-byte micro-tile).
INTEGERS = tuple(np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))

# Tile presets (BM, BN, TM, TN, BK, EDGE_ONLY_CLAMP, PAD_A). 1-4 have 256 work-items: the 8 x 8
# micro-tile does 64 FMAs per four 16-byte local reads; 2-4 trade that for more work-groups on
# small shapes (their BK is 16 so that every work-item still loads whole 4-vectors). 5-8 hold
# 128 values per work-item (16 x 8 or 8 x 16): 128 FMAs per six local reads. The last two fields
# are the measured better settings of EDGE_ONLY_CLAMP and PAD_A: unclamped interior loads let
# ptxas issue them early. 9 is preset 3's tile held by 128 work-items of 8 x 8 (cuBLAS's own
# geometry for mid-size products, 128 x 64 and four warps): fewer registers a work-item let
# three work-groups share a compute unit where preset 3 allows two. The table and the
# measurements behind it: ``gemm_gpu.presets`` in tuned_constants.json.
PRESETS: dict[int, tuple[int, int, int, int, int, int, int]] = {
    k: tuple(v) for k, v in int_keyed("gemm_gpu.presets").items()}
# A row-major float32 A is packed k-major first (PACK_A -1: here) when the product is wide
# enough for the pack's pass over A (8*M*K bytes) to cost less than it saves the product; a
# column-major B likewise, by M. Only preset 7, unsplit, where it was measured, and only while
# the scratch copies stay small beside the device's memory.
_PACK_MIN_OTHER_SIDE = constant("gemm_gpu.pack_min_other_side")
_PACK_MEMORY_SHARE = constant("gemm_gpu.pack_memory_share")
# Modelled throughput of a compute unit running each preset, relative to preset 7 with two
# resident work-groups; how many work-groups one compute unit holds at once; the share of the
# throughput with a single one; split-K's fixed cost (second launch, partial sums) in the
# model's units; the shallowest K slice split-K makes.
_EFFICIENCY = int_keyed("gemm_gpu.efficiency")
_RESIDENT = int_keyed("gemm_gpu.resident")
_SINGLE = constant("gemm_gpu.single_resident_share")
_SPLIT_COST = constant("gemm_gpu.split_cost")
_MIN_SLICE = constant("gemm_gpu.min_slice")
_NAIVE_MAX_FMAS = constant("gemm_gpu.naive_max_fmas")
# Presets the shape heuristic considers (the others only when forced). Preset 9 replaced 3: the
# same tiles, at least as fast wherever both were measured.
_AUTO = (7, 2, 9, 4)
# float64 doubles every register and local-memory byte: 16 x 8 micro-tiles spill, and presets
# 2, 3, 5 and 6 exceed 48 KB of local memory. Its own candidates and efficiencies.
_EFFICIENCY_FP64 = int_keyed("gemm_gpu.efficiency_fp64")
_AUTO_FP64 = tuple(_EFFICIENCY_FP64)
# Integer multiply-adds take more issue slots than FMAs, and smaller micro-tiles keep up.
_EFFICIENCY_INT = int_keyed("gemm_gpu.efficiency_int")
_AUTO_INT = tuple(_EFFICIENCY_INT)
_EFFICIENCY_INT64 = int_keyed("gemm_gpu.efficiency_int64")
_AUTO_INT64 = tuple(_EFFICIENCY_INT64)


def _preset_model(problem: GemmProblem) -> tuple[tuple[int, ...], dict[int, float]]:
    """The presets the shape heuristic weighs for ``problem``'s dtype, and their efficiencies."""
    wide = problem.itemsize == 8
    if np.dtype(problem.dtype).kind in "iu":
        return (_AUTO_INT64, _EFFICIENCY_INT64) if wide else (_AUTO_INT, _EFFICIENCY_INT)
    return (_AUTO_FP64, _EFFICIENCY_FP64) if wide else (_AUTO, _EFFICIENCY)

DEFAULTS = {"PRESET": 0, "BK": 0, "KSPLIT": 0, "GROUP_M": 16, "WARP_X": 8, "PAD_A": -1,
            "PAD_B": 0, "EDGE_ONLY_CLAMP": -1, "PACK_A": -1, "PACK_B": -1, "FINISH_LAST": -1}


def _vec_ok(op: GemmOperand, contiguous_extent: int) -> bool:
    return op.aligned(4) and contiguous_extent % 4 == 0


def _cost(problem: GemmProblem, info: DeviceInfo, preset: int, ksplit: int) -> float:
    """Modelled device time in units of one multiply-add per compute unit: work-groups are
    spread evenly over the compute units, each runs ceil(groups/units) of them at the rate its
    residency allows; split-K adds its partial sums' traffic (about 8 bytes per FMA-unit)."""
    bm, bn, tm, tn = PRESETS[preset][:4]
    p = problem
    units = max(info.compute_units, 1)
    groups = math.ceil(p.M / bm) * math.ceil(p.N / bn) * p.batch * ksplit
    per_unit = math.ceil(groups / units)
    resident = min(per_unit, _RESIDENT[preset])
    efficiency = _preset_model(p)[1]
    rate = efficiency.get(preset, 0.1) * (1.0 if resident >= 2 else _SINGLE)
    work = per_unit * bm * bn * (math.ceil(p.K / ksplit) + 16) / rate
    reduce = 0.0 if ksplit == 1 else 2.0 * (ksplit + 1) * p.M * p.N * p.batch / units + _SPLIT_COST
    return work + reduce


def resolve(problem: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> dict[str, int]:
    """The full ``-D`` parameter set for ``problem``: PRESET 0 and KSPLIT 0 mean "chosen by the
    shape" (the fewest modelled waves of work), BK 0, EDGE_ONLY_CLAMP -1 and PAD_A -1 the
    preset's, PACK_A and PACK_B -1 by :func:`_packs`; VEC_* follow the operands' alignment
    (as packed, where packed)."""
    out = dict(DEFAULTS)
    out.update(params)
    preset, ksplit = int(out["PRESET"]), int(out["KSPLIT"])
    if preset == 0 or ksplit == 0:
        presets = [preset] if preset else list(_preset_model(problem)[0])
        splits = [ksplit] if ksplit else [s for s in (1, 2, 3, 4, 6, 8, 12, 16)
                                          if s == 1 or problem.K // s >= _MIN_SLICE
                                          and max(out["PACK_A"], out["PACK_B"]) <= 0]
        units = max(info.compute_units, 1)

        def fills(pr: int) -> bool:  # split K only where the unsplit groups leave units idle
            bm, bn = PRESETS[pr][:2]
            groups = math.ceil(problem.M / bm) * math.ceil(problem.N / bn) * problem.batch
            return groups >= units * _RESIDENT[pr]
        best = min(((pr, s) for pr in presets for s in splits
                    if s == 1 or ksplit or not fills(pr)),  # a forced KSPLIT stands
                   key=lambda ps: _cost(problem, info, *ps))
        preset, ksplit = best
    bm, bn, tm, tn, bk, edge, pad_a = PRESETS[preset]
    out.update(PRESET=preset, KSPLIT=ksplit, BM=bm, BN=bn, TM=tm, TN=tn, BK=out["BK"] or bk)
    if out["EDGE_ONLY_CLAMP"] < 0:
        out["EDGE_ONLY_CLAMP"] = edge
    if out["PAD_A"] < 0:
        out["PAD_A"] = pad_a
    p = problem
    auto_a, auto_b = _packs(p, info, preset, ksplit)
    if out["PACK_A"] < 0:
        out["PACK_A"] = int(auto_a)
    if out["PACK_B"] < 0:
        out["PACK_B"] = int(auto_b)
    if _pack_unfit(p) is None:
        p = packed_operands(p, out["PACK_A"] > 0, out["PACK_B"] > 0)[0]
    out["VEC_A"] = int(_vec_ok(p.a, p.M if p.a.trans else p.K))
    out["VEC_B"] = int(_vec_ok(p.b, p.K if p.b.trans else p.N))
    out["VEC_C"] = int(ksplit > 1 and p.N % 4 == 0 or _vec_ok(p.c, p.N))
    return out


def _pack_unfit(p: GemmProblem) -> str | None:
    """Why the operands cannot be packed (operand_pack.cl moves 4-byte floats of one batch
    level)."""
    if p.dtype != np.float32:
        return "PACK_A and PACK_B take float32 only"
    if p.batch_inner:
        return "PACK_A and PACK_B take one batch level only"
    return None


def _packs(p: GemmProblem, info: DeviceInfo, preset: int, ksplit: int) -> tuple[bool, bool]:
    """PACK_A's and PACK_B's automatic settings: on a GPU, a float32 product wide enough on
    the other side, of a row-major A (rows along K already: nothing to gain) or a column-major
    B."""
    if (not info.is_gpu or info.is_simulator or preset != 7 or ksplit != 1
            or _pack_unfit(p) is not None):
        return False, False
    pack_a = not p.a.trans and p.N >= _PACK_MIN_OTHER_SIDE and p.M % 4 == 0
    pack_b = p.b.trans and p.M >= _PACK_MIN_OTHER_SIDE and p.N % 4 == 0
    scratch = packed_operands(p, pack_a, pack_b)[1]
    if scratch > min(info.max_alloc_bytes, info.global_mem_bytes // _PACK_MEMORY_SHARE):
        return False, False
    return pack_a, pack_b


def packed_operands(p: GemmProblem, pack_a: bool, pack_b: bool) -> tuple[GemmProblem, int]:
    """The problem the kernel runs once the chosen operands are packed into scratch space (A
    k-major, then B row-major: rows along K of M or N elements rounded up to whole 16-byte
    chunks, one matrix per batch, one in all where every batch shares it) and the scratch
    bytes that takes."""
    a, b, end = p.a, p.b, 0
    if pack_a:
        ld = -(-p.M // 4) * 4
        a = GemmOperand(None, 0, ld, p.K * ld if p.a.batch_stride else 0, True)
        end = (p.batch if p.a.batch_stride else 1) * p.K * ld
    if pack_b:
        ld = -(-p.N // 4) * 4
        b = GemmOperand(None, end, ld, p.K * ld if p.b.batch_stride else 0, False)
        end += (p.batch if p.b.batch_stride else 1) * p.K * ld
    return replace(p, a=a, b=b), 4 * end


EDGE_MIN_K = 256
"""The least K at which a sliver is worth its own launches: below it the extra wave of tiles
costs less than the two or three launches of the slivers (H200, float32 and int32, 4097^2 and
2049^2 x K: splitting lost 10-30 us at K <= 33, broke even at 127, won from 256 to 2048)."""


def edge_split(problem: GemmProblem, info: DeviceInfo,
               params: Mapping[str, int]) -> tuple[int, int] | None:
    """(M0, N0): where a large product on a GPU should be cut so that the rows past M0 and the
    columns past N0, each at most an eighth of a tile, run as products of their own (GEMV-like
    slivers) instead of adding a row or column of nearly empty tiles, which on a GPU costs a
    whole extra wave (H100, 4097x3004x2052: 1.79 ms against 1.22 ms for 4096x3000x2048).
    None where no sliver exists or the problem is not a single product of at least a wave of
    tiles."""
    if not info.is_gpu or problem.batch != 1 or problem.batch_inner or problem.K < EDGE_MIN_K:
        return None
    d = resolve(problem, info, params)
    bm, bn = d["BM"], d["BN"]
    m_rest, n_rest = problem.M % bm, problem.N % bn
    m0 = problem.M - m_rest if 0 < m_rest <= bm // 8 else problem.M
    n0 = problem.N - n_rest if 0 < n_rest <= bn // 8 else problem.N
    if (m0, n0) == (problem.M, problem.N) or (m0 // bm) * (n0 // bn) < info.compute_units:
        return None  # no sliver, or fewer tiles than one wave: an extra one is no extra wave
    return m0, n0


def _local_bytes(d: Mapping[str, int], itemsize: int) -> int:
    return 2 * d["BK"] * (d["BM"] + d["PAD_A"] + d["BN"] + d["PAD_B"]) * itemsize


def _fits(problem: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    dt = np.dtype(problem.dtype)
    why = unsupported_dtype(dt, info, only=FLOATING + INTEGERS)
    if why:
        return why
    if int(params.get("PRESET", 0)) not in (0, *PRESETS):
        return f"PRESET must be one of {sorted(PRESETS)} (0: by shape)"
    if int(params.get("FINISH_LAST", -1)) not in (-1, 0, 1):
        return "FINISH_LAST must be -1 (by device), 0 or 1"
    if (max(int(params.get("PACK_A", -1)), int(params.get("PACK_B", -1))) > 0
            and (why := _pack_unfit(problem))):
        return why
    d = resolve(problem, info, params)
    if max(d["PACK_A"], d["PACK_B"]) > 0 and d["KSPLIT"] > 1:
        return "PACK_A and PACK_B need KSPLIT 1 (split-K uses the same scratch buffer)"
    nt = (d["BM"] // d["TM"]) * (d["BN"] // d["TN"])
    if nt > info.max_work_group_size:
        return f"needs work-groups of {nt} work-items (device allows {info.max_work_group_size})"
    if _local_bytes(d, dt.itemsize) > info.local_mem_bytes:
        return (f"needs {_local_bytes(d, dt.itemsize)} bytes of local memory "
                f"(device has {info.local_mem_bytes})")
    if d["BK"] % 4 or (d["BM"] * d["BK"]) % (4 * nt) or (d["BN"] * d["BK"]) % (4 * nt):
        return "BK must be a multiple of 4 with BM*BK and BN*BK multiples of 4*work-items"
    wx = d["WARP_X"]
    if 32 % wx or (d["BN"] // d["TN"]) % wx or (d["BM"] // d["TM"]) % (32 // wx):
        return "WARP_X must divide 32 and the work-item grid"
    return None


def _rank(problem: GemmProblem, info: DeviceInfo) -> float:
    # The first choice on real GPUs; on CPUs and simulators only when forced (the 256-wide
    # work-groups and local-memory staging are what GPUs want, not CPUs).
    if not info.is_gpu or info.is_simulator:
        return 0.0
    # Products of few multiply-adds fill a sliver of one 64x64 tile per work-group: one
    # work-item per element of C (``naive``, rank 1) does them (``gemm_gpu.naive_max_fmas``).
    if problem.M * problem.N * problem.K <= _NAIVE_MAX_FMAS:
        return 0.5
    # Matrix-vector shapes leave most of a 128-wide tile idle: let GEMV kernels win those.
    if min(problem.M, problem.N) < 16:
        return 5.0
    return 100.0  # int64 too (preset 4 measured ahead of vec)


def _geometry_key(p: GemmProblem, device: Device, params: Mapping[str, int]) -> tuple:
    """What the resolved parameters and launch geometry depend on (vector alignment: the
    operands' offsets, leading dimensions and batch strides modulo 16 elements)."""
    ops = tuple((o.trans, o.offset % 16, o.ld % 16, o.batch_stride % 16) for o in (p.a, p.b, p.c))
    two_level = (p.batch_inner, p.a.inner_stride, p.b.inner_stride) if p.batch_inner else None
    return (device, p.M, p.N, p.K, p.batch, p.dtype, p.storage, ops, two_level,
            frozenset(params.items()))


# Resolved launches, so that a repeated shape does not run the cost model again.
_resolved: Memo[tuple] = Memo("gpu_blocked launch geometries")


def _resolve_launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> tuple:
    key = _geometry_key(p, device, params)
    found = _resolved.find(key)
    if found is not None:
        return found
    d = resolve(p, device.info, params)
    packs = (d["PACK_A"] > 0, d["PACK_B"] > 0)
    defines = base_defines(packed_operands(p, *packs)[0])
    for name in ("BM", "BN", "BK", "TM", "TN", "WARP_X", "VEC_A", "VEC_B", "VEC_C", "PAD_A",
                 "PAD_B", "GROUP_M", "KSPLIT", "EDGE_ONLY_CLAMP"):
        defines[name] = d[name]
    defines["SIMULATOR"] = int(device.info.is_simulator)
    if p.batch_inner:  # inner strides are compile-time: the division by BATCH_INNER too
        defines.update(BATCH_INNER=p.batch_inner, A_BATCH_INNER=p.a.inner_stride,
                       B_BATCH_INNER=p.b.inner_stride)
    nt = (d["BM"] // d["TM"]) * (d["BN"] // d["TN"])
    ks = d["KSPLIT"]
    reads = min(d["BM"], p.M) * min(d["BN"], p.N) * ks / nt   # a last group's, per work-item
    defines["FINISH_LAST"] = int(ks > 1 and finish_in_last_group(
        device.info, d.get("FINISH_LAST", -1), reads=reads))
    gsize = (nt * math.ceil(p.N / d["BN"]), math.ceil(p.M / d["BM"]), p.batch * ks)
    found = (defines, nt, ks, gsize, packs)
    return _resolved.get(key, lambda: found)


def _launch(device: Device, problem: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    p = problem
    return _prepare(device, p, params)(p.a.buffer, np.int64(p.a.offset), p.b.buffer,
                                       np.int64(p.b.offset), p.c.buffer)


def _prepare(device: Device, problem: GemmProblem, params: Mapping[str, int]):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)`` with every other argument fixed; with split-K,
    the partial products go to this thread's workspace and a second kernel sums them into C."""
    defines, nt, ks, gsize, packs = _resolve_launch(device, problem, params)
    kernel = get_kernel(device, SOURCE, "gemm_gpu", defines)
    if any(packs):
        return _prepare_packed(device, problem, kernel, gsize, (nt, 1, 1), *packs)
    if ks == 1:
        return prepared_standard(device, problem, kernel, gsize, (nt, 1, 1))
    p = problem
    i32, i64 = np.int32, np.int64
    work_bytes = p.batch * ks * p.M * p.N * p.itemsize
    m, n, k = i32(p.M), i32(p.N), i32(p.K)
    lda, sa, ldb, sb = i32(p.a.ld), i64(p.a.batch_stride), i32(p.b.ld), i64(p.b.batch_stride)
    zero, ldw, sw = i64(0), i32(p.N), i64(p.M * p.N)
    c_off, ldc, sc = i64(p.c.offset), i32(p.c.ld), i64(p.c.batch_stride)
    # bound launches (the fixed arguments set once, no event made where the driver's events
    # cost more than the call): a split product is two launches a call, or one
    head = (m, n, k, None, None, lda, sa, None, None, ldb, sb, None, zero, ldw, sw)
    if defines["FINISH_LAST"]:   # the last slice of each tile sums: one launch
        tiles = gsize[0] // nt * gsize[1] * p.batch
        product = kernel.bind(device, gsize, (nt, 1, 1),
                              head + (c_off, ldc, sc, None, None), (3, 4, 7, 8, 11, 18, 19))

        def run_one(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
            work = split_workspace(device, work_bytes)
            return product(a_buf, a_off, b_buf, b_off, work, c_buf, group_counters(device, tiles))
        return run_one
    product = kernel.bind(device, gsize, (nt, 1, 1), head, (3, 4, 7, 8, 11))
    reduce = prepare_splitk_reduce(device, p, ks, defines=defines)

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        work = split_workspace(device, work_bytes)
        product(a_buf, a_off, b_buf, b_off, work)
        return reduce(work, c_buf)
    return run


def _prepare_packed(device: Device, p: GemmProblem, kernel, gsize, lsize, pack_a: bool,
                    pack_b: bool):
    """Pack the chosen operands into this thread's scratch buffer (operand_pack.cl: its rows
    r are the operand's K index, so TRANS=1 for a row-major A or a column-major B, the layouts
    that are packed automatically; forced packs of the others copy), then the product reading
    them there."""
    q, nbytes = packed_operands(p, pack_a, pack_b)
    product = prepared_standard(device, q, kernel, gsize, lsize)
    i32, i64 = np.int32, np.int64
    packs = []
    for packed, op, cols, dest, turned in ((pack_a, p.a, p.M, q.a, not p.a.trans),
                                           (pack_b, p.b, p.N, q.b, p.b.trans)):
        if packed:
            launch = get_kernel(device, PACK_SOURCE, "operand_pack",
                                {"TRANS": int(turned), "VEC": int(op.aligned(4))})
            size = (32 * -(-cols // 32), 8 * -(-p.K // 32), p.batch if op.batch_stride else 1)
            packs.append((launch, size, i32(cols), i32(op.ld), i64(op.batch_stride),
                          i64(dest.offset), i32(dest.ld)))
    k, a_at, b_at = i32(p.K), i64(q.a.offset), i64(q.b.offset)

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        scratch = split_workspace(device, nbytes)
        queue = device.queue
        sources = iter(((a_buf, a_off),) * pack_a + ((b_buf, b_off),) * pack_b)
        for (launch, size, cols, ld, stride, at, ldp), (buf, off) in zip(packs, sources):
            launch(queue, size, (32, 8, 1), k, cols, buf, i64(off), ld, stride, scratch, at, ldp)
        return product(scratch if pack_a else a_buf, a_at if pack_a else a_off,
                       scratch if pack_b else b_buf, b_at if pack_b else b_off, c_buf)
    return run


def _resolved_text(problem: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str:
    d = resolve(problem, info, params)
    text = ", ".join(f"{k}={d[k]}" for k in ("PRESET", "BM", "BN", "TM", "TN", "BK", "KSPLIT",
                                              "EDGE_ONLY_CLAMP", "PAD_A", "VEC_A", "VEC_B"))
    packed = [name for name, key in (("A", "PACK_A"), ("B", "PACK_B")) if d[key] > 0]
    if packed:
        text += (f"; {' and '.join(packed)} first packed with rows along K into scratch space "
                 "(opencl/operand_pack.cl)")
    return text


VARIANT = Variant(
    name="gpu_blocked",
    source=SOURCE,
    entry="gemm_gpu",
    summary="GPU: 2-D register blocking (up to 16x8 per work-item, 128x128 per work-group), "
            "double-buffered local memory, split-K for skinny shapes",
    defaults=DEFAULTS,
    fits=_fits,
    rank=_rank,
    launch=_launch,
    prepare=_prepare,
    resolved=_resolved_text,
    tunable={"PRESET": tuple(PRESETS), "BK": (8, 16), "GROUP_M": (1, 8, 16, 32),
             "KSPLIT": (1, 2, 4, 8), "EDGE_ONLY_CLAMP": (0, 1), "PAD_A": (0, 4),
             "PACK_A": (0, 1), "PACK_B": (0, 1)},
)
VARIANTS: tuple[Variant[GemmProblem], ...] = (VARIANT,)


def prepare_splitk_reduce(device: Device, p: GemmProblem, ks: int, half_c: bool = False,
                          dtype=np.float32, defines: Mapping[str, object] | None = None):
    """``reduce(scratch, c_buf)``, a bound launch: C = the sum of the ``ks`` partial products
    of ``dtype`` (float32 or float64) at the start of ``scratch`` (``gemm_gpu_splitk_reduce``),
    for the tensor-core kernels' split-K; ``half_c``: C is float16, each sum rounded once.
    ``defines``: the product's own (``gpu_blocked``'s split: its element types, narrow
    integers included), instead of ``dtype``'s."""
    i32, i64 = np.int32, np.int64
    if defines is None:
        defines = {**dtype_defines(dtype), "KSPLIT": ks, "HALF_C": int(half_c)}
    kernel = get_kernel(device, SOURCE, "gemm_gpu_splitk_reduce", defines)
    rsize = (-(-p.N // 64) * 64, p.M, p.batch)
    args = (i32(p.M), i32(p.N), None, None, i64(p.c.offset), i32(p.c.ld), i64(p.c.batch_stride))
    return kernel.bind(device, rsize, (64, 1, 1), args, (2, 3))  # reduce(scratch, c_buf)


def prepare_split_k(device: Device, p: GemmProblem, ks: int, prepare_slices, dtype=np.float32,
                    half_c: bool = False, finish_last: int = -1):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)`` of a tensor-core kernel's split-K
    (``opencl/split_k.h``): ``prepare_slices(work, final)`` prepares the kernel built with
    KSPLIT = ``ks`` on ``work``, the problem whose C is the batch * ks partial products (M x N
    each, from the start of this thread's scratch buffer); those, of ``dtype``, are summed into
    C by :func:`prepare_splitk_reduce` (``half_c``: a float16 C), or where the split finishes
    in its last work-group (``finish_last`` as in :func:`flags.finish_in_last_group`) by that
    group: ``final`` is then the fixed arguments saying where C lies (``SPLIT_K_FINAL_ARGS``),
    which the slices take after the standard ones, followed per call by C and the counters;
    else None."""
    work = replace(p, c=GemmOperand(None, 0, p.N, p.M * p.N))  # partial product z = b*ks + s
    nbytes = np.dtype(dtype).itemsize * ks * p.batch * p.M * p.N
    if finish_in_last_group(device.info, finish_last):
        final = (np.int64(p.c.offset), np.int32(p.c.ld), np.int64(p.c.batch_stride))
        product = prepare_slices(work, final)
        gs, ls = product.global_size, product.local_size
        tiles = gs[0] // ls[0] * gs[1] * p.batch   # one counter per tile and batch

        def run_one(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
            scratch = split_workspace(device, nbytes)
            return product(a_buf, a_off, b_buf, b_off, scratch, c_buf,
                           group_counters(device, tiles))
        return run_one
    product = prepare_slices(work, None)
    reduce = prepare_splitk_reduce(device, p, ks, half_c=half_c, dtype=dtype)

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        scratch = split_workspace(device, nbytes)
        product(a_buf, a_off, b_buf, b_off, scratch)
        return reduce(scratch, c_buf)
    return run


def split_k_slices(device: Device, work: GemmProblem, kernel, global_size, local_size,
                   final: tuple | None) -> BoundLaunch:
    """The slices' launch for :func:`prepare_split_k`: ``prepared_standard`` of ``kernel``
    (built with FINISH_LAST 1 where ``final`` is given), taking C and the group counters per
    call after ``final``."""
    if final is None:
        return prepared_standard(device, work, kernel, global_size, local_size)
    return prepared_standard(device, work, kernel, global_size, local_size, extra=final,
                             per_call=2)


FALLBACK_PARAMS = {"KSPLIT": 1, "PACK_A": 0, "PACK_B": 0}
"""The parameters of the gated float32 fallback (no split-K, no packs: it must not touch the
scratch buffer its caller's packs filled)."""


def prepare_gated(device: Device, problem: GemmProblem):
    """``run(a_buf, a_off, b_buf, b_off, c_buf, gate, epoch)``: this kernel (with
    :data:`FALLBACK_PARAMS`) built with ``GATE=1``, which computes the product only where the
    int32 at the start of buffer ``gate`` equals ``epoch`` when it runs (kernels/gemm_tf32x3.py's
    fallback for values its split cannot carry)."""
    defines, nt, _, gsize, _ = _resolve_launch(device, problem, FALLBACK_PARAMS)
    kernel = get_kernel(device, SOURCE, "gemm_gpu", {**defines, "GATE": 1})
    return prepared_standard(device, problem, kernel, gsize, (nt, 1, 1), per_call=2)
