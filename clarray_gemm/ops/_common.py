"""Rules every operation family shares: which device a call runs on, and which dtype its
kernels compute in for NumPy's result dtype."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..array import DeviceArray
from ..device import Device, get_device

__all__ = ["device_of", "compute_dtype"]

# Results NumPy keeps narrow are computed exactly in 64 bits (integer overflow wraps modulo
# 2**64, so the low bits are NumPy's wrapped result; bool is "any nonzero") and float16 in
# float32, then cast back on the device.
_WIDEN = {np.dtype(np.bool_): np.dtype(np.uint64), np.dtype(np.int8): np.dtype(np.int64),
          np.dtype(np.int16): np.dtype(np.int64), np.dtype(np.uint8): np.dtype(np.uint64),
          np.dtype(np.uint16): np.dtype(np.uint64), np.dtype(np.float16): np.dtype(np.float32)}
_KERNEL_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.uint32,
                                        np.uint64)}


def device_of(*objs: Any) -> Device:
    """The device of the device arrays among ``objs`` (ValueError if several), else the current."""
    found = None
    for o in objs:
        if type(o) is DeviceArray or isinstance(o, DeviceArray):
            if found is None:
                found = o.device
            elif o.device is not found and o.device != found:
                devs = {x.device for x in objs if isinstance(x, DeviceArray)}
                raise ValueError("operands are on different OpenCL devices: "
                                 + ", ".join(str(d) for d in devs))
    return found if found is not None else get_device(None)


def compute_dtype(result: np.dtype, device: Device) -> np.dtype | None:
    """The dtype kernels compute in for a ``result`` dtype, or None: only the host can."""
    compute = _WIDEN.get(np.dtype(result), np.dtype(result))
    if compute not in _KERNEL_DTYPES or (compute == np.float64 and not device.info.fp64):
        return None
    return compute
