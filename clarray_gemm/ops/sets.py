"""NumPy's set functions on device arrays, from the device sort: ``np.isin`` (a search of each
element in the sorted test elements, then an equality test: NaN is in nothing, -0.0 is 0.0, as
NumPy's comparisons say), ``np.intersect1d``, ``np.setdiff1d`` and ``np.union1d`` (NumPy's own
steps over ``unique``, ``concatenate`` and masks). On devices with a host path NumPy's own
function runs on the mapping (a device result); object data and ``return_indices`` elsewhere go
to NumPy on host views (counted)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, adopt_host, asarray, host_function, zeros
from ..kernels.crossover import has_host_path

__all__ = ["isin", "intersect1d", "setdiff1d", "union1d"]


def _device_pair(a: Any, b: Any):
    """Both operands as device arrays of real numbers on one device, or None where NumPy should
    answer (no device array, object or complex data, a device with a host path)."""
    if type(a) is not DeviceArray and type(b) is not DeviceArray:
        return None
    device = a.device if type(a) is DeviceArray else b.device
    if has_host_path(device):
        return None
    out = []
    for v in (a, b):
        kind = v.dtype.kind if type(v) is DeviceArray else np.asarray(v).dtype.kind
        if kind not in "biuf":
            return None
        out.append(asarray(v, device=device))
    return out


def _on_host(func: Any, args: tuple, kwargs: dict) -> Any:
    """NumPy's ``func``: on the mapping where the device has a host path (a device result, as
    the sort gives there), else on host views (a counted fallback)."""
    devices = [a.device for a in args if type(a) is DeviceArray]
    if devices and has_host_path(devices[0]) and all(
            type(a) is not DeviceArray or a.dtype.kind in "biuf" for a in args):
        views = tuple(a.host_view() if type(a) is DeviceArray else a for a in args)
        result = func(*views, **kwargs)
        if isinstance(result, tuple):
            return tuple(adopt_host(np.asarray(r), devices[0]) for r in result)
        return adopt_host(np.asarray(result), devices[0])
    return host_function(func, args, kwargs)


def _found(values: DeviceArray, pool: DeviceArray) -> DeviceArray:
    """Whether each of ``values`` (1-D) equals one of ``pool`` (1-D), by a search of the sorted
    pool."""
    if pool.size == 0:
        return zeros(values.shape, np.bool_, device=values.device)
    ordered = np.sort(pool)
    at = np.searchsorted(ordered, values, side="left")
    hit = ordered[np.minimum(at, pool.size - 1)]
    return (at < pool.size) & (hit == values)


@implements(np.isin)
def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: Any = None) -> Any:
    """``np.isin``: a bool array of ``element``'s shape, True where the element equals one of
    ``test_elements`` (``invert``: False there)."""
    kwargs = {"assume_unique": assume_unique, "invert": invert, "kind": kind}
    pair = _device_pair(element, test_elements)
    if pair is None:
        return _on_host(np.isin, (element, test_elements), kwargs)
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    values, pool = pair
    found = _found(values.reshape(-1), pool.reshape(-1)).reshape(values.shape)
    return ~found if invert else found


@implements(np.intersect1d)
def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False) -> Any:
    """``np.intersect1d`` as NumPy writes it: the unique values of both, sorted together, the
    values equal to their successor."""
    kwargs = {"assume_unique": assume_unique, "return_indices": return_indices}
    pair = _device_pair(ar1, ar2)
    if pair is None or return_indices:
        return _on_host(np.intersect1d, (ar1, ar2), kwargs)
    a, b = pair
    if assume_unique:
        a, b = a.reshape(-1), b.reshape(-1)
    else:
        a, b = np.unique(a), np.unique(b)
    aux = np.sort(np.concatenate((a, b)))
    if aux.size < 2:
        return aux[:0]
    return aux[:-1][aux[1:] == aux[:-1]]


@implements(np.setdiff1d)
def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    """``np.setdiff1d``: the unique values of ``ar1`` (its values as they are with
    ``assume_unique``) that are not in ``ar2``."""
    kwargs = {"assume_unique": assume_unique}
    pair = _device_pair(ar1, ar2)
    if pair is None:
        return _on_host(np.setdiff1d, (ar1, ar2), kwargs)
    a, b = pair
    a = a.reshape(-1) if assume_unique else np.unique(a)
    if not assume_unique:
        b = np.unique(b)
    return a[~_found(a, b.reshape(-1))]


@implements(np.union1d)
def union1d(ar1: Any, ar2: Any) -> Any:
    """``np.union1d``: the unique values of both, sorted."""
    pair = _device_pair(ar1, ar2)
    if pair is None:
        return _on_host(np.union1d, (ar1, ar2), {})
    return np.unique(np.concatenate(pair, axis=None))
