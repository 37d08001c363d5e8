"""Array functions that programs chain, on the device: ``hstack, vstack`` (through
``np.concatenate``, ops/joining.py), ``outer, inner, tensordot`` (via the matmul plan),
``trace, diagonal, diag, tril, triu``, ``atleast_1d/2d``, ``expand_dims``, ``linalg.norm``
(vectors, Frobenius) and the creation functions ``arange, linspace, eye`` on a device (NumPy's
``like=`` argument, or :func:`clarray_gemm.arange` etc.). Joins, ``broadcast_to`` and ``pad``
live in ops/joining.py, ops/broadcast.py and ops/padding.py.
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
from ..array import (DeviceArray, adopt_host, asarray, empty, full, host_function, host_result,
                     result_maker, zeros)
from ..device import Device, get_device
from ..kernels.crossover import has_host_path, host_wins
from ..kernels.plans import PlanCache
from ._common import device_of, operand, take_operands
from .elementwise import kernel_dtype
from .indexing import iota
from .reductions import two_norm

__all__ = ["arange", "linspace", "eye", "tensordot"]


def _on_device(xs: Sequence[Any], device: Device) -> list[DeviceArray]:
    return [x if type(x) is DeviceArray else asarray(x, device=device) for x in xs]


def _all_device_able(xs: Sequence[Any]) -> bool:
    return all(np.asarray(x).dtype.kind in "biuf" if type(x) is not DeviceArray
               else x.dtype.kind in "biuf" for x in xs)


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
    """``np.hstack``: device copies through ``np.concatenate`` (ops/joining.py)."""
    arrs = [atleast_1d(a) for a in tup]
    axis = 0 if arrs and np.ndim(arrs[0]) == 1 else 1
    return np.concatenate(arrs, axis, dtype=dtype, casting=casting)


@implements(np.vstack)
def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """``np.vstack``: device copies through ``np.concatenate`` (ops/joining.py)."""
    return np.concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


@implements(np.expand_dims)
def expand_dims(a: DeviceArray, axis: Any) -> DeviceArray:
    axes = normalize_axis_tuple(axis, a.ndim + len(axis if isinstance(axis, tuple) else (axis,)))
    shape, it = [], iter(a.shape)
    for d in range(a.ndim + len(axes)):
        shape.append(1 if d in axes else next(it))
    return a.reshape(tuple(shape))


@implements(np.outer)
def outer(a: Any, b: Any, out: Any = None) -> Any:
    return np.multiply(np.ravel(a)[:, None], np.ravel(b)[None, :], out=out)


@implements(np.tensordot)
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``np.tensordot``: transposes and reshapes (views, or device copies) around one matmul."""
    take_operands(operand(a), operand(b))
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
    take_operands(operand(a), operand(b))
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
        return host_function(np.tril, (m,), {"k": k})
    return np.where(_tri_mask(m, k, True), m, zeros((), m.dtype, device=m.device))


@implements(np.triu)
def triu(m: DeviceArray, k: int = 0) -> Any:
    if m.ndim < 2:
        return host_function(np.triu, (m,), {"k": k})
    return np.where(_tri_mask(m, k - 1, True), zeros((), m.dtype, device=m.device), m)


# (device, layout, ord) -> (one contiguous vector: no ravel, the 0-d result's maker) where
# ``np.linalg.norm(x, ord)`` (no axis or keepdims) of a float array runs NumPy's formula on the
# host mapping: a repeated call (a power iteration's step) skips the checks and the crossover
# lookup. PoCL power-iteration program (1024^2, 40 steps; interleaved runs): 0.746x -> 0.798x
# NumPy; inside that loop, after a 4 MiB product, every Python frame and dict the call touches
# costs several times its time in isolation.
_HOST_NORMS: PlanCache[tuple] = PlanCache("norm-host")
_find_host_norm = _HOST_NORMS.find
_sqrt = np.sqrt


@implements(np.linalg.norm)
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """``np.linalg.norm`` for 2-norms of vectors and Frobenius norms: sqrt(sum(x*x))."""
    if (axis is None and not keepdims and type(x) is DeviceArray
            and (plan := _find_host_norm((x.device, x.layout_key, ord)))):
        flat, make_out = plan  # written out here: a frame less inside a host-path loop
        out, view, host = make_out(x)
        view[()] = _sqrt(host.dot(host) if flat else _flat_dot(host))
        return out
    if (type(x) is not DeviceArray or ord not in (None, 2, "fro") or x.dtype.kind not in "biuf"
            or (ord == 2 and (axis is None and x.ndim != 1 or isinstance(axis, tuple)))
            or (ord == "fro" and axis is None and x.ndim != 2)):
        return host_function(np.linalg.norm, (x,), dict(ord=ord, axis=axis, keepdims=keepdims))
    if host_wins(x.device, "reduce", x.dtype, x.size):
        # unified memory, small work: NumPy's norm (one BLAS dot) on the mapping, not 3 ops
        if axis is None and not keepdims and x.dtype.kind == "f":
            # NumPy's formula (ravel, dot, sqrt) keeps the dtype: a 0-d result of x's
            _HOST_NORMS.get((x.device, x.layout_key, ord), lambda: (
                x.ndim == 1 and x.strides == (x.itemsize,),
                result_maker(x.device, x.itemsize, (), x.dtype, ())))
            return norm(x, ord)  # now by the plan
        result = np.linalg.norm(x.host_view(), ord=ord, axis=axis, keepdims=keepdims)
        if type(result) is not np.ndarray:  # a NumPy scalar: stored into a 0-d result
            out, view = host_result(x.device, result.itemsize, (), result.dtype, ())
            view[()] = result
            return out
        return adopt_host(result, x.device)  # NumPy's fresh float result, kept as it is
    fused = two_norm(x, axis, keepdims)  # float32/float64: one kernel
    if fused is not None:
        return fused
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    return np.sqrt(np.sum(np.multiply(x, x), axis=axis, keepdims=keepdims))


def _flat_dot(host: np.ndarray) -> Any:
    flat = host.ravel(order="K")
    return flat.dot(flat)


# -- creation ----------------------------------------------------------------------------------
_PLAIN = (int, float)  # Python numbers: the common call, checked without the ABCs


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None,
           device: Any = None) -> DeviceArray:
    """``np.arange`` on a device: NumPy's length, dtype and fill rule, computed by a kernel."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ZeroDivisionError("division by zero")
    device = get_device(device)
    dt = np.result_type(start, stop, step) if dtype is None else np.dtype(dtype)
    if has_host_path(device) and type(start) in _PLAIN and type(stop) in _PLAIN and type(
            step) in _PLAIN:
        # small ranges (``np.arange(k, like=x)`` in a loop): NumPy's answer, copied once
        length = (stop - start) / step
        if length <= 2 or host_wins(device, "elementwise", dt, length):
            return asarray(np.arange(start, stop, step, dtype=dtype), device=device)
    probe = np.arange(start, start + 2 * step, step, dtype=dt)  # NumPy's first two values
    if all(isinstance(v, numbers.Integral) for v in (start, stop, step)):
        n = len(range(start, stop, step))
    else:
        n = max(math.ceil((stop - start) / step), 0)
    if (not kernel_dtype(dt, device) or n <= 2
            or host_wins(device, "elementwise", dt, n)):  # a launch costs more
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


def _filled_like(fill_value, shape, dtype, order, device, like, numpy_function, args):
    """``numpy_function(..., like=x)`` for a device array ``x``: a filled array on ``device``
    (else ``x``'s); NumPy's answer copied there where the fill is an array or the order is
    not C or F."""
    device = like.device if device is None else get_device(device)
    if order not in ("C", "F") or (fill_value is not None and (
            type(fill_value) is DeviceArray or np.ndim(fill_value) != 0)):
        return asarray(numpy_function(*args, order=order), device=device)
    if fill_value is None:
        return empty(shape, np.float64 if dtype is None else dtype, device, order)
    return full(shape, fill_value, dtype, device, order)


@implements(np.zeros)
def _zeros_like(shape, dtype=None, order="C", *, device=None, like=None):
    return _filled_like(0, shape, np.float64 if dtype is None else dtype, order, device, like,
                        np.zeros, (shape, dtype))


@implements(np.ones)
def _ones_like(shape, dtype=None, order="C", *, device=None, like=None):
    return _filled_like(1, shape, np.float64 if dtype is None else dtype, order, device, like,
                        np.ones, (shape, dtype))


@implements(np.empty)
def _empty_like(shape, dtype=None, order="C", *, device=None, like=None):
    return _filled_like(None, shape, dtype, order, device, like, np.empty, (shape, dtype))


@implements(np.full)
def _full_like(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    if fill_value is None:  # an object array: NumPy's own
        return host_function(np.full, (shape, fill_value, dtype), {"order": order})
    return _filled_like(fill_value, shape, dtype, order, device, like, np.full,
                        (shape, fill_value, dtype))


@implements(np.identity)
def _identity_like(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype, device=like.device)


_dispatch.LIKE_FUNCTIONS.update((np.arange, np.eye, np.zeros, np.ones, np.empty, np.full,
                                 np.identity))


@implements(np.linspace)
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):
    if (np.ndim(start) or np.ndim(stop) or axis != 0 or type(start) is DeviceArray
            or type(stop) is DeviceArray):
        return host_function(np.linspace, (start, stop, num),
                              dict(endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis))
    return linspace(start, stop, num, endpoint, retstep, dtype, axis)
