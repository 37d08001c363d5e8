"""Arithmetic ufuncs on the device (``+ - * /``, ``maximum``, ``minimum``, unary ``-``).

NumPy's ufunc machinery decides the loop dtypes (``ufunc.resolve_dtypes``, NEP 50 scalar rules
included); one kernel (``opencl/elementwise.cl``) reads broadcast, strided operands and writes a
fresh array or ``out=``. Anything else — other ufuncs, bool/float16/complex loops, ``where=``,
casting errors — returns ``NotImplemented`` so the host fallback gives NumPy's exact answer or error.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import implements_ufunc
from ..array import DeviceArray, asarray, empty
from ..device import Device
from ..kernels.copy import MAX_DIMS, as_long8, merge_dims
from ..kernels.programs import ctype, dtype_defines, get_kernel

_OP_IDS = {np.add: 1, np.subtract: 2, np.multiply: 3, np.true_divide: 4, np.maximum: 5,
           np.minimum: 6, np.negative: 7}
_WRAPPING_OPS = {1, 2, 3, 7}  # computed in unsigned integers so overflow wraps like NumPy
_ALLOWED_KWARGS = {"out", "casting"}


def _loop_dtypes(ufunc: np.ufunc, inputs: tuple) -> tuple[np.dtype, ...] | None:
    described = []
    for x in inputs:
        if isinstance(x, (DeviceArray, np.ndarray, np.generic)):
            described.append(x.dtype)
        elif type(x) in (int, float):
            described.append(type(x))  # a "weak" Python scalar (NEP 50)
        else:
            return None
    try:
        return ufunc.resolve_dtypes(tuple(described) + (None,))
    except (TypeError, ValueError, OverflowError):
        return None


def _kernel_dtype(dt: np.dtype, device: Device) -> bool:
    if not dt.isnative or dt.kind not in "iuf" or dt == np.float16:
        return False
    return dt != np.float64 or device.info.fp64


@implements_ufunc(*_OP_IDS)
def elementwise(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """Run one of the arithmetic ufuncs on the device, or NotImplemented for the host."""
    if set(kwargs) - _ALLOWED_KWARGS or len(inputs) != ufunc.nin:
        return NotImplemented
    out = kwargs.get("out")
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if out is not None and not isinstance(out, DeviceArray):
        return NotImplemented
    devices = {x.device for x in (*inputs, out) if isinstance(x, DeviceArray)}
    if len(devices) != 1:
        return NotImplemented
    device = devices.pop()
    loop = _loop_dtypes(ufunc, inputs)
    if loop is None or not all(_kernel_dtype(np.dtype(d), device) for d in loop):
        return NotImplemented
    operand_dtypes = [x.dtype for x in inputs if isinstance(x, (DeviceArray, np.ndarray))]
    if not all(dt == np.bool_ or _kernel_dtype(dt, device) for dt in operand_dtypes):
        return NotImplemented  # e.g. a float16 operand: loaded only through vload_half
    out_dtype = np.dtype(loop[-1])
    try:
        shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
    except ValueError:
        return NotImplemented
    if out is not None:
        if (np.broadcast_shapes(shape, out.shape) != out.shape
                or not np.can_cast(out_dtype, out.dtype, kwargs.get("casting", "same_kind"))
                or not _kernel_dtype(out.dtype, device)):
            return NotImplemented
        shape = out.shape
    operands = [x if isinstance(x, DeviceArray) else asarray(np.asarray(x, dtype=d), device=device)
                for x, d in zip(inputs, loop)]
    target = out
    if out is None or any(_overlaps_differently(out, x) for x in operands):
        target = empty(shape, out_dtype, device=device)
    _launch(device, _OP_IDS[ufunc], operands, loop, target)
    if out is not None and target is not out:
        out[...] = target
    return out if out is not None else target


def _overlaps_differently(out: DeviceArray, x: DeviceArray) -> bool:
    """True when ``x`` shares ``out``'s buffer with another layout (NumPy copies then)."""
    return (x.storage is out.storage
            and (x.offset, x.strides, x.shape) != (out.offset, out.strides, out.shape))


def _launch(device: Device, op: int, operands: list[DeviceArray], loop: tuple,
            out: DeviceArray) -> None:
    out.storage.prepare_write()
    if out.size == 0:
        return
    a = operands[0].broadcast_view(out.shape)
    b = operands[1].broadcast_view(out.shape) if len(operands) > 1 else a
    for x in (a, b):
        x.storage.check_kernel_access()
    dims, (sa, sb, so) = merge_dims(out.shape, a.element_strides, b.element_strides,
                                    out.element_strides)
    if len(dims) > MAX_DIMS:
        raise NotImplementedError("more than 8 non-contiguous dimensions")
    compute = np.dtype(loop[0]) if op != 4 else np.dtype(loop[-1])
    cdefs = dtype_defines(compute)
    defines = {"A_T": ctype(a.dtype), "B_T": ctype(b.dtype), "OUT_T": ctype(out.dtype),
               "CT": cdefs["ACC"] if op in _WRAPPING_OPS else cdefs["T"], "OP": op,
               "IS_FLOAT": int(compute.kind == "f"), "UNARY": int(len(operands) == 1)}
    if np.dtype(np.float64) in (a.dtype, b.dtype, out.dtype, compute):
        defines["IS_FP64"] = 1
    kernel = get_kernel(device, "elementwise.cl", "elementwise", defines)
    n = out.size
    local = min(256, device.info.max_work_group_size)
    kernel(device.queue, ((n + local - 1) // local * local,), (local,), np.int64(n),
           as_long8(dims, 1), a.storage.buffer, np.int64(a.element_offset), as_long8(sa, 0),
           b.storage.buffer, np.int64(b.element_offset), as_long8(sb, 0),
           out.storage.buffer, np.int64(out.element_offset), as_long8(so, 0))
