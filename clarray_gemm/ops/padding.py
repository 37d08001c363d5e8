"""``np.pad`` of device arrays: a constant border is a device fill plus one device-side copy of
the array into the interior; other modes (edge, reflect, wrap, ...) run NumPy's ``pad`` on a host
view and put the result on the device."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, asarray, full, to_host

__all__ = ["pad"]


@implements(np.pad)
def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> DeviceArray:
    """NumPy's ``pad`` with a device array as the result."""
    x = array if isinstance(array, DeviceArray) else asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width), (x.ndim, 2)) if x.ndim else None
    values = np.asarray(kwargs.get("constant_values", 0))
    uniform = values.size == 1 or values.ndim == 0
    if (mode != "constant" or not uniform or widths is None or set(kwargs) - {"constant_values"}
            or widths.dtype.kind not in "iu" or (widths < 0).any()):
        return asarray(np.pad(to_host(x), to_host(pad_width), mode, **to_host(kwargs)),
                       device=x.device)
    shape = tuple(n + int(lo) + int(hi) for n, (lo, hi) in zip(x.shape, widths))
    result = full(shape, values.reshape(()).astype(x.dtype)[()], x.dtype, device=x.device)
    if x.size:
        result[tuple(slice(int(lo), int(lo) + n) for n, (lo, _) in zip(x.shape, widths))] = x
    return result
