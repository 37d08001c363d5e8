"""``np.bincount`` and ``np.histogram`` on the device (``opencl/bincount.cl``): a work-item an
element adds 1 to its bin's counter, or its weight to the bin's double sum (compare-and-swap,
``cl_khr_int64_base_atomics``). A histogram's edges come from NumPy itself
(``np.histogram_bin_edges`` of the data's extremes, found on the device), so its bins, errors
and result types are NumPy's; each element's bin is found as NumPy finds it.

Where it runs: on devices without a host path (discrete GPUs); elsewhere NumPy on the mapping
(a device result). Weighted sums add in a different order from NumPy's loop (float rounding
may differ in the last bits); counts are exact.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, adopt_host, asarray, host_function, zeros
from ..device import Device
from ..dtypes import storage_ctype
from ..kernels.crossover import has_host_path
from ..kernels.programs import get_kernel
from .sorting import on_gpu_path

__all__ = ["bincount", "histogram"]

SOURCE = "bincount.cl"
_LOCAL = 256
_LOCAL_BINS = 4096      # counts of up to this many bins go through local memory first
_GROUPS_PER_UNIT = 8    # work-groups a compute unit for those (a grid-stride loop)


def _weights(w: Any, like: DeviceArray) -> DeviceArray | None:
    """``w`` as a contiguous device array of like's shape, or None where NumPy should answer
    (complex or object weights, another shape, no 64-bit atomics or doubles on the device)."""
    info = like.device.info
    if not (info.int64_atomics and info.fp64):
        return None
    w = w if type(w) is DeviceArray else np.asarray(w)
    if w.dtype.kind not in "biuf" or w.shape != like.shape:
        return None
    w = asarray(w, device=like.device)
    return w if w.is_c_contiguous else w.copy()


def _launch(device: Device, name: str, n: int, data: DeviceArray, weights: DeviceArray | None,
            bins: DeviceArray, *extra: Any, defines: dict) -> None:
    nbins = bins.shape[0]
    local_bins = weights is None and nbins <= _LOCAL_BINS and \
        4 * _LOCAL_BINS <= device.info.local_mem_bytes // 2
    d = {"T": storage_ctype(data.dtype), "HALF": int(data.dtype == np.float16),
         "WEIGHTS": int(weights is not None), "LOCAL_BINS": _LOCAL_BINS if local_bins else 0,
         **defines}
    if weights is not None:
        d["W"] = storage_ctype(weights.dtype)
        d["W_HALF"] = int(weights.dtype == np.float16)
    if np.float64 in (data.dtype, getattr(weights, "dtype", None)) or weights is not None \
            or d.get("EDGE_T") == "double":
        d["IS_FP64"] = 1
    kernel = get_kernel(device, SOURCE, name, d)
    w = weights if weights is not None else data
    groups = -(-n // _LOCAL)
    if local_bins:
        groups = min(groups, _GROUPS_PER_UNIT * device.info.compute_units)
    gsize = groups * _LOCAL
    kernel.launch(device, (gsize,), (_LOCAL,), np.int64(n), data.storage.kernel_buffer(),
                  np.int64(data.offset // data.itemsize), w.storage.kernel_buffer(),
                  np.int64(w.offset // w.itemsize), *extra, bins.storage.kernel_buffer(write=True))


def _sums(bins: DeviceArray, weighted: bool) -> DeviceArray:
    """The kernels' bins as NumPy's result: int64 counts, or the double sums."""
    return bins.view(np.float64) if weighted else bins.astype(np.int64)


@implements(np.bincount)
def bincount(x: Any, weights: Any = None, minlength: Any = 0) -> Any:
    """``np.bincount`` of a 1-D device array of non-negative integers: int64 counts, or float64
    sums of ``weights``, of length ``max(x) + 1`` (at least ``minlength``)."""
    kwargs = {"weights": weights, "minlength": minlength}
    if type(x) is DeviceArray and has_host_path(x.device):
        return adopt_host(np.asarray(np.bincount(
            x.host_view(), weights=weights.host_view() if type(weights) is DeviceArray
            else weights, minlength=minlength)), x.device)
    if (not on_gpu_path(x) or x.ndim != 1 or x.dtype.kind == "f" or x.dtype == np.uint64
            or x.size >= 1 << 32):
        return host_function(np.bincount, (x,), kwargs)   # NumPy's errors, or its loop
    try:
        minlength = operator.index(minlength)
    except TypeError:
        return host_function(np.bincount, (x,), kwargs)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    w = None
    if weights is not None:
        w = _weights(weights, x)
        if w is None:
            return host_function(np.bincount, (x,), kwargs)
    if not x.is_c_contiguous:
        x = x.copy()
    low, high = (int(v) for v in np.asarray(np.stack((np.min(x), np.max(x)))))   # one read
    if low < 0:
        raise ValueError("'list' argument must have no negative elements")
    length = max(high + 1, minlength)
    if length > np.iinfo(np.int32).max:   # the kernels index bins with int
        return host_function(np.bincount, (x,), kwargs)
    bins = zeros((length,), np.uint64 if w is not None else np.uint32, device=x.device)
    _launch(x.device, "bincount", x.size, x, w, bins, np.int32(length), defines={})
    return _sums(bins, w is not None)


def _edges_out(edges: np.ndarray, given: Any, bins: Any, device: Device) -> Any:
    """The edges as NumPy hands them back: the caller's own ``bins`` object where NumPy returns
    the array it was given, else a device array."""
    return bins if edges is given else adopt_host(np.asarray(edges), device)


@implements(np.histogram)
def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> Any:
    """``np.histogram`` of a device array: (counts or weight sums, bin edges), both device
    arrays; bins given as a count (equal bins) or as increasing edges."""
    kwargs = {"bins": bins, "range": range, "density": density, "weights": weights}
    if type(a) is DeviceArray and has_host_path(a.device):
        given = bins.host_view() if type(bins) is DeviceArray else bins
        hist, edges = np.histogram(a.host_view(), bins=given, range=range, density=density,
                                   weights=weights.host_view() if type(weights) is DeviceArray
                                   else weights)
        return adopt_host(np.asarray(hist), a.device), _edges_out(edges, given, bins, a.device)
    if not on_gpu_path(a) or isinstance(bins, str):
        return host_function(np.histogram, (a,), kwargs)
    edge_input = bins.__array__() if type(bins) is DeviceArray else bins
    uniform = np.ndim(edge_input) == 0
    if range is None and uniform:
        extremes = np.asarray(np.stack((np.min(a), np.max(a))))   # one read; NumPy's edges
    else:
        extremes = np.empty(0, dtype=a.dtype)
    edges = np.histogram_bin_edges(extremes, bins=edge_input, range=range)
    if edges.dtype.kind != "f" or (edges.dtype == np.float64 and not a.device.info.fp64) \
            or edges.dtype not in (np.float32, np.float64):
        return host_function(np.histogram, (a,), kwargs)
    w = None
    if weights is not None:
        w = _weights(weights, a)
        if w is None:
            return host_function(np.histogram, (a,), kwargs)
    x = a if a.is_c_contiguous else a.copy()
    nbins = edges.size - 1
    device = a.device
    counts = zeros((nbins,), np.uint64 if w is not None else np.uint32, device=device)
    edges_dev = asarray(edges, device=device)
    _launch(device, "histogram", x.size, x, w, counts, edges_dev.storage.kernel_buffer(),
            np.int32(nbins), defines={"EDGE_T": storage_ctype(edges.dtype),
                                      "UNIFORM": int(uniform)})
    hist = _sums(counts, w is not None)
    if w is not None and w.dtype != np.float64:
        hist = hist.astype(w.dtype)   # NumPy's result: the weights' type
    edges_out = bins if edges is edge_input else edges_dev
    if density:
        widths = np.diff(edges)
        return hist / asarray(widths, device=device) / np.sum(hist), edges_out
    return hist, edges_out
