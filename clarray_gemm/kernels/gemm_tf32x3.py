"""``tf32x3``: float32 products on Hopper's tensor cores as three TF32 products (3xTF32), with
float32 accuracy.

Each operand element x is split into ``hi = tf32(x)`` and ``lo = tf32(x - hi)`` (22 of float32's
24 significant bits), and ``A @ B`` is computed as ``A_lo @ B_hi + A_hi @ B_lo + A_hi @ B_hi``
(the dropped ``A_lo @ B_lo`` is below float32's own rounding). The packs (``operand_pack.cl``
with ``SPLIT``) write each operand's rows as three K segments, lo|hi|hi for A and hi|lo|hi for B,
so that the TF32 warpgroup kernel (``gemm_wgmma.cl``) runs the three products as one over 3K.
The tensor cores truncate each addition into their float32 accumulators, an error that grows
with the number of accumulated products and does not cancel in all-positive sums; with
``PROMOTE`` the kernel restarts its accumulators every few K steps and adds them into float32
sums rounded to nearest. H100, relative norm error against float64 (``benches/probes/
split_tf32.py``): 4096^3 normal data 3.6e-7, uniform [0, 1) 6.2e-7, where the float32 FFMA
kernel gives 1.2e-6 and 8.4e-7 (unpromoted: 9.6e-6 and 2.7e-5).

The split carries magnitudes from 2^-40 to 2^40 and zeros; a NaN, an infinity or a magnitude
outside that range (where a product or a sum of the parts could leave float32's normal range)
makes a pack store the call's epoch in a gate word, and a ``gpu_blocked`` launch enqueued after
the product, built with ``GATE``, then recomputes the product in float32 FFMA (it returns at once
otherwise). So every input gets float32 semantics: NaN and infinities propagate as in that
kernel.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from . import flags, gemm_gpu, gemm_wgmma
from .constants import constant
from .gemm import GemmOperand, GemmProblem, prepared_standard, split_workspace
from .variant import Variant

__all__ = ["TF32X3", "VARIANTS", "split_packed"]

SEGMENTS = 3
"""K segments per packed row: lo, hi, hi (A) against hi, lo, hi (B)."""
SEGMENT_ALIGN = 32
"""Elements a K segment is rounded up to: whole 128-byte lines, so that the packs write whole
lines (the zero columns past K come from the same launch). With segments rounded to 4 only, K =
5000 packed A at half the bandwidth of K = 4096 (H100: 4608 x 5000 in 292 us, 1.26 TB/s)."""

# Chosen over gpu_blocked for float32 products whose K and sides reach K_MIN and MIN_SIDE, and
# whose tiles fill the device: at least two per compute unit, or a last wave at least FULL_WAVE
# full (one work-group of 192 KiB of tiles per compute unit); or, split along K, products with
# sides of SPLIT_MIN_SIDE and K of SPLIT_MIN_K and more. Below these the packs' and the three
# products' fixed costs, or a half-empty last wave, lose to gpu_blocked (tuning data: the
# ``tf32x3.*`` entries of tuned_constants.json).
MIN_SIDE = constant("tf32x3.min_side")
K_MIN = constant("tf32x3.k_min")
FULL_WAVE = constant("tf32x3.full_wave")
SPLIT_MIN_SIDE = constant("tf32x3.split_min_side")
SPLIT_MIN_K = constant("tf32x3.split_min_k")

# The split-K model of ksplit(): a K step of one wave of tiles, the reduction's fixed cost and
# its bytes per microsecond. Its choices on the H100 were the measured best or within 3% of it
# at 1536^3, 2048^3 (no split), 1024x4096x1024 and 1024x65536x1024 (2026-11-26,
# benches/probes/gemm_shape_sweep.py with KSPLIT forced).
MAX_KSPLIT = 16
MIN_SLICE_STEPS = 8
STEP_US = 0.6
SPLIT_FIXED_US = 10.0
SPLIT_BYTES_PER_US = 2.5e6

_MEMORY_SHARE = 8   # the scratch copies stay below this share of the device's memory

def split_packed(p: GemmProblem, base: int = 0) -> tuple[GemmProblem, int]:
    """The TF32 problem the warpgroup kernel runs after the split packs (A's rows, then B's
    columns, from element ``base`` of the scratch buffer, as three K segments of K rounded up to
    a multiple of SEGMENT_ALIGN, an operand shared by every batch packed once), and the scratch
    bytes up to their end."""
    kp = -(-p.K // SEGMENT_ALIGN) * SEGMENT_ALIGN
    ld = SEGMENTS * kp
    a_batches = p.batch if p.a.batch_stride else 1
    b_batches = p.batch if p.b.batch_stride else 1
    a = GemmOperand(None, base, ld, p.M * ld if p.a.batch_stride else 0, False)
    b = GemmOperand(None, base + a_batches * p.M * ld, ld, p.N * ld if p.b.batch_stride else 0,
                    True)
    packed = replace(p, K=ld, a=a, b=b, precision="tf32")
    return packed, 4 * (base + (a_batches * p.M + b_batches * p.N) * ld)


def _sums_elements(p: GemmProblem, ks: int) -> int:
    """Elements of the scratch buffer the partial sums take before the packed operands: rounded
    up to 64, so that the packs start 256-byte aligned (the product's 16-byte copies need it; an
    odd M*N once sent a whole product through its element-by-element copies, 3x slower)."""
    return -(-ks * p.batch * p.M * p.N // 64) * 64 if ks > 1 else 0


def _tiles(p: GemmProblem, params: Mapping[str, int]) -> int:
    return -(-p.M // params["BM"]) * -(-p.N // params["BN"]) * p.batch


def ksplit(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> int:
    """K slices: ``params["KSPLIT"]``, or with 0 the count of the fewest modelled
    microseconds (waves of tiles times their steps, plus the partial sums' pass). Beyond a
    wave it splits where the last wave is mostly empty: 4097x3001x2049 (2.25 waves) and 3072^3
    (2.18) in 3, 1120 -> 1055 us and 1019 -> 952 us on the H100; 2048^3 and 4096^3 stay whole
    (2026-11-26, benches/probes/gemm_shape_sweep.py with KSPLIT forced)."""
    if params["KSPLIT"]:
        return int(params["KSPLIT"])
    units = max(info.compute_units, 1)
    tiles = _tiles(p, params)
    steps = -(-SEGMENTS * -(-p.K // SEGMENT_ALIGN) * SEGMENT_ALIGN // gemm_wgmma._bk(3, params))
    best, best_us = 1, math.inf
    for s in range(1, MAX_KSPLIT + 1):
        if s > 1 and steps < MIN_SLICE_STEPS * s:
            break
        us = -(-tiles * s // units) * -(-steps // s) * STEP_US
        if s > 1:
            us += SPLIT_FIXED_US + (s + 1) * 4 * p.M * p.N * p.batch / SPLIT_BYTES_PER_US
        if us < best_us:
            best, best_us = s, us
    return best


def _wgmma_params(params: Mapping[str, int]) -> dict[str, int]:
    return {**gemm_wgmma.WGMMA.defaults, **{k: params[k] for k in gemm_wgmma.WGMMA.defaults
                                             if k in params}}


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if np.dtype(p.dtype) != np.float32 or p.precision != "highest":
        return f"float32 at precision 'highest' only (not {np.dtype(p.dtype)} at {p.precision!r})"
    if p.batch_inner:
        return "one batch level only (its packs copy matrices of one level)"
    if not 0 <= params["KSPLIT"] <= MAX_KSPLIT:
        return f"KSPLIT must be 0 (by shape) to {MAX_KSPLIT}"
    ks = ksplit(p, info, params)
    packed, nbytes = split_packed(p, _sums_elements(p, ks))
    if nbytes > min(info.max_alloc_bytes, info.global_mem_bytes // _MEMORY_SHARE):
        return f"its split copies of A and B ({nbytes} bytes) would not fit beside the operands"
    why = gemm_wgmma.WGMMA.fits(packed, info, _wgmma_params(params))
    if why:
        return why
    why = gemm_gpu.VARIANT.fits(p, info, {**gemm_gpu.VARIANT.defaults,
                                          **gemm_gpu.FALLBACK_PARAMS})
    return f"its float32 fallback (gpu_blocked) does not fit: {why}" if why else None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above gpu_blocked (100) where the tiles fill the device, or split-K does (see above).
    if (not info.warpgroup_mma or np.dtype(p.dtype) != np.float32
            or p.precision != "highest" or min(p.M, p.N) < MIN_SIDE or p.K < K_MIN):
        return 0.0
    tiles = _tiles(p, TF32X3.defaults)
    units = max(info.compute_units, 1)
    waves = -(-tiles // units)
    if tiles >= 2 * units or tiles >= FULL_WAVE * waves * units:
        return 220.0
    if min(p.M, p.N) >= SPLIT_MIN_SIDE and p.K >= SPLIT_MIN_K:
        return 220.0
    return 0.0


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)``: the split packs of A and B into this thread's
    scratch buffer, the TF32 product of the packed operands (with split-K, into partial sums at
    the start of that buffer, then summed into C), and the gated float32 fallback."""
    ks = ksplit(p, device.info, params)
    packed, nbytes = split_packed(p, _sums_elements(p, ks))
    if ks > 1:  # the product's C: the partial sums, matrix z = b * ks + slice
        packed = replace(packed, c=GemmOperand(None, 0, p.N, p.M * p.N))
    d = gemm_wgmma.defines_for(device, packed, _wgmma_params(params))
    d["KSPLIT"] = ks
    gs, ls = gemm_wgmma._sizes(packed, d)
    gs = (gs[0], gs[1], gs[2] * ks)
    product = prepared_standard(device, packed, gemm_wgmma._kernel(device, d), gs, ls)
    fallback = gemm_gpu.prepare_gated(device, p)
    i32, i64 = np.int32, np.int64
    ld, a_at, b_at = i32(packed.a.ld), i64(packed.a.offset), i64(packed.b.offset)
    packs = gemm_wgmma.pack_launches(device, p, packed, ({"SPLIT": 1}, {"SPLIT": 2}))
    k = i32(p.K)
    reduce = gemm_gpu.prepare_splitk_reduce(device, p, ks) if ks > 1 else None

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        scratch = split_workspace(device, nbytes)
        gate = flags.flag_word(device)
        epoch = flags.next_epoch()
        q = device.queue
        for (kernel, size, rows, ld_x, stride, at), buf, off in zip(packs, (a_buf, b_buf),
                                                                     (a_off, b_off)):
            kernel(q, size, (32, 8, 1), rows, k, buf, i64(off), ld_x, stride, scratch, at, ld,
                   gate, epoch)
        if reduce is None:
            product(scratch, a_at, scratch, b_at, c_buf)
        else:
            product(scratch, a_at, scratch, b_at, scratch)
            reduce(scratch, c_buf)
        return fallback(a_buf, a_off, b_buf, b_off, c_buf, gate, epoch)
    return run


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    return _prepare(device, p, params)(p.a.buffer, np.int64(p.a.offset), p.b.buffer,
                                       np.int64(p.b.offset), p.c.buffer)


TF32X3 = Variant(
    name="tf32x3",
    source=gemm_wgmma.SOURCE, entry="gemm_wgmma",
    summary="float32 on Hopper tensor cores as three TF32 products (operands split hi + lo "
            "while packed; wgmma sums promoted to float32 every PROMOTE steps), float32 "
            "accuracy; values it cannot split (NaN, inf, beyond 2^+-40) rerun gpu_blocked; "
            "EMULATE=1: the portable emulation",
    # 128 x 256 tiles (as wgmma's) and sums promoted to float32 every PROMOTE steps: the
    # fastest tiles measured, and the promotion interval that keeps float32 accuracy at the
    # least cost (tuning data: tf32x3.tile_n, tf32x3.promote)
    defaults={**gemm_wgmma.WGMMA.defaults, "BM": 128, "BN": constant("tf32x3.tile_n"), "WGS": 2,
              "PROMOTE": constant("tf32x3.promote"), "KSPLIT": 0},
    fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    resolved=lambda p, info, params: f"KSPLIT={ksplit(p, info, params)}",
    tunable={"BN": (128, 256), "STAGES": (3, 4, 5), "PROMOTE": (2, 4, 8), "GROUP_M": (1, 8),
             "KSPLIT": (0, 1, 2, 4, 8)},
)

VARIANTS: tuple[Variant[GemmProblem], ...] = (TF32X3,)
