"""The host path's results (unified-memory devices): fresh host-resident arrays for NumPy to
write into, and NumPy's own fresh results taken over without a copy. Internal API for ``ops/``.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import _dispatch
from ..device import Device
from ..memo import Memo
from ..memory import Storage
from .device_array import DeviceArray, from_host
from .geometry import c_strides

__all__ = ["host_result", "result_maker", "result_adopter", "adopt_host"]

_new_object = object.__new__


def host_result(device: Device, nbytes: int, shape: tuple, dtype: np.dtype, strides: tuple,
                *operands: Any) -> list:
    """Internal API for the host path (unified-memory devices): a fresh host-resident array of
    normalised geometry and the writable ndarray of its elements for NumPy to fill (kept as the
    array's host view, so the next operation on it builds none), followed by the host view of
    each of ``operands`` (anything but a device array as it is). A plan that makes results of
    one geometry again and again keeps :func:`result_maker`'s function instead."""
    key = (device, nbytes, shape, dtype, strides)
    make = _find_maker(key) or _MAKERS.get(
        key, lambda: result_maker(device, nbytes, shape, dtype, strides))
    return make(*operands)


# result makers per geometry (they hold their device)
_MAKERS: Memo[Callable[..., Any]] = Memo("host-path result makers", capacity=1024)
_find_maker = _MAKERS.find


def result_maker(device: Device, nbytes: int, shape: tuple, dtype: np.dtype, strides: tuple,
                 fill: Callable[..., Any] | None = None,
                 operands: int | None = None,
                 fresh: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """:func:`host_result` for one geometry, resolved once: ``make(*operands)`` returns what
    ``host_result(device, nbytes, shape, dtype, strides, *operands)`` returns; with ``fill``
    (a NumPy function with an ``out=``: a ufunc, ``np.ndarray.dot``), ``make`` calls
    ``fill(*operand views, out=result view)`` and returns the result alone (a ufunc of a
    C-ordered array result: its own fresh result where that fits, see :func:`_fill_maker`). ``operands``: how
    many ``make`` always takes, where ``fill`` is not a ufunc (whose ``nin`` says it), for a
    ``make`` written out for one or two; ``fresh``: a function of the same operands that returns
    NumPy's own fresh result of this geometry (``np.ndarray.copy`` for ``fill``'s copy), taken
    over where it has the planned dtype and C order."""
    if not nbytes <= device.info.host_born_max_bytes:  # 0 on discrete devices
        def make_checked(*operands: Any) -> Any:
            out = DeviceArray.from_storage(Storage(device, nbytes, True), shape, dtype, strides)
            if out._storage._host is None:  # not host-resident (a discrete device)
                view = out.host_view(write=True)
            else:
                view = np.ndarray(shape, dtype, out._storage._host, 0, strides)
                out._host_cache = (out._storage._host, view)
            args = [x.host_view() if type(x) is DeviceArray else x for x in operands]
            if fill is None:
                return [out, view, *args]
            fill(*args, out=view)
            return out
        return make_checked

    # C order: the result's memory is the typed array NumPy fills (see memory.storage._as_bytes)
    c_order = math.prod(shape) > 0 and strides == c_strides(shape, dtype.itemsize)
    empty, uint8, ndarray, alloc = np.empty, np.uint8, np.ndarray, nbytes or 1
    host_born = _host_born_builder(device, nbytes, shape, dtype, strides)

    if fill is not None and c_order:
        if isinstance(fill, np.ufunc):
            operands = fill.nin if fill.nout == 1 else None
        if operands in (1, 2):
            return _fill_maker(fill, operands, shape, dtype, host_born, fresh)

    def make(*operands: Any) -> Any:
        if c_order:
            raw = view = empty(shape, dtype)
        else:
            raw = empty(alloc, uint8)
            view = ndarray(shape, dtype, raw, 0, strides)
        out = host_born(raw, view)
        args = []
        for x in operands:
            if type(x) is DeviceArray:  # host_view()'s common case: the same mapping as before
                cache = x._host_cache
                x = cache[1] if cache is not None and cache[0] is x._storage._host else (
                    x.host_view())
            args.append(x)
        if fill is None:
            return [out, view, *args]
        fill(*args, out=view)
        return out
    return make


def _fill_maker(fill: Callable[..., Any], operands: int, shape: tuple, dtype: np.dtype,
                host_born: Callable[[np.ndarray, np.ndarray], DeviceArray],
                fresh: Callable[..., Any] | None = None) -> Callable[..., DeviceArray]:
    """:func:`result_maker`'s ``make`` of a C-ordered result for ``fill`` of one or two
    operands, written out per arity: every small operator and reduction on the host path comes
    here (no operand list). A ufunc of an array result is called without ``out=`` and its
    fresh result taken over (the same loop and bits, without an empty result allocated first
    and the keyword parsed: a small operator's call 7-10% cheaper); where NumPy's result has
    another dtype or order than this geometry's (its own order for operands in another order),
    and for every other ``fill``, ``fill(..., out=fresh result)``, from then on (one maker
    serves one set of operand layouts, so that answer does not change). ``fresh`` (see
    :func:`result_maker`) stands for the ufunc call where ``fill`` is not one. (``out=`` stays a
    keyword: NumPy deprecates a positional output for ``maximum`` and ``minimum``.)"""
    empty, ndarray = np.empty, np.ndarray
    strides = c_strides(shape, dtype.itemsize)
    if fresh is None and isinstance(fill, np.ufunc) and shape != ():
        fresh = fill  # (a 0-d ufunc result is a NumPy scalar, not an array to take over)
    # NumPy's own result fits this geometry (``fresh``'s, until it once does not)
    natural = [fresh is not None]

    def into_fresh(*args: Any) -> DeviceArray:
        natural[0] = False
        view = empty(shape, dtype)
        out = host_born(view, view)
        fill(*args, out=view)
        return out

    if operands == 1:
        def make1(x: Any) -> DeviceArray:
            if type(x) is DeviceArray:   # host_view()'s common case: the mapping as before
                cache = x._host_cache
                x = cache[1] if cache is not None and cache[0] is x._storage._host else (
                    x.host_view())
            if natural[0]:
                result = fresh(x)
                if type(result) is ndarray and result.dtype is dtype and (
                        result.strides == strides):
                    return host_born(result, result)
            return into_fresh(x)
        return make1

    def make2(x: Any, y: Any) -> DeviceArray:
        if type(x) is DeviceArray:
            cache = x._host_cache
            x = cache[1] if cache is not None and cache[0] is x._storage._host else (
                x.host_view())
        if type(y) is DeviceArray:
            cache = y._host_cache
            y = cache[1] if cache is not None and cache[0] is y._storage._host else (
                y.host_view())
        if natural[0]:
            result = fresh(x, y)
            if type(result) is ndarray and result.dtype is dtype and result.strides == strides:
                return host_born(result, result)
        return into_fresh(x, y)
    return make2


def _host_born_builder(device: Device, nbytes: int, shape: tuple, dtype: np.dtype,
                       strides: tuple) -> Callable[[np.ndarray, np.ndarray], DeviceArray]:
    """``build(raw, view)``: the device array of this geometry over host memory ``raw`` (1-D
    uint8 or, in C order, ``view`` itself; ``nbytes`` of it, that no one else writes) whose
    elements ``view`` is, as
    ``DeviceArray.from_storage(Storage.adopting(device, raw, nbytes), ...)`` builds it."""
    # those two constructors written out, with every constant bound here: every small
    # host-path result comes here, and in the PoCL power-iteration loop (three such results a
    # step, after a 4 MiB product) each Python frame and global lookup costs several times its
    # time in isolation (tests/memory/test_memory.py keeps the two constructions equal).
    size, layout_key, new = math.prod(shape), (dtype, shape, strides), _new_object

    def build(raw: np.ndarray, view: np.ndarray) -> DeviceArray:
        storage = new(Storage)
        storage.device, storage.nbytes, storage._host, storage._unified = device, nbytes, raw, True
        storage._exports = storage._read_map = storage._mapping = storage._buffer = None
        storage._read_is_copy = storage._write_mapped = False
        out = new(DeviceArray)
        out._storage, out._shape, out._dtype = storage, shape, dtype
        out._strides, out._offset, out._size = strides, 0, size
        out.layout_key = layout_key
        out._host_cache = (raw, view)
        return out
    return build


def result_adopter(device: Device, shape: tuple, dtype: np.dtype, strides: tuple,
                   compute: Callable[..., np.ndarray]) -> Callable[..., DeviceArray]:
    """For a NumPy function with no ``out=`` (``np.where``) whose results have one geometry:
    ``adopt(*operands)`` returns ``adopt_host(compute(*operand host views), device)``, with the
    checks a fresh C-contiguous result of this geometry passes resolved once (a result of
    another layout goes through :func:`adopt_host`)."""
    # (a storage's typed memory is in C order: results of other strides take adopt_host's checks)
    if not (device.info.host_unified_memory and math.prod(shape) and dtype.isnative
            and not dtype.hasobject and strides == c_strides(shape, dtype.itemsize)):
        def adopt_checked(*operands: Any) -> DeviceArray:
            views = [x.host_view() if type(x) is DeviceArray else x for x in operands]
            return adopt_host(compute(*views), device)
        return adopt_checked

    ndarray = np.ndarray
    nbytes = math.prod(shape) * dtype.itemsize
    host_born = _host_born_builder(device, nbytes, shape, dtype, strides)

    def adopt(*operands: Any) -> DeviceArray:
        result = compute(*[x.host_view() if type(x) is DeviceArray else x for x in operands])
        if (type(result) is not ndarray or result.strides != strides or result.shape != shape
                or result.dtype != dtype or not result.flags.owndata):
            return adopt_host(result, device)
        return host_born(result, result)
    return adopt


def adopt_host(result: np.ndarray, device: Device) -> DeviceArray:
    """A device array holding a fresh NumPy result that the caller gives up: on unified memory
    its memory is taken over as a host-born storage (no copy) when NumPy owns it, C-contiguous,
    aligned and writable; otherwise a copy (:func:`from_host`)."""
    flags = result.flags
    if (device.info.host_unified_memory and type(result) is np.ndarray and result.size
            and flags.owndata and flags.c_contiguous and flags.aligned and flags.writeable
            and result.dtype.isnative and not result.dtype.hasobject):
        out = DeviceArray.from_storage(Storage.adopting(device, result), result.shape,
                                       result.dtype, result.strides)
        out._host_cache = (result, result)
        return out
    return from_host(result, device)


def _copy_into(src: np.ndarray, out: np.ndarray) -> None:
    out[...] = src   # (np.copyto's, without its Python-level dispatch)


def _host_copy_maker(x: DeviceArray) -> Any:
    """``make(y)``: a C-ordered host-path copy of arrays of ``x``'s geometry (``x.copy()``), or
    False where the copy kernel runs it (above the copy crossover, or empty)."""
    if not x.size or not _dispatch.copy_on_host(x.device, x.dtype, x.size):
        return False
    return result_maker(x.device, x.size * x.itemsize, x.shape, x.dtype,
                        c_strides(x.shape, x.itemsize), fill=_copy_into, operands=1,
                        fresh=np.ndarray.copy)


_dispatch.register_host_copy(_host_copy_maker)
