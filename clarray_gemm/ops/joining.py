"""``np.concatenate`` and ``np.stack`` of device arrays: one device buffer, filled by device-side
copies of each piece, or by NumPy on the mappings below the host path's copy crossover (NumPy's
shape, dtype and error rules, from NumPy itself on templates)."""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, asarray, empty, host_function, host_result
from ..array.geometry import c_strides
from ..device import Device
from ..kernels.crossover import host_wins
from ..kernels.plans import PlanCache
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


class _JoinPlan:
    """What a concatenation's key decides: NumPy's result dtype and shape (from NumPy itself, on
    empty templates of the pieces), the axis, and whether the host path copies the pieces."""

    def __init__(self, arrays: list, axis: int, dtype: Any, casting: str, device: Device):
        rule = np.concatenate([_template(a, axis) for a in arrays], axis=axis, dtype=dtype,
                              casting=casting)
        self.axis = axis % rule.ndim
        shape = list(rule.shape)
        shape[self.axis] = sum(_shape(a)[self.axis] for a in arrays)
        self.shape, self.dtype = tuple(shape), rule.dtype
        self.strides = c_strides(self.shape, self.dtype.itemsize)
        self.nbytes = math.prod(self.shape) * self.dtype.itemsize
        # below the copy crossover (every size on CPU drivers): NumPy's memcpy on the mappings
        self.on_host = host_wins(device, "elementwise", self.dtype, math.prod(self.shape))


_PLANS: PlanCache[_JoinPlan] = PlanCache("concatenate")


def _piece_key(x: Any) -> tuple | None:
    """The part of a concatenation's key for one piece; None where a piece has no short key
    (lists, scalars: their plan is built every call)."""
    t = type(x)
    if t is DeviceArray or t is np.ndarray:
        return (x.dtype, x.shape)
    return None


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
    pieces = tuple(_piece_key(a) for a in arrays)
    if None in pieces or type(axis) is not int:
        plan = _JoinPlan(arrays, axis, dtype, casting, device)
    else:  # a repeated call: one dict hit
        key = (device, axis, dtype, casting, pieces)
        plan = _PLANS.find(key) or _PLANS.get(
            key, lambda: _JoinPlan(arrays, axis, dtype, casting, device))
    axis = plan.axis
    if plan.on_host:
        result, view, *host_pieces = host_result(device, plan.nbytes, plan.shape, plan.dtype,
                                                 plan.strides, *arrays)
        np.concatenate(host_pieces, axis=axis, out=view, casting="unsafe")
        return result
    result = empty(plan.shape, plan.dtype, device=device)
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
