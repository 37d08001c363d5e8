"""``np.concatenate`` and ``np.stack`` of device arrays: one device buffer, filled by device-side
copies of each piece, or by NumPy on the mappings below the host path's copy crossover (NumPy's
shape, dtype and error rules, from NumPy itself on templates)."""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, asarray, empty, host_function
from ..kernels.crossover import host_wins
from ._common import device_of

__all__ = ["concatenate", "stack"]


def _shape(x: Any) -> tuple:
    """``np.shape`` without a trip through ``__array_function__`` for our own arrays."""
    return x.shape if type(x) is DeviceArray else np.shape(x)


def _template(x: Any, axis: int) -> np.ndarray:
    """An empty stand-in for NumPy's rules: ``x``'s dtype and shape, but no elements along
    ``axis`` (where ``x`` has that axis), so that NumPy checks the pieces and gives the result's
    dtype without building a full-size result on the host."""
    dtype = x.dtype if isinstance(x, DeviceArray) else np.asarray(x).dtype
    shape = _shape(x)
    if isinstance(axis, numbers.Integral) and -len(shape) <= axis < len(shape):
        k = int(axis) % len(shape)
        shape = shape[:k] + (0,) + shape[k + 1:]
    return np.empty(shape, dtype)


@implements(np.concatenate)
def concatenate(arrays: Sequence[Any], axis: int | None = 0, out: Any = None, *,
                dtype: Any = None, casting: str = "same_kind") -> Any:
    """The pieces joined along ``axis`` in a new device array (``axis=None`` flattens first)."""
    if out is not None:
        return host_function(np.concatenate, (arrays,),
                              {"axis": axis, "out": out, "dtype": dtype, "casting": casting})
    arrays = list(arrays)
    device = device_of(*arrays)
    if axis is None:
        arrays = [a.reshape(-1) if isinstance(a, DeviceArray) else np.ravel(a) for a in arrays]
        axis = 0
    # NumPy's checks and result dtype (shapes, same_kind casting, axis bounds), on empty pieces.
    rule = np.concatenate([_template(a, axis) for a in arrays], axis=axis, dtype=dtype,
                          casting=casting)
    axis = axis % rule.ndim
    shape = list(rule.shape)
    shape[axis] = sum(_shape(a)[axis] for a in arrays)
    if host_wins(device, "elementwise", rule.dtype, math.prod(shape)):
        # below the copy crossover (every size on CPU drivers): NumPy's memcpy on the mappings
        result = empty(tuple(shape), rule.dtype, device=device, host_resident=True)
        np.concatenate([a.host_view() if type(a) is DeviceArray else a for a in arrays],
                       axis=axis, out=result.host_view(write=True), casting="unsafe")
        return result
    result = empty(tuple(shape), rule.dtype, device=device)
    start = 0
    for piece in arrays:
        n = _shape(piece)[axis]
        if n:
            index = (slice(None),) * axis + (slice(start, start + n),)
            result[index] = piece if isinstance(piece, DeviceArray) else asarray(piece, device=device)
        start += n
    return result


@implements(np.stack)
def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """The pieces stacked along a new ``axis`` in a new device array."""
    if out is not None:
        return host_function(np.stack, (arrays,),
                              {"axis": axis, "out": out, "dtype": dtype, "casting": casting})
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {_shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    ndim = len(shapes.pop()) + 1
    axis = np.lib.array_utils.normalize_axis_index(axis, ndim)
    expanded = [a[(slice(None),) * axis + (None,)] if isinstance(a, DeviceArray)
                else np.expand_dims(a, axis) for a in arrays]
    return concatenate(expanded, axis=axis, dtype=dtype, casting=casting)
