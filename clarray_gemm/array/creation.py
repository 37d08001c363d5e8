"""Creating device arrays: from host data (``asarray``), uninitialised (``empty``) or filled
(``zeros``, ``ones``, ``full`` and the ``*_like`` forms), with NumPy's defaults and errors."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..device import devices, get_device
from ..dtypes import check_device_dtype
from ..memory import ForeignStorage
from .device_array import DeviceArray, from_host, new_array

__all__ = ["asarray", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
           "ones_like", "full_like"]


def asarray(a: Any, dtype=None, device=None, copy: bool | None = None) -> DeviceArray:
    """A device array from anything ``np.asarray`` accepts (or a device array).

    Host data is copied once, straight into the mapped device buffer. Byte-swapped input is
    stored in native byte order (values are unchanged). A device array on the requested device
    and dtype is returned as is unless ``copy=True``. A ``pyopencl.array.Array`` made on a
    device's ``context`` is shared, not copied (see ``DeviceArray.to_pyopencl``).
    """
    dev = get_device(device) if device is not None else (
        a.device if isinstance(a, DeviceArray) else get_device(None))
    if isinstance(a, DeviceArray):
        if copy is False and (a.device != dev or (dtype is not None and np.dtype(dtype) != a.dtype)):
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        if a.device != dev:
            return asarray(a.__array__(), dtype=dtype, device=dev)
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a
    if _is_pyopencl_array(a):
        shared = _from_pyopencl(a, device)
        return asarray(shared, dtype=dtype, copy=copy)
    if copy is False:
        raise ValueError("Unable to avoid copy while creating a device array from host data.")
    host = np.asarray(a, dtype=dtype)
    if host.dtype.hasobject:
        check_device_dtype(host.dtype, f"clarray_gemm.asarray({_short_repr(a)})")
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="))
    return from_host(host, dev)


def _is_pyopencl_array(a: Any) -> bool:
    return type(a).__module__.startswith("pyopencl") and hasattr(a, "base_data")


def _from_pyopencl(a: Any, device: Any) -> DeviceArray:
    """A device array over a ``pyopencl.array.Array``'s buffer (no copy): the array must live in
    the context of one of this package's devices (make it on ``device.context``)."""
    found = [d for d in devices() if "context" in d.__dict__ and d.context == a.context]
    if device is not None:
        found = [d for d in found if d == get_device(device)]
    if not found:
        raise ValueError("the pyopencl array belongs to a context no clarray_gemm device uses; "
                         "make it on clarray_gemm.get_device(...).context, or copy it: "
                         "clarray_gemm.asarray(array.get())")
    dtype = np.dtype(a.dtype)
    storage = ForeignStorage.wrapping(found[0], a.base_data, a)
    return DeviceArray.from_storage(storage, tuple(a.shape), dtype, tuple(a.strides),
                                    int(a.offset))


def empty(shape, dtype=np.float64, device=None, order: str = "C", *,
          host_resident: bool = False) -> DeviceArray:
    """An uninitialised device array (NumPy's default dtype, float64). ``host_resident=True``
    (unified-memory devices) leaves its buffer mapped for host writes that follow."""
    return new_array(shape, dtype, get_device(device), order, host_resident)


def full(shape, fill_value, dtype=None, device=None, order: str = "C") -> DeviceArray:
    """A device array filled with ``fill_value`` (written through one write mapping)."""
    dtype = np.array(fill_value).dtype if dtype is None else np.dtype(dtype)
    a = empty(shape, dtype, device, order, host_resident=True)
    if a.size:
        with a.storage.map_for_write(discard=True) as host:
            host.view(dtype)[: a.size] = fill_value
    return a


def zeros(shape, dtype=np.float64, device=None, order: str = "C") -> DeviceArray:
    """A device array of zeros."""
    return full(shape, 0, dtype, device, order)


def ones(shape, dtype=np.float64, device=None, order: str = "C") -> DeviceArray:
    """A device array of ones."""
    return full(shape, 1, dtype, device, order)


def _like(a, dtype, shape, device):
    dtype = a.dtype if dtype is None else dtype
    shape = np.shape(a) if shape is None else shape
    if device is None and isinstance(a, DeviceArray):
        device = a.device
    return dtype, shape, device


def empty_like(a, dtype=None, shape=None, device=None) -> DeviceArray:
    """``empty`` with the shape, dtype and device of ``a`` unless given."""
    dtype, shape, device = _like(a, dtype, shape, device)
    return empty(shape, dtype, device)


def zeros_like(a, dtype=None, shape=None, device=None) -> DeviceArray:
    """``zeros`` with the shape, dtype and device of ``a`` unless given."""
    dtype, shape, device = _like(a, dtype, shape, device)
    return zeros(shape, dtype, device)


def ones_like(a, dtype=None, shape=None, device=None) -> DeviceArray:
    """``ones`` with the shape, dtype and device of ``a`` unless given."""
    dtype, shape, device = _like(a, dtype, shape, device)
    return ones(shape, dtype, device)


def full_like(a, fill_value, dtype=None, shape=None, device=None) -> DeviceArray:
    """``full`` with the shape, dtype and device of ``a`` unless given."""
    dtype, shape, device = _like(a, dtype, shape, device)
    return full(shape, fill_value, dtype, device)


def _short_repr(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 40 else text[:37] + "..."
