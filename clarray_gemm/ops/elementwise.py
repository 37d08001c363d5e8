"""Arithmetic ufuncs on the device (``+ - * /``, ``maximum``, ``minimum``, unary ``-``).

NumPy's ufunc machinery decides the loop dtypes (``ufunc.resolve_dtypes``, NEP 50 scalar rules
included). A call's key (ufunc, device, operand kinds, dtypes, shapes, strides, ``out=``) maps to
a cached :class:`ElementwisePlan`: either the host path (NumPy's own ufunc on the buffers'
mapping, on devices whose memory is the host's, below the measured crossover), or one kernel of
``opencl/elementwise.cl`` with its merged dimensions and stride vectors fixed, reading broadcast,
strided operands and writing a fresh array or ``out=``. Anything else (other ufuncs,
bool/float16/complex loops, ``where=``, casting errors) returns ``NotImplemented`` so the host
fallback gives NumPy's exact answer or error.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dispatch import implements_ufunc
from ..array import DeviceArray, asarray
from ..device import Device, register_fork_reset
from ..kernels.copy import MAX_DIMS, as_long8, merge_dims
from ..kernels.crossover import prefer_host
from ..kernels.plans import PlanCache
from ..dtypes import ctype, dtype_defines, kernel_supports
from ..kernels.programs import get_kernel
from ..memory import Storage

_OP_IDS = {np.add: 1, np.subtract: 2, np.multiply: 3, np.true_divide: 4, np.maximum: 5,
           np.minimum: 6, np.negative: 7}
_WRAPPING_OPS = {1, 2, 3, 7}  # computed in unsigned integers so overflow wraps like NumPy
_ALLOWED_KWARGS = {"out", "casting"}
_PYTHON_SCALARS = (int, float)


def _describe(x: Any) -> tuple | None:
    """The key part of one operand; None for operands the device path does not take."""
    t = type(x)
    if t is DeviceArray:
        return x.layout_key
    if t in _PYTHON_SCALARS:
        return (1, t)  # a "weak" Python scalar (NEP 50): its value is an argument, not a key
    if isinstance(x, (np.ndarray, np.generic)):
        return (2, x.dtype, x.shape)  # starts with 2, a device array's layout key with a dtype
    return None


class ElementwisePlan:
    """Everything about one elementwise call that its key decides."""

    def __init__(self, ufunc: np.ufunc, inputs: tuple, out: DeviceArray | None, casting: str,
                 device: Device):
        self.device, self.ufunc, self.casting = device, ufunc, casting
        self.supported = False
        described = [x.dtype if not isinstance(x, _PYTHON_SCALARS) else type(x) for x in inputs]
        try:
            loop = ufunc.resolve_dtypes(tuple(described) + (None,))
            shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
        except (TypeError, ValueError, OverflowError):
            return
        if not all(kernel_supports(np.dtype(d), device.info) for d in loop):
            return
        if not all(x.dtype == np.bool_ or kernel_supports(x.dtype, device.info)
                   for x in inputs if not isinstance(x, _PYTHON_SCALARS)):
            return  # e.g. a float16 operand: loaded only through vload_half
        out_dtype = np.dtype(loop[-1])
        if out is not None:
            if (np.broadcast_shapes(shape, out.shape) != out.shape
                    or not np.can_cast(out_dtype, out.dtype, casting)
                    or not kernel_supports(out.dtype, device.info)):
                return
            shape = out.shape
        self.supported = True
        self.loop, self.shape, self.out_dtype = loop, shape, out_dtype
        self.size = math.prod(shape)
        self.out_strides = _c_strides_bytes(shape, out_dtype.itemsize)
        self.out_nbytes = self.size * out_dtype.itemsize
        self.host_reason = prefer_host(device, "elementwise", out_dtype, self.size)
        if self.host_reason is None and self.size:
            self._plan_kernel(inputs, out)

    def _plan_kernel(self, inputs: tuple, out: DeviceArray | None) -> None:
        target_dtype = out.dtype if out is not None else self.out_dtype
        isz_out = target_dtype.itemsize
        out_strides = (tuple(s // isz_out for s in out.strides) if out is not None
                       else _c_elem_strides(self.shape))
        operand_dtypes, operand_strides = [], []
        for x, d in zip(inputs, self.loop):
            dt = x.dtype if type(x) is DeviceArray else np.dtype(d)
            operand_dtypes.append(dt)
            if type(x) is DeviceArray:
                operand_strides.append(_broadcast_elem_strides(x.shape, x.strides, dt.itemsize,
                                                               self.shape))
            else:  # uploaded contiguous in the loop dtype (a scalar: one element, stride 0)
                operand_strides.append(_broadcast_elem_strides(
                    np.shape(x), _c_strides_bytes(np.shape(x), dt.itemsize), dt.itemsize,
                    self.shape))
        unary = len(inputs) == 1
        if unary:
            operand_dtypes.append(operand_dtypes[0])
            operand_strides.append(operand_strides[0])
        dims, (sa, sb, so) = merge_dims(self.shape, operand_strides[0], operand_strides[1],
                                        out_strides)
        if len(dims) > MAX_DIMS:
            self.host_reason = "more than 8 non-contiguous dimensions: NumPy on host views"
            return
        op = _OP_IDS[self.ufunc]
        compute = np.dtype(self.loop[0]) if op != 4 else np.dtype(self.loop[-1])
        cdefs = dtype_defines(compute)
        defines = {"A_T": ctype(operand_dtypes[0]), "B_T": ctype(operand_dtypes[1]),
                   "OUT_T": ctype(target_dtype),
                   "CT": cdefs["ACC"] if op in _WRAPPING_OPS else cdefs["T"], "OP": op,
                   "IS_FLOAT": int(compute.kind == "f"), "UNARY": int(unary)}
        if np.dtype(np.float64) in (*operand_dtypes, target_dtype, compute):
            defines["IS_FP64"] = 1
        options = (("-cl-fp32-correctly-rounded-divide-sqrt",)
                   if self.device.info.fp32_divide_option else ())
        self.launcher = get_kernel(self.device, "elementwise.cl", "elementwise", defines, options)
        local = min(256, self.device.info.max_work_group_size)
        self.geometry = ((-(-self.size // local) * local,), (local,))
        self.fixed = (np.int64(self.size), as_long8(dims, 1), as_long8(sa, 0), as_long8(sb, 0),
                      as_long8(so, 0))

    # -- running ---------------------------------------------------------------------------------
    def run(self, inputs: tuple, out: DeviceArray | None) -> DeviceArray:
        device = self.device
        target = out
        if out is None or any(_overlaps_differently(out, x) for x in inputs
                              if type(x) is DeviceArray):
            target = DeviceArray._wrap(Storage(device, self.out_nbytes,
                                               self.host_reason is not None),
                                       self.shape, self.out_dtype, self.out_strides)
        if self.size == 0:
            pass
        elif self.host_reason is not None:
            hosts = [x.host_view() if type(x) is DeviceArray else x for x in inputs]
            self.ufunc(*hosts, out=target.host_view(write=True), casting=self.casting)
        else:
            self._launch(inputs, target)
        if out is not None and target is not out:
            out[...] = target
        return out if out is not None else target

    def _launch(self, inputs: tuple, target: DeviceArray) -> None:
        device = self.device
        a = inputs[0]
        if type(a) is not DeviceArray:
            a = _constant(a, np.dtype(self.loop[0]), device)
        b = a
        if len(inputs) > 1:
            b = inputs[1]
            if type(b) is not DeviceArray:
                b = _constant(b, np.dtype(self.loop[1]), device)
        a_buf, b_buf = a._storage.kernel_buffer(), b._storage.kernel_buffer()
        out_buf = target._storage.kernel_buffer(write=True)
        n, dims, sa, sb, so = self.fixed
        global_size, local_size = self.geometry
        self.launcher(device.queue, global_size, local_size, n, dims, a_buf, _offset_arg(a), sa,
                      b_buf, _offset_arg(b), sb, out_buf, _offset_arg(target), so)

    def describe(self) -> str:
        if not self.supported:
            return f"{self.ufunc.__name__}: NumPy's ufunc on host views (no device loop)"
        if self.host_reason is not None:
            return f"{self.ufunc.__name__} {self.shape}: {self.host_reason}"
        return f"{self.ufunc.__name__} {self.shape}: kernel elementwise (opencl/elementwise.cl)"


def _c_elem_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _c_strides_bytes(shape: tuple, itemsize: int) -> tuple:
    return tuple(s * itemsize for s in _c_elem_strides(shape))


def _broadcast_elem_strides(shape: tuple, strides: tuple, itemsize: int, target: tuple) -> tuple:
    """Element strides of an operand broadcast to ``target`` (0 along broadcast axes)."""
    pad = len(target) - len(shape)
    return (0,) * pad + tuple(0 if n == 1 else s // itemsize for n, s in zip(shape, strides))


_ZERO = np.int64(0)


def _offset_arg(x: DeviceArray) -> np.int64:
    """An operand's element offset as a kernel argument (one shared object for 0)."""
    return _ZERO if x._offset == 0 else np.int64(x._offset // x.itemsize)


# Scalars and NumPy operands of kernel calls, uploaded once per (device, dtype, bytes): a loop
# that adds the same constant pays no upload after its first call.
_constants: dict[tuple, DeviceArray] = {}
register_fork_reset(_constants)


def _constant(x: Any, dtype: np.dtype, device: Device) -> DeviceArray:
    host = np.asarray(x, dtype=dtype)
    if host.size > 64:
        return asarray(host, device=device)
    key = (device, dtype, host.shape, host.tobytes())
    arr = _constants.get(key)
    if arr is None:
        if len(_constants) > 1024:
            _constants.clear()
        arr = _constants[key] = asarray(host, device=device)
    return arr


def _overlaps_differently(out: DeviceArray, x: DeviceArray) -> bool:
    """True when ``x`` shares ``out``'s buffer with another layout (NumPy copies then)."""
    return (x.storage is out.storage
            and (x.offset, x.strides, x.shape) != (out.offset, out.strides, out.shape))


_PLANS: PlanCache[ElementwisePlan] = PlanCache("elementwise")


def plan_for(ufunc: np.ufunc, inputs: tuple, out: DeviceArray | None, casting: str,
             device: Device) -> ElementwisePlan | None:
    """The cached plan of ``ufunc(*inputs, out=out)``, or None for operands it cannot key."""
    descs = tuple(_describe(x) for x in inputs)
    if None in descs:
        return None
    out_desc = None if out is None else (out.dtype, out.shape, out.strides,
                                         out.offset % (out.itemsize * 8))
    key = (ufunc, device, descs, out_desc, casting)
    return _PLANS.get(key, lambda: ElementwisePlan(ufunc, inputs, out, casting, device))


@implements_ufunc(*_OP_IDS)
def elementwise(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """Run one of the arithmetic ufuncs on the device, or NotImplemented for the host."""
    if len(inputs) != ufunc.nin or (kwargs and set(kwargs) - _ALLOWED_KWARGS):
        return NotImplemented
    out = kwargs.get("out")
    if isinstance(out, tuple):
        if len(out) != 1:
            return NotImplemented
        out = out[0]
    if out is not None and type(out) is not DeviceArray:
        return NotImplemented
    device = None
    for x in inputs:
        if type(x) is DeviceArray:
            if device is None:
                device = x.device
            elif x.device != device:
                return NotImplemented
    if out is not None and out.device != device:
        return NotImplemented
    casting = kwargs.get("casting", "same_kind")
    plan = plan_for(ufunc, inputs, out, casting, device)
    if plan is None or not plan.supported:
        return NotImplemented
    if out is not None and any(type(x) is DeviceArray and _overlaps_differently(out, x)
                               for x in inputs):
        # out's plan addresses out's layout, not a temporary's: compute into a fresh array with
        # the out=None plan (NumPy buffers overlapping operands too), then copy into out.
        fresh = plan_for(ufunc, inputs, None, casting, device)
        out[...] = fresh.run(inputs, None)
        return out
    return plan.run(inputs, out)
