"""Rules every operation family shares: which device a call runs on, and which dtype its
kernels compute in for NumPy's result dtype."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..array import DeviceArray
from ..device import Device, get_device

__all__ = ["device_of", "compute_dtype"]

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
    """The dtype kernels compute in for a ``result`` dtype on ``device``, or None: only the host
    can (the rule lives in :mod:`clarray_gemm.dtypes`)."""
    return dtypes.compute_dtype(result, device.info)
