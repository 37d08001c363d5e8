"""``np.concatenate`` and ``np.stack`` of device arrays: one device buffer, filled by device-side
copies of each piece, or by NumPy on the mappings below the host path's copy crossover (NumPy's
shape, dtype and error rules, from NumPy itself on templates)."""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, asarray, empty, host_function, result_maker
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
    empty templates of the pieces), the axis, and whether the host path copies the pieces
    (``host_run(*pieces)``: NumPy's concatenate into a fresh host-born result; with
    ``expand``, an index giving each piece the new axis first, as ``np.stack`` does)."""

    def __init__(self, arrays: list, axis: int, dtype: Any, casting: str, device: Device,
                 expand: tuple | None = None):
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
        if self.on_host:
            self.host_run = result_maker(device, self.nbytes, self.shape, self.dtype,
                                         self.strides, fill=_concatenate_into(self.axis, expand))


def _concatenate_into(axis: int, expand: tuple | None) -> Any:
    """A ``result_maker`` fill: ``fill(*pieces, out=view)`` concatenates the pieces (each
    indexed by ``expand`` first, where given) into ``view`` along ``axis``."""
    concatenate = np.concatenate
    if expand is None:
        def fill(*pieces: np.ndarray, out: np.ndarray) -> None:
            concatenate(pieces, axis, out=out, casting="unsafe")
    else:
        def fill(*pieces: np.ndarray, out: np.ndarray) -> None:
            concatenate([p[expand] for p in pieces], axis, out=out, casting="unsafe")
    return fill


_PLANS: PlanCache[_JoinPlan] = PlanCache("concatenate")


def _device_pieces_key(arrays: Any) -> tuple | None:
    """(device, the pieces' key, as :func:`_piece_key` gives it) where ``arrays`` is a list or
    tuple of device arrays on one device (the short paths' operands), else None."""
    if type(arrays) is not list and type(arrays) is not tuple:
        return None
    device, pieces = None, []
    for a in arrays:
        if type(a) is not DeviceArray:
            return None
        if device is None:
            device = a.device
        elif a.device is not device:
            return None
        pieces.append((a.dtype, a.shape))
    return (device, tuple(pieces)) if device is not None else None


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
    if out is None and type(axis) is int:
        found = _device_pieces_key(arrays)
        if found is not None:  # device arrays on one device: one dict hit
            device, pieces = found
            key = (device, axis, dtype, casting, pieces)
            plan = _PLANS.find(key) or _PLANS.get(
                key, lambda: _JoinPlan(list(arrays), axis, dtype, casting, device))
            if plan.on_host:
                return plan.host_run(*arrays)
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
        return plan.host_run(*arrays)
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
    if out is None and type(axis) is int:
        found = _device_pieces_key(arrays)
        if found is not None:  # device arrays on one device: one dict hit
            device, pieces = found
            key = ("stack", device, axis, dtype, casting, pieces)
            plan = _PLANS.find(key) or _PLANS.get(
                key, lambda: _stack_plan(pieces, axis, dtype, casting, device))
            if plan.on_host:
                return plan.host_run(*arrays)
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


def _stack_plan(pieces: tuple, axis: int, dtype: Any, casting: str, device: Device
                ) -> _JoinPlan:
    """The plan of ``np.stack`` for pieces of these (dtype, shape)s: a concatenation of the
    pieces given the new axis (memory-less templates for NumPy's rules), NumPy's errors."""
    shapes = {shape for _, shape in pieces}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    shape = shapes.pop()
    axis = np.lib.array_utils.normalize_axis_index(axis, len(shape) + 1)
    expand = (slice(None),) * axis + (None,)
    templates = [np.broadcast_to(np.empty((), dt), shape[:axis] + (1,) + shape[axis:])
                 for dt, _ in pieces]
    return _JoinPlan(templates, axis, dtype, casting, device, expand)
