"""The host path's results (unified-memory devices): fresh host-resident arrays for NumPy to
write into, and NumPy's own fresh results taken over without a copy. Internal API for ``ops/``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..device import Device
from ..memory import HOST_BORN_MAX_BYTES, Storage
from .device_array import DeviceArray, from_host

__all__ = ["host_result", "adopt_host"]

_new_object = object.__new__


def host_result(device: Device, nbytes: int, shape: tuple, dtype: np.dtype, strides: tuple,
                *operands: Any) -> list:
    """Internal API for the host path (unified-memory devices): a fresh host-resident array of
    normalised geometry and the writable ndarray of its elements for NumPy to fill (kept as the
    array's host view, so the next operation on it builds none), followed by the host view of
    each of ``operands`` (anything but a device array as it is)."""
    if nbytes <= HOST_BORN_MAX_BYTES and device.info.host_unified_memory:
        # DeviceArray.from_storage and Storage(device, nbytes, True) written out, as is
        # host_view's cache check below: every small host-path result comes here, and the
        # PoCL power-iteration step (three such results) measured ~3 us faster in its loop (57.9
        # against 61.4 us, interleaved runs) than with the calls (tests/test_memory.py keeps the
        # two constructions equal)
        raw = np.empty(nbytes or 1, np.uint8)
        out = _new_object(DeviceArray)
        out._storage, out._shape, out._dtype = Storage.adopting(device, raw, nbytes), shape, dtype
        out._strides, out._offset, out._size = strides, 0, math.prod(shape)
        out.layout_key = (dtype, shape, strides)
    else:
        out = DeviceArray.from_storage(Storage(device, nbytes, True), shape, dtype, strides)
        raw = out._storage._host
    if raw is None:  # not host-resident (a discrete device): the checked route
        view = out.host_view(write=True)
    else:
        view = np.ndarray(shape, dtype, raw, 0, strides)
        out._host_cache = (raw, view)
    if not operands:
        return out, view
    results = [out, view]
    for x in operands:
        if type(x) is DeviceArray:  # host_view()'s common case: the same mapping as last time
            cache = x._host_cache
            x = cache[1] if cache is not None and cache[0] is x._storage._host else x.host_view()
        results.append(x)
    return results


def adopt_host(result: np.ndarray, device: Device) -> DeviceArray:
    """A device array holding a fresh NumPy result that the caller gives up: on unified memory
    its memory is taken over as a host-born storage (no copy) when NumPy owns it, C-contiguous,
    aligned and writable; otherwise a copy (:func:`from_host`)."""
    flags = result.flags
    if (device.info.host_unified_memory and type(result) is np.ndarray and result.size
            and flags.owndata and flags.c_contiguous and flags.aligned and flags.writeable
            and result.dtype.isnative and not result.dtype.hasobject):
        raw = result.reshape(-1).view(np.uint8)
        out = DeviceArray.from_storage(Storage.adopting(device, raw), result.shape,
                                       result.dtype, result.strides)
        out._host_cache = (raw, result)
        return out
    return from_host(result, device)
