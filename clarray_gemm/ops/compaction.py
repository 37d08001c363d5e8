"""Boolean-mask compaction on the device (``opencl/compact.cl``): the rows of ``x`` that a 1-D
mask selects, in order, as NumPy's ``x[mask]`` gives them.

Three launches and one blocking read of 8 bytes: ``mask_count`` counts the selected elements of
each chunk of the mask, ``count_scan`` (one work-group) turns the counts into each chunk's first
output row and their total, the host reads the total (the result's length) and allocates the
result, and ``mask_compact`` recounts each chunk in local memory and copies its selected rows.
The only scratch is the counts: 8 bytes per chunk and 8 for the total, from the device's
buffer pool.

The kernels move elements as unsigned integers of the element's size, so every dtype of a size
shares one program and values keep their bits (NaN payloads, -0.0).
"""
from __future__ import annotations


import numpy as np

from ..array import DeviceArray, empty
from ..device import Device
from ..memo import Memo
from ..drivers import calls
from ..kernels.copy import as_long8
from ..kernels.programs import get_kernel
from ..memory import new_buffer

__all__ = ["compress"]

# Mask elements per work-item, largest first: the largest whose chunks still give every compute
# unit GROUPS_PER_UNIT work-groups (a GPU hides latency with several resident groups per unit),
# else the smallest.
ITEMS_CHOICES = (16, 8, 4)
GROUPS_PER_UNIT = 8
# Work-group sizes (a power of two, at most the device's): the chunk kernels, the count scan.
WG_MAX = 256
SCAN_WG_MAX = 1024
# Output elements each work-item of mask_compact copies at least before a chunk's copy is split
# over more work-groups (S > 1: each recounts the chunk, a read of its mask).
MIN_ITEMS_PER_SLICE = 4
MAX_SLICES = 65535  # NVIDIA's limit on the second dimension of a grid

_UINT = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}
# the column shape and strides of a 1-D x (NDIM 0 never reads them)
_ONES8, _ZEROS8 = as_long8((), 1), as_long8((), 0)


def _pow2_floor(n: int) -> int:
    return 1 << (max(int(n), 1).bit_length() - 1)


class _DeviceKernels:
    """Per device: the work-group sizes and the launchers, built on first use."""

    __slots__ = ("device", "wg", "scan_wg", "target_groups", "_launchers")

    def __init__(self, device: Device):
        info = device.info
        self.device = device
        self.wg = min(WG_MAX, _pow2_floor(info.max_work_group_size))
        self.scan_wg = min(SCAN_WG_MAX, _pow2_floor(info.max_work_group_size))
        self.target_groups = GROUPS_PER_UNIT * max(1, info.compute_units)
        self._launchers: dict[tuple, tuple] = {}

    def items(self, n: int) -> int:
        """ITEMS for a mask of ``n`` elements."""
        for items in ITEMS_CHOICES:
            if -(-n // (self.wg * items)) >= self.target_groups:
                return items
        return ITEMS_CHOICES[-1]

    def launchers(self, itemsize: int, ndim: int, items: int) -> tuple:
        """(mask_count, count_scan, mask_compact) for elements of ``itemsize`` bytes, ``ndim``
        column dimensions and ``items`` mask elements per work-item."""
        key = (itemsize, ndim, items)
        found = self._launchers.get(key)
        if found is None:
            # one program for the three: every kernel of it built for this device's geometry
            defines = {"WG": self.wg, "ITEMS": items, "SCAN_WG": self.scan_wg,
                       "T": _UINT[itemsize], "NDIM": ndim}
            found = self._launchers[key] = tuple(
                get_kernel(self.device, "compact.cl", name, defines)
                for name in ("mask_count", "count_scan", "mask_compact"))
        return found


_devices: Memo[_DeviceKernels] = Memo("compaction kernels")


def _kernels(device: Device) -> _DeviceKernels:
    return _devices.find(device) or _devices.get(device, lambda: _DeviceKernels(device))


def compress(x: DeviceArray, mask: DeviceArray, layout: tuple | None = None) -> DeviceArray:
    """The rows of ``x`` where the 1-D bool ``mask`` (one element per row) is true, in order:
    ``x[mask]`` (NumPy's boolean indexing along axis 0, as ``np.compress(mask, x, axis=0)``).

    ``layout`` is ``x`` seen as rows x columns: (n_rows, row_stride, n_cols, cshape, cstride,
    ndim), strides in elements, cshape and cstride as long8s of the ``ndim`` merged column
    dimensions (innermost last); None for a 1-D ``x``. Returns a new C-contiguous array of
    shape ``(count,) + x.shape[1:]``."""
    if layout is None:
        n_rows, row_stride, n_cols, cshape, cstride, ndim = (
            x.shape[0], x.strides[0] // x.itemsize, 1, _ONES8, _ZEROS8, 0)
    else:
        n_rows, row_stride, n_cols, cshape, cstride, ndim = layout
    device = x.device
    if n_rows == 0:
        return empty((0,) + x.shape[1:], x.dtype, device=device)
    kernels = _kernels(device)
    wg = kernels.wg
    items = kernels.items(n_rows)
    count_k, scan_k, compact_k = kernels.launchers(x.itemsize, ndim, items)
    n_groups = -(-n_rows // (wg * items))
    queue = device.queue
    counts = new_buffer(device, (n_groups + 1) * 8)
    n = np.int64(n_rows)
    mask_buf = mask.storage.kernel_buffer()
    mask_off, mask_stride = np.int64(mask.offset), np.int64(mask.strides[0])
    count_k.launch(device, (n_groups * wg,), (wg,), n, mask_buf, mask_off, mask_stride, counts)
    scan_k.launch(device, (kernels.scan_wg,), (kernels.scan_wg,), np.int64(n_groups), counts)
    total = np.empty(1, np.int64)
    calls.read_buffer(queue, counts, total)  # blocking: waits for the scan
    count = int(total[0])
    out = empty((count,) + x.shape[1:], x.dtype, device=device)
    if count and n_cols:
        slices = 1
        if ndim:  # spread few chunks of long rows over more work-groups
            per_chunk = count * n_cols // n_groups
            slices = max(1, min(-(-kernels.target_groups // n_groups),
                                per_chunk // (wg * MIN_ITEMS_PER_SLICE), MAX_SLICES))
        compact_k.launch(device, (n_groups * wg, slices), (wg, 1), n, np.int64(n_cols),
                         x.storage.kernel_buffer(), np.int64(x.offset // x.itemsize),
                         np.int64(row_stride), cshape, cstride, mask_buf, mask_off, mask_stride,
                         counts, out.storage.kernel_buffer(write=True))
    return out
