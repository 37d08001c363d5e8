"""``thin``: products with one thin side (M or N a few dozen or less) at memory bandwidth.

``opencl/gemm_thin.cl`` reads the wide operand once and stages the thin one in local memory,
where every work-item of a work-group reads the same words; each work-item keeps RV x JB
accumulators, so every element of the wide operand loaded feeds JB multiply-adds. The
register-tiled kernels spend most of a 64- or 128-wide tile on such shapes (float64 10 x 4097 x
4097 on an H200 took gpu_blocked 250 us, cuBLAS 80). K is split into slices (summed by a second
small kernel) until the launch fills the device. float16 and bfloat16 operands are read as they
are and computed in float32. Every ``-D`` parameter can be forced with ``params=``; 0 means
"chosen by the shape".
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..dtypes import dtype_defines
from .flags import finish_in_last_group
from .gemm import GemmProblem, dtype_supported, matrix_vector_run
from .gemm_small import io16
from .programs import get_kernel
from .variant import Variant

__all__ = ["VARIANT", "VARIANTS", "MAX_THIN", "resolve", "geometry"]

SOURCE = "gemm_thin.cl"
DEFAULTS = {"WG": 128, "RV": 0, "JB": 0, "KCH": 32, "KSPLIT": 0, "UNROLL": 2, "FINISH_LAST": -1}
MAX_THIN = 128
"""The thickest thin side the kernel takes (beyond it the register-tiled kernels do more per
load)."""
# Accumulators one work-item holds (RV x JB, in ACC values): more spill registers.
_ACCUMULATORS = 64
# Work-items wanted in flight per compute unit (as gemv_split), the fewest KCH chunks a slice
# of K holds, and the most partial sums a split may write per element of X read (the second
# kernel's traffic stays a small share of the first's).
_ITEMS_PER_UNIT = 4 * 128
_MIN_CHUNKS = 2
_PARTIALS_PER_X = 1 / 8
i32, i64 = np.int32, np.int64


def geometry(p: GemmProblem) -> tuple[int, int, tuple, tuple, tuple]:
    """(R, NV, X(buffer, offset, r-stride, k-stride, batch), V(buffer, offset, k-stride,
    j-stride, batch), Y(buffer, offset, r-stride, j-stride, batch)) for Y(r, j) = sum_k X(r, k)
    V(k, j): X is B^T and V is A^T where M is the thin side, X is A and V is B where N is."""
    a, b, c = p.a, p.b, p.c
    if p.M <= p.N:
        x = (b.buffer, b.offset) + ((b.ld, 1) if b.trans else (1, b.ld)) + (b.batch_stride,)
        v = (a.buffer, a.offset) + ((a.ld, 1) if a.trans else (1, a.ld)) + (a.batch_stride,)
        y = (c.buffer, c.offset, 1, c.ld, c.batch_stride)
        return p.N, p.M, x, v, y
    x = (a.buffer, a.offset) + ((1, a.ld) if a.trans else (a.ld, 1)) + (a.batch_stride,)
    v = (b.buffer, b.offset) + ((1, b.ld) if b.trans else (b.ld, 1)) + (b.batch_stride,)
    y = (c.buffer, c.offset, c.ld, 1, c.batch_stride)
    return p.M, p.N, x, v, y


def _acc_itemsize(p: GemmProblem) -> int:
    return 4 if io16(p) else p.itemsize


def resolve(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> dict[str, int]:
    """Every ``-D`` parameter for ``p``, zeros chosen by the shape: RV 2 in the column form where
    the accumulators allow, JB the thin side in as few passes as the accumulators allow
    (rounded up to 4), KSPLIT to fill the device, VW 16 bytes in the row form."""
    d = dict(DEFAULTS)
    d.update(params)
    rows_r, nv, x, v, _ = geometry(p)
    x_rows = int(x[3] == 1 and x[2] != 1)
    jb_most = -(-min(nv, _ACCUMULATORS) // 4) * 4
    rv = d["RV"] or (1 if x_rows or 2 * jb_most > _ACCUMULATORS else 2)
    passes = -(-nv // max(1, (d["JB"] or _ACCUMULATORS // rv)))
    jb = d["JB"] or -(-(-(-nv // passes)) // 4) * 4
    passes = -(-nv // jb)
    kch = d["KCH"]
    ksplit = d["KSPLIT"]
    if ksplit == 0:
        threads = -(-rows_r // rv) * passes * p.batch
        want = -(-_ITEMS_PER_UNIT * max(info.compute_units, 1) // threads)
        most = max(1, min(p.K // (_MIN_CHUNKS * kch), int(p.K * _PARTIALS_PER_X) // nv))
        ksplit = max(1, min(want, most))
    kc = -(-(-(-p.K // ksplit)) // kch) * kch
    ksplit = -(-p.K // kc)  # no empty slices
    width = 2 if io16(p) else p.itemsize
    vw = max(1, min(8, 16 // width)) if x_rows else 1
    vw = math.gcd(vw, kch)
    aligned = all(s % vw == 0 for s in (x[1], x[2], x[4] if p.batch > 1 else 0))
    d.update(RV=rv, JB=jb, KSPLIT=ksplit, KC=kc, X_ROWS=x_rows, VW=vw, ALIGNED=int(aligned),
             V_K_UNIT=int(v[2] == 1), PASSES=passes, R=rows_r, NV=nv)
    return d


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if min(p.M, p.N) > MAX_THIN:
        return f"neither M nor N is {MAX_THIN} or less"
    why = None if io16(p) else dtype_supported(p, info)
    if why:
        return why
    if p.batch_inner or p.storage is not None:
        return "one batch level of operands in the product's dtype only"
    _, _, x, _, _ = geometry(p)
    if x[2] != 1 and x[3] != 1:
        return "the wide operand has no contiguous axis"
    wg = params.get("WG", DEFAULTS["WG"])
    if wg < 1 or wg & (wg - 1):
        return "WG must be a power of two"
    for name in ("RV", "JB", "KCH", "KSPLIT", "UNROLL"):
        if params.get(name, 0) < 0:
            return f"{name} must be positive (or 0: by shape)"
    if params.get("FINISH_LAST", -1) not in (-1, 0, 1):
        return "FINISH_LAST must be -1 (by device), 0 or 1"
    d = resolve(p, info, params)
    if d["JB"] % 4:
        return "JB must be a multiple of 4"
    if d["KCH"] < 1:
        return "KCH must be positive"
    if d["X_ROWS"] and d["RV"] != 1:
        return "RV must be 1 where the wide operand's rows are contiguous"
    if wg > info.max_work_group_size:
        return f"work-group of {wg} exceeds the device's {info.max_work_group_size}"
    local = d["KCH"] * d["JB"] * _acc_itemsize(p)
    if local > info.local_mem_bytes:
        return f"needs {local} bytes of local memory, the device has {info.local_mem_bytes}"
    return None


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    # GPUs, where no measurement decides: above gpu_blocked (5) for its skinny shapes and below
    # gemv_split (60) for matrix-vector ones, which 16-bit operands leave to this kernel.
    thin = min(p.M, p.N)
    if (not info.is_gpu or info.is_simulator or thin > 32 or p.K < 64
            or max(p.M, p.N) < 64):
        return 0.0
    return 70.0 if thin > 1 or io16(p) else 30.0


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """A launch function ``run(a_buf, a_off, b_buf, b_off, c_buf)`` with the parameters, kernels
    and scalar arguments resolved once: one launch for KSPLIT 1, and above it two (slices,
    sum), or one whose last slice sums (FINISH_LAST, ``opencl/last_group.h``)."""
    d = resolve(p, device.info, params)
    rows_r, nv, x, v, y = geometry(p)
    defines = {"IO16": io16(p)} if io16(p) else dtype_defines(p.dtype)
    for name in ("WG", "RV", "JB", "KCH", "KSPLIT", "KC", "X_ROWS", "VW", "ALIGNED", "V_K_UNIT",
                 "UNROLL"):
        defines[name] = d[name]
    wg, ks = d["WG"], d["KSPLIT"]
    last = ks > 1 and finish_in_last_group(device.info, d["FINISH_LAST"])
    defines["FINISH_LAST"] = int(last)
    kernel = get_kernel(device, SOURCE, "gemm_thin", defines)
    reduce = (get_kernel(device, SOURCE, "gemm_thin_reduce", defines) if ks > 1 and not last
              else None)
    work_bytes = max(ks * p.batch * nv * rows_r, 1) * _acc_itemsize(p) if ks > 1 else 16
    gs = (wg * -(-rows_r // (wg * d["RV"])), ks * d["PASSES"], p.batch)
    ls = (wg, 1, 1)
    r, k, n = i32(rows_r), i32(p.K), i32(nv)
    x_strides = (i64(x[2]), i64(x[3]), i64(x[4]))
    v_strides = (i64(v[2]), i64(v[3]), i64(v[4]))
    y_args = (i64(y[1]), i64(y[2]), i64(y[3]), i64(y[4]))
    rsize = (-(-rows_r // 64) * 64, nv, p.batch)
    a_is_x = p.M > p.N
    args = (r, k, n, None, None, *x_strides, None, None, *v_strides, None, *y_args, None)
    per_call = (3, 4, 8, 9, 13, 18)
    if last:   # the group counters: one per (batch, pass, group of rows)
        args, per_call = args + (None,), per_call + (19,)
    product = kernel.bind(device, gs, ls, args, per_call)
    total = reduce.bind(device, rsize, None, (r, n, None, None, *y_args), (2, 3)) \
        if reduce is not None else None
    return matrix_vector_run(device, product, total, work_bytes, a_is_x,
                             gs[0] // wg * d["PASSES"] * p.batch if last else 0)


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    a, b = p.a, p.b
    return _prepare(device, p, params)(a.buffer, i64(a.offset), b.buffer, i64(b.offset),
                                       p.c.buffer)


VARIANT = Variant(
    name="thin", source=SOURCE, entry="gemm_thin",
    summary="one thin side (M or N up to 128): the wide operand read once, the thin one staged "
            "in local memory, RV x JB accumulators per work-item, split-K to fill the GPU; "
            "float16/bfloat16 read as they are",
    defaults=DEFAULTS, fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    tunable={"WG": (64, 128, 256), "RV": (0, 1, 2), "KCH": (16, 32, 64), "UNROLL": (1, 2, 4),
             "KSPLIT": (0, 1, 4, 16), "FINISH_LAST": (0, 1)},
)
VARIANTS: tuple[Variant[GemmProblem], ...] = (VARIANT,)
