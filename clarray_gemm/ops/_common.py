"""Rules every operation family shares: which operands a device operation takes (the rest is
NumPy's to answer), which device a call runs on, and which dtype its kernels compute in for
NumPy's result dtype."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .. import dtypes
from .._dispatch import NumPyDecides
from ..array import DeviceArray
from ..device import Device, get_device

__all__ = ["operand", "take_operands", "numpy_answers", "device_of", "compute_dtype"]


def operand(x: Any) -> DeviceArray | np.ndarray:
    """A device array or ndarray as is; anything else NumPy accepts (lists, scalars, strings)
    as ``np.asarray`` sees it."""
    return x if isinstance(x, (DeviceArray, np.ndarray)) else np.asarray(x)


def take_operands(*operands: DeviceArray | np.ndarray) -> None:
    """Raise :class:`~clarray_gemm._dispatch.NumPyDecides` when an operand's dtype is one only
    NumPy computes with (``dtypes.numpy_only``): the dispatcher then runs NumPy's own function,
    whose dtype checks come before its shape checks, so its exception type and message are the
    answer (``x @ "a"``: ``UFuncTypeError``; ``np.dot(x, strings)``: its ``ValueError``)."""
    for x in operands:
        if dtypes.numpy_only(x.dtype):
            raise NumPyDecides(f"dtype {x.dtype} has no device operation")


def numpy_answers(numpy_func: Callable[..., Any], *device_only: str):
    """For a public entry point that is also called directly (``clarray_gemm.matmul``): where
    its device implementation raises ``NumPyDecides``, ``numpy_func`` answers through NumPy's
    dispatch, without the ``device_only`` keywords (``kernel=``, ``params=``)."""
    def decorator(impl):
        @functools.wraps(impl)
        def entry(*args, **kwargs):
            try:
                return impl(*args, **kwargs)
            except NumPyDecides:
                for name in device_only:
                    kwargs.pop(name, None)
                return numpy_func(*args, **kwargs)
        return entry
    return decorator

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
