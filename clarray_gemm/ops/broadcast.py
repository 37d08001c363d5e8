"""``np.broadcast_to`` and ``np.broadcast_arrays`` of device arrays: zero-stride device views,
as NumPy's are (dask's ``ones``/``full`` broadcast one element this way)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, asarray

__all__ = ["broadcast_to", "broadcast_arrays"]


@implements(np.broadcast_to)
def broadcast_to(array: Any, shape: Any, subok: bool = False) -> DeviceArray:
    """A read-only-in-spirit view of ``array`` with ``shape`` (NumPy's errors)."""
    x = array if isinstance(array, DeviceArray) else asarray(array)
    return x.broadcast_view(shape)


@implements(np.broadcast_arrays)
def broadcast_arrays(*args: Any, subok: bool = False) -> tuple[Any, ...]:
    """The arguments broadcast against each other, device arrays as device views."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    return tuple(broadcast_to(a, shape) if isinstance(a, DeviceArray) else np.broadcast_to(a, shape)
                 for a in args)
