"""Array functions that programs chain, on the device: joins (``concatenate, stack, hstack,
vstack``) by the strided copy kernel, ``pad`` (constant), ``outer, inner, tensordot`` (via the
matmul plan), ``trace, diagonal, diag, tril, triu``, ``atleast_1d/2d``, ``expand_dims``,
``broadcast_to``, ``linalg.norm`` (vectors, Frobenius) and the creation functions ``arange,
linspace, eye`` on a device (NumPy's ``like=`` argument, or :func:`clarray_gemm.arange` etc.).
Arguments outside these cases run NumPy on host views (counted by ``on_host_calls``).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _dispatch
from .._dispatch import implements
from ..array import DeviceArray, _host_function, asarray, empty, zeros
from ..device import Device, get_device
from ..kernels.crossover import prefer_host
from ._common import device_of
from .elementwise import kernel_dtype
from .indexing import iota

__all__ = ["concatenate", "arange", "linspace", "eye", "tensordot"]


def _on_device(xs: Sequence[Any], device: Device) -> list[DeviceArray]:
    return [x if type(x) is DeviceArray else asarray(x, device=device) for x in xs]


def _all_device_able(xs: Sequence[Any]) -> bool:
    return all(np.asarray(x).dtype.kind in "biuf" if type(x) is not DeviceArray
               else x.dtype.kind in "biuf" for x in xs)


@implements(np.concatenate)
def concatenate(arrays: Sequence[Any], axis: int | None = 0, out: Any = None, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """``np.concatenate``: one device copy per piece into the result."""
    arrays = list(arrays)
    if not arrays or not _all_device_able(arrays) or (out is not None and type(out) is not DeviceArray):
        return _host_function(np.concatenate, (arrays,), dict(axis=axis, out=out, dtype=dtype,
                                                             casting=casting))
    device = device_of(*arrays)
    xs = _on_device(arrays, device)
    if axis is None:
        xs, axis = [x.reshape(-1) for x in xs], 0
    if xs[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != xs[0].ndim:
            raise ValueError("all the input arrays must have same number of dimensions, but the "
                             f"array at index 0 has {xs[0].ndim} dimension(s) and the array at "
                             f"index {i} has {x.ndim} dimension(s)")
    axis = normalize_axis_index(axis, xs[0].ndim)
    for i, x in enumerate(xs[1:], 1):
        for d in range(x.ndim):
            if d != axis and x.shape[d] != xs[0].shape[d]:
                raise ValueError("all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array at "
                                 f"index 0 has size {xs[0].shape[d]} and the array at index {i} "
                                 f"has size {x.shape[d]}")
    result_dtype = np.dtype(dtype) if dtype is not None else np.result_type(*(x.dtype for x in xs))
    for x in xs:
        if not np.can_cast(x.dtype, result_dtype, casting):
            raise TypeError(f"Cannot cast array data from {x.dtype!r} to {result_dtype!r} "
                            f"according to the rule {casting!r}")
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    if out is None and prefer_host(device, "elementwise", result_dtype, math.prod(shape)):
        result = empty(tuple(shape), result_dtype, device=device, host_resident=True)
        np.concatenate([x.host_view() for x in xs], axis, out=result.host_view(write=True),
                       casting="unsafe")  # the host path; casting was checked above
        return result
    result = out if out is not None else empty(tuple(shape), result_dtype, device=device)
    start = 0
    for x in xs:
        n = x.shape[axis]
        if n:
            index = (slice(None),) * axis + (slice(start, start + n),)
            result[index] = x
        start += n
    return result


@implements(np.stack)
def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    device = device_of(*arrays)
    xs = _on_device(arrays, device) if _all_device_able(arrays) else None
    if xs is None:
        return _host_function(np.stack, (arrays,), dict(axis=axis, out=out, dtype=dtype,
                                                        casting=casting))
    if len({x.shape for x in xs}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, xs[0].ndim + 1)
    return concatenate([np.expand_dims(x, axis) for x in xs], axis, out, dtype, casting)


@implements(np.atleast_1d)
def atleast_1d(*arys: Any) -> Any:
    res = [a.reshape(1) if type(a) is DeviceArray and a.ndim == 0 else a for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


@implements(np.atleast_2d)
def atleast_2d(*arys: Any) -> Any:
    res = []
    for a in arys:
        if type(a) is DeviceArray and a.ndim < 2:
            a = a.reshape((1,) * (2 - a.ndim) + a.shape)
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


@implements(np.hstack)
def hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    arrs = [atleast_1d(a) for a in tup]
    axis = 0 if arrs and np.ndim(arrs[0]) == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


@implements(np.vstack)
def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


@implements(np.expand_dims)
def expand_dims(a: DeviceArray, axis: Any) -> DeviceArray:
    axes = normalize_axis_tuple(axis, a.ndim + len(axis if isinstance(axis, tuple) else (axis,)))
    shape, it = [], iter(a.shape)
    for d in range(a.ndim + len(axes)):
        shape.append(1 if d in axes else next(it))
    return a.reshape(tuple(shape))


@implements(np.broadcast_to)
def broadcast_to(array: DeviceArray, shape: Any, subok: bool = False) -> DeviceArray:
    return array.broadcast_view(tuple(shape) if not isinstance(shape, int) else (shape,))


@implements(np.pad)
def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``np.pad`` in mode 'constant' with scalar values: a filled array and one copy."""
    value = kwargs.get("constant_values", 0)
    if type(array) is not DeviceArray or mode != "constant" or set(kwargs) - {"constant_values"} \
            or np.ndim(value) != 0 or not kernel_dtype(array.dtype, array.device):
        return _host_function(np.pad, (array, pad_width), dict(kwargs, mode=mode))
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (array.ndim, 2))
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    shape = tuple(int(n + lo + hi) for n, (lo, hi) in zip(array.shape, widths))
    result = empty(shape, array.dtype, device=array.device)
    result[...] = asarray(np.asarray(value).astype(array.dtype), device=array.device)
    centre = tuple(slice(int(lo), int(lo) + n) for n, (lo, _) in zip(array.shape, widths))
    result[centre] = array
    return result


@implements(np.outer)
def outer(a: Any, b: Any, out: Any = None) -> Any:
    return np.multiply(np.ravel(a)[:, None], np.ravel(b)[None, :], out=out)


@implements(np.tensordot)
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``np.tensordot``: transposes and reshapes (views, or device copies) around one matmul."""
    device = device_of(a, b)
    a, b = _on_device([a, b], device)
    if isinstance(axes, numbers.Integral):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, numbers.Integral) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, numbers.Integral) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    axes_a = [normalize_axis_index(x, a.ndim) for x in axes_a]
    axes_b = [normalize_axis_index(x, b.ndim) for x in axes_b]
    for x, y in zip(axes_a, axes_b):
        if a.shape[x] != b.shape[y]:
            raise ValueError("shape-mismatch for sum")
    free_a = [d for d in range(a.ndim) if d not in axes_a]
    free_b = [d for d in range(b.ndim) if d not in axes_b]
    k = math.prod(a.shape[d] for d in axes_a)
    a2 = a.transpose(free_a + axes_a).reshape(math.prod(a.shape[d] for d in free_a), k)
    b2 = b.transpose(axes_b + free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return np.matmul(a2, b2).reshape(tuple(a.shape[d] for d in free_a)
                                     + tuple(b.shape[d] for d in free_b))


@implements(np.inner)
def inner(a: Any, b: Any) -> Any:
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


@implements(np.diagonal)
def diagonal(a: DeviceArray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DeviceArray:
    return a.geometry_view(lambda t: np.diagonal(t, offset, axis1, axis2))


@implements(np.trace)
def trace(a: DeviceArray, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    return np.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


@implements(np.diag)
def diag(v: DeviceArray, k: int = 0) -> Any:
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0] + abs(k)
    result = zeros((n, n), v.dtype, device=v.device)
    result.geometry_view(lambda t: np.diagonal(t, k))[...] = v
    return result


def _tri_mask(m: DeviceArray, k: int, lower: bool) -> DeviceArray:
    rows = arange(m.shape[-2], device=m.device)[:, None]
    cols = arange(m.shape[-1], device=m.device)[None, :]
    return np.less_equal(cols - rows, k) if lower else np.greater_equal(cols - rows, k)


@implements(np.tril)
def tril(m: DeviceArray, k: int = 0) -> Any:
    if m.ndim < 2:
        return _host_function(np.tril, (m,), {"k": k})
    return np.where(_tri_mask(m, k, True), m, zeros((), m.dtype, device=m.device))


@implements(np.triu)
def triu(m: DeviceArray, k: int = 0) -> Any:
    if m.ndim < 2:
        return _host_function(np.triu, (m,), {"k": k})
    return np.where(_tri_mask(m, k - 1, True), zeros((), m.dtype, device=m.device), m)


@implements(np.linalg.norm)
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """``np.linalg.norm`` for 2-norms of vectors and Frobenius norms: sqrt(sum(x*x))."""
    if (type(x) is not DeviceArray or ord not in (None, 2, "fro") or x.dtype.kind not in "biuf"
            or (ord == 2 and (axis is None and x.ndim != 1 or isinstance(axis, tuple)))
            or (ord == "fro" and axis is None and x.ndim != 2)):
        return _host_function(np.linalg.norm, (x,), dict(ord=ord, axis=axis, keepdims=keepdims))
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    return np.sqrt(np.sum(np.multiply(x, x), axis=axis, keepdims=keepdims))


# -- creation ----------------------------------------------------------------------------------
def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None,
           device: Any = None) -> DeviceArray:
    """``np.arange`` on a device: NumPy's length, dtype and fill rule, computed by a kernel."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ZeroDivisionError("division by zero")
    dt = np.result_type(start, stop, step) if dtype is None else np.dtype(dtype)
    probe = np.arange(start, start + 2 * step, step, dtype=dt)  # NumPy's first two values
    if all(isinstance(v, numbers.Integral) for v in (start, stop, step)):
        n = len(range(start, stop, step))
    else:
        n = max(math.ceil((stop - start) / step), 0)
    device = get_device(device)
    if not kernel_dtype(dt, device) or n <= 2:
        return asarray(np.arange(start, stop, step, dtype=dtype), device=device)
    first, second = probe[0], probe[1]
    return iota(n, first, second - first, second, dt, device)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, device: Any = None) -> Any:
    """``np.linspace`` for scalar ends on a device: NumPy's steps (i * step + start, float)."""
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    dt = np.result_type(start, stop, float(num))
    delta = stop - start
    y = arange(0, num, dtype=dt, device=device)
    if div > 0:
        step = delta / div
        y = np.multiply(np.true_divide(y, div), delta) if step == 0 else np.multiply(y, step)
    else:
        step = np.nan
        y = np.multiply(y, delta)
    y = np.add(y, start)
    if endpoint and num > 1:
        y[-1:] = asarray(np.asarray([stop], dtype=y.dtype), device=y.device)
    result = y.astype(dtype if dtype is not None else dt, copy=False)
    return (result, step) if retstep else result


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float, device: Any = None
        ) -> DeviceArray:
    """``np.eye`` on a device."""
    result = zeros((N, N if M is None else M), dtype, device=device)
    result.geometry_view(lambda t: np.diagonal(t, k))[...] = asarray(
        np.ones((), result.dtype), device=result.device)
    return result


@implements(np.arange)
def _arange_like(*args, dtype=None, device=None, like=None):
    return arange(*args, dtype=dtype, device=like.device)


@implements(np.eye)
def _eye_like(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    if order != "C":
        return asarray(np.eye(N, M, k, dtype, order), device=like.device)
    return eye(N, M, k, dtype, device=like.device)


_dispatch.LIKE_FUNCTIONS.update((np.arange, np.eye))


@implements(np.linspace)
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):
    if (np.ndim(start) or np.ndim(stop) or axis != 0 or type(start) is DeviceArray
            or type(stop) is DeviceArray):
        return _host_function(np.linspace, (start, stop, num),
                              dict(endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis))
    return linspace(start, stop, num, endpoint, retstep, dtype, axis)
