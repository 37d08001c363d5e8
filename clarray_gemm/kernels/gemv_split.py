"""``gemv_split``: matrix-vector products (M == 1 or N == 1) at memory bandwidth on GPUs.

``opencl/gemv_split.cl`` reads the matrix once with 16-byte vector loads along its contiguous
axis (``gemv_rows`` for rows of X contiguous, ``gemv_cols`` for columns), and splits K into
``KSPLIT`` slices whose partial sums a second small kernel adds, so that even a single product
launches enough work-groups to keep every compute unit's loads in flight (the older ``gemv``
kernel launches R/16 work-items for ``x @ B``: a handful of work-groups on a 132-SM GPU).
Every ``-D`` parameter can be forced with ``params=``; 0 means "chosen by the shape".
float16 and bfloat16 elements are read as they are and summed in float (``IO16``, as
``gemm_small``'s).
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pyopencl as cl

from ..device import Device, DeviceInfo
from ..dtypes import dtype_defines
from .constants import constant
from .flags import finish_in_last_group
from .gemm import GemmProblem, dtype_supported, matrix_vector_run
from .gemm_small import io16
from .gemm_variants import TINY_VOLUME, _gemv_geometry
from .programs import get_kernel
from .variant import Variant

__all__ = ["VARIANT", "VARIANTS", "resolve"]

SOURCE = "gemv_split.cl"
DEFAULTS = {"WG": 0, "VW": 0, "LANES": 0, "RT": 0, "KSPLIT": 0, "FINISH_LAST": -1}
# Work-group size (WG 0) and rows per work-item group of the column kernel (RT 0, x @ A), by
# matrix size (elements from which each choice applies)
_MID_MATRIX = constant("gemv_split.mid_matrix")
_LARGE_MATRIX = constant("gemv_split.large_matrix")
_WG_ROWS, _WG_ROWS_LARGE = constant("gemv_split.wg_rows"), constant("gemv_split.wg_rows_large")
_WG_COLS, _WG_COLS_MID = constant("gemv_split.wg_cols"), constant("gemv_split.wg_cols_mid")
_RT_COLS, _RT_COLS_LARGE = constant("gemv_split.rt_cols"), constant("gemv_split.rt_cols_large")
_WIDTHS = (1, 2, 4, 8, 16)
# Work-items wanted in flight per compute unit (loads in flight: Little's law), counted in
# work-items, not work-groups (8192^2 at WG 512: 512 groups, enough). K is split to reach it
# only where an unsplit launch would have under 1/_SPLIT_SHORTFALL of it: skinny products
# (a few rows over a long K), not the square sizes above.
_ITEMS_PER_UNIT = 4 * 128
_SPLIT_SHORTFALL = 8
# The fewest vector loads one work-item makes per slice before K is split further.
_MIN_STEPS = 8
i32, i64 = np.int32, np.int64


def _pow2_at_least(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _pow2_at_most(n: int) -> int:
    return 1 << max(n, 1).bit_length() - 1


def resolve(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> dict[str, int]:
    """All ``-D`` parameters and the kernel (``ROWS`` 1: gemv_rows) for ``p``; zeros chosen
    by the shape (see the sweep above): WG, VW 16 bytes, LANES up to 32 along a row, RT,
    KSPLIT to fill the device."""
    d = dict(DEFAULTS)
    d.update(params)
    rows_r, x, v, _ = _gemv_geometry(p)
    rows = int(x[3] == 1)
    elements = rows_r * p.K
    if rows:
        wg = _WG_ROWS_LARGE if elements >= _LARGE_MATRIX else _WG_ROWS
    else:
        wg = _WG_COLS_MID if elements >= _MID_MATRIX else _WG_COLS
    wg = d["WG"] or min(wg, _pow2_at_most(info.max_work_group_size))
    vw = d["VW"] or max(1, min(16, 16 // p.itemsize))
    if rows:
        lanes = d["LANES"] or min(32, wg, _pow2_at_least(-(-p.K // vw)))
        per_group, per_slice_item = wg // lanes, lanes * vw
        rt = d["RT"] or min(_RT_COLS_LARGE, wg)  # gemv_rows does not read RT
    else:
        lanes = 1
        rt = d["RT"] or min(_RT_COLS_LARGE if elements >= _LARGE_MATRIX else _RT_COLS, wg)
        per_group, per_slice_item = rt * vw, wg // rt
    groups = -(-rows_r // per_group) * p.batch
    ksplit = d["KSPLIT"]
    if ksplit == 0:
        want = -(-_ITEMS_PER_UNIT * max(info.compute_units, 1) // (groups * wg))
        most = max(1, p.K // (per_slice_item * _MIN_STEPS))
        ksplit = max(1, min(want, most)) if want >= _SPLIT_SHORTFALL else 1
    kc = -(-p.K // ksplit)
    if rows:
        kc = -(-kc // vw) * vw
    ksplit = -(-p.K // kc)  # no empty slices
    aligned_stride = x[2] if rows else x[3]
    aligned = all(s % vw == 0 for s in (x[1], aligned_stride, x[4] if p.batch > 1 else 0))
    d.update(WG=wg, VW=vw, LANES=lanes, RT=rt,
             KSPLIT=ksplit, KC=kc, ROWS=rows, ALIGNED=int(aligned), V_UNIT=int(v[2] == 1),
             GROUPS=-(-rows_r // per_group))
    return d


def _fits(p: GemmProblem, info: DeviceInfo, params: Mapping[str, int]) -> str | None:
    if p.M != 1 and p.N != 1:
        return "neither M nor N is 1"
    why = None if io16(p) else dtype_supported(p, info)
    if why:
        return why
    wg = params.get("WG", DEFAULTS["WG"])
    if wg < 0 or wg & (wg - 1):
        return "WG must be a power of two (or 0: by kernel)"
    if params.get("VW", 0) not in (0,) + _WIDTHS:
        return f"VW must be 0 (16 bytes) or one of {_WIDTHS}"
    if params.get("KSPLIT", 0) < 0:
        return "KSPLIT must be positive (or 0: by shape)"
    if params.get("FINISH_LAST", -1) not in (-1, 0, 1):
        return "FINISH_LAST must be -1 (by device), 0 or 1"
    _, x, _, _ = _gemv_geometry(p)
    if x[3] != 1 and x[2] != 1:
        return "the matrix has no contiguous axis"
    d = resolve(p, info, params)
    wg = d["WG"]
    if wg > info.max_work_group_size:
        return f"work-group of {wg} exceeds the device's {info.max_work_group_size}"
    if d["ROWS"]:
        if d["LANES"] < 1 or d["LANES"] & (d["LANES"] - 1) or wg % d["LANES"]:
            return "LANES must be a power of two dividing WG"
    else:
        kt = wg // d["RT"] if d["RT"] and wg % d["RT"] == 0 else 0
        if kt < 1 or kt & (kt - 1):
            return "RT must divide WG with WG/RT a power of two"
    local = wg * _acc_size(p) * (1 if d["ROWS"] else d["VW"])
    if local > info.local_mem_bytes:
        return f"needs {local} bytes of local memory, the device has {info.local_mem_bytes}"
    return None


def _acc_size(p: GemmProblem) -> int:
    """Bytes of one partial sum (ACC): float for 16-bit operands, else the element's."""
    return 4 if io16(p) else p.itemsize


def _rank(p: GemmProblem, info: DeviceInfo) -> float:
    if not (p.M == 1 or p.N == 1) or p.M * p.N * p.K <= TINY_VOLUME:
        return 0.5
    # GPUs: above gemv (50). CPUs keep gemv, whose one-work-item-per-row form suits them.
    return 60.0 if info.is_gpu else 40.0


def _prepare(device: Device, p: GemmProblem, params: Mapping[str, int]):
    """A launch function ``run(a_buf, a_off, b_buf, b_off, c_buf)`` with the parameters, kernels
    and scalar arguments resolved once: one launch for KSPLIT 1, and above it two (slices,
    sum), or one whose last slice sums (FINISH_LAST, ``opencl/last_group.h``)."""
    d = resolve(p, device.info, params)
    rows_r, x, v, y = _gemv_geometry(p)
    sixteen = io16(p)
    defines = {"IO16": sixteen} if sixteen else dtype_defines(p.dtype)
    for name in ("WG", "VW", "LANES", "RT", "KSPLIT", "KC", "ALIGNED", "V_UNIT"):
        defines[name] = d[name]
    wg, ks = d["WG"], d["KSPLIT"]
    last = ks > 1 and finish_in_last_group(device.info, d["FINISH_LAST"])
    defines["FINISH_LAST"] = int(last)
    kernel = get_kernel(device, SOURCE, "gemv_rows" if d["ROWS"] else "gemv_cols", defines)
    work_bytes = max(ks * p.batch * rows_r, 1) * _acc_size(p)
    gs, ls = (wg * d["GROUPS"], ks, p.batch), (wg, 1, 1)
    rows, k = i32(rows_r), i32(p.K)
    x_strides, v_strides = (i64(x[2]), i64(x[3]), i64(x[4])), (i64(v[2]), i64(v[3]))
    y_off, y_strides = i64(y[1]), (i64(y[2]), i64(y[3]))
    matrix_is_a = p.N == 1          # A @ v: X is A; v @ B: X is B
    args = (rows, k, None, None, *x_strides, None, None, *v_strides, None, y_off, *y_strides,
            None)
    per_call = (2, 3, 7, 8, 11, 15)
    if last:   # the group counters: one per (batch, group of rows)
        args, per_call = args + (None,), per_call + (16,)
    product = kernel.bind(device, gs, ls, args, per_call)
    total = None
    if ks > 1 and not last:
        reduce = get_kernel(device, SOURCE, "gemv_split_reduce", defines)
        rsize = (math.ceil(rows_r / 64) * 64, p.batch)
        total = reduce.bind(device, rsize, (64, 1), (rows, None, None, y_off, *y_strides),
                            (1, 2))
    return matrix_vector_run(device, product, total, work_bytes, matrix_is_a,
                             d["GROUPS"] * p.batch if last else 0)


def _launch(device: Device, p: GemmProblem, params: Mapping[str, int]) -> cl.Event:
    a, b = p.a, p.b
    return _prepare(device, p, params)(a.buffer, i64(a.offset), b.buffer, i64(b.offset),
                                       p.c.buffer)


VARIANT = Variant(
    name="gemv_split", source=SOURCE, entry="gemv_rows",
    summary="matrix-vector at bandwidth: 16-byte loads along the contiguous axis, split-K "
            "slices summed by a second kernel, enough work-groups to fill the GPU",
    defaults=DEFAULTS, fits=_fits, rank=_rank, launch=_launch, prepare=_prepare,
    tunable={"WG": (128, 256, 512), "LANES": (0, 8, 16, 32), "RT": (0, 8, 16, 32),
             "KSPLIT": (0, 1, 2, 4, 8, 16), "FINISH_LAST": (0, 1)},
)
VARIANTS: tuple[Variant[GemmProblem], ...] = (VARIANT,)
