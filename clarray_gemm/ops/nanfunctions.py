"""NumPy's NaN-skipping functions written as NumPy writes them, over device operations: NaN
replaced by the operation's neutral value (``np.where``), then the plain reduction or scan on
the device: ``nanmin``/``nanmax`` (NaN for an all-NaN slice, NumPy's warning),
``nanargmin``/``nanargmax`` (NumPy's ValueError for an all-NaN slice), ``nanprod``,
``nancumsum``, ``nancumprod``, ``nanvar`` and ``nanstd`` (NumPy's steps: the count, the mean,
the squared deviations, the sum over the degrees of freedom). Integer data runs the plain
function, as NumPy's does. ``out=``, ``where=``, ``initial=``, ``mean=``/``correction=`` and
complex data go to NumPy on host views (counted). (``nansum`` and ``nanmean``:
``ops/composed.py``.)"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, host_function

__all__ = ["nanmin", "nanmax", "nanargmin", "nanargmax", "nanprod", "nancumsum", "nancumprod",
           "nanvar", "nanstd"]

_NO = np._NoValue


def _plain(a: Any, extra: dict) -> bool:
    """Whether the device version applies: a real device array, no out/where/initial."""
    return (type(a) is DeviceArray and a.dtype.kind in "biuf"
            and all(v is _NO or v is None for v in extra.values()))


def _kwargs(**kw: Any) -> dict:
    return {k: v for k, v in kw.items() if v is not _NO}


def _replaced(a: DeviceArray, value: float) -> tuple[DeviceArray, Any]:
    """NumPy's ``_replace_nan``: ``a`` with NaN made ``value`` and the NaN mask (None for
    integers)."""
    if a.dtype.kind != "f":
        return a, None
    mask = np.isnan(a)
    filled = np.where(mask, value, a)
    return (filled if filled.dtype == a.dtype else filled.astype(a.dtype)), mask


def _extreme(func: Any, reduce: Any, fill: float, a: Any, axis: Any, out: Any, keepdims: Any,
             initial: Any, where: Any) -> Any:
    kwargs = _kwargs(axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
    if not _plain(a, {"out": out, "initial": initial, "where": where}):
        return host_function(func, (a,), kwargs)
    keep = _kwargs(keepdims=keepdims)
    if a.dtype.kind != "f":
        return reduce(a, axis=axis, **keep)
    filled, mask = _replaced(a, fill)
    result = reduce(filled, axis=axis, **keep)
    empty = np.all(mask, axis=axis, **keep)
    if bool(np.any(empty)):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        result = np.where(empty, np.nan, result).astype(a.dtype)
    return result


@implements(np.nanmin)
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NO, initial: Any = _NO,
           where: Any = _NO) -> Any:
    """``np.nanmin``: the minimum of the values that are not NaN (NaN and NumPy's warning for an
    all-NaN slice)."""
    return _extreme(np.nanmin, np.min, np.inf, a, axis, out, keepdims, initial, where)


@implements(np.nanmax)
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NO, initial: Any = _NO,
           where: Any = _NO) -> Any:
    """``np.nanmax``: the maximum of the values that are not NaN (NaN and NumPy's warning for an
    all-NaN slice)."""
    return _extreme(np.nanmax, np.max, -np.inf, a, axis, out, keepdims, initial, where)


def _arg_extreme(func: Any, arg: Any, fill: float, a: Any, axis: Any, out: Any,
                 keepdims: Any) -> Any:
    kwargs = _kwargs(axis=axis, out=out, keepdims=keepdims)
    if not _plain(a, {"out": out}):
        return host_function(func, (a,), kwargs)
    filled, mask = _replaced(a, fill)
    if mask is not None and mask.size and bool(np.any(np.all(mask, axis=axis))):
        raise ValueError("All-NaN slice encountered")
    return arg(filled, axis=axis, **_kwargs(keepdims=keepdims))


@implements(np.nanargmin)
def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = _NO) -> Any:
    """``np.nanargmin``: where the minimum of the values that are not NaN is (NumPy's
    ValueError for an all-NaN slice)."""
    return _arg_extreme(np.nanargmin, np.argmin, np.inf, a, axis, out, keepdims)


@implements(np.nanargmax)
def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = _NO) -> Any:
    """``np.nanargmax``: where the maximum of the values that are not NaN is (NumPy's
    ValueError for an all-NaN slice)."""
    return _arg_extreme(np.nanargmax, np.argmax, -np.inf, a, axis, out, keepdims)


@implements(np.nanprod)
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = _NO,
            initial: Any = _NO, where: Any = _NO) -> Any:
    """``np.nanprod``: NaN counted as 1, then ``np.prod``."""
    kwargs = _kwargs(axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial,
                     where=where)
    if not _plain(a, {"out": out, "initial": initial, "where": where}) or a.dtype == np.float16:
        return host_function(np.nanprod, (a,), kwargs)
    return np.prod(_replaced(a, 1)[0], axis=axis, dtype=dtype, **_kwargs(keepdims=keepdims))


def _scan(func: Any, scan: Any, fill: float, a: Any, axis: Any, dtype: Any, out: Any) -> Any:
    if not _plain(a, {"out": out}) or a.dtype == np.float16:
        return host_function(func, (a,), {"axis": axis, "dtype": dtype, "out": out})
    return scan(_replaced(a, fill)[0], axis=axis, dtype=dtype)


@implements(np.nancumsum)
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.nancumsum``: NaN counted as 0, then ``np.cumsum``."""
    return _scan(np.nancumsum, np.cumsum, 0, a, axis, dtype, out)


@implements(np.nancumprod)
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.nancumprod``: NaN counted as 1, then ``np.cumprod``."""
    return _scan(np.nancumprod, np.cumprod, 1, a, axis, dtype, out)


def _by_count(total: DeviceArray, count: DeviceArray) -> DeviceArray:
    """NumPy's ``_divide_by_count``: the quotient cast back to the total's dtype."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.divide(total, count).astype(total.dtype)


def _nanvar(func: Any, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: Any,
            where: Any, mean: Any, correction: Any, root: bool) -> Any:
    kwargs = _kwargs(axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                     where=where, mean=mean, correction=correction)
    if (not _plain(a, {"out": out, "where": where, "mean": mean, "correction": correction})
            or a.dtype == np.float16):
        return host_function(func, (a,), kwargs)
    keep = _kwargs(keepdims=keepdims)
    if a.dtype.kind != "f":
        plain = np.std if root else np.var
        return plain(a, axis=axis, dtype=dtype, ddof=ddof, **keep)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    arr, mask = _replaced(a, 0)
    cnt = np.sum(~mask, axis=axis, dtype=np.intp, keepdims=True)
    avg = _by_count(np.sum(arr, axis=axis, dtype=dtype, keepdims=True), cnt)
    arr = np.subtract(arr, avg).astype(arr.dtype)   # (NumPy: in place, unsafe casting)
    arr = np.where(mask, 0, arr).astype(arr.dtype)
    var = np.sum(arr * arr, axis=axis, dtype=dtype, **keep)
    if var.ndim < cnt.ndim:
        cnt = cnt.squeeze(axis)
    dof = cnt - ddof
    var = _by_count(var, dof)
    bad = dof <= 0
    if bool(np.any(bad)):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=3)
        var = np.where(bad, np.nan, var).astype(var.dtype)
    return np.sqrt(var) if root else var


@implements(np.nanvar)
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: Any = _NO, *, where: Any = _NO, mean: Any = _NO,
           correction: Any = _NO) -> Any:
    """``np.nanvar`` as NumPy computes it over the values that are not NaN."""
    return _nanvar(np.nanvar, a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                   root=False)


@implements(np.nanstd)
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: Any = _NO, *, where: Any = _NO, mean: Any = _NO,
           correction: Any = _NO) -> Any:
    """``np.nanstd``: the square root of :func:`nanvar`'s result."""
    return _nanvar(np.nanstd, a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                   root=True)
