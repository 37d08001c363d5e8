"""The host fallback: a NumPy function or ufunc with no device implementation runs as NumPy on
read-only host views of the device arrays (a mapping, not a copy, on unified-memory devices).

Results come back on the operands' device, so the code after ``np.linalg.eigh(x)`` or
``np.sort(x)`` stays on it: every ``np.ndarray`` in a function's result (inside tuples,
namedtuples, lists and dicts too) becomes a device array (NumPy's fresh memory taken over
without a copy on unified memory). NumPy's scalars stay scalars; arrays of dtypes no device
operation computes with (objects, strings, bytes, void, datetimes), ndarray subclasses, the
caller's own NumPy arrays and the results of :data:`_HOST_RESULTS` stay NumPy's; a host view of
an operand that NumPy hands back unchanged is that device array again.
``CLARRAY_GEMM_FALLBACK_RESULTS=host`` (``settings.fallback_results``) gives functions' results
as NumPy returns them. ``out=`` device arrays and in-place targets are written back to the
device. Ufuncs give device arrays (on unified memory NumPy writes them straight into
host-resident device buffers), so operators always return device arrays. Every call is counted
(``clarray_gemm.on_host_calls``). ``DeviceArray`` reaches this module through ``_dispatch``
(registered below), so the array's module does not import it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dispatch, settings
from ..device import Device, get_device
from ..dtypes import numpy_only
from ..fallbacks import record_host_call
from .creation import asarray
from .device_array import DeviceArray, new_array
from .host_results import adopt_host

__all__ = ["to_host", "host_function", "host_ufunc"]

# Functions whose first argument NumPy writes in place: the fallback maps it for writing.
_INPLACE_FIRST_ARG = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                      np.put_along_axis}

# Functions whose array results stay NumPy's: a device array would cost out of proportion.
# (np.asarray, np.array, np.asanyarray, np.ascontiguousarray, np.require, np.asarray_chkfinite
# and np.asmatrix never come here: NumPy converts a device array through ``__array__``.
# Functions that answer with Python objects, NumPy scalars, strings or None, such as
# np.array_equal, np.allclose, np.shares_memory, np.array2string or np.save, keep that answer
# through the rules of ``_Results``.)
_HOST_RESULTS = frozenset({
    # a strided view of its operand, each element seen window-size times: a device copy holds
    # that many times the operand's elements
    np.lib.stride_tricks.sliding_window_view,
})


def _writes_first_arg(func, args: tuple, kwargs: dict) -> bool:
    """Whether this call of ``func`` writes into its first argument: ``np.nan_to_num`` with
    ``copy=False`` does, and returns it."""
    if func is np.nan_to_num:
        copy = args[1] if len(args) > 1 else kwargs.get("copy", True)
        return not copy
    return False


def to_host(obj: Any, writable: bool = False) -> Any:
    """``obj`` with every device array in it (lists, tuples, dicts) replaced by its read-only
    host view, or by a writable host copy when ``writable``."""
    if isinstance(obj, DeviceArray):
        return obj.get() if writable else obj.__array__()
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):  # not namedtuples
        converted = [to_host(o, writable) for o in obj]
        return type(obj)(converted) if isinstance(obj, list) else tuple(converted)
    if isinstance(obj, dict):
        return {k: to_host(v, writable) for k, v in obj.items()}
    return obj


def host_function(func, args: tuple, kwargs: dict) -> Any:
    """Run the NumPy function ``func`` on host views; ``out=`` device arrays and in-place
    targets are written back to the device, and array results come back as device arrays on
    the operands' device (see the module's doc; ``CLARRAY_GEMM_FALLBACK_RESULTS=host``: as
    NumPy returns them)."""
    record_host_call(func.__name__)
    out = kwargs.get("out")
    if args and isinstance(args[0], DeviceArray) and (
            func in _INPLACE_FIRST_ARG or _writes_first_arg(func, args, kwargs)):
        with args[0].host_write() as target:
            answer = func(target, *to_host(args[1:]), **to_host(kwargs))
        return args[0] if answer is target else answer
    if isinstance(out, DeviceArray):
        host_out = np.empty(out.shape, out.dtype)
        kwargs = dict(kwargs, out=host_out)
        func(*to_host(args), **to_host(kwargs))
        out[...] = host_out
        return out
    if func in _HOST_RESULTS or settings.fallback_results() == "host":
        return func(*to_host(args), **to_host(kwargs))
    results = _Results()
    answer = func(*results.to_host(args), **results.to_host(kwargs))
    return results.on_device(answer)


class _Results:
    """One fallback call's conversions: its operands to host views (remembering which view
    came from which device array, and the caller's own NumPy arrays), then NumPy's answer to
    device arrays on the operands' device."""

    __slots__ = ("device", "views", "callers", "done", "foreign")

    def __init__(self) -> None:
        self.device: Device | None = None
        self.views: dict[int, tuple[np.ndarray, DeviceArray]] = {}
        self.callers: dict[int, np.ndarray] = {}
        self.done: dict[int, tuple[np.ndarray, Any]] = {}
        # an operand NumPy may read without a copy (a pandas object, a memoryview): an array
        # NumPy hands back may be its memory, which a device array must then not take over
        self.foreign = False

    def to_host(self, obj: Any) -> Any:
        """:func:`to_host` (read-only views), keeping track as the class's doc says."""
        if isinstance(obj, DeviceArray):
            view = obj.__array__()
            self.views[id(view)] = (view, obj)  # the pair keeps the view alive: ids stay unique
            if self.device is None:
                self.device = obj.device
            return view
        if isinstance(obj, np.ndarray):
            self.callers[id(obj)] = obj
            return obj
        if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):  # not namedtuples
            converted = [self.to_host(o) for o in obj]
            return type(obj)(converted) if isinstance(obj, list) else tuple(converted)
        if isinstance(obj, dict):
            return {k: self.to_host(v) for k, v in obj.items()}
        if not isinstance(obj, np.generic) and (
                isinstance(obj, (memoryview, bytearray)) or hasattr(obj, "__array__")
                or hasattr(obj, "__array_interface__") or hasattr(obj, "__array_struct__")):
            self.foreign = True
        return obj

    def on_device(self, obj: Any) -> Any:
        """NumPy's answer ``obj`` with each array in it that a device array may hold as one on
        the operands' device (the same NumPy object twice: the same device array twice)."""
        if type(obj) is np.ndarray:
            return self._array(obj)
        if type(obj) is list:
            return [self.on_device(o) for o in obj]
        if type(obj) is tuple:
            return tuple(self.on_device(o) for o in obj)
        if isinstance(obj, tuple) and hasattr(obj, "_make"):  # EighResult, SVDResult, ...
            return obj._make(self.on_device(o) for o in obj)
        if type(obj) is dict:
            return {k: self.on_device(v) for k, v in obj.items()}
        # scalars, strings, None, ndarray subclasses (a mask or matrix algebra a device array
        # would drop) and other objects: NumPy's
        return obj

    def _array(self, a: np.ndarray) -> Any:
        key = id(a)
        if key in self.callers:  # the caller's own array (out=, or handed back unchanged)
            return a
        if key in self.views:  # an operand's host view handed back unchanged: the operand
            return self.views[key][1]
        if key in self.done:
            return self.done[key][1]
        if numpy_only(a.dtype):  # no device operation computes with these: each would come back
            return a
        if self.device is None:
            self.device = get_device(None)
        if a.dtype.isnative and not self.foreign:
            # NumPy's fresh memory is taken over on unified memory; views and memory NumPy does
            # not own are copied (adopt_host decides)
            result = adopt_host(a, self.device)
        else:
            result = asarray(a, device=self.device)  # a copy, in native byte order
        self.done[key] = (a, result)  # the pair keeps ``a`` alive: ids stay unique
        return result


def host_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict,
               device: Device | None = None) -> Any:
    """Run ``getattr(ufunc, method)`` on host views; array results come back as device arrays
    on ``device`` (default: that of the first device array among the inputs and outputs),
    written into device ``out=`` arrays when given."""
    if device is None:
        device = _device_of_inputs(inputs, kwargs)
    record_host_call(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
    outs = kwargs.get("out")
    outs = outs if isinstance(outs, tuple) else ((outs,) if outs is not None else None)
    if (method == "__call__" and outs is None and not kwargs
            and device.info.host_unified_memory):
        direct = _ufunc_into_mapping(device, ufunc, inputs)
        if direct is not None:
            return direct
    host_kwargs = {k: to_host(v) for k, v in kwargs.items() if k != "out"}
    host_outs = None
    if outs is not None:
        host_outs = tuple(np.empty(o.shape, o.dtype) if isinstance(o, DeviceArray) else o
                          for o in outs)
        if method == "at":
            raise TypeError("ufunc.at on device arrays is not supported; use np.asarray first")
        host_kwargs["out"] = host_outs
    if method == "at" and isinstance(inputs[0], DeviceArray):
        with inputs[0].host_write() as target:
            return getattr(ufunc, method)(target, *to_host(inputs[1:]), **host_kwargs)
    result = getattr(ufunc, method)(*to_host(inputs), **host_kwargs)
    if outs is not None:
        for o, h in zip(outs, host_outs):
            if isinstance(o, DeviceArray):
                o[...] = h
        return outs[0] if len(outs) == 1 else outs

    def wrap(r):  # object results stay NumPy's: a device buffer cannot hold Python objects;
        # a NumPy scalar (the loop over 0-d operands) becomes a 0-d device array
        return (asarray(r, device=device)
                if isinstance(r, (np.ndarray, np.generic)) and not r.dtype.hasobject else r)
    return tuple(wrap(r) for r in result) if isinstance(result, tuple) else wrap(result)


def _device_of_inputs(inputs: tuple, kwargs: dict) -> Device:
    for x in inputs + tuple(kwargs.get("out") or ()):
        if isinstance(x, DeviceArray):
            return x.device
    return get_device(None)


def _ufunc_into_mapping(device: Device, ufunc: np.ufunc, inputs: tuple):
    """Unified memory: ``ufunc(*inputs)`` written by NumPy straight into host-resident device
    buffers (no copy of the result), or None when NumPy's dtype or shape resolution must be left
    to the general path (its errors included): generalized ufuncs (``np.matmul``,
    ``np.vecdot``) too, whose results do not have the operands' broadcast shape."""
    if ufunc.signature is not None:
        return None
    described = []
    for x in inputs:
        if isinstance(x, (DeviceArray, np.ndarray, np.generic)):
            described.append(x.dtype)
        elif type(x) in (int, float, complex, bool):
            described.append(type(x))
        else:
            return None
    try:
        loop = ufunc.resolve_dtypes(tuple(described) + (None,) * ufunc.nout)
        shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
    except (TypeError, ValueError, OverflowError):
        return None
    out_dtypes = [np.dtype(d) for d in loop[ufunc.nin:]]
    if any(d.hasobject for d in out_dtypes):
        return None
    outs = tuple(new_array(shape, d, device, host_resident=True) for d in out_dtypes)
    hosts = [x.host_view() if isinstance(x, DeviceArray) else x for x in inputs]
    ufunc(*hosts, out=tuple(o.host_view(write=True) for o in outs))
    return outs[0] if len(outs) == 1 else outs


_dispatch.register_host_fallback(host_function, host_ufunc)
