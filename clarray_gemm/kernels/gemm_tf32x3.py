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

import itertools
import threading
from dataclasses import replace
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo, register_fork_reset
from ..drivers import calls
from . import gemm_gpu, gemm_wgmma
from .gemm import GemmOperand, GemmProblem, prepared_standard, split_workspace
from .variant import Variant

__all__ = ["TF32X3", "VARIANTS", "split_packed"]

SEGMENTS = 3
"""K segments per packed row: lo, hi, hi (A) against hi, lo, hi (B)."""

# Chosen over gpu_blocked for float32 products whose K and sides reach MIN_SIDE and K_MIN, and
# whose tiles fill the device: at least two per compute unit, or a last wave at least
# FULL_WAVE full (one work-group of 128 KiB of tiles per compute unit). H100, wall clock,
# against cuBLAS's float32: 2048^3 1.17x, 3072^3 1.26-1.38x, 4096^3 1.31-1.35x (gpu_blocked
# 0.89-0.91x); but 1024^3 (32 tiles) 0.46-0.61x against 0.88x, 3000x5000x700 (72 tiles)
# 0.44-0.48x against 0.69x, 65536x256x256 0.72x against 0.92x (benches/RESULTS.md, session 15).
MIN_SIDE = 128
K_MIN = 512
FULL_WAVE = 0.75

_MEMORY_SHARE = 8   # the scratch copies stay below this share of the device's memory

_epochs = itertools.count(1)
_gates: dict[tuple, cl.Buffer] = {}
register_fork_reset(_gates)


def _gate(device: Device) -> cl.Buffer:
    """This thread's gate word on ``device`` (one int32, zero when made; a pack stores a call's
    epoch in it). One per thread: another thread's product may be enqueued between a call's packs
    and its gated fallback on the same in-order queue, and must not overwrite the word."""
    key = (device, threading.get_ident())
    buf = _gates.get(key)
    if buf is None:
        # COPY_HOST_PTR rather than a fill: Oclgrind's uninitialized-value checker sees it
        with calls.guard():
            buf = _gates[key] = cl.Buffer(device.context,
                                          cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                          hostbuf=np.zeros(1, np.int32))
    return buf


def split_packed(p: GemmProblem) -> tuple[GemmProblem, int]:
    """The TF32 problem the warpgroup kernel runs after the split packs (A's rows, then B's
    columns, as three K segments of K rounded up to a multiple of 4, an operand shared by every
    batch packed once), and the scratch bytes it needs."""
    kp = -(-p.K // 4) * 4
    ld = SEGMENTS * kp
    a_batches = p.batch if p.a.batch_stride else 1
    b_batches = p.batch if p.b.batch_stride else 1
    a = GemmOperand(None, 0, ld, p.M * ld if p.a.batch_stride else 0, False)
    b = GemmOperand(None, a_batches * p.M * ld, ld, p.N * ld if p.b.batch_stride else 0, True)
    packed = replace(p, K=ld, a=a, b=b, precision="tf32")
    return packed, 4 * (a_batches * p.M + b_batches * p.N) * ld


def _wgmma_params(params: Mapping[str, int]) -> dict[str, int]:
    return {**gemm_wgmma.WGMMA.defaults, **{k: params[k] for k in gemm_wgmma.WGMMA.defaults
                                             if k in params}}


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if np.dtype(p.dtype) != np.float32 or p.precision != "highest":
        return f"float32 at precision 'highest' only (not {np.dtype(p.dtype)} at {p.precision!r})"
    if p.batch_inner:
        return "one batch level only (its packs copy matrices of one level)"
    packed, nbytes = split_packed(p)
    if nbytes > min(info.max_alloc_bytes, info.global_mem_bytes // _MEMORY_SHARE):
        return f"its split copies of A and B ({nbytes} bytes) would not fit beside the operands"
    why = gemm_wgmma.WGMMA.fits(packed, info, _wgmma_params(params))
    if why:
        return why
    why = gemm_gpu.VARIANT.fits(p, info, {**gemm_gpu.VARIANT.defaults,
                                          **gemm_gpu.FALLBACK_PARAMS})
    return f"its float32 fallback (gpu_blocked) does not fit: {why}" if why else None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # Above gpu_blocked (100) where the tiles fill the device (see FULL_WAVE).
    if (not info.warpgroup_mma or np.dtype(p.dtype) != np.float32
            or p.precision != "highest" or min(p.M, p.N) < MIN_SIDE or p.K < K_MIN):
        return 0.0
    d = TF32X3.defaults
    tiles = -(-p.M // d["BM"]) * -(-p.N // d["BN"]) * p.batch
    units = max(info.compute_units, 1)
    waves = -(-tiles // units)
    if tiles >= 2 * units or tiles >= FULL_WAVE * waves * units:
        return 220.0
    return 0.0


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """``run(a_buf, a_off, b_buf, b_off, c_buf)``: the split packs of A and B into this thread's
    scratch buffer, the TF32 product of the packed operands, and the gated float32 fallback."""
    packed, nbytes = split_packed(p)
    d = gemm_wgmma.defines_for(device, packed, _wgmma_params(params))
    gs, ls = gemm_wgmma._sizes(packed, d)
    product = prepared_standard(device, packed, gemm_wgmma._kernel(device, d), gs, ls)
    fallback = gemm_gpu.prepare_gated(device, p)
    i32, i64 = np.int32, np.int64
    ld, a_at, b_at = i32(packed.a.ld), i64(packed.a.offset), i64(packed.b.offset)
    packs = gemm_wgmma.pack_launches(device, p, packed, ({"SPLIT": 1}, {"SPLIT": 2}))
    k = i32(p.K)

    def run(a_buf, a_off, b_buf, b_off, c_buf) -> cl.Event:
        scratch = split_workspace(device, nbytes)
        gate = _gate(device)
        epoch = i32(next(_epochs) % 0x7FFFFFFF + 1)
        q = device.queue
        for (kernel, size, rows, ld_x, stride, at), buf, off in zip(packs, (a_buf, b_buf),
                                                                     (a_off, b_off)):
            kernel(q, size, (32, 8, 1), rows, k, buf, i64(off), ld_x, stride, scratch, at, ld,
                   gate, epoch)
        product(scratch, a_at, scratch, b_at, c_buf)
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
    # 128 x 256 tiles (as wgmma's): on the H100 1.04x -> 1.17x cuBLAS's float32 at 2048^3
    # against 128 x 128 ones, 0.886x -> 0.923x at 4097x3001x2049. PROMOTE 4 (128 of the 3K):
    # 4096^3 errors 3.6e-7 (normal) and 6.2e-7 (uniform [0, 1)) against gpu_blocked's 1.2e-6
    # and 8.4e-7; PROMOTE 8 1.4e-6 on uniform data; PROMOTE 1 and 2 cost 10% more time
    # (benches/runs/h100-tf32x3-s15.md).
    defaults={**gemm_wgmma.WGMMA.defaults, "PROMOTE": 4},
    fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    tunable={"BN": (128, 256), "STAGES": (3, 4, 5), "PROMOTE": (2, 4, 8), "GROUP_M": (1, 8)},
)

VARIANTS: tuple[Variant[GemmProblem], ...] = (TF32X3,)
