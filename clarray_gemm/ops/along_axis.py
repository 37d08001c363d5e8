"""Index arrays along an axis, on the device: ``np.take_along_axis`` (each index turned into a
flat position of the array's contiguous copy, one gather), ``np.put_along_axis`` (the same
positions in a C-contiguous array, one scatter: the last of repeated positions wins, as in
NumPy) and ``np.lexsort`` (stable argsorts key by key, each key gathered in the order so far).
Arguments outside what each covers go to NumPy on host views (counted)."""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._dispatch import implements
from ..array import DeviceArray, asarray, host_function
from ..array.geometry import c_strides
from .arrayfuncs import arange

__all__ = ["take_along_axis", "put_along_axis", "lexsort", "wrapped_indices"]


def _flat_positions(shape: tuple, indices: DeviceArray, axis: int) -> DeviceArray:
    """Flat positions in a C-contiguous array of ``shape`` of ``indices`` along ``axis`` (already
    in range and non-negative), the other axes' coordinates broadcast as NumPy's fancy index."""
    strides = c_strides(shape, 1)
    flat = indices.astype(np.int64) * strides[axis]
    for d, n in enumerate(shape):
        if d == axis or n == 1:
            continue
        coord = arange(n, dtype=np.int64, device=indices.device) * strides[d]
        flat = flat + coord.reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
    return flat


def wrapped_indices(indices: DeviceArray, n: int, axis: int) -> DeviceArray:
    """``indices`` with negative ones counted from the end; NumPy's IndexError for any outside
    the axis (one read of the device's answer)."""
    wrapped = np.where(indices < 0, indices + n, indices) if indices.dtype.kind == "i" \
        else indices
    bad = (wrapped < 0) | (wrapped >= n)
    if bool(np.any(bad)):
        first = int(np.asarray(indices)[np.asarray(bad)][0])
        raise IndexError(f"index {first} is out of bounds for axis {axis} with size {n}")
    return wrapped


def _positions(arr: DeviceArray, indices: Any, axis: Any):
    """NumPy's checks of ``*_along_axis`` (its ValueErrors and IndexError raised here), then the
    indices' flat positions in ``arr``'s C-contiguous layout (flattened for ``axis=None``); None
    where NumPy should answer (indices that are not integers, shapes that do not broadcast)."""
    if not (type(indices) is DeviceArray or np.asarray(indices).dtype.kind in "iu"):
        return None
    indices = asarray(indices, device=arr.device)
    if indices.dtype.kind not in "iu":
        return None
    shape = arr.shape
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        shape, axis = (arr.size,), 0
    axis = normalize_axis_index(axis, len(shape))
    if indices.ndim != len(shape):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    try:
        np.broadcast_shapes(tuple(1 if d == axis else n for d, n in enumerate(shape)),
                            tuple(1 if d == axis else n for d, n in enumerate(indices.shape)))
    except ValueError:
        return None
    return _flat_positions(shape, wrapped_indices(indices, shape[axis], axis), axis)


@implements(np.take_along_axis)
def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    """``np.take_along_axis``: the values of ``arr`` at ``indices`` along ``axis`` (other axes
    broadcast), one gather from the array's contiguous copy."""
    args, kwargs = (arr, indices), {"axis": axis}
    if type(arr) is not DeviceArray or arr.dtype.kind not in "biuf":
        return host_function(np.take_along_axis, args, kwargs)
    positions = _positions(arr, indices, axis)
    if positions is None:
        return host_function(np.take_along_axis, args, kwargs)   # NumPy's errors
    source = arr if arr.is_c_contiguous else arr.copy()
    return source.reshape(-1)[positions]


@implements(np.put_along_axis)
def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """``np.put_along_axis`` into a C-contiguous device array: ``values`` (broadcast) written at
    ``indices`` along ``axis``, one scatter; other layouts go through NumPy (written back)."""
    args = (arr, indices, values, axis)
    kind = values.dtype.kind if type(values) is DeviceArray else np.asarray(values).dtype.kind
    if (type(arr) is not DeviceArray or not arr.is_c_contiguous or arr.dtype.kind not in "biuf"
            or kind not in "biuf"):
        return host_function(np.put_along_axis, args, {})
    positions = _positions(arr, indices, axis)
    if positions is None:
        return host_function(np.put_along_axis, args, {})   # NumPy's errors
    arr.reshape(-1)[positions] = values
    return None


@implements(np.lexsort)
def lexsort(keys: Any, axis: Any = -1) -> Any:
    """``np.lexsort`` of device keys: a stable argsort by the first key, then by each next one
    gathered in that order (the last key sorts first); int64 indices."""
    kwargs = {"axis": axis}
    seq = list(keys) if isinstance(keys, (list, tuple)) else (
        [keys[i] for i in range(keys.shape[0])] if type(keys) is DeviceArray and keys.ndim > 1
        else None)
    if not seq or not all(type(k) is DeviceArray and k.dtype.kind in "biuf" and k.ndim > 0
                          for k in seq) or len({k.shape for k in seq}) != 1 \
            or len({k.device for k in seq}) != 1:
        return host_function(np.lexsort, (keys,), kwargs)
    axis = normalize_axis_index(axis, seq[0].ndim)
    order = np.argsort(seq[0], axis=axis, kind="stable")
    for key in seq[1:]:
        step = np.argsort(np.take_along_axis(key, order, axis), axis=axis, kind="stable")
        order = np.take_along_axis(order, step, axis)
    return order
