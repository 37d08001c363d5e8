"""NumPy functions that NumPy itself writes as a few ufuncs, reductions and views, written the
same way over device arrays so that they stay on the device with NumPy's results: ``round``
(``around``), ``nan_to_num``, ``isclose``, ``allclose``, ``array_equal``, ``isposinf``,
``isneginf``, ``count_nonzero``, ``ptp``, ``diff``, ``roll``, ``flip`` (``fliplr``, ``flipud``),
``copyto``, ``repeat`` and ``tile`` (broadcast views copied once), ``vdot``, ``average``
(real weights too), ``nansum``, ``nanmean``, ``nonzero``/``flatnonzero``/``argwhere`` (a
compaction of an index sequence), ``meshgrid``, ``cross`` (3-vectors), and the ``split`` family
(NumPy's own code, whose slices are device views). Each follows NumPy's own code (the same
operations in the same order, so the same bits and the same errors); arguments outside what it
covers go to NumPy on host views (counted by ``on_host_calls``).
"""
from __future__ import annotations

import builtins
import numbers
import warnings
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .._dispatch import FUNCTIONS, implements
from ..array import DeviceArray, asarray, full, host_function
from ..memo import Memo
from .arrayfuncs import arange

__all__ = ["round_", "nan_to_num", "isclose", "allclose", "array_equal", "count_nonzero", "ptp",
           "diff", "roll", "flip", "copyto", "repeat", "tile", "vdot", "average", "nansum",
           "nanmean", "flatnonzero", "nonzero", "argwhere", "meshgrid", "cross"]

_NO = np._NoValue


def _real(x: Any) -> bool:
    return type(x) is DeviceArray and x.dtype.kind in "biuf"


def _power_of_ten(n: int) -> float:
    """10.0**n as NumPy's ``np.round`` forms it (a table to 1e8, then products by ten)."""
    if n < 9:
        return (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)[n]
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
    return ret


@implements(np.round, np.around)
def round_(a: Any, decimals: int = 0, out: Any = None) -> Any:
    """``np.round`` (``np.around``, ``x.round``) of a real device array, as NumPy computes it:
    a result like ``a`` (or ``out``) takes ``a * 10**decimals``, its ``rint`` and the division
    back (divide, then multiply, for negative decimals), each a device ufunc: NumPy's bits and
    errors. Integers with ``decimals >= 0`` are copied. Complex data, integers to negative
    decimals and host ``out=`` arrays go to NumPy on host views."""
    if (type(a) is not DeviceArray or a.dtype.kind not in "biuf"
            or not isinstance(decimals, numbers.Integral)
            or (out is not None and type(out) is not DeviceArray)
            or (a.dtype.kind in "iu" and decimals < 0)):
        return host_function(np.round, (a,), {"decimals": decimals, "out": out})
    decimals = int(decimals)
    if a.dtype.kind in "iu":
        if out is None:
            return a.copy()
        out[...] = a
        return out
    result = np.empty_like(a) if out is None else out
    scale = _power_of_ten(abs(decimals))
    first, back = (np.multiply, np.true_divide) if decimals >= 0 else (np.true_divide,
                                                                        np.multiply)
    first(a, scale, out=result)
    np.rint(result, out=result)
    back(result, scale, out=result)
    return result


@implements(np.nan_to_num)
def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """``np.nan_to_num`` of a real floating device array on the device: NaN to ``nan``, +inf and
    -inf to ``posinf``/``neginf`` (the dtype's largest finite magnitudes by default), each
    value cast to the dtype as NumPy's ``copyto`` casts it; into ``x`` itself with
    ``copy=False``. Other dtypes (integers are returned as they are by NumPy, complex splits its
    parts) go to NumPy."""
    if type(x) is not DeviceArray or x.dtype.kind != "f":
        return host_function(np.nan_to_num, (x,), dict(copy=copy, nan=nan, posinf=posinf,
                                                        neginf=neginf))
    info = np.finfo(x.dtype)
    with np.errstate(over="ignore"):   # (a value beyond the dtype becomes inf, as NumPy's)
        values = [np.asarray(v, x.dtype)[()] for v in (
            nan, info.max if posinf is None else posinf, info.min if neginf is None else neginf)]
    result = np.where(np.isnan(x), values[0], np.where(
        x == np.inf, values[1], np.where(x == -np.inf, values[2], x)))
    if copy:
        return result
    x[...] = result
    return x


def _signed_inf(func: Any, sign: float):
    """``np.isposinf`` / ``np.isneginf`` of a real device array: ``x == +-inf`` (NumPy's
    ``isinf(x) & (signbit(x) == negative)``: the same answer for every value)."""
    def impl(x: Any, out: Any = None) -> Any:
        if not _real(x) or (out is not None and type(out) is not DeviceArray):
            return host_function(func, (x,), {"out": out})
        # (no integer is infinite: x != x is all False)
        args = (x, x) if x.dtype.kind != "f" else (x, sign * np.inf)
        compare = np.not_equal if x.dtype.kind != "f" else np.equal
        return compare(*args) if out is None else compare(*args, out=out)
    return impl


implements(np.isposinf)(_signed_inf(np.isposinf, 1.0))
implements(np.isneginf)(_signed_inf(np.isneginf, -1.0))


@implements(np.isclose)
def isclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8, equal_nan: bool = False) -> Any:
    """``np.isclose`` with a device array among ``a``, ``b`` (the others scalars or device
    arrays): NumPy's expression ``|a - b| <= atol + rtol * |b|`` where ``b`` is finite, or
    ``a == b``, with ``b`` first made floating, on the device."""
    operands = (a, b)
    if (not any(type(v) is DeviceArray for v in operands)
            or not all(_real(v) or isinstance(v, (int, float)) for v in operands)
            or not all(isinstance(v, (int, float)) for v in (rtol, atol))
            or not (np.isfinite(rtol) and np.isfinite(atol))):
        return host_function(np.isclose, (a, b), dict(rtol=rtol, atol=atol, equal_nan=equal_nan))
    x, y = a, b
    if type(y) is DeviceArray:
        dt = np.result_type(y.dtype, 1.)
        if dt != y.dtype:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    with np.errstate(invalid="ignore"):
        result = (np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y)
                  | (x == y))
        if equal_nan:
            result |= np.isnan(x) & np.isnan(y)
    return result


@implements(np.allclose)
def allclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8,
             equal_nan: bool = False) -> bool:
    """``np.allclose``: ``bool(np.all(np.isclose(...)))`` (one scalar read from the device)."""
    return builtins.bool(np.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


@implements(np.array_equal)
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """``np.array_equal`` of device arrays: equal shapes and every element equal (NaN equal to
    NaN with ``equal_nan``), one scalar read from the device."""
    if not (_real(a1) and _real(a2)):
        return host_function(np.array_equal, (a1, a2), {"equal_nan": equal_nan})
    if a1.shape != a2.shape:
        return False
    if not equal_nan or not (a1.dtype.kind == "f" or a2.dtype.kind == "f"):
        return builtins.bool(np.all(a1 == a2))
    nan1, nan2 = np.isnan(a1), np.isnan(a2)
    if not builtins.bool(np.all(nan1 == nan2)):
        return False
    return builtins.bool(np.all((a1 == a2) | nan1))


@implements(np.count_nonzero)
def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """``np.count_nonzero``: a sum of ``a != 0`` as ``intp`` (NumPy's dtype; a whole-array count
    is a 0-d device array, as the reductions give, where NumPy gives an ``intp`` scalar)."""
    if not _real(a):
        return host_function(np.count_nonzero, (a,), {"axis": axis, "keepdims": keepdims})
    return np.sum(a != 0, axis=axis, dtype=np.intp, keepdims=keepdims)


@implements(np.ptp)
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NO) -> Any:
    """``np.ptp``: ``max - min`` along ``axis`` (NumPy's ``subtract(maximum.reduce,
    minimum.reduce)``)."""
    if not _real(a) or (out is not None and type(out) is not DeviceArray):
        kwargs = {"axis": axis, "out": out}
        if keepdims is not _NO:
            kwargs["keepdims"] = keepdims
        return host_function(np.ptp, (a,), kwargs)
    kwargs = {} if keepdims is _NO else {"keepdims": keepdims}
    high, low = np.max(a, axis=axis, **kwargs), np.min(a, axis=axis, **kwargs)
    return np.subtract(high, low, out=out) if out is not None else np.subtract(high, low)


@implements(np.diff)
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = _NO, append: Any = _NO) -> Any:
    """``np.diff`` without ``prepend``/``append``: ``n`` times ``a[1:] - a[:-1]`` along
    ``axis`` (``!=`` for bool, as NumPy's), each a device ufunc on two views."""
    if (not _real(a) or prepend is not _NO or append is not _NO
            or not isinstance(n, numbers.Integral) or a.ndim == 0):
        kwargs = {"n": n, "axis": axis}
        if prepend is not _NO:
            kwargs["prepend"] = prepend
        if append is not _NO:
            kwargs["append"] = append
        return host_function(np.diff, (a,), kwargs)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    axis = normalize_axis_index(axis, a.ndim)
    upper = tuple(slice(1, None) if d == axis else slice(None) for d in range(a.ndim))
    lower = tuple(slice(None, -1) if d == axis else slice(None) for d in range(a.ndim))
    op = np.not_equal if a.dtype == np.bool_ else np.subtract
    for _ in range(int(n)):
        a = op(a[upper], a[lower])
    return a


@implements(np.roll)
def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """``np.roll``: for each axis the two slices that wrap around, copied into a fresh array on
    the device, complex numbers too (``axis=None``: the flattened array, reshaped back)."""
    if type(a) is not DeviceArray or a.dtype.kind not in "biufc" or \
            not all(isinstance(s, numbers.Integral) for s in np.ravel(shift)):
        return host_function(np.roll, (a, shift), {"axis": axis})
    if axis is None:
        return roll(a.ravel(), shift, 0).reshape(a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    shifts = np.broadcast_to(np.asarray(shift), (len(axes),)) if np.ndim(shift) == 0 else (
        np.asarray(shift))
    if shifts.ndim != 1 or (len(axes) > 1 and len(shifts) != len(axes) and len(shifts) != 1):
        return host_function(np.roll, (a, shift), {"axis": axis})
    if len(axes) == 1 and len(shifts) > 1:   # several shifts of one axis: NumPy broadcasts
        axes = axes * len(shifts)
    total = {ax: 0 for ax in range(a.ndim)}
    for ax, sh in zip(axes, np.broadcast_to(shifts, (len(axes),))):
        total[ax] += int(sh)
    result = a
    for ax, sh in total.items():
        n = a.shape[ax]
        if not n or sh % n == 0:
            continue
        sh %= n
        rolled = np.empty_like(result)
        lead = (slice(None),) * ax
        rolled[lead + (slice(sh, None),)] = result[lead + (slice(None, n - sh),)]
        rolled[lead + (slice(None, sh),)] = result[lead + (slice(n - sh, None),)]
        result = rolled
    return result if result is not a else a.copy()


def _flipped(func: Any):
    """``np.flip``/``fliplr``/``flipud`` of a device array: a view with the axes' strides negated
    (no copy, as NumPy's)."""
    def impl(m: Any, *args: Any, **kwargs: Any) -> Any:
        if type(m) is not DeviceArray:
            return host_function(func, (m, *args), kwargs)
        return m.geometry_view(lambda t: func(t, *args, **kwargs))
    impl.__doc__ = _flipped.__doc__
    return impl


for _flip in (np.flip, np.fliplr, np.flipud):
    implements(_flip)(_flipped(_flip))
flip = FUNCTIONS[np.flip]


@implements(np.copyto)
def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """``np.copyto`` of a device array into a device array without a ``where`` mask: NumPy's
    casting check, then a device copy of ``src`` broadcast to ``dst``."""
    if type(dst) is not DeviceArray or where is not True or not _real(src) or (
            dst.dtype.kind not in "biuf"):
        return host_function(np.copyto, (dst, src), {"casting": casting, "where": where})
    if not np.can_cast(src.dtype, dst.dtype, casting=casting):
        raise TypeError(f"Cannot cast array data from {src.dtype!r} to {dst.dtype!r} "
                        f"according to the rule {casting!r}")
    dst[...] = src
    return None


def _numpy_code(func: Any):
    """``func`` run as NumPy's own Python code on a device array (``func._implementation``:
    its slicing and ``swapaxes`` calls are device views), other inputs by NumPy on the host."""
    def impl(ary: Any, *args: Any, **kwargs: Any) -> Any:
        if type(ary) is not DeviceArray:
            return host_function(func, (ary, *args), kwargs)
        return func._implementation(ary, *args, **kwargs)
    impl.__doc__ = f"``np.{func.__name__}`` of a device array: views, as NumPy's own code makes."
    return impl


for _split in (np.array_split, np.split, np.hsplit, np.vsplit, np.dsplit):
    implements(_split)(_numpy_code(_split))


@implements(np.repeat)
def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """``np.repeat`` with one repeat count: each element broadcast ``repeats`` times along a new
    axis after ``axis`` and the two axes merged (one device copy). Per-element counts go to
    NumPy on the host."""
    if not _real(a) or not isinstance(repeats, numbers.Integral):
        return host_function(np.repeat, (a, repeats), {"axis": axis})
    if repeats < 0:
        raise ValueError("repeats may not contain negative values.")
    if axis is None:
        a, axis = a.ravel(), 0
    axis = normalize_axis_index(axis, a.ndim)
    grown = np.expand_dims(a, axis + 1)
    shape = a.shape[:axis + 1] + (int(repeats),) + a.shape[axis + 1:]
    merged = a.shape[:axis] + (a.shape[axis] * int(repeats),) + a.shape[axis + 1:]
    return np.broadcast_to(grown, shape).reshape(merged)


@implements(np.tile)
def tile(A: Any, reps: Any) -> Any:
    """``np.tile``: ``A`` (its dimensions padded in front to ``len(reps)``) broadcast along a new
    axis before each of its axes, and each pair merged (one device copy)."""
    if not _real(A):
        return host_function(np.tile, (A, reps), {})
    try:
        tup = tuple(int(r) for r in reps)
    except TypeError:
        tup = (int(reps),)
    if any(r < 0 for r in tup):
        return host_function(np.tile, (A, reps), {})   # (NumPy's own error)
    d = max(len(tup), A.ndim)
    c = A.reshape((1,) * (d - A.ndim) + A.shape)
    tup = (1,) * (d - len(tup)) + tup
    grown = c.reshape(tuple(x for n in c.shape for x in (1, n)))
    shape = tuple(x for r, n in zip(tup, c.shape) for x in (r, n))
    return np.broadcast_to(grown, shape).reshape(tuple(r * n for r, n in zip(tup, c.shape)))


@implements(np.vdot)
def vdot(a: Any, b: Any) -> Any:
    """``np.vdot`` of real device arrays of one size: the dot product of the flattened arrays."""
    if not (_real(a) and _real(b)) or a.size != b.size:
        return host_function(np.vdot, (a, b), {})
    return np.dot(a.ravel(), b.ravel())


@implements(np.average)
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: Any = _NO) -> Any:
    """``np.average``: ``np.mean`` without weights (with ``returned``, the count as NumPy gives
    it, broadcast to the result); with real weights NumPy's steps: their sum ``scl`` (its
    ZeroDivisionError for a zero), the weighted values' sum over ``scl``."""
    kwargs = {"axis": axis, "weights": weights, "returned": returned}
    if keepdims is not _NO:
        kwargs["keepdims"] = keepdims
    if not _real(a) or (weights is not None and not (
            _real(weights) or (type(weights) is not DeviceArray
                               and np.asarray(weights).dtype.kind in "biuf"))):
        return host_function(np.average, (a,), kwargs)
    keep = {} if keepdims is _NO else {"keepdims": keepdims}
    if weights is None:
        avg = np.mean(a, axis=axis, **keep)
        if not returned:
            return avg
        count = a.size // max(avg.size, 1) if a.size else 0
        return avg, full(avg.shape, count, dtype=avg.dtype, device=avg.device)
    if axis is not None:
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
    wgt = weights if type(weights) is DeviceArray else asarray(np.asarray(weights),
                                                               device=a.device)
    if a.shape != wgt.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if wgt.shape != tuple(a.shape[ax] for ax in axis):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        wgt = np.transpose(wgt, np.argsort(axis)).reshape(
            tuple((n if ax in axis else 1) for ax, n in enumerate(a.shape)))
    if a.dtype.kind in "biu":
        result_dtype = np.result_type(a.dtype, wgt.dtype, "f8")
    else:
        result_dtype = np.result_type(a.dtype, wgt.dtype)
    scl = np.sum(wgt, axis=axis, dtype=result_dtype, **keep)
    if bool(np.any(scl == 0.0)):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = np.sum(np.multiply(a, wgt, dtype=result_dtype), axis=axis, **keep) / scl
    if not returned:
        return avg
    if scl.shape != avg.shape:
        scl = np.broadcast_to(scl, avg.shape).copy()
    return avg, scl


def _nan_kwargs(axis: Any, dtype: Any, out: Any, keepdims: Any, extra: dict) -> dict:
    kwargs = {"axis": axis, "dtype": dtype, "out": out, **extra}
    if keepdims is not _NO:
        kwargs["keepdims"] = keepdims
    return kwargs


@implements(np.nansum)
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = _NO,
           initial: Any = _NO, where: Any = _NO) -> Any:
    """``np.nansum`` as NumPy writes it: NaN replaced by 0, then ``np.sum`` (on the device)."""
    extra = {k: v for k, v in (("initial", initial), ("where", where)) if v is not _NO}
    kwargs = _nan_kwargs(axis, dtype, out, keepdims, extra)
    if not _real(a) or extra or (out is not None and type(out) is not DeviceArray):
        return host_function(np.nansum, (a,), kwargs)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), 0, a)
    return np.sum(a, **kwargs)


@implements(np.nanmean)
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = _NO,
            *, where: Any = _NO) -> Any:
    """``np.nanmean`` as NumPy writes it (without ``out``/``where``): the sum of the values with
    NaN replaced by 0 divided by the count of the others (NumPy's unsafe in-place division),
    NumPy's "Mean of empty slice" warning where a count is 0."""
    kwargs = _nan_kwargs(axis, dtype, out, keepdims, {} if where is _NO else {"where": where})
    if (not _real(a) or out is not None or where is not _NO
            or (dtype is not None and not np.issubdtype(dtype, np.inexact))):
        return host_function(np.nanmean, (a,), kwargs)
    if a.dtype.kind != "f":
        return np.mean(a, **kwargs)
    mask = np.isnan(a)
    keep = {} if keepdims is _NO else {"keepdims": keepdims}
    cnt = np.sum(~mask, axis=axis, dtype=np.intp, **keep)
    tot = np.sum(np.where(mask, 0, a), axis=axis, dtype=dtype, **keep)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = np.divide(tot, cnt, out=tot, casting="unsafe")
    if builtins.bool(np.any(cnt == 0)):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    return avg


@implements(np.flatnonzero)
def flatnonzero(a: Any) -> Any:
    """``np.flatnonzero``: the flat indices (``intp``) of the nonzero elements, a boolean-mask
    compaction of an index sequence on the device."""
    if not _real(a):
        return host_function(np.flatnonzero, (a,), {})
    flat = a.ravel()
    return arange(flat.size, dtype=np.intp, device=a.device)[flat != 0]


@implements(np.nonzero)
def nonzero(a: Any) -> Any:
    """``np.nonzero`` (and ``np.where(a)``): the flat indices of the nonzero elements, then one
    index array per dimension (quotients and remainders by the extents), on the device."""
    if not _real(a) or a.ndim == 0:
        return host_function(np.nonzero, (a,), {})
    flat = flatnonzero(a)
    if a.size == 0:
        return tuple(flat.copy() for _ in a.shape)
    indices, inner = [], a.size
    for d, n in enumerate(a.shape):
        inner //= n   # elements per step along dimension d
        q = flat // inner if inner != 1 else flat
        indices.append(q % n if d else q)
    return tuple(indices)


@implements(np.argwhere)
def argwhere(a: Any) -> Any:
    """``np.argwhere``: ``np.nonzero``'s index arrays as the columns of one ``(N, ndim)`` array
    (the transposed view NumPy returns)."""
    if not _real(a) or a.ndim == 0:
        return host_function(np.argwhere, (a,), {})
    return np.stack(nonzero(a)).T


@implements(np.meshgrid)
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> Any:
    """``np.meshgrid`` of device arrays as NumPy writes it: each input reshaped to its own axis
    (the first two swapped for ``indexing="xy"``), broadcast together unless ``sparse``, copied
    (on the device) with ``copy``."""
    if not xi or not all(_real(x) for x in xi):
        return host_function(np.meshgrid, xi, dict(copy=copy, sparse=sparse, indexing=indexing))
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    s0 = (1,) * ndim
    output = [x.reshape(s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:   # the first and second axes switched
        output[0] = output[0].reshape((1, -1) + s0[2:])
        output[1] = output[1].reshape((-1, 1) + s0[2:])
    if not sparse:
        output = np.broadcast_arrays(*output)
    if copy:
        output = [x.copy() for x in output]
    # list or tuple as the installed NumPy returns them (the choice changed between releases)
    container = _MESHGRID_CONTAINERS.get((sparse, copy), lambda: type(
        np.meshgrid(np.zeros(1), np.zeros(1), sparse=sparse, copy=copy)))
    return container(output)


_MESHGRID_CONTAINERS: Memo[type] = Memo("meshgrid result type by (sparse, copy)", capacity=None)


@implements(np.cross)
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Any = None) -> Any:
    """``np.cross`` of two device arrays of 3-vectors along their last axes: NumPy's products
    and differences (``a1*b2 - a2*b1``, ...), each a device ufunc, stacked as the last axis."""
    if (not (_real(a) and _real(b)) or axis is not None or (axisa, axisb, axisc) != (-1, -1, -1)
            or a.ndim == 0 or b.ndim == 0 or a.shape[-1] != 3 or b.shape[-1] != 3
            or a.dtype == np.bool_ or b.dtype == np.bool_):
        return host_function(np.cross, (a, b), dict(axisa=axisa, axisb=axisb, axisc=axisc,
                                                    axis=axis))
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
