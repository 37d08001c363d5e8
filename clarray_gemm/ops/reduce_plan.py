"""Reduction and scan plans over ``opencl/reduce.cl``: one cached plan per (operation, device,
dtypes, shape, strides, axes), holding the programs, launch geometry and fixed arguments.

A reduction runs as one launch when there are enough outputs to fill the device (one
work-group per output, a tree in local memory; or one work-item per output when the kept
dimensions are innermost in memory), and as two launches when few outputs each reduce many
elements (partial results per chunk, then a reduction of the partials).
"""
from __future__ import annotations

import math

import numpy as np

from ..array import DeviceArray
from ..array.geometry import c_strides
from ..device import Device
from ..dtypes import storage_ctype
from ..kernels.constants import constant
from ..kernels.copy import MAX_DIMS, as_long8, merge_dims
from ..kernels.flags import finish_in_last_group, group_counters
from ..kernels.plans import PlanCache
from ..kernels.programs import ctype, get_kernel
from ..memory import Storage

__all__ = ["ReducePlan", "ScanPlan", "reduce_plan", "scan_plan", "ROPS"]

ROPS = {"sum": "ROP_SUM", "prod": "ROP_PROD", "max": "ROP_MAX", "min": "ROP_MIN",
        "any": "ROP_ANY", "all": "ROP_ALL", "argmax": "ROP_ARGMAX", "argmin": "ROP_ARGMIN"}
_MAX_GROUPS = 1024
_PER_LANE = 32  # elements a lane reduces before a reduction is split into two launches
# On GPUs: a second launch costs more than one work-group takes over this many elements a lane
_PER_LANE_GPU = constant("reduce.per_lane_gpu")
_TREE_GROUPS = 2048  # work-groups that fill a device; fewer outputs split r into chunks
# On GPUs: this many work-groups per compute unit instead
_GROUPS_PER_UNIT_GPU = constant("reduce.groups_per_unit_gpu")
# On GPUs each lane takes at least this many elements of a row: short rows get fewer lanes and
# several rows share a work-group, instead of one element a lane and a tree as deep as the row
_ROW_ELEMENTS_PER_LANE_GPU = constant("reduce.row_elements_per_lane_gpu")
_COLS_THREADS = 1 << 18  # work-items that fill a large GPU, for the column kernel
_INT_LIMITS = {"char": "CHAR", "short": "SHRT", "int": "INT", "long": "LONG"}


def _identity(rop: str, acc: np.dtype) -> str:
    if rop in ("sum", "any", "argmax", "argmin"):
        return "0"  # +0.0 for floats: NumPy's sum of [-0.0] is 0.0
    if rop in ("prod", "all"):
        return "1"
    if acc.kind == "f":
        return "((ACC)(-INFINITY))" if rop == "max" else "((ACC)INFINITY)"
    if acc.kind == "b":
        return "0" if rop == "max" else "1"
    c = ctype(acc)
    if acc.kind == "u":
        return "0" if rop == "max" else f"U{_INT_LIMITS[c[1:]]}_MAX"
    return f"{_INT_LIMITS[c]}_MIN" if rop == "max" else f"{_INT_LIMITS[c]}_MAX"


def _pow2_at_most(n: int, cap: int) -> int:
    w = 1
    while w < n and w < cap:
        w *= 2
    return w


_HALF = np.dtype(np.float16)


def compute_acc(acc: np.dtype) -> np.dtype:
    """The kernel's accumulator for NumPy's reduction dtype ``acc``: float for float16 (NumPy's
    float16 reductions accumulate in float and round once)."""
    return np.dtype(np.float32) if acc == _HALF else acc


def _defines(rop: str, in_dt: np.dtype, acc: np.dtype, out_dt: np.dtype, wg: int) -> dict:
    acc = compute_acc(acc)
    c = ctype(acc)
    defines = {"IN_T": storage_ctype(in_dt), "ACC": c, "OUT_T": storage_ctype(out_dt),
               "ROP": ROPS[rop],
               "UACC": ("u" + c if acc.kind == "i" else c), "IDENTITY": _identity(rop, acc),
               "IS_FLOAT": int(acc.kind == "f"), "WG": wg}
    if in_dt == _HALF:   # float16 as its bits (opencl/half_bits.h)
        defines["IN_HALF"] = 1
    if out_dt == _HALF:
        defines["OUT_HALF"] = 1
    if np.dtype(np.float64) in (in_dt, acc, out_dt):
        defines["IS_FP64"] = 1
    return defines


def _elem_strides(x: DeviceArray) -> list[int]:
    return [s // x.itemsize for s in x.strides]


class ReducePlan:
    """``rop`` of ``x`` over ``axes`` into a fresh array of the kept shape (``out_dtype``),
    accumulating in ``acc``; ``mean`` divides by the reduced count; ``norm`` (with ``sum``)
    sums the squares and takes the square root, ``np.linalg.norm``'s 2-norm in one reduction."""

    def __init__(self, rop: str, x: DeviceArray, axes: tuple, acc: np.dtype, out_dtype: np.dtype,
                 mean: bool, device: Device, norm: bool = False, centred: bool = False,
                 root: bool = False, finish_last: bool | None = None):
        # centred (with sum): the squared deviations from a centre per output (``run``'s
        # ``centre``), np.var's second pass; root: the result's square root (np.std);
        # finish_last: a split reduction in one launch (None: on GPUs; see FINISH_LAST)
        acc = compute_acc(acc)
        self.device, self.out_dtype, self.acc = device, out_dtype, acc
        kept = [a for a in range(x.ndim) if a not in axes]
        self.kept_shape = tuple(x.shape[a] for a in kept)
        strides = _elem_strides(x)
        red_shape = [x.shape[a] for a in axes]
        self.n_out, self.n_red = math.prod(self.kept_shape), math.prod(red_shape)
        self.kept_strides = c_strides(self.kept_shape, self.out_dtype.itemsize)
        odims, (ostride, out_stride) = merge_dims(self.kept_shape, [strides[a] for a in kept],
                                                  c_strides(self.kept_shape))
        rdims, (rstride,) = merge_dims(red_shape, [strides[a] for a in axes])
        self.supported = len(odims) <= MAX_DIMS and len(rdims) <= MAX_DIMS
        self.stages: list = []  # bound launches: the reduction, then the partials' if split
        if not self.supported or self.n_out == 0:
            return
        n_out, n_red = self.n_out, self.n_red
        self.count = np.int64(n_red)
        self.out_stride = as_long8(out_stride, 0)
        shapes = (as_long8(odims, 1), as_long8(ostride, 0), as_long8(rdims, 1),
                  as_long8(rstride, 0))
        base = _defines(rop, x.dtype, acc, out_dtype, 1)
        base.update(NDIM_OUT=len(odims), NDIM_RED=len(rdims))
        innermost_kept = abs(ostride[-1]) if odims else math.inf
        innermost_red = abs(rstride[-1]) if rdims else math.inf
        max_wg = min(256, device.info.max_work_group_size)
        cols = n_out >= 1024 and innermost_kept < innermost_red
        if cols:  # work-items over outputs (and chunks of r when outputs are too few)
            groups = max(1, min(-(-n_red // 64), _COLS_THREADS // n_out, 256))
            local = min(max_wg, 64)
        else:  # work-groups over outputs (and chunks of r when outputs are too few)
            per_lane = _ROW_ELEMENTS_PER_LANE_GPU if device.info.is_gpu else 1
            local = _pow2_at_most(-(-n_red // per_lane), max_wg)
            target = (_GROUPS_PER_UNIT_GPU * device.info.compute_units if device.info.is_gpu
                      else _TREE_GROUPS)
            groups = max(1, min(_MAX_GROUPS, target, -(-target // n_out),
                                -(-n_red // (local * _PER_LANE))))
            # (the simulator keeps the two launches: its checks cover that form)
            if (device.info.is_gpu and not device.info.is_simulator
                    and n_red <= local * _PER_LANE_GPU):
                groups = 1
        # short reduced axes: several outputs per work-group (one work-group of a few lanes per
        # output leaves a GPU's work-group slots, not its lanes, as the limit)
        rows = max_wg // local if not cols and groups == 1 and local < 64 else 1
        self.groups = groups
        chunk = -(-n_red // groups) if n_red else 0
        # one contiguous reduced dimension, long enough that every lane gets four vectors or
        # more: vector loads (opencl/reduce.cl, VEC_RED; on short rows they would leave most
        # lanes idle: the k-means step's sum over 32 elements, H100, took 1.87 -> 2.57 ms),
        # chunks rounded up to whole vectors where no work-group is left without elements
        vec = (not cols and rows == 1 and len(rdims) == 1 and rstride[-1] == 1
               and x.dtype.itemsize in (4, 8) and chunk >= 16 * local)
        if vec and chunk % 4 and (groups - 1) * (-(-chunk // 4) * 4) < n_red:
            chunk = -(-chunk // 4) * 4
        root = root or norm
        last = finish_in_last_group(device.info, -1 if finish_last is None else int(finish_last),
                                    nbytes=n_out * n_red * x.itemsize)
        self.finish_last = last = last and groups > 1 and not cols and rows == 1
        first = dict(base, WG=local * rows, ROWS=rows, PARTIAL=int(groups > 1), VEC_RED=int(vec),
                     MEAN=int(mean and (groups == 1 or last)), SQUARE_IN=int(norm or centred),
                     CENTRED=int(centred), SQRT_OUT=int(root and (groups == 1 or last)),
                     FINISH_LAST=int(last))
        self.centred, self.is_arg = centred, rop in ("argmax", "argmin")
        if groups > 1:
            if last:   # the result's type, written by the last group
                first["FINAL_T"] = first["OUT_T"]
                first["FINAL_HALF"] = int(first.pop("OUT_HALF", 0))
            first["OUT_T"] = ctype(acc)  # the partial results
            first.pop("OUT_HALF", None)
        kernel = "reduce_cols" if cols else "reduce"
        if cols:
            geometry = ((-(-n_out // local) * local, groups), (local, 1))
        else:
            geometry = ((-(-n_out * groups // rows) * local * rows,), (local * rows,))
        options = device.info.rounding_options if root else ()  # sqrt as NumPy's
        self.stages.append(_bind(device, get_kernel(device, "reduce.cl", kernel, first, options),
                                 geometry, (n_red, chunk, groups, n_out), shapes,
                                 self.out_stride, last))
        if groups == 1 or last:
            return
        second = _defines(rop, acc, acc, out_dtype, 1)
        second.update(NDIM_OUT=1, NDIM_RED=1, MEAN=int(mean), FROM_PARTIALS=1,
                      SQRT_OUT=int(root))
        if cols:  # partials: groups x n_out, reduced down the columns
            second["WG"] = local
            shapes2 = (as_long8([n_out], 1), as_long8([1], 0), as_long8([groups], 1),
                       as_long8([n_out], 0))
            geometry2 = ((-(-n_out // local) * local, 1), (local, 1))
        else:  # partials: n_out x groups, one work-group per row
            second["WG"] = local2 = _pow2_at_most(groups, max_wg)
            shapes2 = (as_long8([n_out], 1), as_long8([groups], 0), as_long8([groups], 1),
                       as_long8([1], 0))
            geometry2 = ((n_out * local2,), (local2,))
        self.stages.append(_bind(device, get_kernel(device, "reduce.cl", kernel, second, options),
                                 geometry2, (groups, groups, 1, n_out), shapes2,
                                 as_long8([1], 0)))

    def run(self, x: DeviceArray, centre: DeviceArray | None = None,
            count: int | None = None) -> DeviceArray:
        """The reduction of ``x`` (kept shape, C order); a centred plan takes the ``centre`` of
        each output (the accumulator's dtype, C order) and the ``count`` its mean divides by."""
        device = self.device
        result = DeviceArray.from_storage(
            Storage.for_output(device, self.n_out * self.out_dtype.itemsize), self.kept_shape,
            self.out_dtype, self.kept_strides)
        if self.n_out == 0:
            return result
        src = x.storage.kernel_buffer()
        off = _ZERO if x.offset == 0 else np.int64(x.offset // x.itemsize)
        out_buf = result.storage.kernel_buffer(write=True)
        n = self.count if count is None else np.int64(count)
        aside = centre.storage.kernel_buffer() if self.centred else src  # idx_in's slot
        if self.groups == 1:
            self.stages[0](n, src, off, aside, out_buf, src)
            return result
        n_partial = self.n_out * self.groups
        p_buf = Storage.for_output(device, n_partial * self.acc.itemsize).kernel_buffer(True)
        i_buf = (Storage.for_output(device, n_partial * 8).kernel_buffer(True) if self.is_arg
                 else p_buf)   # (the index output is only written by arg reductions)
        if self.finish_last:
            self.stages[0](n, src, off, aside, p_buf, i_buf, out_buf,
                           group_counters(device, self.n_out))
            return result
        self.stages[0](n, src, off, aside, p_buf, i_buf)
        self.stages[1](n, p_buf, _ZERO, i_buf, out_buf, i_buf)
        return result


_ZERO = np.int64(0)


def _bind(device: Device, launcher, geometry, sizes, shapes, out_stride, finish_last=False):
    """One stage of ``reduce`` or ``reduce_cols`` with everything fixed but, per call, the
    count a mean divides by, the source's buffer and offset, the index input, the output and
    the index output (the two kernels' arguments differ only in the order of the sizes), and
    with ``finish_last`` the result and the group counters."""
    n_red, chunk, groups, n_out = (np.int64(v) for v in sizes)
    if launcher.name == "reduce":
        head, tail = (n_red, chunk, groups, None), (np.int64(n_out * groups),)
    else:
        head, tail = (n_out, n_red, chunk, None), ()
    args = head + tuple(shapes) + (None, None, None, None, _ZERO, out_stride, None) + tail
    per_call = (3, 8, 9, 10, 11, 14)
    if finish_last:
        args, per_call = args + (None, None), per_call + (len(args), len(args) + 1)
    return launcher.bind(device, *geometry, args, per_call)


class ScanPlan:
    """Inclusive scan (``sum`` or ``prod``) of ``x`` along ``axis`` into a fresh C array."""

    def __init__(self, rop: str, x: DeviceArray, axis: int, acc: np.dtype, out_dtype: np.dtype,
                 device: Device):
        self.device, self.out_dtype, self.shape = device, out_dtype, x.shape
        strides, out_strides = _elem_strides(x), c_strides(x.shape)
        kept = [a for a in range(x.ndim) if a != axis]
        kept_shape = [x.shape[a] for a in kept]
        odims, (ostride, out_stride) = merge_dims(kept_shape, [strides[a] for a in kept],
                                                  [out_strides[a] for a in kept])
        self.n_out, self.n_red = math.prod(kept_shape), x.shape[axis]
        self.supported = len(odims) <= MAX_DIMS
        if not self.supported or self.n_out * self.n_red == 0:
            return
        wg = _pow2_at_most(self.n_red, min(256, device.info.max_work_group_size))
        defines = _defines(rop, x.dtype, acc, out_dtype, wg)
        defines["NDIM_OUT"] = len(odims)
        self.launcher = get_kernel(device, "reduce.cl", "scan", defines)
        self.geometry = ((self.n_out * wg,), (wg,))
        self.fixed = (np.int64(self.n_red), as_long8(odims, 1), as_long8(ostride, 0),
                      np.int64(strides[axis]))
        self.fixed_out = (as_long8(out_stride, 0), np.int64(out_strides[axis]))

    def run(self, x: DeviceArray) -> DeviceArray:
        n, itemsize = math.prod(self.shape), self.out_dtype.itemsize
        result = DeviceArray.from_storage(Storage.for_output(self.device, n * itemsize),
                                          self.shape, self.out_dtype,
                                          c_strides(self.shape, itemsize))
        if n:
            n_red, odims, ostride, rstride = self.fixed
            self.launcher.launch(self.device, *self.geometry, n_red, odims, ostride, rstride,
                                 x.storage.kernel_buffer(), np.int64(x.offset // x.itemsize),
                                 result.storage.kernel_buffer(write=True), np.int64(0),
                                 *self.fixed_out)
        return result


_PLANS: PlanCache = PlanCache("reduce")


def reduce_plan(rop: str, x: DeviceArray, axes: tuple, acc: np.dtype, out_dtype: np.dtype,
                mean: bool = False, norm: bool = False, centred: bool = False,
                root: bool = False) -> ReducePlan:
    """The cached :class:`ReducePlan` of this call."""
    key = ("reduce", rop, x.device, x.dtype, x.shape, x.strides, axes, acc, out_dtype, mean,
           norm, centred, root)
    return _PLANS.get(key, lambda: ReducePlan(rop, x, axes, acc, out_dtype, mean, x.device,
                                              norm, centred, root))


def scan_plan(rop: str, x: DeviceArray, axis: int, acc: np.dtype, out_dtype: np.dtype
              ) -> ScanPlan:
    """The cached :class:`ScanPlan` of this call."""
    key = ("scan", rop, x.device, x.dtype, x.shape, x.strides, axis, acc, out_dtype)
    return _PLANS.get(key, lambda: ScanPlan(rop, x, axis, acc, out_dtype, x.device))
