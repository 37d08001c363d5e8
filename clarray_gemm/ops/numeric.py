"""NumPy's numeric helpers written over device operations, so that they stay on the device:
``kron`` (one broadcast multiply, as NumPy's), ``trapezoid`` (NumPy's own formula), ``interp``
(a search of ``xp`` and NumPy's interpolation, in float64 as NumPy computes it), ``digitize``
(a search of the bins), ``polyval`` (Horner's steps, as NumPy's), ``cov`` and
``corrcoef`` (NumPy's steps: mean, centring, one matrix product). Arguments outside what each
covers (complex data, weights of ``cov``, ``period`` of ``interp``) go to NumPy on host views,
counted by ``on_host_calls``.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, asarray, host_function

__all__ = ["kron", "trapezoid", "interp", "digitize", "polyval", "cov", "corrcoef"]


def _real(x: Any) -> bool:
    return type(x) is DeviceArray and x.dtype.kind in "biuf"


def _real_data(x: Any) -> bool:
    """Whether ``x`` (a device array or anything NumPy takes) holds real numbers."""
    kind = x.dtype.kind if type(x) is DeviceArray else np.asarray(x).dtype.kind
    return kind in "biuf"


def _device_of(*xs: Any):
    return next(x.device for x in xs if type(x) is DeviceArray)


@implements(np.kron)
def kron(a: Any, b: Any) -> Any:
    """``np.kron``: ``a`` and ``b`` on interleaved axes (ones where the other has extent),
    multiplied once as NumPy does, the axis pairs merged."""
    if not (_real(a) or _real(b)) or not all(_real_data(v) for v in (a, b)):
        return host_function(np.kron, (a, b), {})
    device = _device_of(a, b)
    a, b = asarray(a, device=device), asarray(b, device=device)
    nd = max(a.ndim, b.ndim)
    if a.ndim == 0 or b.ndim == 0:
        return np.multiply(a, b)
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b = b.reshape((1,) * (nd - b.ndim) + b.shape)
    a_wide = a.reshape(tuple(x for n in a.shape for x in (n, 1)))
    b_wide = b.reshape(tuple(x for n in b.shape for x in (1, n)))
    product = np.multiply(a_wide, b_wide)
    return product.reshape(tuple(m * n for m, n in zip(a.shape, b.shape)))


@implements(np.trapezoid)
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """``np.trapezoid`` as NumPy writes it: ``(d * (y[1:] + y[:-1]) / 2.0).sum(axis)``."""
    kwargs = {"x": x, "dx": dx, "axis": axis}
    if not _real(y) or (x is not None and not _real_data(x)):
        return host_function(np.trapezoid, (y,), kwargs)
    if x is None:
        d = dx
    else:
        x = asarray(x, device=y.device)
        if x.ndim == 1:
            d = np.diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = np.diff(x, axis=axis)
    slice1 = [slice(None)] * y.ndim
    slice2 = [slice(None)] * y.ndim
    slice1[axis] = slice(1, None)
    slice2[axis] = slice(None, -1)
    return (d * (y[tuple(slice1)] + y[tuple(slice2)]) / 2.0).sum(axis)


@implements(np.interp)
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """``np.interp`` of real data: the interval of each ``x`` in ``xp`` by a device search, then
    NumPy's interpolation in float64 (``fp`` at an exact knot, the slope form elsewhere, the
    other end's form where that gives NaN; ``left``/``right`` outside)."""
    kwargs = {"left": left, "right": right, "period": period}
    args = (x, xp, fp)
    if period is not None or not any(type(v) is DeviceArray for v in args):
        return host_function(np.interp, args, kwargs)
    device = _device_of(*args)
    if not all(_real_data(v) for v in args) or not device.info.fp64:
        return host_function(np.interp, args, kwargs)
    xp = asarray(xp, device=device).astype(np.float64)
    fp = asarray(fp, device=device).astype(np.float64)
    for v in (xp, fp):   # NumPy's messages
        if v.ndim != 1:
            raise ValueError("object too deep for desired array" if v.ndim > 1 else
                             "object of too small depth for desired array")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    x = asarray(x, device=device).astype(np.float64)
    scalar = x.ndim == 0
    if scalar:   # one value: NumPy's float64 scalar back (the gathers take index arrays)
        x = x.reshape(1)
    n = xp.shape[0]
    lval = fp[0] if left is None else float(left)
    rval = fp[n - 1] if right is None else float(right)
    if n == 1:
        inside = np.where(x < xp[0], lval, np.where(x > xp[0], rval, fp[0]))
        return inside[0] if scalar else inside
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    x0, x1, y0, y1 = xp[j], xp[j + 1], fp[j], fp[j + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (y1 - y0) / (x1 - x0)
        res = slope * (x - x0) + y0
        other = slope * (x - x1) + y1
    res = np.where(np.isnan(res), np.where(np.isnan(other) & (y0 == y1), y0, other), res)
    res = np.where(x == x0, y0, res)
    res = np.where(x == xp[n - 1], fp[n - 1], res)
    res = np.where(x < xp[0], lval, np.where(x > xp[n - 1], rval, res))
    res = np.where(np.isnan(x), x, res)
    return res[0] if scalar else res


@implements(np.digitize)
def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """``np.digitize`` as NumPy writes it: the bins' monotonicity checked (on the host: bins
    are few), then a device ``searchsorted`` of ``x`` in them (reversed when decreasing)."""
    kwargs = {"right": right}
    if type(x) is not DeviceArray or x.dtype.kind not in "biuf":
        return host_function(np.digitize, (x, bins), kwargs)   # NumPy's errors too
    edges = bins.__array__() if type(bins) is DeviceArray else np.asarray(bins)
    if edges.dtype.kind not in "biuf" or edges.ndim != 1 or (
            edges.dtype.kind == "f" and bool(np.isnan(edges).any())):
        return host_function(np.digitize, (x, bins), kwargs)   # NumPy's own NaN-bins rule
    increasing = edges.size < 2 or bool(np.all(edges[1:] >= edges[:-1]))
    decreasing = edges.size >= 2 and bool(np.all(edges[1:] <= edges[:-1]))
    if not (increasing or decreasing):
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if increasing:
        return np.searchsorted(asarray(edges, device=x.device), x, side=side)
    return edges.size - np.searchsorted(asarray(edges[::-1].copy(), device=x.device), x,
                                        side=side)


@implements(np.polyval)
def polyval(p: Any, x: Any) -> Any:
    """``np.polyval`` at device points as NumPy writes it: ``y = y * x + c`` for each
    coefficient ``c`` (read to the host: NumPy's scalars, NumPy's promotions), from zeros."""
    if type(x) is not DeviceArray or x.dtype.kind not in "biuf" or isinstance(p, np.poly1d):
        return host_function(np.polyval, (p, x), {})
    coeffs = p.__array__() if type(p) is DeviceArray else np.asarray(p)
    if coeffs.ndim != 1 or coeffs.dtype.kind not in "biuf":
        return host_function(np.polyval, (p, x), {})
    y = np.zeros_like(x)
    for c in coeffs:
        y = y * x + c
    return y


def _cov_inputs(m: Any, y: Any, rowvar: Any, dtype: Any):
    """NumPy's ``X`` of ``cov`` (observations along axis 1, ``y``'s rows appended), or None
    where NumPy should answer."""
    if not _real(m) or (y is not None and not _real_data(y)):
        return None
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = asarray(y, device=m.device)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else \
            np.result_type(m.dtype, y.dtype, np.float64)
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or (dtype == np.float64 and not m.device.info.fp64):
        return None
    X = m.astype(dtype).reshape((1,) * (2 - m.ndim) + m.shape)
    if not rowvar and m.ndim != 1:
        X = X.T
    if y is not None:
        Y = y.astype(dtype).reshape((1,) * (2 - y.ndim) + y.shape)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = np.concatenate((X, Y), axis=0)
    return X


@implements(np.cov)
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """``np.cov`` of real device data without weights, as NumPy computes it: the rows' means
    subtracted, ``X @ X.T``, times ``1 / (observations - ddof)``."""
    kwargs = {"y": y, "rowvar": rowvar, "bias": bias, "ddof": ddof, "fweights": fweights,
              "aweights": aweights, "dtype": dtype}
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    X = None if fweights is not None or aweights is not None else \
        _cov_inputs(m, y, rowvar, dtype)
    if X is None:
        return host_function(np.cov, (m,), kwargs)
    if X.shape[0] == 0:
        return asarray(np.array([]).reshape(0, 0), device=m.device)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    fact = X.shape[1] - int(ddof)
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - np.mean(X, axis=1)[:, None]
    c = np.dot(X, X.T)
    c *= np.true_divide(1, fact)   # in place, as NumPy: the dtype stays
    return c.squeeze()


@implements(np.corrcoef)
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """``np.corrcoef`` as NumPy computes it: ``cov``, divided by the outer product of its
    diagonal's square roots, clipped to [-1, 1]."""
    kwargs = {"y": y, "rowvar": rowvar, "dtype": dtype}
    if _cov_inputs(x, y, rowvar, dtype) is None:
        return host_function(np.corrcoef, (x,), kwargs)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c   # NumPy's: 1, or NaN (with its warning) for a zero variance
    d = np.diagonal(c)
    stddev = np.sqrt(d)
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    return np.clip(c, -1, 1)
