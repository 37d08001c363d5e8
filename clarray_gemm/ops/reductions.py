"""Reductions of device arrays (``np.sum``, ``np.mean``, ``np.max``, ...) that give device arrays.

NumPy computes them on host views of the operands (a mapping, no copy, on unified memory) and the
result is put on the operands' device: a 0-d device array where NumPy gives a scalar, as CuPy
does. So chained code (xarray's ``.mean()``, dask's tree reductions, ``x - x.mean()``) keeps its
data on the device, and a 0-d result formats, converts and compares as NumPy's 0-d arrays do.
``out=`` arguments keep NumPy's meaning (the result is written into them).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, _host_function, asarray, to_host
from ._common import device_of

__all__ = ["REDUCTIONS"]

REDUCTIONS: tuple[Callable[..., Any], ...] = (
    np.sum, np.prod, np.mean, np.std, np.var, np.max, np.min, np.amax, np.amin, np.ptp,
    np.any, np.all, np.argmax, np.argmin, np.average, np.median, np.count_nonzero,
    np.nansum, np.nanprod, np.nanmean, np.nanstd, np.nanvar, np.nanmax, np.nanmin,
    np.nanargmax, np.nanargmin, np.nanmedian, np.cumsum, np.cumprod, np.nancumsum,
    np.nancumprod, np.percentile, np.quantile, np.nanpercentile, np.nanquantile)


def _reduction(func: Callable[..., Any]) -> Callable[..., Any]:
    def on_device(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("out") is not None:  # NumPy's answer written into out=
            return _host_function(func, args, kwargs)
        device = device_of(*args, *kwargs.values())
        result = func(*to_host(args), **to_host(kwargs))
        if isinstance(result, tuple):  # np.average(..., returned=True)
            return tuple(_on_device(r, device) for r in result)
        return _on_device(result, device)
    on_device.__name__ = on_device.__qualname__ = func.__name__
    on_device.__doc__ = f"``np.{func.__name__}`` of device arrays, as a device array."
    return on_device


def _on_device(result: Any, device) -> Any:
    if isinstance(result, (np.ndarray, np.generic)) and result.dtype.kind in "biufc":
        return asarray(result, device=device)
    return result


for _func in REDUCTIONS:
    implements(_func)(_reduction(_func))
del _func
