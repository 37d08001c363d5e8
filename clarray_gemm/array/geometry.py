"""Shape and stride arithmetic of n-d arrays, NumPy's rules computed without an array.

Byte strides throughout (element strides are ``c_strides(shape)`` with the default item size
of 1). Nothing here knows about buffers or devices.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from ..memo import Memo

__all__ = ["c_strides", "f_strides", "is_basic_index", "basic_view_geometry", "view_geometry",
           "view_entry", "anchor", "normalize_shape", "check_byte_size", "shape_text"]

_MAX_INTP = np.iinfo(np.intp).max


def c_strides(shape: Sequence[int], itemsize: int = 1) -> tuple[int, ...]:
    """Strides of a C-contiguous array of ``shape`` (NumPy's: empty axes count as 1)."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def shape_text(shape: Sequence[int]) -> str:
    """A shape as NumPy's error messages write it: ``(2,6)``, ``(6,)``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def f_strides(shape: Sequence[int], itemsize: int = 1) -> tuple[int, ...]:
    """Strides of a Fortran-contiguous array of ``shape``."""
    strides, step = [], itemsize
    for n in shape:
        strides.append(step)
        step *= max(n, 1)
    return tuple(strides)


def is_basic_index(key: Any) -> bool:
    """Whether ``key`` is a basic index (ints, slices, None, Ellipsis): a view, not a gather."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        t = type(k)
        if t is slice or t is int or k is None or k is Ellipsis:  # the common items first
            continue
        if isinstance(k, (bool, np.bool_)):
            return False
        if not (k is None or k is Ellipsis or isinstance(k, (slice, numbers.Integral))):
            return False
    return True


# (shape, strides, index token) -> basic_view_geometry's answer: a loop's views (a stencil's
# u[1:-1, 2:], a row u[0, :]) repeat a few keys on a few layouts.
_views: Memo[tuple] = Memo("basic view geometries", capacity=4096)
_SLICE = slice


def _slice_token(k: slice) -> tuple:
    # the bounds' types too: 1.0 hashes as 1, and NumPy refuses a float bound
    return (k.start, k.stop, k.step, type(k.start), type(k.stop), type(k.step))


def view_geometry(shape: tuple, strides: tuple, key: Any):
    """:func:`basic_view_geometry`, remembered per (shape, strides, key): slices stand in the
    memo's key as their bounds and the bounds' types (Python 3.11 cannot hash a slice)."""
    if type(key) is tuple:   # _slice_token written out: a call less per slice of every view
        items = []
        for k in key:
            if type(k) is _SLICE:
                start, stop, step = k.start, k.stop, k.step
                items.append((start, stop, step, type(start), type(stop), type(step)))
            else:
                items.append(k)
        token = tuple(items)
    else:
        token = _slice_token(key) if type(key) is _SLICE else key
    memo_key = (shape, strides, token)
    try:
        found = _views.find(memo_key)
    except TypeError:   # an index NumPy takes but Python cannot hash (a 0-d array as a bound)
        return basic_view_geometry(shape, strides, key)
    if found is None:
        found = basic_view_geometry(shape, strides, key)
        if found is not None:
            found = _views.get(memo_key, lambda: found)
    return found


# (layout key, index token) -> view_entry's answer, False where the general path decides
_entries: Memo[Any] = Memo("basic view entries", capacity=4096)


def view_entry(layout_key: tuple, key: Any) -> tuple | None:
    """For an index of ints and slices alone (a loop's repeated views: a stencil's
    ``u[1:-1, 2:]``, a row ``u[0, :]``) that leaves at least one axis, ``(shape, strides, byte
    offset delta, size, layout key)`` of the view ``a[key]`` of an array of ``layout_key``
    (``(dtype, shape, strides)``), remembered per key; None (or False) for every other index,
    which the general path answers (None, Ellipsis, index arrays, a scalar result, errors)."""
    kind = type(key)
    if kind is tuple:   # the token as view_geometry's, and the basic-index test, in one pass
        items = []
        for k in key:
            kind = type(k)
            if kind is _SLICE:
                start, stop, step = k.start, k.stop, k.step
                items.append((start, stop, step, type(start), type(stop), type(step)))
            elif kind is int:
                items.append(k)
            else:
                return None
        token = tuple(items)
    elif kind is _SLICE or kind is int:
        token = _slice_token(key) if kind is _SLICE else key
    else:
        return None
    memo_key = (layout_key, token)
    try:
        found = _entries.find(memo_key)
    except TypeError:   # a bound NumPy takes but Python cannot hash (a 0-d array)
        return None
    if found is None:
        dtype, shape, strides = layout_key
        geometry = basic_view_geometry(shape, strides, key)
        entry: Any = False
        if geometry is not None and geometry[0] is not None:
            view_shape, view_strides, delta = geometry
            entry = (view_shape, view_strides, delta, math.prod(view_shape),
                     (dtype, view_shape, view_strides))
        found = _entries.get(memo_key, lambda: entry)
    return found


def basic_view_geometry(shape: tuple, strides: tuple, key: Any):
    """(shape, strides, byte offset delta) of ``a[key]`` for a basic index that NumPy would
    accept and that leaves at least one axis, computed directly; None where NumPy's own
    template indexing should answer (errors), ``(None, None, delta)`` where NumPy gives a
    scalar (every axis indexed by an integer, or ``()`` on a 0-d array: a scalar at byte offset
    ``delta``)."""
    items = key if type(key) is tuple else (key,)
    if len(items) <= len(shape):  # ints and slices alone (the common keys): one pass
        out_shape, out_strides, delta, axis = [], [], 0, 0
        for k in items:
            kind = type(k)
            if kind is slice:
                start, stop, step = k.indices(shape[axis])
                length = len(range(start, stop, step))
                out_shape.append(length)
                out_strides.append(strides[axis] * step)
                if length:
                    delta += start * strides[axis]
            elif kind is int:
                n = shape[axis]
                if not -n <= k < n:
                    return None
                delta += (k % n) * strides[axis]
            else:
                break
            axis += 1
        else:
            if axis == len(shape) and not out_shape:
                return (None, None, delta)
            out_shape.extend(shape[axis:])
            out_strides.extend(strides[axis:])
            return tuple(out_shape), tuple(out_strides), delta
    n_index = ellipses = 0
    for k in items:
        if k is Ellipsis:
            ellipses += 1
        elif k is not None:
            n_index += 1
    if ellipses > 1 or n_index > len(shape):
        return None
    out_shape, out_strides, delta, axis = [], [], 0, 0
    for k in items:
        if k is Ellipsis:
            for _ in range(len(shape) - n_index):
                out_shape.append(shape[axis])
                out_strides.append(strides[axis])
                axis += 1
        elif k is None:
            out_shape.append(1)
            out_strides.append(0)
        elif type(k) is slice:
            start, stop, step = k.indices(shape[axis])
            length = len(range(start, stop, step))
            out_shape.append(length)
            out_strides.append(strides[axis] * step)
            if length:
                delta += start * strides[axis]
            axis += 1
        else:
            i = int(k)
            if not -shape[axis] <= i < shape[axis]:
                return None
            delta += (i % shape[axis]) * strides[axis]
            axis += 1
    out_shape.extend(shape[axis:])
    out_strides.extend(strides[axis:])
    if not out_shape and not ellipses:   # NumPy's scalar (a 0-d array only through ``...``)
        return (None, None, delta)
    return tuple(out_shape), tuple(out_strides), delta


_anchors: dict[np.dtype, np.ndarray] = {}


def anchor(dtype: np.dtype) -> np.ndarray:
    """A one-element array of ``dtype`` that geometry templates point at (never read)."""
    found = _anchors.get(dtype)
    if found is None:
        found = _anchors[dtype] = np.zeros(1, dtype=dtype if dtype.itemsize else np.uint8)
    return found


def normalize_shape(shape: Any) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple of ints, with NumPy's errors."""
    if type(shape) is tuple and all(type(n) is int and 0 <= n <= _MAX_INTP for n in shape):
        return shape  # the common case, without the ABC checks (~3 us on a 2-core CPU)
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(shape)
    for n in shape:
        if not isinstance(n, numbers.Integral):
            raise TypeError(f"'{type(n).__name__}' object cannot be interpreted as an integer")
        if n > _MAX_INTP:
            raise ValueError("Maximum allowed dimension exceeded")
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
    return tuple(int(n) for n in shape)


def check_byte_size(shape: tuple[int, ...], itemsize: int) -> None:
    """NumPy's overflow rule: the nonzero extents times the item size must fit an intp
    (even when another extent is 0), else ``ValueError: array is too big``."""
    nbytes = max(itemsize, 1)
    for n in shape:
        nbytes *= n or 1
    if nbytes > _MAX_INTP:
        raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                         "maximum possible size.")
