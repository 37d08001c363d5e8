"""DLPack export and import of device arrays.

Export (``x.__dlpack__``): on unified-memory devices (CPU drivers, integrated GPUs) the buffer is
host memory, so the capsule describes the host mapping itself, as a CPU tensor (``kDLCPU``), no
copy. The exported array holds the host view that keeps the mapping alive, and it counts as a
live host view: a later kernel or host write to the device array moves the array to a fresh
buffer (copy-on-write) rather than changing what the consumer holds. DLPack 1.x consumers get the
read-only flag (device arrays' host views are read-only); a legacy consumer (no ``max_version``
or below 1.0), which cannot be told, gets a copy, or with ``copy=False`` the mapping itself,
writable (its writes reach the device array until the next kernel moves it). ``copy=True``
always exports a fresh host copy. Discrete devices (``kDLOpenCL``) export only a host copy,
with ``dl_device=(kDLCPU, 0)``; ``copy=False`` there raises ``BufferError``, as the standard says.

Import (``from_dlpack``): CPU producers (NumPy, PyTorch on the CPU, anything with
``__dlpack__``) are read through ``np.from_dlpack`` and copied once into a device buffer;
``copy=False`` raises ``BufferError`` since an OpenCL buffer cannot adopt foreign memory.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dispatch
from .. import array as _array
from ..array import DeviceArray
from ..device import get_device

__all__ = ["KDL_CPU", "KDL_OPENCL", "dlpack_device", "export", "from_dlpack"]

KDL_CPU = 1
KDL_OPENCL = 4


def dlpack_device(x: DeviceArray) -> tuple[int, int]:
    """``(kDLCPU, 0)`` on unified-memory devices (the buffer is host memory), else
    ``(kDLOpenCL, device index)``."""
    if x.device.info.host_unified_memory:
        return KDL_CPU, 0
    return KDL_OPENCL, x.device.index


class _WritableMapping:
    """Exposes a read-only host view's memory as writable through ``__array_interface__``, and
    keeps the view (so the mapping and its registration as a live host view) alive."""

    def __init__(self, view: np.ndarray):
        self.view = view
        interface = dict(view.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


def _is_legacy(max_version: Any) -> bool:
    return max_version is None or tuple(max_version)[0] < 1


def export(x: DeviceArray, *, stream: Any = None, max_version: Any = None,
           dl_device: Any = None, copy: bool | None = None) -> Any:
    """The DLPack capsule of ``x`` (see the module's doc for when it is a copy)."""
    if dl_device is not None and tuple(dl_device) != (KDL_CPU, 0) \
            and tuple(dl_device) != dlpack_device(x):
        raise BufferError(f"cannot export an array on {x.device} to DLPack device {dl_device}")
    kwargs = {"stream": stream, "max_version": max_version}
    if copy:
        return x.get().__dlpack__(**kwargs, copy=False)
    if not x.device.info.host_unified_memory:
        if copy is False:
            raise BufferError(f"{x.device} is not host memory: exporting to DLPack needs a copy "
                              "(copy=None or copy=True, dl_device=(1, 0))")
        if dl_device is None:
            raise BufferError("OpenCL buffers cannot be exported as kDLOpenCL tensors; request a "
                              "host copy with dl_device=(1, 0)")
        return x.get().__dlpack__(**kwargs, copy=False)
    view = np.asarray(x)
    if _is_legacy(max_version) and view.size:
        if copy is None:
            return view.copy().__dlpack__(**kwargs)
        view = np.asarray(_WritableMapping(view))
    return view.__dlpack__(**kwargs, copy=False)


def from_dlpack(x: Any, *, device: Any = None, copy: bool | None = None) -> DeviceArray:
    """A device array from a DLPack producer: a device array as is (or moved, or copied), a CPU
    producer copied once into a device buffer."""
    if isinstance(x, DeviceArray):
        target = x.device if device is None else get_device(device)
        if copy is False and target != x.device:
            raise BufferError(f"moving an array from {x.device} to {target} needs a copy")
        return _array.asarray(x, device=target, copy=copy)
    if copy is False:
        raise BufferError("from_dlpack: a CPU producer's memory cannot become an OpenCL buffer "
                          "without a copy (use copy=None or copy=True)")
    return _array.asarray(np.from_dlpack(x), device=device)


_dispatch.register_dlpack(dlpack_device, export)
