"""Reductions and scans on the device with NumPy's semantics: ``sum, prod, mean, var, std, min,
max, argmin, argmax, any, all, cumsum, cumprod`` (functions and methods) and ``ufunc.reduce`` /
``ufunc.accumulate`` for ``add, multiply, maximum, minimum, logical_and, logical_or``.

``axis`` (int, tuple, None), ``keepdims``, ``dtype``, ``out`` and ``ddof`` follow NumPy; the
accumulator dtype is the one NumPy picks (int32 sums in int64, bool sums in int64, int means in
float64), found by asking NumPy about a one-element array once per plan. Results are device
arrays, 0-d ones included. ``where=`` and ``initial=``, float16 and complex data, and devices
without fp64 for float64 work go to NumPy on host views (counted by ``on_host_calls``).
Float sums are tree sums (per-lane partial sums, then a tree in local memory), so they match
NumPy's pairwise sums to float rounding, not bit for bit.
"""
from __future__ import annotations

import warnings
from functools import lru_cache, partial
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _dispatch
from .._dispatch import implements
from ..dtypes import part_dtype
from ..array import (DeviceArray, adopt_host, asarray, empty, host_function, result_maker,
                     to_host)
from ..array.geometry import c_strides
from ..fallbacks import record_host_call
from ..kernels.crossover import host_wins
from ..kernels.plans import PlanCache
from ..memo import Memo
from .elementwise import kernel_dtype
from .fusion import fuse
from ._common import device_of
from .reduce_plan import reduce_plan, scan_plan

__all__ = ["reduction", "scan", "two_norm"]

_NO = np._NoValue
_NUMPY = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any,
          "all": np.all, "argmax": np.argmax, "argmin": np.argmin, "mean": np.mean}
_EMPTY_ERRORS = {"max": "maximum", "min": "minimum"}


@lru_cache(maxsize=None)
def _result_dtype(name: str, dtype: np.dtype, requested: np.dtype | None) -> np.dtype:
    """NumPy's result dtype of reduction ``name`` over ``dtype`` data (``dtype=requested``)."""
    kwargs = {} if requested is None or name in ("max", "min", "any", "all") else {"dtype": requested}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(_NUMPY[name](np.ones(1, dtype), **kwargs)).dtype


# (name, device, layout, axis, dtype, keepdims) -> the call of a repeated reduction without
# out=, where= or initial=, (np.cumsum or np.cumprod, device, layout, axis, dtype) -> the host
# path's call of a repeated scan without out=: one dict hit, no checks, axis normalisation or
# crossover lookup.
_CALLS: PlanCache[Any] = PlanCache("reduction-call")
_find_call = _CALLS.find


def _axis_key(axis: Any) -> Any:
    """``axis`` as part of a cached call's key, with its type where it is not an int: 1.0 and
    True equal 1, but NumPy refuses them (TypeError), so they must never find axis 1's call."""
    if axis is None or type(axis) is int:
        return axis
    if type(axis) is tuple:
        return (tuple, *((type(v), v) for v in axis))
    return (type(axis), axis)


def _refuse_bool_axis(axis: Any, single: bool) -> None:
    """NumPy's TypeError for a bool axis, alone or in a tuple (``operator.index`` takes bools,
    NumPy's reductions do not; ``single``: an argmax's or a scan's message)."""
    if any(isinstance(v, (bool, np.bool_)) for v in (axis if type(axis) is tuple else (axis,))):
        raise TypeError("an integer is required for the axis" if single
                        else "an integer is required")


def reduction(name: str, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
              keepdims: Any = _NO, where: Any = _NO, initial: Any = _NO) -> Any:
    """``np.<name>(a, ...)`` on the device, or NumPy's on host views where the device cannot."""
    key = None
    if type(a) is DeviceArray and out is None and where is _NO and initial is _NO:
        key = (name, a.device, a.layout_key, _axis_key(axis), dtype, keepdims)
        try:
            call = _find_call(key)
        except TypeError:  # an axis or dtype that cannot be a key (a list): no plan
            call = key = None
        if call is not None:
            return call(a)
        if host_wins(a.device, "reduce", a.dtype, a.size):  # unified memory, small work
            kwargs = {"axis": axis} if keepdims is _NO else {"axis": axis, "keepdims": keepdims}
            if dtype is not None:
                kwargs["dtype"] = dtype
            return _first_host_call(key, a, _HOST_CALLS.get(_NUMPY[name], _NUMPY[name]),
                                    kwargs)
    kwargs = {"axis": axis, "out": out}
    if name not in ("max", "min", "any", "all", "argmax", "argmin"):
        kwargs["dtype"] = dtype
    if keepdims is not _NO:
        kwargs["keepdims"] = keepdims
    for k, v in (("where", where), ("initial", initial)):
        if v is not _NO:
            kwargs[k] = v
    requested = None if dtype is None else np.dtype(dtype)
    if (type(a) is not DeviceArray or where is not _NO and where is not True or initial is not _NO
            or (out is not None and type(out) is not DeviceArray)):
        return _fallback(_NUMPY[name], (a,), kwargs)
    arg = name in ("argmax", "argmin")
    _refuse_bool_axis(axis, arg)
    if arg and axis is not None:
        axes = (normalize_axis_index(axis, a.ndim),)
    else:
        axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    result_dtype = _result_dtype(name, a.dtype, requested)
    acc = result_dtype if name not in ("any", "all", "argmax", "argmin") else a.dtype
    if name in ("any", "all"):
        acc = np.dtype(np.bool_)
    # float16 accumulates in float (rounded once): only over float16 data, which float holds
    # exactly (NumPy casts other data to float16 first)
    # (not products: NumPy's float16 product, rounded at its buffer boundaries, reaches 0 or inf
    # in another order than a tree's)
    half = np.dtype(np.float16)
    if a.dtype.kind == "c" and name in ("sum", "mean") and requested is None and out is None:
        found = _complex_parts(name, a, axes, keepdims is True)
        return found if found is not None else _fallback(_NUMPY[name], (a,), kwargs)
    if not all(kernel_dtype(d, a.device) or (d == half and a.dtype == half and name != "prod")
               for d in (a.dtype, acc, result_dtype)):
        return _fallback(_NUMPY[name], (a,), kwargs)
    n_red = 1
    for ax in axes:
        n_red *= a.shape[ax]
    if n_red == 0 and (name in _EMPTY_ERRORS or arg):
        if arg:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        raise ValueError(f"zero-size array to reduction operation {_EMPTY_ERRORS[name]} which "
                         "has no identity")
    if host_wins(a.device, "reduce", a.dtype, a.size):
        return _on_host_path(_NUMPY[name], a, kwargs)
    rop = "sum" if name == "mean" else name
    plan = reduce_plan(rop, a, axes, acc, result_dtype, mean=name == "mean")
    if not plan.supported:
        return _fallback(_NUMPY[name], (a,), kwargs)
    kept = None  # keepdims: the result's C layout with the reduced axes as 1s (a free view)
    if keepdims is True:
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
        kept = (shape, c_strides(shape, result_dtype.itemsize))

    def on_device(x: DeviceArray) -> DeviceArray:
        result = plan.run(x)
        if kept is not None:
            result = DeviceArray.from_storage(result.storage, kept[0], result.dtype, kept[1])
        return result
    if key is not None:
        _CALLS.get(key, lambda: on_device)
    result = on_device(a)
    if out is not None:
        out[...] = result
        return out
    return result


def _as_pairs(z: DeviceArray) -> DeviceArray | None:
    """A complex array seen as real (real, imaginary) pairs: a last axis of two; None where its
    strides are not whole parts."""
    real = part_dtype(z.dtype)
    part = real.itemsize
    if z.offset % part or any(st % part for st in z.strides):
        return None
    return DeviceArray.from_storage(z.storage, z.shape + (2,), real, z.strides + (part,),
                                    z.offset)


def _from_pairs(result: Any, dtype: np.dtype) -> DeviceArray | None:
    """A device result of pairs (C-contiguous, last axis two) seen as complex numbers again."""
    if type(result) is not DeviceArray or not result.is_c_contiguous:
        return None
    return DeviceArray.from_storage(result.storage, result.shape[:-1], dtype,
                                    result.strides[:-1], result.offset)


def _complex_parts(name: str, a: DeviceArray, axes: tuple, keepdims: bool) -> Any:
    """``sum``/``mean`` of complex numbers as those of their real and imaginary parts (NumPy sums
    the two apart too), over the same axes; None where that is not a device reduction."""
    parts = _as_pairs(a)
    if parts is None:
        return None
    return _from_pairs(reduction(name, parts, axis=axes, keepdims=keepdims), a.dtype)


def two_norm(a: DeviceArray, axis: Any, keepdims: bool) -> DeviceArray | None:
    """``np.linalg.norm(a, axis=axis, keepdims=keepdims)`` for 2-norms and Frobenius norms of
    float32/float64 data as one reduction kernel (sum of squares, then its square root), or
    None where that plan cannot run."""
    if a.dtype not in (np.float32, np.float64) or not kernel_dtype(a.dtype, a.device):
        return None
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(
        axis if isinstance(axis, tuple) else (axis,), a.ndim)
    plan = reduce_plan("sum", a, axes, a.dtype, a.dtype, norm=True)
    if not plan.supported:
        return None
    result = plan.run(a)
    if keepdims:
        result = result.reshape(tuple(1 if i in axes else n for i, n in enumerate(a.shape)))
    return result


def _first_host_call(key: tuple | None, a: DeviceArray, func: Any, kwargs: dict) -> Any:
    """The host path's first call of a repeated reduction or scan: NumPy's fresh result of
    ``func(host view of a, **kwargs)``, kept as it is; with a ``key``, later calls run the
    cached ``result_maker`` of its geometry (NumPy writing into a fresh host-born result:
    out=, the same loop, the same bits)."""
    first = np.asarray(func(a.host_view(), **kwargs))
    if key is not None and first.dtype.isnative and not first.dtype.hasobject:
        _CALLS.get(key, lambda: result_maker(
            a.device, first.nbytes, first.shape, first.dtype,
            c_strides(first.shape, first.dtype.itemsize), fill=partial(func, **kwargs),
            operands=1))
    return adopt_host(first, a.device)


def scan(name: str, a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.cumsum`` / ``np.cumprod`` on the device (NumPy's dtypes), else on host views."""
    func = np.cumsum if name == "sum" else np.cumprod
    if type(a) is DeviceArray and out is None:  # a repeated call: one dict hit
        key = (func, a.device, a.layout_key, _axis_key(axis), dtype)
        try:
            call = _find_call(key)
        except TypeError:  # an axis or dtype that cannot be a key: no plan
            call = key = None
        if call is not None:
            return call(a)
        if host_wins(a.device, "reduce", a.dtype, a.size):
            return _first_host_call(key, a, _HOST_CALLS[func], {"axis": axis, "dtype": dtype})
    kwargs = {"axis": axis, "dtype": dtype, "out": out}
    if type(a) is not DeviceArray or (out is not None and type(out) is not DeviceArray):
        return _fallback(func, (a,), kwargs)
    if host_wins(a.device, "reduce", a.dtype, a.size):
        return _on_host_path(func, a, kwargs)
    if axis is None:
        a, axis = a.reshape(-1), 0
    _refuse_bool_axis(axis, True)
    axis = normalize_axis_index(axis, a.ndim)
    result_dtype = _result_dtype(name, a.dtype, None if dtype is None else np.dtype(dtype))
    if a.ndim == 1 and a.size >= LONG_SCAN and out is None and kernel_dtype(
            a.dtype, a.device) and kernel_dtype(result_dtype, a.device):
        return _blocked_scan(func, a, result_dtype)
    plan = None
    if kernel_dtype(a.dtype, a.device) and kernel_dtype(result_dtype, a.device):
        plan = scan_plan(name, a, axis, result_dtype, result_dtype)
    if plan is None or not plan.supported:
        return _fallback(func, (a,), kwargs)
    result = plan.run(a)
    if out is not None:
        out[...] = result
        return out
    return result


LONG_SCAN = 1 << 18
"""A 1-D scan from this length runs in blocks (:func:`_blocked_scan`): the scan kernel gives a
line one work-group, so one long line uses one compute unit (H200, the boolean masks of
`a[a > 0]`: 4096 x 4096 36 ms -> 3.2 ms, 1000 x 1000 1.6 -> 1.1 ms; at 256 x 256 the blocks'
seven launches cost more, 0.32 -> 0.54 ms)."""
SCAN_BLOCK = 4096


def _blocked_scan(func: Any, a: DeviceArray, result_dtype: np.dtype) -> DeviceArray:
    """``func(a)`` (``np.cumsum`` or ``np.cumprod``) of a long 1-D device array: the blocks of
    SCAN_BLOCK elements scanned side by side as the lines of a 2-D array, then the scan of the
    blocks' last elements carried into the blocks after them (all on the device)."""
    op = np.add if func is np.cumsum else np.multiply
    n, size = a.size, SCAN_BLOCK
    whole = n // size * size
    out = empty((n,), result_dtype, device=a.device)
    blocks = out[:whole].reshape(-1, size)
    blocks[...] = func(a[:whole].reshape(-1, size), axis=1, dtype=result_dtype)
    if whole < n:
        out[whole:] = func(a[whole:], dtype=result_dtype)
    carry = func(out[size - 1:whole:size])   # carry[i]: the scan through block i
    if whole > size:
        later = out[size:whole].reshape(-1, size)
        op(later, carry[:-1].reshape(-1, 1), out=later)
    if whole < n:
        op(out[whole:], carry[-1], out=out[whole:])
    return out


# What np.sum / np.prod / np.max / np.min call on an ndarray (numpy/_core/_methods.py), without
# the Python wrapper's ~2 us: the same arguments, the same results and errors.
_UFUNC_REDUCE = {np.sum: np.add.reduce, np.prod: np.multiply.reduce,
                 np.max: np.maximum.reduce, np.min: np.minimum.reduce}
# The short path's calls on a host view: the ufunc reductions, and the ndarray methods that
# NumPy's own functions call for an ndarray (np.argmin(view) is view.argmin()), without the
# Python wrappers in between.
_HOST_CALLS = {**_UFUNC_REDUCE, np.argmin: np.ndarray.argmin, np.argmax: np.ndarray.argmax,
               np.mean: np.ndarray.mean, np.cumsum: np.ndarray.cumsum,
               np.cumprod: np.ndarray.cumprod}


def _on_host_path(func: Any, a: DeviceArray, kwargs: dict) -> Any:
    """The host path (unified memory, small work): NumPy on the mapping, a device result."""
    out = kwargs.get("out")
    if out is None:
        result = _HOST_CALLS.get(func, func)(a.host_view(), **kwargs)
    else:
        func(a.host_view(), **dict(kwargs, out=out.host_view(write=True)))
        return out
    return adopt_host(np.asarray(result), a.device)  # NumPy's fresh result, kept as it is


def _reducer(name: str):
    def impl(a, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
        return reduction(name, a, axis, dtype, out, keepdims, where, initial)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"``np.{name}`` on the device (see :func:`reduction`)."
    return impl


for _name in ("sum", "prod"):
    implements(_NUMPY[_name])(_reducer(_name))


@implements(np.max, np.amax)
def device_max(a, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    return reduction("max", a, axis, None, out, keepdims, where, initial)


@implements(np.min, np.amin)
def device_min(a, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    return reduction("min", a, axis, None, out, keepdims, where, initial)


@implements(np.any)
def device_any(a, axis=None, out=None, keepdims=_NO, *, where=_NO):
    return reduction("any", a, axis, None, out, keepdims, where)


@implements(np.all)
def device_all(a, axis=None, out=None, keepdims=_NO, *, where=_NO):
    return reduction("all", a, axis, None, out, keepdims, where)


@implements(np.argmax)
def device_argmax(a, axis=None, out=None, *, keepdims=_NO):
    return reduction("argmax", a, axis, None, out, keepdims)


@implements(np.argmin)
def device_argmin(a, axis=None, out=None, *, keepdims=_NO):
    return reduction("argmin", a, axis, None, out, keepdims)


@implements(np.mean)
def device_mean(a, axis=None, dtype=None, out=None, keepdims=_NO, *, where=_NO):
    return reduction("mean", a, axis, dtype, out, keepdims, where)


@implements(np.var)
def device_var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, *, where=_NO, mean=_NO,
        correction=_NO):
    return _moment(np.var, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


@implements(np.std)
def device_std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, *, where=_NO, mean=_NO,
        correction=_NO):
    return _moment(np.std, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def _moment(func, a, axis, dtype, out, ddof, keepdims, where, mean_, correction):
    """NumPy's ``_var``: mean (keepdims), squared deviations, their sum / (n - ddof); sqrt for
    ``std``. Each step is a device kernel."""
    kwargs = {k: v for k, v in dict(axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                                    where=where, mean=mean_, correction=correction).items()
              if v is not _NO}
    if (type(a) is not DeviceArray or where is not _NO or mean_ is not _NO
            or correction is not _NO or a.dtype.kind not in "biuf" or a.dtype == np.float16):
        return _fallback(func, (a,), kwargs)
    if dtype is None and a.dtype.kind in "biu":
        dtype = np.dtype(np.float64)
    _refuse_bool_axis(axis, False)
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    count = 1
    for ax in axes:
        count *= a.shape[ax]
    fused = _fused_moment(func, a, axes, dtype, count, ddof, keepdims is True)
    if fused is not None:
        if out is not None:
            out[...] = fused
            return out
        return fused
    centre = np.true_divide(reduction("sum", a, axes, dtype, None, True), count)
    deviation = np.subtract(a, centre)
    squares = np.multiply(deviation, deviation, out=deviation)
    result = np.true_divide(reduction("sum", squares, axes, dtype, None, keepdims),
                            max(count - ddof, 0))
    if func is np.std:
        result = np.sqrt(result)
    if out is not None:
        out[...] = result
        return out
    return result


def _fused_moment(func, a: DeviceArray, axes: tuple, dtype: Any, count: int, ddof: Any,
                  keepdims: bool) -> DeviceArray | None:
    """``np.var`` / ``np.std`` as two reductions: the mean, then the sum of squared deviations
    from it divided by ``count - ddof`` (and its square root) in one kernel (opencl/reduce.cl,
    CENTRED), for float32/float64 results on devices that run the kernels; None elsewhere
    (the host path, ``ddof`` leaving no degrees of freedom: NumPy's warning and value)."""
    acc = np.dtype(dtype) if dtype is not None else a.dtype
    if (acc.kind != "f" or not kernel_dtype(a.dtype, a.device) or not kernel_dtype(acc, a.device)
            or host_wins(a.device, "reduce", a.dtype, a.size) or count == 0):
        return None
    try:
        dof = count - ddof
    except TypeError:
        return None
    if not dof > 0:
        return None
    one = _one_kernel_moment(a, axes, dof, func is np.std) if acc == a.dtype else None
    if one is not None:
        return one.reshape(tuple(1 if i in axes else n for i, n in enumerate(a.shape))) \
            if keepdims else one
    mean_plan = reduce_plan("sum", a, axes, acc, acc, mean=True)
    plan = reduce_plan("sum", a, axes, acc, acc, mean=True, centred=True, root=func is np.std)
    if not (mean_plan.supported and plan.supported):
        return None
    result = plan.run(a, centre=mean_plan.run(a), count=dof)
    if keepdims:
        result = result.reshape(tuple(1 if i in axes else n for i, n in enumerate(a.shape)))
    return result


# np.var / np.std over each set of axes as a fused function (ops/fused_rows.py), built once
_MOMENTS: Memo[Any] = Memo("one-kernel moments", capacity=64)


def _one_kernel_moment(a: DeviceArray, axes: tuple, dof: Any, root: bool) -> Any:
    """NumPy's ``_var`` (mean with keepdims, squared deviations, their sum / ``dof``; sqrt for
    ``std``) as one kernel, a work-group per reduced row, reading ``a`` about once: the result,
    or None where that kernel does not take these shapes (then two reductions)."""
    if type(dof) not in (int, float):
        dof = float(dof) if isinstance(dof, np.floating) else int(dof)

    def moment(x, n):
        d = x - x.mean(axis=axes, keepdims=True)
        v = (d * d).sum(axis=axes) / n
        return np.sqrt(v) if root else v
    fused = _MOMENTS.get((axes, root), lambda: fuse(moment, kernel_name="std" if root else "var"))
    plan = fused.kernel_for(a, dof)
    return None if plan is None else plan.run((a, dof))[0]


@implements(np.cumsum)
def device_cumsum(a, axis=None, dtype=None, out=None):
    if type(a) is DeviceArray and a.dtype.kind == "c" and dtype is None and out is None \
            and a.size:
        found = _complex_scan(a, axis)
        if found is not None:
            return found
    return scan("sum", a, axis, dtype, out)


def _complex_scan(a: DeviceArray, axis: Any) -> Any:
    """``np.cumsum`` of complex numbers as the scans of their real and imaginary parts; None
    where that is not a device scan."""
    z = a.ravel() if axis is None else a
    parts = _as_pairs(z)
    if parts is None:
        return None
    ax = 0 if axis is None else normalize_axis_index(axis, a.ndim)
    return _from_pairs(scan("sum", parts, ax, None, None), z.dtype)


@implements(np.cumprod)
def device_cumprod(a, axis=None, dtype=None, out=None):
    return scan("prod", a, axis, dtype, out)


_UFUNC_REDUCTIONS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                     np.logical_and: "all", np.logical_or: "any"}


def _ufunc_reduce(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc.reduce(a, axis=0, dtype=None, out=None, keepdims=False)`` for the ufuncs above."""
    name = _UFUNC_REDUCTIONS.get(ufunc)
    if name is None or len(inputs) != 1 or set(kwargs) - {"axis", "dtype", "out", "keepdims"}:
        return NotImplemented
    a = inputs[0]
    out = kwargs.get("out")
    out = out[0] if isinstance(out, tuple) else out
    dtype = kwargs.get("dtype")
    if name in ("all", "any") and (type(a) is not DeviceArray or a.dtype != np.bool_ or dtype):
        return NotImplemented  # logical_and.reduce of numbers: NumPy's bool loop rules
    if name in ("max", "min") and dtype is not None:
        return NotImplemented
    return reduction(name, a, kwargs.get("axis", 0), dtype, out,
                     kwargs.get("keepdims", _NO))


def _ufunc_accumulate(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``add.accumulate`` / ``multiply.accumulate``: ``cumsum`` / ``cumprod`` along ``axis``."""
    name = {np.add: "sum", np.multiply: "prod"}.get(ufunc)
    if name is None or len(inputs) != 1 or set(kwargs) - {"axis", "dtype", "out"}:
        return NotImplemented
    out = kwargs.get("out")
    out = out[0] if isinstance(out, tuple) else out
    return scan(name, inputs[0], kwargs.get("axis", 0), kwargs.get("dtype"), out)


_dispatch.UFUNC_METHODS["reduce"] = _ufunc_reduce
_dispatch.UFUNC_METHODS["accumulate"] = _ufunc_accumulate


# The other NumPy reductions (nan*, median, percentile, ...): NumPy on host views (counted as
# host fallbacks), the result put on the operands' device, a 0-d device array where NumPy gives
# a scalar, so chained code (xarray, dask) keeps device arrays.
# (ptp, average, count_nonzero, nansum and nanmean: ops/composed.py)
HOST_REDUCTIONS = (np.median, np.nanprod, np.nanstd, np.nanvar,
                   np.nanmax, np.nanmin, np.nanargmax, np.nanargmin, np.nanmedian, np.nancumsum,
                   np.nancumprod, np.percentile, np.quantile, np.nanpercentile, np.nanquantile)


def _fallback(func: Any, args: tuple, kwargs: dict) -> Any:
    """NumPy's ``func`` on host views (a counted host fallback), the result on the device."""
    if kwargs.get("out") is not None:  # NumPy's answer written into out=
        return host_function(func, args, kwargs)
    record_host_call(func.__name__)
    device = device_of(*args, *kwargs.values())
    result = func(*to_host(args), **to_host(kwargs))
    if isinstance(result, tuple):  # (several results)
        return tuple(_device_result(r, device) for r in result)
    return _device_result(result, device)


def _host_reduction(func: Any) -> Any:
    def on_host(*args: Any, **kwargs: Any) -> Any:
        return _fallback(func, args, kwargs)
    on_host.__name__ = on_host.__qualname__ = func.__name__
    on_host.__doc__ = f"``np.{func.__name__}`` on host views, as a device array."
    return on_host


def _device_result(result: Any, device: Any) -> Any:
    if isinstance(result, (np.ndarray, np.generic)) and result.dtype.kind in "biufc":
        return asarray(result, device=device)
    return result


for _func in HOST_REDUCTIONS:
    implements(_func)(_host_reduction(_func))
