"""Gathers on the device (``opencl/gather.cl``): ``np.take``, indexing with one integer array
or with several (``a[i0, ..., ik]``, and its assignment, a scatter), boolean-mask indexing, and
the ``arange`` fill.

Indices are checked against the axis length as NumPy does (``IndexError``): NumPy's indices on
the host before their upload, device index arrays by the gather itself, which flags an index out
of range in a word the host then reads (one blocking read of 4 bytes). A boolean mask is a
compaction (:mod:`.compaction`): three launches and a read of 8 bytes (the result's length).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyopencl as cl
from numpy.lib.array_utils import normalize_axis_index

from .. import _dispatch
from .._dispatch import implements
from ..array import DeviceArray, adopt_host, asarray, empty, host_function
from ..array.geometry import c_strides, shape_text
from ..device import Device
from ..drivers import calls
from ..dtypes import device_copy_supported, storage_ctype
from ..kernels import flags
from ..kernels.copy import MAX_DIMS, as_long8, merge_dims
from ..kernels.crossover import host_wins
from ..kernels.plans import PlanCache
from ..kernels.programs import ctype, get_kernel
from ..memory import Storage
from . import compaction
from .elementwise import held_dtype

__all__ = ["take", "multi_take", "multi_put", "device_setitem", "compress_rows", "iota", "device_getitem"]


def _rows(x: DeviceArray) -> tuple | None:
    """(n_rows, row_stride, n_cols, cshape8, cstride8, ndim) of ``x`` as rows x columns."""
    isz = x.itemsize
    cols, (cstride,) = merge_dims(x.shape[1:], [s // isz for s in x.strides[1:]])
    if len(cols) > MAX_DIMS:
        return None
    return (x.shape[0], x.strides[0] // isz, math.prod(x.shape[1:]), as_long8(cols, 1),
            as_long8(cstride, 0), len(cols))


def _launch_size(device: Device, n: int) -> tuple:
    local = min(256, device.info.max_work_group_size)
    return (-(-n // local) * local,), (local,)


def _check_bounds(indices: Any, n: int, axis: int) -> None:
    if indices.size == 0:
        return
    lo, hi = int(np.min(indices)), int(np.max(indices))
    bad = hi if hi >= n else (lo if lo < -n else None)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")


def _read_word(device: Device, buf: cl.Buffer) -> int:
    word = np.empty(1, np.int32)
    calls.read_buffer(device.queue, buf, word)   # blocking: waits for the gather
    return int(word[0])


class _TakePlan:
    """``np.take(a, indices, axis)`` (mode 'raise') for one key: the gather kernel bound with
    its fixed arguments and the result's geometry (the indices' dimensions in place of
    ``axis``), so that a repeated call allocates, enqueues and, for device indices, reads the
    bounds flag. ``supported`` False: NumPy's answer through the host."""

    def __init__(self, a: DeviceArray, indices: DeviceArray, axis: int, checked: bool):
        self.supported = False
        if indices.dtype.kind not in "iu" or not held_dtype(a.dtype, a.device):
            return
        v = a.geometry_view(lambda t: np.moveaxis(t, axis, 0)) if axis else a
        layout = _rows(v)
        if layout is None:
            return
        self.supported = True
        self.device, self.axis, self.checked = a.device, axis, checked
        n_rows, row_stride, n_cols, cshape, cstride, ndim = layout
        self.n_rows, self.itemsize = n_rows, a.itemsize
        self.widen = indices.dtype == np.uint64  # no unsigned 64-bit loads: as int64
        idx_dtype = np.dtype(np.int64) if self.widen else indices.dtype
        self.flat = indices.is_c_contiguous and not self.widen  # read in place
        shape = indices.shape + v.shape[1:]
        strides = c_strides(shape, a.itemsize)
        if axis:  # indices' dimensions replace `axis`, in place
            k = indices.ndim
            order = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, len(shape)))
            shape = tuple(shape[i] for i in order)
            strides = tuple(strides[i] for i in order)
        self.shape, self.strides, self.dtype = shape, strides, a.dtype
        self.nbytes = math.prod(shape) * a.itemsize
        n = indices.size * n_cols
        self.bound = None
        if n:
            kernel = get_kernel(a.device, "gather.cl", "take",
                                {"T": storage_ctype(a.dtype), "NDIM": ndim,
                                 "IDX_T": ctype(idx_dtype),
                                 "CHECK": int(not checked)})
            i64 = np.int64
            args = (i64(n), i64(n_cols), i64(n_rows), None, None, i64(row_stride), cshape,
                    cstride, None, None, None) + (() if checked else (None, None))
            per_call = (3, 4, 8, 9, 10) + (() if checked else (11, 12))
            self.bound = kernel.bind(a.device, *_launch_size(a.device, n), args, per_call)

    def run(self, a: DeviceArray, indices: DeviceArray) -> DeviceArray:
        device = self.device
        out = DeviceArray.from_storage(Storage.for_output(device, self.nbytes), self.shape,
                                       self.dtype, self.strides)
        if not self.flat:
            indices = (indices.astype(np.int64) if self.widen else indices).reshape(-1)
        if self.bound is None:
            if not self.checked and indices.size:
                _check_bounds(np.asarray(indices), self.n_rows, self.axis)
            return out
        a_off = a._offset // self.itemsize
        i_off = indices._offset // indices.itemsize
        args = (a._storage.kernel_buffer(), np.int64(a_off), indices._storage.kernel_buffer(),
                np.int64(i_off), out._storage.kernel_buffer(True))
        if self.checked:
            self.bound(*args)
            return out
        flag, epoch = flags.flag_word(device), flags.next_epoch()
        self.bound(*args, flag, epoch)
        if _read_word(device, flag) == epoch:
            _check_bounds(np.asarray(indices), self.n_rows, self.axis)   # NumPy's message
        return out


_TAKES: PlanCache[_TakePlan] = PlanCache("take")


def take(a: DeviceArray, indices: Any, axis: int | None = None) -> Any:
    """``np.take(a, indices, axis)`` (mode 'raise') as one gather kernel."""
    if axis is None:
        a, axis = a.reshape(-1), 0
    elif type(axis) is not int or not 0 <= axis < a.ndim:
        axis = normalize_axis_index(axis, a.ndim)
    checked = type(indices) is not DeviceArray
    if checked:  # NumPy's indices: checked on the host, before the upload
        host = np.asarray(indices)
        if host.dtype.kind not in "iu" and host.size:
            return NotImplemented
        _check_bounds(host, a.shape[axis], axis)
        indices = asarray(host.astype(np.int64, copy=False), device=a.device)
    key = (a.device, a.layout_key, indices.layout_key, axis, checked)
    plan = _TAKES.find(key) or _TAKES.get(key, lambda: _TakePlan(a, indices, axis, checked))
    if not plan.supported:
        return NotImplemented
    return plan.run(a, indices)


def _index_array(key: Any, device: Device) -> Any:
    """An entry of a multi-index as a device array or an integer ndarray, or None (host path:
    booleans, floats, scalars, another device)."""
    if type(key) is DeviceArray:
        return key if key.device is device and key.dtype.kind in "iu" else None
    if isinstance(key, list):
        try:
            host = np.asarray(key)
        except ValueError:  # ragged: NumPy's own error through the host path
            return None
        if host.size == 0 and host.dtype.kind == "f":  # NumPy takes [] as an empty intp index
            host = host.astype(np.intp)
    elif isinstance(key, np.ndarray):
        host = key
    else:
        return None
    return host if host.dtype.kind in "iu" else None


def _check_multi(keys: list, dims: tuple, first_axis: int = 0) -> None:
    """NumPy's IndexError for the first index out of range: axis 0's array first, each array
    in its memory order (NumPy's check loop), before any gather."""
    for axis, (key, n) in enumerate(zip(keys, dims), first_axis):
        host = np.asarray(key).ravel(order="K")
        if host.size == 0:
            continue
        bad = np.flatnonzero((host >= n) | (host < -n)) if host.dtype.kind == "i" else \
            np.flatnonzero(host >= n)
        if bad.size:
            raise IndexError(f"index {host[bad[0]]} is out of bounds for axis {axis} "
                             f"with size {n}")


def _broadcast_keys(keys: list) -> tuple:
    """The index arrays' broadcast shape; NumPy's IndexError where they do not broadcast."""
    try:
        return np.broadcast_shapes(*(key.shape for key in keys))
    except ValueError:
        shapes = " ".join(str(key.shape) for key in keys)
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {shapes} ") from None


def _flat_index(x: DeviceArray, keys: list, bshape: tuple) -> Any:
    """The row index (int64, ``bshape``) into x's leading ``len(keys)`` axes merged of each
    multi-index, one ravel_index launch an index array; NumPy's IndexError for an index out of
    range (host arrays checked before the upload, device arrays by the kernel's flag, one read).
    NotImplemented for index geometries the kernel does not address."""
    dims = x.shape[:len(keys)]
    n = math.prod(bshape)
    device, flagged, prepared = x.device, False, []
    if n:  # (NumPy checks nothing when the result has no elements)
        for axis, key in enumerate(keys):
            if type(key) is not DeviceArray:  # NumPy's indices: checked on the host, uploaded
                try:
                    _check_multi([key], dims[axis:axis + 1], axis)
                except IndexError:
                    _check_multi(keys[:axis], dims[:axis])  # an earlier axis's error first
                    raise
                key, checked = asarray(np.asarray(key).astype(np.int64, copy=False),
                                       device=device), True
            else:
                checked, flagged = False, True
                if key.dtype == np.uint64:  # no unsigned 64-bit loads: as int64
                    key = key.astype(np.int64)
            prepared.append((key, checked))
    flat = empty(bshape, np.int64, device=device)
    if not n:
        return flat
    flag, epoch = (flags.flag_word(device), flags.next_epoch()) if flagged else (None, None)
    for axis, ((key, checked), n_axis) in enumerate(zip(prepared, dims)):
        view = key if key.shape == bshape else key.broadcast_view(bshape)
        isz = view.itemsize
        ishape, (istride,) = merge_dims(bshape, [s // isz for s in view.strides])
        if len(ishape) > MAX_DIMS:
            return NotImplemented
        kernel = get_kernel(device, "gather.cl", "ravel_index",
                            {"NDIM": len(ishape), "IDX_T": ctype(key.dtype),
                             "CHECK": int(not checked), "FIRST": int(axis == 0)})
        args = [np.int64(n), as_long8(ishape, 1), as_long8(istride, 0),
                view.storage.kernel_buffer(), np.int64(view.offset // isz),
                np.int64(n_axis), flat.storage.kernel_buffer(write=True)]
        if not checked:
            args += [flag, epoch]
        kernel.launch(device, *_launch_size(device, n), *args)
    if flagged and _read_word(device, flag) == epoch:
        _check_multi(keys, dims)   # NumPy's message (a host array's was raised before)
    return flat


def _merged(x: DeviceArray, k: int) -> DeviceArray | None:
    """A view of ``x`` with its leading ``k`` axes as one, or None where their strides do not
    chain."""
    st, sh = x.strides, x.shape
    if not all(st[d] == st[d + 1] * sh[d + 1] for d in range(k - 1)):
        return None
    return DeviceArray.from_storage(x.storage, (math.prod(sh[:k]),) + sh[k:], x.dtype,
                                    st[k - 1:], x.offset)


def multi_take(x: DeviceArray, keys: list) -> Any:
    """``x[i0, ..., ik]`` for k (2..x.ndim) integer index arrays (device arrays or ndarrays),
    NumPy's advanced indexing: the arrays broadcast together, each index folded into one row
    index over x's leading k axes merged (``opencl/gather.cl`` ravel_index, one launch an
    axis), then one :func:`take` gather of those rows. Returns NotImplemented for layouts
    the gather does not take (host path)."""
    flat = _flat_index(x, keys, _broadcast_keys(keys))
    if flat is NotImplemented:
        return NotImplemented
    merged = _merged(x, len(keys))
    if merged is None:  # a C-contiguous copy's leading axes chain
        merged = _merged(x.copy(), len(keys))
    key = (x.device, merged.layout_key, flat.layout_key, 0, True)
    plan = _TAKES.find(key) or _TAKES.get(key, lambda: _TakePlan(merged, flat, 0, True))
    if not plan.supported:
        return NotImplemented
    return plan.run(merged, flat)


def multi_put(x: DeviceArray, keys: list, value: Any) -> Any:
    """``x[i0, ..., ik] = value`` for k (2..x.ndim) integer index arrays, NumPy's advanced
    assignment: ``value`` cast to x's dtype and broadcast to the indexing result, and of
    repeated positions the last in C order written (three launches of ``opencl/gather.cl``'s
    scatter kernels over the row index of :func:`multi_take`). NumPy's errors, in its order.
    Returns NotImplemented (host path) for layouts and values it does not take."""
    k = len(keys)
    merged = _merged(x, k)
    if merged is None or x.dtype.kind not in "biuf" or not held_dtype(x.dtype, x.device):
        return NotImplemented
    if type(value) is DeviceArray:
        if value.device is not x.device or value.dtype.kind not in "biuf" \
                or not device_copy_supported(value.dtype, x.dtype):
            return NotImplemented
    else:
        value = np.asarray(value, dtype=x.dtype)   # NumPy's cast (Python ints' OverflowError)
    bshape = _broadcast_keys(keys)
    rshape = bshape + x.shape[k:]
    vshape = value.shape
    while len(vshape) > len(rshape) and vshape[0] == 1:  # NumPy drops leading ones
        vshape = vshape[1:]
    if len(vshape) > len(rshape) or not all(a in (1, b) for a, b in zip(vshape[::-1],
                                                                       rshape[::-1])):
        raise ValueError(f"shape mismatch: value array of shape {shape_text(value.shape)} "
                         "could not be broadcast to indexing result of shape "
                         f"{shape_text(rshape)}")
    layout = _rows(merged)
    n_idx = math.prod(bshape)
    if layout is None or n_idx >= 2 ** 31:
        return NotImplemented
    flat = _flat_index(x, keys, bshape)
    if flat is NotImplemented:
        return NotImplemented
    n = math.prod(rshape)
    if not n:
        return None
    device = x.device
    if (type(value) is DeviceArray and value.shape == rshape and value.dtype == x.dtype
            and value.is_c_contiguous and value.storage is not x.storage):
        vals = value   # the rows as the scatter reads them (``g[r, y] -= 1``'s fresh gather)
    else:
        source = value.reshape(vshape) if type(value) is DeviceArray else \
            asarray(np.ascontiguousarray(value.reshape(vshape)), device=device)
        vals = empty(rshape, x.dtype, device=device)
        vals.assign_from(source)
    _, row_stride, n_cols, cshape, cstride, ndim = layout
    winner = empty((merged.shape[0],), np.int32, device=device)
    defines = {"T": storage_ctype(x.dtype), "NDIM": ndim}
    flat_buf, win_buf = flat.storage.kernel_buffer(), winner.storage.kernel_buffer(write=True)
    for name in ("scatter_clear", "scatter_claim"):
        get_kernel(device, "gather.cl", name, defines).launch(
            device, *_launch_size(device, n_idx), np.int64(n_idx), flat_buf, win_buf)
    get_kernel(device, "gather.cl", "scatter_rows", defines).launch(
        device, *_launch_size(device, n), np.int64(n), np.int64(n_cols), flat_buf,
        win_buf, merged.storage.kernel_buffer(write=True), np.int64(merged.offset // x.itemsize),
        np.int64(row_stride), cshape, cstride, vals.storage.kernel_buffer())
    return None


def compress_rows(x: DeviceArray, mask: DeviceArray) -> Any:
    """``x[mask]`` for a bool mask over ``x``'s leading dimensions."""
    lead = mask.ndim
    if x.shape[:lead] != mask.shape:
        for i, (n, m) in enumerate(zip(x.shape, mask.shape)):
            if n != m:
                raise IndexError(f"boolean index did not match indexed array along axis {i}; "
                                 f"size of axis is {n} but size of corresponding boolean axis "
                                 f"is {m}")
    if not held_dtype(x.dtype, x.device):
        return NotImplemented
    if lead == 1:  # x's rows as they are
        v, flat_mask = x, mask
    elif x.is_c_contiguous and mask.is_c_contiguous and x.size > 1:
        # the leading dimensions flattened as views made directly (a reshape computes its view
        # on a NumPy template, which costs more than enqueuing the compaction)
        n = mask.size
        v = DeviceArray.from_storage(x.storage, (n,) + x.shape[lead:], x.dtype,
                                     x.strides[lead - 1:], x.offset)
        flat_mask = DeviceArray.from_storage(mask.storage, (n,), mask.dtype, (1,), mask.offset)
    else:
        v = x.reshape((math.prod(x.shape[:lead]),) + x.shape[lead:])
        flat_mask = mask.reshape(-1)
    if v.ndim == 0:
        return NotImplemented
    layout = None  # one column: compaction's own
    if v.ndim > 1:
        layout = _rows(v)
        if layout is None:
            return NotImplemented
    return compaction.compress(v, flat_mask, layout)


def iota(n: int, start: Any, delta: Any, second: Any, dtype: np.dtype, device: Device
         ) -> DeviceArray:
    """``start + i * delta`` in ``dtype`` (element 1 is ``second``), as NumPy's arange fills."""
    out = empty((n,), dtype, device=device)
    if n:
        defines = {"T": ctype(dtype), "NDIM": 0}
        if dtype == np.float64:
            defines["IS_FP64"] = 1
        kernel = get_kernel(device, "gather.cl", "iota", defines)
        kernel.launch(device, *_launch_size(device, n), np.int64(n), dtype.type(start),
                      dtype.type(delta), dtype.type(second), out.storage.kernel_buffer(write=True))
    return out


def device_getitem(x: DeviceArray, key: Any) -> Any:
    """Advanced indexing the device handles: one bool mask (over leading dimensions), one
    integer array (along axis 0), or 2..x.ndim integer arrays for the leading axes; anything
    else returns NotImplemented (host)."""
    if isinstance(key, tuple):
        if 2 <= len(key) <= x.ndim:
            keys = [_index_array(k, x.device) for k in key]
            if any(k is None for k in keys) or all(k.ndim == 0 for k in keys):
                return NotImplemented
            if host_wins(x.device, "elementwise", x.dtype, x.size):
                host_key = tuple(k.host_view() if type(k) is DeviceArray else k for k in keys)
                return adopt_host(x.host_view()[host_key], x.device)
            return multi_take(x, keys)
        if len(key) != 1:
            return NotImplemented
        key = key[0]
    if isinstance(key, list):
        key = np.asarray(key)
        if key.dtype.kind not in "biu":
            return NotImplemented
    if not isinstance(key, (DeviceArray, np.ndarray)) or key.ndim == 0 or x.ndim == 0:
        return NotImplemented
    if host_wins(x.device, "elementwise", x.dtype, x.size):
        host_key = key.host_view() if type(key) is DeviceArray else key
        # the host path: NumPy's gather is a fresh array, taken over without a copy
        return adopt_host(x.host_view()[host_key], x.device)
    if key.dtype == np.bool_:
        if key.ndim > x.ndim:
            return NotImplemented
        mask = key if type(key) is DeviceArray else asarray(key, device=x.device)
        return compress_rows(x, mask)
    if key.dtype.kind in "iu":
        return take(x, key, 0)
    return NotImplemented


_dispatch.GETITEM = device_getitem


def device_setitem(x: DeviceArray, key: tuple, value: Any) -> Any:
    """Advanced assignment the device handles: ``x[i0, ..., ik] = value`` with k (2..x.ndim)
    integer index arrays; anything else returns NotImplemented (host)."""
    if not 2 <= len(key) <= x.ndim:
        return NotImplemented
    keys = [_index_array(k, x.device) for k in key]
    if any(k is None for k in keys) or all(k.ndim == 0 for k in keys) \
            or host_wins(x.device, "elementwise", x.dtype, x.size):
        return NotImplemented
    return multi_put(x, keys, value)


_dispatch.SETITEM = device_setitem


@implements(np.take)
def device_take(a, indices, axis=None, out=None, mode="raise"):
    """``np.take`` on the device (mode 'raise'); other modes on host views."""
    result = NotImplemented
    if (type(a) is DeviceArray and out is None and type(indices) is not DeviceArray
            and host_wins(a.device, "elementwise", a.dtype, a.size)):
        return asarray(np.take(a.host_view(), indices, axis, mode=mode), device=a.device)
    if type(a) is DeviceArray and mode == "raise" and (out is None or type(out) is DeviceArray):
        scalar = np.ndim(indices) == 0 and type(indices) is not DeviceArray
        result = take(a, np.asarray(indices).reshape(1) if scalar else indices, axis)
        if result is not NotImplemented and scalar:
            result = result.reshape(result.shape[:0]) if axis is None else \
                result.squeeze(normalize_axis_index(axis, a.ndim))
    if result is NotImplemented:
        return host_function(np.take, (a, indices), {"axis": axis, "out": out, "mode": mode})
    if out is not None:
        out[...] = result
        return out
    return result
