"""``np.sort`` and ``np.argsort`` (and the ``sort``/``argsort`` methods) on the device,
NumPy's stable order bit for bit (NaNs last, equal keys in their order) for every kind: a
stable order is a valid answer to each. Rows of up to :func:`max_row` elements sort in local
memory, one work-group a row, in one launch: a bitonic network of (key, index) pairs
(``opencl/sort.cl``). Longer rows go to the radix sort of :mod:`.radix_sort`.

Where it runs: on devices without a host path (discrete GPUs). On devices whose memory is the
host's (CPU drivers), NumPy's sort on the mapping is the faster one and runs there (a device
result, not a fallback). ``order=`` and structured or complex data go through NumPy on host
views (counted).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.lib import _function_base_impl
from numpy.lib.array_utils import normalize_axis_index

from .._dispatch import implements
from ..array import DeviceArray, adopt_host, asarray, empty, host_function
from ..device import Device
from ..dtypes import storage_ctype
from ..kernels.crossover import has_host_path
from ..kernels.programs import get_kernel
from ..memo import Memo
from .radix_sort import LONGEST, sort_rows_radix

__all__ = ["sort", "argsort", "partition", "argpartition", "median", "nanmedian", "unique",
           "searchsorted", "quantile", "percentile", "nanquantile", "nanpercentile", "max_row",
           "on_gpu_path"]

SOURCE = "sort.cl"
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")
_MAX_WG = 256
_LOCAL_SHARE = 0.75   # of the device's local memory, for one row's keys and indices


def max_row(device: Device, dtype: np.dtype) -> int:
    """The longest row the device sorts in local memory for ``dtype`` (a power of two)."""
    budget = int(device.info.local_mem_bytes * _LOCAL_SHARE)
    p = 2
    while 2 * p * (dtype.itemsize + 4) <= budget:
        p *= 2
    return p


def _slots(n: int) -> int:
    p = 2
    while p < n:
        p *= 2
    return p


_KERNELS: Memo[Any] = Memo("sort kernels")


def _kernel(device: Device, dtype: np.dtype, slots: int, arg: bool, name: str):
    wg = min(slots // 2, _MAX_WG, device.info.max_work_group_size)
    defines = {"T": storage_ctype(dtype), "P": slots, "WG": wg,
               "IS_FLOAT": int(dtype.kind == "f"), "HALF": int(dtype == np.float16),
               "ARG": int(arg)}
    if dtype == np.float64:
        defines["IS_FP64"] = 1
    return get_kernel(device, SOURCE, name, defines), wg


def _launcher(device: Device, dtype: np.dtype, slots: int, arg: bool, name: str):
    key = (device, dtype, slots, arg, name)
    return _KERNELS.find(key) or _KERNELS.get(key, lambda: _kernel(*key))


def _device_sorts(a: Any, kind: Any, order: Any, stable: Any) -> bool:
    if type(a) is not DeviceArray or a.ndim == 0 or order is not None:
        return False
    if kind not in _KINDS or (stable is not None and kind is not None):
        return False   # NumPy's errors
    dt = a.dtype
    if dt.kind not in "biuf" or (dt == np.float64 and not a.device.info.fp64):
        return False
    return True


def _rows_sorted(a: DeviceArray, axis: int, arg: bool) -> Any:
    """The rows along ``axis`` sorted (``arg``: their indices, int64), NumPy's result layout
    (C order); None beyond :data:`LONGEST` elements in all."""
    device = a.device
    axis = normalize_axis_index(axis, a.ndim)
    x = a if axis == a.ndim - 1 else a.geometry_view(lambda t: np.moveaxis(t, axis, -1))
    n = x.shape[-1]
    if x.size > LONGEST:
        return None
    if not x.is_c_contiguous:
        x = x.copy()
    out_dtype = np.dtype(np.int64) if arg else a.dtype
    out = empty(x.shape, out_dtype, device=device)
    rows = x.size // n if n else 0
    block = max_row(device, a.dtype)
    if rows and n > block:
        sort_rows_radix(x, out, rows, n, arg)
    elif rows:
        kernel, wg = _launcher(device, a.dtype, _slots(n), arg, "sort_rows")
        kernel.launch(device, (rows * wg,), (wg,), np.int32(n), x.storage.kernel_buffer(),
                      np.int64(x.offset // x.itemsize), out.storage.kernel_buffer(write=True))
    if axis == a.ndim - 1:
        return out
    return out.geometry_view(lambda t: np.moveaxis(t, -1, axis)).copy()


def _sorted(func: Any, a: Any, axis: Any, kind: Any, order: Any, stable: Any, arg: bool) -> Any:
    kwargs = {"axis": axis, "kind": kind, "order": order, "stable": stable}
    if not _device_sorts(a, kind, order, stable):
        return host_function(func, (a,), kwargs)
    if has_host_path(a.device):   # NumPy's sort on the mapping: a device result
        return adopt_host(np.asarray(func(a.host_view(), **kwargs)), a.device)
    if axis is None:
        a, axis = a.reshape(-1), 0
    result = _rows_sorted(a, axis, arg)
    if result is None:
        return host_function(func, (a,), kwargs)
    return result


@implements(np.sort)
def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> Any:
    """``np.sort`` of a device array: NumPy's stable order (see the module's doc)."""
    return _sorted(np.sort, a, axis, kind, order, stable, arg=False)


@implements(np.argsort)
def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None) -> Any:
    """``np.argsort`` of a device array: the indices of NumPy's stable order (int64)."""
    return _sorted(np.argsort, a, axis, kind, order, stable, arg=True)


def _check_kth(kth: Any, n: int) -> bool:
    """NumPy's ValueError for a ``kth`` out of bounds; False where NumPy's own checks should
    answer (booleans, non-integers)."""
    k = np.asarray(kth)
    if k.dtype.kind not in "iu" or k.ndim > 1:
        return False
    for v in k.reshape(-1).tolist():
        at = v + n if v < 0 else v
        if not 0 <= at < n:
            raise ValueError(f"kth(={at}) out of bounds ({n})")
    return True


def _partitioned(func: Any, a: Any, kth: Any, axis: Any, kind: Any, order: Any,
                 arg: bool) -> Any:
    kwargs = {"axis": axis, "kind": kind, "order": order}
    if (not _device_sorts(a, None, order, None) or kind != "introselect"
            or has_host_path(a.device)):
        if type(a) is DeviceArray and has_host_path(a.device) and order is None:
            return adopt_host(np.asarray(func(a.host_view(), kth, **kwargs)), a.device)
        return host_function(func, (a, kth), kwargs)
    if axis is None:
        a, axis = a.reshape(-1), 0
    n = a.shape[normalize_axis_index(axis, a.ndim)]
    if not _check_kth(kth, n):
        return host_function(func, (a, kth), kwargs)
    result = _rows_sorted(a, axis, arg)
    return host_function(func, (a, kth), kwargs) if result is None else result


@implements(np.partition)
def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """``np.partition`` of a device array: the rows sorted (a partition for every ``kth``: each
    kth element in its sorted place, none after it smaller, none before it larger)."""
    return _partitioned(np.partition, a, kth, axis, kind, order, arg=False)


@implements(np.argpartition)
def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                 order: Any = None) -> Any:
    """``np.argpartition`` of a device array: the indices of the rows' stable sort (int64), a
    partition for every ``kth``."""
    return _partitioned(np.argpartition, a, kth, axis, kind, order, arg=True)


def on_gpu_path(a: Any) -> bool:
    """Whether a function computed by sorting runs on the device: a real device array on a
    device without a host path (where NumPy on the mapping is the faster one)."""
    return (type(a) is DeviceArray and a.dtype.kind in "biuf" and a.size > 0
            and not has_host_path(a.device)
            and (a.dtype != np.float64 or a.device.info.fp64))


def _reduced_rows(a: DeviceArray, axis: Any):
    """``a`` with the axes ``axis`` names (every axis for None) moved last and merged into one:
    (rows, those axes, their element count); None where NumPy should answer (a repeated axis:
    its error; no elements: its empty rule)."""
    axes = tuple(range(a.ndim)) if axis is None else tuple(
        normalize_axis_index(ax, a.ndim) for ax in (axis if isinstance(axis, tuple) else (axis,)))
    n = int(np.prod([a.shape[ax] for ax in axes], dtype=np.int64))
    if len(set(axes)) != len(axes) or n == 0:
        return None
    kept = [ax for ax in range(a.ndim) if ax not in axes]
    rows = a.geometry_view(lambda t: np.transpose(t, kept + list(axes))).reshape(
        tuple(a.shape[ax] for ax in kept) + (n,))
    return rows, axes, n


def _kept_dims(a: DeviceArray, axes: tuple) -> tuple:
    """``keepdims``' shape: ``a``'s with the reduced axes as ones."""
    return tuple(1 if ax in axes else a.shape[ax] for ax in range(a.ndim))


@implements(np.median)
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """``np.median`` of a device array: the sorted rows' middle element, or NumPy's mean of the
    middle two; NaN where a row holds one (NumPy's rule: the NaN itself)."""
    kwargs = {"axis": axis, "out": out, "overwrite_input": overwrite_input,
              "keepdims": keepdims}
    if not on_gpu_path(a) or out is not None:
        if type(a) is DeviceArray and has_host_path(a.device) and out is None:
            return adopt_host(np.asarray(np.median(a.host_view(), **kwargs)), a.device)
        return host_function(np.median, (a,), kwargs)
    reduced = _reduced_rows(a, axis)
    s = None if reduced is None else _rows_sorted(reduced[0], -1, arg=False)
    if s is None:
        return host_function(np.median, (a,), kwargs)
    _, axes, n = reduced
    middle = np.mean(s[..., (n - 1) // 2:n // 2 + 1], axis=-1)
    if a.dtype.kind == "f":   # a NaN sorts last: the row's median is that NaN
        last = s[..., n - 1]
        middle = np.where(np.isnan(last), last.astype(middle.dtype), middle)
    if keepdims:
        middle = middle.reshape(_kept_dims(a, axes))
    return middle


@implements(np.nanmedian)
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: Any = np._NoValue) -> Any:
    """``np.nanmedian`` of a float32/float64 device array: the sorted rows (NaN last), the
    middle of each row's values that are not NaN (NumPy's mean of the middle two); NaN and
    NumPy's "All-NaN slice" warning for a row of NaNs. Integers: ``np.median``."""
    kwargs = {"axis": axis, "out": out, "overwrite_input": overwrite_input}
    if keepdims is not np._NoValue:
        kwargs["keepdims"] = keepdims
    if not on_gpu_path(a) or out is not None or a.dtype == np.float16:
        if type(a) is DeviceArray and has_host_path(a.device) and out is None:
            return adopt_host(np.asarray(np.nanmedian(a.host_view(), **kwargs)), a.device)
        return host_function(np.nanmedian, (a,), kwargs)
    if a.dtype.kind != "f":
        return median(a, axis=axis, keepdims=keepdims is True)
    reduced = _reduced_rows(a, axis)
    s = None if reduced is None else _rows_sorted(reduced[0], -1, arg=False)
    if s is None:
        return host_function(np.nanmedian, (a,), kwargs)
    rows, axes, n = reduced
    count = n - np.sum(np.isnan(rows), axis=-1, dtype=np.int64)
    lo = np.take_along_axis(s, np.maximum((count - 1) // 2, 0)[..., None], -1)[..., 0]
    hi = np.take_along_axis(s, np.minimum(count // 2, n - 1)[..., None], -1)[..., 0]
    middle = np.where(count % 2 == 1, lo, (lo + hi) / 2)
    if bool(np.any(count == 0)):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        middle = np.where(count == 0, np.nan, middle).astype(a.dtype)
    if keepdims is True:
        middle = middle.reshape(_kept_dims(a, axes))
    return middle


_INVERSE_KEEPS_SHAPE: list[bool] = []


def _inverse_keeps_shape() -> bool:
    """Whether this NumPy's ``unique(..., return_inverse=True)`` gives the inverse the input's
    shape (NumPy 2.x; 1.x flattened it)."""
    if not _INVERSE_KEEPS_SHAPE:
        _INVERSE_KEEPS_SHAPE.append(
            np.unique(np.zeros((2, 2)), return_inverse=True)[1].shape == (2, 2))
    return _INVERSE_KEEPS_SHAPE[0]


@implements(np.unique)
def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           sorted: bool = True) -> Any:
    """``np.unique`` of a device array (``axis=None``): a stable sort, then a mask of the first
    of each run of equal values (NaNs one run with ``equal_nan``), its compaction; the first
    indices, the inverse (through the inverse permutation) and the counts from the same mask."""
    kwargs = {"return_index": return_index, "return_inverse": return_inverse,
              "return_counts": return_counts, "axis": axis, "equal_nan": equal_nan,
              "sorted": sorted}
    if axis is not None or not on_gpu_path(ar):
        if type(ar) is DeviceArray and has_host_path(ar.device):
            result = np.unique(ar.host_view(), **kwargs)
            if isinstance(result, tuple):
                return tuple(adopt_host(np.asarray(r), ar.device) for r in result)
            return adopt_host(np.asarray(result), ar.device)
        return host_function(np.unique, (ar,), kwargs)
    flat = ar.reshape(-1)
    n = flat.size
    if return_index or return_inverse:   # the order itself is needed
        perm = _rows_sorted(flat, 0, arg=True)
        s = None if perm is None else flat[perm]
    else:                                # the sorted values alone: no indices to carry
        s = _rows_sorted(flat, 0, arg=False)
    if s is None:
        return host_function(np.unique, (ar,), kwargs)
    first = np.concatenate([np.ones(1, bool), s[1:] != s[:-1]])
    if equal_nan and ar.dtype.kind == "f":   # every NaN after the first joins its run
        nan = np.isnan(s)
        first = first & ~(nan & np.concatenate([np.zeros(1, bool), nan[:-1]]))
    values = s[first]
    if not (return_index or return_inverse or return_counts):
        return values
    result = [values]
    if return_index:
        result.append(perm[first])
    if return_inverse:
        runs = np.cumsum(first, dtype=np.int64) - 1
        inverse = runs[_rows_sorted(perm, 0, arg=True)]   # the inverse permutation's gather
        result.append(inverse.reshape(ar.shape) if _inverse_keeps_shape() else inverse)
    if return_counts:
        starts = np.flatnonzero(first)
        result.append(np.diff(np.concatenate([starts, np.full(1, n, np.int64)])))
    return tuple(result)


@implements(np.searchsorted)
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """``np.searchsorted`` into a sorted 1-D device array: a binary search per value on the
    device, in the sort's order (NaN last); ``sorter`` (a device index array) gathers first.
    A scalar value gives NumPy's intp scalar."""
    kwargs = {"side": side, "sorter": sorter}
    on_gpu = (on_gpu_path(a) and a.ndim == 1 and side in ("left", "right")
              and (sorter is None or (type(sorter) is DeviceArray and sorter.dtype.kind in "iu"
                                      and sorter.shape == a.shape)))
    values = v if type(v) is DeviceArray else np.asarray(v)
    if not on_gpu or values.dtype.kind not in "biuf":
        if type(a) is DeviceArray and has_host_path(a.device) and type(v) is not DeviceArray \
                and sorter is None:
            found = np.searchsorted(a.host_view(), v, side)
            return found if np.ndim(found) == 0 else adopt_host(found, a.device)
        return host_function(np.searchsorted, (a, v), kwargs)
    dt = np.result_type(a.dtype, v if np.ndim(v) == 0 and type(v) is not DeviceArray
                        else values.dtype)
    if dt.kind not in "biuf" or (dt == np.float64 and not a.device.info.fp64):
        return host_function(np.searchsorted, (a, v), kwargs)
    device = a.device
    if sorter is not None:
        a = a[sorter]
    keys = a if a.dtype == dt and a.is_c_contiguous else a.astype(dt)
    x = values if type(values) is DeviceArray else asarray(values, device=device)
    x = x if x.dtype == dt and x.is_c_contiguous else x.astype(dt)
    out = empty(x.shape, np.int64, device=device)
    if x.size:
        key = (device, dt, side)
        kernel = _SEARCHES.find(key) or _SEARCHES.get(key, lambda: _search_kernel(*key))
        local = min(64, device.info.max_work_group_size)
        kernel.launch(device, (-(-x.size // local) * local,), (local,), np.int64(keys.size),
                      keys.storage.kernel_buffer(), np.int64(keys.offset // keys.itemsize),
                      np.int64(x.size), x.storage.kernel_buffer(),
                      np.int64(x.offset // x.itemsize), out.storage.kernel_buffer(write=True))
    if type(v) is not DeviceArray and np.ndim(v) == 0:
        return out.__array__()[()]   # NumPy's intp scalar for a scalar value
    return out


_SEARCHES: Memo[Any] = Memo("searchsorted kernels")


def _search_kernel(device: Device, dtype: np.dtype, side: str):
    defines = {"T": storage_ctype(dtype), "IS_FLOAT": int(dtype.kind == "f"),
               "HALF": int(dtype == np.float16), "RIGHT": int(side == "right")}
    if dtype == np.float64:
        defines["IS_FP64"] = 1
    return get_kernel(device, SOURCE, "search_sorted", defines)


def _lerp(below: Any, above: Any, t: Any, low_half: Any, dtype: np.dtype) -> Any:
    """NumPy's ``_lerp`` of the neighbours ``below``/``above`` (the input's dtype) at ``t``
    (float64, a number or a device array): their difference in the input's dtype, then, in the
    result's ``dtype``, ``below + diff * t`` below t = 0.5 and ``above - diff * (1 - t)`` from
    it (``low_half``: t < 0.5, a bool or a device array)."""
    diff = (above - below).astype(dtype)
    below, above = below.astype(dtype), above.astype(dtype)
    if type(low_half) is bool or isinstance(low_half, np.bool_):
        return below + diff * dtype.type(t) if low_half else above - diff * dtype.type(1 - t)
    return np.where(low_half, below + diff * t.astype(dtype), above - diff * (1 - t).astype(dtype))


_methods = getattr(_function_base_impl, "_QuantileMethods", None)
_get_indexes = getattr(_function_base_impl, "_get_indexes", None)
_get_gamma = getattr(_function_base_impl, "_get_gamma", None)


def _other_methods_known(method: Any) -> bool:
    """Whether NumPy's own method table (its private ``_QuantileMethods`` and helpers) can say
    where ``method`` takes its points: else NumPy computes the quantile."""
    return (_methods is not None and _get_indexes is not None and _get_gamma is not None
            and isinstance(method, str) and method in _methods)


def _method_points(q: Any, scale: float, n: int, method: str, dtype: np.dtype) -> list:
    """For each quantile, (lower index, upper index, interpolation weight) into the sorted rows
    of ``n`` values as NumPy's ``_quantile`` finds them for ``method`` (its own functions on
    the quantiles as NumPy prepares them: the weight None where the method takes one element;
    a Python float where q was a Python number, as NumPy's weak promotion has it)."""
    props = _methods[method]
    weak = type(q) in (int, float)
    prepared = np.asanyarray(q) if scale == 1.0 else np.asanyarray(np.true_divide(q, 100))
    points = []
    for quantile in prepared.reshape(-1):
        virtual = np.asanyarray(props["get_virtual_index"](n, np.asanyarray(quantile)))
        if props["fix_gamma"] is None:
            points.append((int(virtual), None, None))
            continue
        lo, hi = _get_indexes(np.empty(0, dtype), virtual, n)
        gamma = _get_gamma(virtual, lo, props)
        points.append((int(lo), int(hi), float(gamma) if weak else gamma[()]))
    return points


def _quantiles(func: Any, a: Any, q: Any, scale: float, axis: Any, out: Any,
               overwrite_input: bool, method: str, keepdims: bool, weights: Any) -> Any:
    """``np.quantile`` / ``np.percentile`` (``scale`` 1 / 100) with the linear method: the
    sorted rows' two neighbours of index q * (n - 1), interpolated as NumPy's ``_lerp`` does
    (from the lower one below t = 0.5, from the upper one above); a row holding a NaN gives
    that NaN, as NumPy's do."""
    kwargs = {"axis": axis, "out": out, "overwrite_input": overwrite_input, "method": method,
              "keepdims": keepdims, "weights": weights}
    if (not on_gpu_path(a) or out is not None or weights is not None or type(q) is DeviceArray
            or (method != "linear" and not _other_methods_known(method))):
        if type(a) is DeviceArray and has_host_path(a.device) and out is None \
                and type(q) is not DeviceArray:
            found = func(a.host_view(), q, **kwargs)
            return found if np.ndim(found) == 0 else adopt_host(np.asarray(found), a.device)
        return host_function(func, (a, q), kwargs)
    # NumPy's checks of q (its range, its type) and method, and its result dtype, on a stand-in
    result_dtype = np.asarray(func(np.zeros(2, a.dtype), q, method=method)).dtype
    qs = np.asarray(q, dtype=np.float64) / scale
    reduced = _reduced_rows(a, axis)
    raw = None if reduced is None else _rows_sorted(reduced[0], -1, arg=False)
    if raw is None:
        return host_function(func, (a, q), kwargs)
    _, axes, n = reduced
    parts = []
    if method == "linear":
        for quantile in qs.reshape(-1):
            index = quantile * (n - 1)
            lo = int(np.floor(index))
            hi = min(lo + 1, n - 1)
            t = index - lo
            parts.append(_lerp(raw[..., lo], raw[..., hi], t, t < 0.5, result_dtype))
    else:
        for lo, hi, t in _method_points(q, scale, n, method, a.dtype):
            if t is None:   # a method that takes a sorted element itself
                parts.append(raw[..., lo].astype(result_dtype))
            else:
                parts.append(_lerp(raw[..., lo], raw[..., hi], t, bool(t < 0.5),
                                   result_dtype))
    result = parts[0] if qs.ndim == 0 else np.stack(parts).reshape(qs.shape + parts[0].shape)
    if a.dtype.kind == "f":   # NumPy: a row holding a NaN gives that NaN (its last element)
        last = raw[..., n - 1]
        if result.ndim == 0 and bool(np.isnan(last)):
            result = last   # NumPy's 0-d case: the element itself, in the input's dtype
        elif result.ndim:
            result = np.where(np.isnan(last), last.astype(result_dtype), result)
    if keepdims:
        result = result.reshape(qs.shape + _kept_dims(a, axes))
    return result


@implements(np.quantile)
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``np.quantile`` of a device array (the linear method on the device; see
    :func:`_quantiles`)."""
    return _quantiles(np.quantile, a, q, 1.0, axis, out, overwrite_input, method, keepdims,
                      weights)


@implements(np.percentile)
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None) -> Any:
    """``np.percentile`` of a device array (the linear method on the device)."""
    return _quantiles(np.percentile, a, q, 100.0, axis, out, overwrite_input, method, keepdims,
                      weights)


def _nanquantiles(func: Any, plain: Any, a: Any, q: Any, scale: float, axis: Any, out: Any,
                  overwrite_input: bool, method: str, keepdims: Any, weights: Any) -> Any:
    """``np.nanquantile`` / ``np.nanpercentile`` with the linear method: as
    :func:`_quantiles`, each row's index q * (k - 1) counting only its k values that are not
    NaN (they sort first); NaN and NumPy's "All-NaN slice" warning for a row of NaNs.
    Integers: ``plain`` (``np.quantile`` / ``np.percentile``), as NumPy does."""
    kwargs = {"axis": axis, "out": out, "overwrite_input": overwrite_input, "method": method,
              "weights": weights}
    if keepdims is not np._NoValue:
        kwargs["keepdims"] = keepdims
    if (not on_gpu_path(a) or out is not None or method != "linear" or weights is not None
            or type(q) is DeviceArray or a.dtype == np.float16 or not a.device.info.fp64):
        if type(a) is DeviceArray and has_host_path(a.device) and out is None \
                and type(q) is not DeviceArray:
            found = func(a.host_view(), q, **kwargs)
            return found if np.ndim(found) == 0 else adopt_host(np.asarray(found), a.device)
        return host_function(func, (a, q), kwargs)
    if a.dtype.kind != "f":
        return plain(a, q, axis=axis, keepdims=keepdims is True)
    result_dtype = np.asarray(func(np.zeros(2, a.dtype), q)).dtype   # NumPy's checks of q
    qs = np.asarray(q, dtype=np.float64) / scale
    reduced = _reduced_rows(a, axis)
    raw = None if reduced is None else _rows_sorted(reduced[0], -1, arg=False)
    if raw is None:
        return host_function(func, (a, q), kwargs)
    rows, axes, n = reduced
    count = n - np.sum(np.isnan(rows), axis=-1, dtype=np.int64)
    last = np.maximum(count - 1, 0)
    span = last.astype(np.float64)
    parts = []
    for quantile in qs.reshape(-1):
        index = quantile * span
        lo = np.floor(index)
        t = index - lo
        lo_i = lo.astype(np.int64)
        hi_i = np.minimum(lo_i + 1, last)
        below = np.take_along_axis(raw, lo_i[..., None], -1)[..., 0]
        above = np.take_along_axis(raw, hi_i[..., None], -1)[..., 0]
        parts.append(_lerp(below, above, t, t < 0.5, result_dtype))
    result = parts[0] if qs.ndim == 0 else np.stack(parts).reshape(qs.shape + parts[0].shape)
    if bool(np.any(count == 0)):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        result = np.where(count == 0, np.nan, result).astype(result_dtype)
    if keepdims is True:
        result = result.reshape(qs.shape + _kept_dims(a, axes))
    return result


@implements(np.nanquantile)
def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: Any = np._NoValue, *, weights: Any = None) -> Any:
    """``np.nanquantile`` of a device array (the linear method on the device; see
    :func:`_nanquantiles`)."""
    return _nanquantiles(np.nanquantile, np.quantile, a, q, 1.0, axis, out, overwrite_input,
                         method, keepdims, weights)


@implements(np.nanpercentile)
def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: Any = np._NoValue, *, weights: Any = None) -> Any:
    """``np.nanpercentile`` of a device array (the linear method on the device)."""
    return _nanquantiles(np.nanpercentile, np.percentile, a, q, 100.0, axis, out,
                         overwrite_input, method, keepdims, weights)
