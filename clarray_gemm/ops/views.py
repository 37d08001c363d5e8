"""NumPy functions that only need an array's metadata or a view: answered without touching
(or mapping) the data, so ``np.shape(x)`` or ``np.transpose(x)`` never cost a host round trip."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, empty_like, full_like, ones_like, zeros_like


def _dtype_or_value(x: Any) -> Any:
    return x.dtype if isinstance(x, DeviceArray) else x


@implements(np.shape)
def shape(a: Any) -> tuple[int, ...]:
    return a.shape


@implements(np.ndim)
def ndim(a: Any) -> int:
    return a.ndim


@implements(np.size)
def size(a: Any, axis: int | None = None) -> int:
    return a.size if axis is None else a.shape[axis]


@implements(np.result_type)
def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    return np.result_type(*(_dtype_or_value(x) for x in arrays_and_dtypes))


@implements(np.transpose)
def transpose(a: DeviceArray, axes=None) -> DeviceArray:
    return a.transpose(axes)


@implements(np.reshape)
def reshape(a: DeviceArray, shape=None, order: str = "C", *, newshape=None, copy=None):
    return a.reshape(shape if shape is not None else newshape, order=order, copy=copy)


@implements(np.ravel)
def ravel(a: DeviceArray, order: str = "C") -> DeviceArray:
    return a.ravel(order)


@implements(np.squeeze)
def squeeze(a: DeviceArray, axis=None) -> DeviceArray:
    return a.squeeze(axis)


@implements(np.swapaxes)
def swapaxes(a: DeviceArray, axis1: int, axis2: int) -> DeviceArray:
    return a.swapaxes(axis1, axis2)


@implements(np.moveaxis)
def moveaxis(a: DeviceArray, source, destination) -> DeviceArray:
    return a.geometry_view(lambda t: np.moveaxis(t, source, destination))


@implements(np.matrix_transpose)
def matrix_transpose(x: DeviceArray) -> DeviceArray:
    return x.mT


@implements(np.copy)
def copy(a: DeviceArray, order: str = "K", subok: bool = False) -> DeviceArray:
    return a.copy(order="F" if order == "F" else "C")


implements(np.empty_like)(lambda a, dtype=None, order="K", subok=True, shape=None, *, device=None:
                          empty_like(a, dtype, shape, device))
implements(np.zeros_like)(lambda a, dtype=None, order="K", subok=True, shape=None, *, device=None:
                          zeros_like(a, dtype, shape, device))
implements(np.ones_like)(lambda a, dtype=None, order="K", subok=True, shape=None, *, device=None:
                         ones_like(a, dtype, shape, device))
implements(np.full_like)(lambda a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                         device=None: full_like(a, fill_value, dtype, shape, device))
