"""``DeviceArray``: an n-d array in an OpenCL buffer that NumPy code can use unchanged.

Geometry (shape, byte strides, byte offset) follows NumPy's; indexing and reshaping reuse NumPy's
own rules by applying them to a memory-less template array (``geometry.py``), so views, errors
and corner cases are NumPy's. Operators go straight to the registered ufunc implementations,
NumPy functions through ``__array_function__``: functions registered in ``_dispatch`` run OpenCL
kernels; any other function or ufunc runs through the host fallback (``host_fallback.py``,
reached through ``_dispatch`` as well, so this module imports nothing above the memory layer).

This module also holds the two constructors everything else builds on: :func:`new_array`
(a fresh buffer) and :func:`from_host` (a copy of an ndarray).
"""
from __future__ import annotations

import builtins
import math
import numbers
import operator
import os
import pickle
import sys
import warnings
from operator import attrgetter
from typing import Any, Sequence

import numpy as np

from .. import _dispatch
from ..dtypes import TYPED_SCALARS as _TYPED_SCALARS
from ..dtypes import check_device_dtype, device_copy_supported
from ..device import Device, get_device
from ..fallbacks import record_host_call
from ..memo import Memo
from ..memory import Storage
from . import numpy_shuffle
from .geometry import (anchor, c_strides, check_byte_size, f_strides, is_basic_index,
                       normalize_shape, shape_text, view_entry, view_geometry)
from .methods import ArrayFlags, FlatIterator, NumPyFunctionMethods

__all__ = ["DeviceArray", "call_ufunc", "new_array", "from_host", "is_device_array"]

_copy_makers: Memo[Any] = Memo("host-path copies", capacity=1024)
"""(device, layout key) -> the host path's prepared copy of that geometry, or False."""
# slice assignments between device arrays of one shape and dtype: the copy plan per (device,
# target layout, source layout), so that a loop's repeated assignment hashes two keys it has
_same_layout_copies: Memo[Any] = Memo("same-layout copies", capacity=1024)
# dtype -> whether the copy kernel copies it to itself: asked by every slice assignment
_copyable_dtypes: Memo[bool] = Memo("device-copyable dtypes", capacity=256)


def _copyable(dtype: np.dtype) -> bool:
    found = _copyable_dtypes.find(dtype)
    if found is None:
        found = _copyable_dtypes.get(dtype, lambda: device_copy_supported(dtype, dtype))
    return found


# The registries every operator and NumPy call reads, bound once (one global read per call
# instead of a module attribute lookup; they are filled in place as ``ops`` registers).
_UFUNCS, _OPERATORS = _dispatch.UFUNCS, _dispatch.OPERATORS
_FUNCTIONS, _LIKE_FUNCTIONS = _dispatch.FUNCTIONS, _dispatch.LIKE_FUNCTIONS


def call_ufunc(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc(*inputs, **kwargs)`` with at least one device array among them: the registered
    device implementation (one dict lookup), else NumPy's ufunc on host views."""
    impl = _UFUNCS.get(ufunc)
    if impl is not None:
        try:
            result = impl(ufunc, inputs, kwargs)
        except _dispatch.NumPyDecides:  # operands only NumPy takes: its answer or its error
            result = NotImplemented
        if result is not NotImplemented:
            return result
    return _dispatch.host_ufunc(ufunc, "__call__", inputs, kwargs)


_NEVER_DEFER = (np.ndarray, int, float, complex, np.generic, list, tuple)


def _should_defer(self: "DeviceArray", other: Any) -> bool:
    """NumPy's rule for ``ndarray``'s binary operators: give way (return NotImplemented) to an
    operand that disables ufuncs (``__array_ufunc__ = None``), or that has no
    ``__array_ufunc__`` and a higher ``__array_priority__``."""
    if isinstance(other, (DeviceArray,) + _NEVER_DEFER):
        return False
    array_ufunc = getattr(type(other), "__array_ufunc__", _MISSING)
    if array_ufunc is not _MISSING:
        return array_ufunc is None
    return getattr(other, "__array_priority__", -math.inf) > self.__array_priority__


_MISSING = object()
_new_object = object.__new__
_SHUFFLE_FILTER = numpy_shuffle.FILTER


def _repeated_call(ufunc: np.ufunc, a: Any, b: Any) -> Any:
    """``ufunc(a, b)`` for a device array and a device array or a scalar of
    ``TYPED_SCALARS`` (either order) whose elementwise plan is cached under its short key, by
    that plan's ``short`` (one dict hit: a stencil or an ODE step makes a dozen such calls on
    small arrays, where each Python frame counts); None where the ufunc route decides (the
    first call, which builds and caches the plan, and calls the plan leaves to it)."""
    kind_a, kind_b = type(a), type(b)
    if kind_a is DeviceArray:
        device = a._storage.device
        if kind_b is DeviceArray:
            if b._storage.device is not device:
                return None
            key = (ufunc, device, a.layout_key, b.layout_key)
        elif kind_b in _TYPED_SCALARS:
            key = (ufunc, device, a.layout_key, kind_b)
        else:
            return None
    elif kind_a in _TYPED_SCALARS and kind_b is DeviceArray:
        key = (ufunc, b._storage.device, kind_a, b.layout_key)
    else:
        return None
    plan = _dispatch.find_elementwise_plan(key)
    if plan is None or plan.short is None:
        return None
    result = plan.short(a, b)
    return None if result is NotImplemented else result


def _operators(ufunc: np.ufunc):
    """``__op__``, ``__rop__`` and ``__iop__`` for a binary ufunc."""
    elementwise = ufunc is not np.matmul

    def forward(self, other):
        if elementwise:
            result = _repeated_call(ufunc, self, other)
            if result is not None:
                return result
        elif type(other) is DeviceArray:  # ``a @ b``: the matmul plan on its short key
            fast = _OPERATORS.get(ufunc)
            if fast is not None:
                try:
                    result = fast(self, other)
                except _dispatch.NumPyDecides:
                    result = NotImplemented
                if result is not NotImplemented:
                    return result
        # NumPy never defers to a device array or a number; to others as ndarray does
        if type(other) is not DeviceArray and type(other) not in _TYPED_SCALARS and \
                _should_defer(self, other):
            return NotImplemented
        return call_ufunc(ufunc, (self, other), {})

    def reverse(self, other):
        if type(other) in _TYPED_SCALARS:
            if elementwise:
                result = _repeated_call(ufunc, other, self)
                if result is not None:
                    return result
            return call_ufunc(ufunc, (other, self), {})
        if _should_defer(self, other):
            return NotImplemented
        return call_ufunc(ufunc, (other, self), {})

    def inplace(self, other):
        if ufunc is np.matmul:  # NumPy: in-place matmul must keep the shape (its axes)
            kind = (other.dtype if hasattr(other, "dtype") else np.asarray(other).dtype).kind
            if self.ndim >= 1 and np.ndim(other) < 2 and kind in "biufc":
                raise ValueError("inplace matrix multiplication requires the first operand to "
                                 "have at least one and the second at least two dimensions.")
            axes = [(-1,), (-2, -1), (-1,)] if self.ndim == 1 else [(-2, -1)] * 3
            return call_ufunc(ufunc, (self, other), {"out": (self,), "axes": axes})
        return call_ufunc(ufunc, (self, other), {"out": (self,)})
    return forward, reverse, inplace


def _ordering(ufunc: np.ufunc, mixin_method):
    """``<``, ``<=``, ``>``, ``>=``: a device array or a typed scalar by the ufunc route (a
    repeated call by its cached plan); other operands as ``NDArrayOperatorsMixin``
    (``mixin_method``) compares them."""
    def compare(self, other):
        result = _repeated_call(ufunc, self, other)
        if result is not None:
            return result
        if type(other) is DeviceArray or type(other) in _TYPED_SCALARS:
            return call_ufunc(ufunc, (self, other), {})
        return mixin_method(self, other)
    compare.__name__ = mixin_method.__name__
    return compare


def _comparison(ufunc: np.ufunc, name: str):
    """``==``/``!=``: the ufunc, and where it has no loop for the operands, ``ndarray``'s own
    answer (all False / all True in the broadcast shape, or NotImplemented for void and 0-d
    operands, so that Python compares identities), as NumPy's rich comparison gives it."""
    def compare(self, other):
        if _should_defer(self, other):
            return NotImplemented
        try:
            result = _repeated_call(ufunc, self, other)
            if result is not None:
                return result
            return call_ufunc(ufunc, (self, other), {})
        except TypeError:  # NumPy's UFuncTypeError (no loop): ndarray decides as it does
            host_other = other.__array__() if isinstance(other, DeviceArray) else other
            result = getattr(self.__array__(), name)(host_other)
            return (from_host(np.ascontiguousarray(result), self.device)
                    if isinstance(result, np.ndarray) else result)
    compare.__name__ = name
    return compare


_OPERATOR_POWERS = {(int, 2): np.square, (int, -1): np.reciprocal, (float, 0.5): np.sqrt}


def _may_overlap(a: "DeviceArray", b: "DeviceArray") -> bool:
    """Whether two views of one storage may share bytes: their byte extents (first to last
    element touched) intersect. ``u[0, :] = u[1, :]`` then copies once, not through a buffer."""
    def extent(x: "DeviceArray") -> tuple[int, int]:
        lo = hi = x._offset
        for n, st in zip(x._shape, x._strides):
            if n == 0:
                return 0, -1
            if st > 0:
                hi += (n - 1) * st
            else:
                lo += (n - 1) * st
        return lo, hi + x.itemsize - 1
    (a0, a1), (b0, b1) = extent(a), extent(b)
    return a0 <= b1 and b0 <= a1


def _assignable(value: "DeviceArray", shape: tuple) -> "DeviceArray":
    """``value`` as the source of an assignment into ``shape`` (NumPy's rule for ``a[key] =
    value``: leading length-1 axes past the target's dropped, then broadcast to it), or NumPy's
    ValueError where it does not fit."""
    src = value._shape
    lead = 0
    while len(src) - lead > len(shape) and src[lead] == 1:
        lead += 1
    rest = src[lead:]
    if len(rest) > len(shape) or any(n != m and n != 1 for n, m in zip(rest[::-1], shape[::-1])):
        raise ValueError(f"could not broadcast input array from shape {shape_text(src)} "
                         f"into shape {shape_text(shape)}")
    return value.reshape(rest) if lead else value


def _copies_on_host(target: "DeviceArray", source: "DeviceArray") -> bool:
    """Whether a copy of ``source`` into ``target`` runs as NumPy's on the host: both in host
    memory (unified memory) and the copy small enough for the host path."""
    return (target._storage._host is not None and source._storage._host is not None
            and _dispatch.copy_on_host(target.device, target._dtype, target._size))


class DeviceArray(NumPyFunctionMethods, np.lib.mixins.NDArrayOperatorsMixin):
    """An array whose data lives in an OpenCL ``ALLOC_HOST_PTR`` buffer.

    ``layout_key`` (internal API for ``ops/``' plan keys) is ``(dtype, shape, strides)``.

    Create one with :func:`clarray_gemm.asarray` (or ``empty``/``zeros``/``ones``/``full``);
    get the data back with ``np.asarray(x)`` (a zero-copy read-only view on unified memory) or
    ``x.get()`` (a writable copy).
    """

    # No per-instance __dict__: every operation makes one of these (an allocation less, and
    # attribute reads go straight to slots).
    __slots__ = ("_storage", "_shape", "_dtype", "_strides", "_offset", "_size", "_host_cache",
                 "layout_key", "__weakref__")

    __array_priority__ = 100.0

    def __pow__(self, other):
        # NumPy's operator computes these powers of float and complex arrays with other ufuncs
        # (``fast_scalar_power``): the same special values, e.g. sqrt's -0.0 at -0.0
        fast = _OPERATOR_POWERS.get((type(other), other)) if type(other) in (int, float) else None
        if fast is not None and self._dtype.kind in "fc":
            return call_ufunc(fast, (self,), {})
        if type(other) in _TYPED_SCALARS:  # np.power's own route, without NumPy's dispatch
            return call_ufunc(np.power, (self, other), {})
        return super().__pow__(other)

    def __ipow__(self, other):
        fast = _OPERATOR_POWERS.get((type(other), other)) if type(other) in (int, float) else None
        if fast is not None and self._dtype.kind in "fc":
            return fast(self, out=(self,))
        return super().__ipow__(other)

    def __init__(self, storage: Storage, shape: Sequence[int], dtype: np.dtype,
                 strides: Sequence[int] | None = None, offset: int = 0):
        self._storage = storage
        self._shape = tuple(int(n) for n in shape)
        self._dtype = np.dtype(dtype)
        if strides is None:
            strides = c_strides(self._shape, self._dtype.itemsize)
        self._strides = tuple(int(s) for s in strides)
        self._offset = int(offset)
        self._size = math.prod(self._shape)
        self._host_cache = None  # (mapping, view) of the last host_view()
        self.layout_key = (self._dtype, self._shape, self._strides)

    @classmethod
    def from_storage(cls, storage: Storage, shape: tuple, dtype: np.dtype, strides: tuple,
                     offset: int = 0) -> "DeviceArray":
        """The hot path's constructor (internal API for ``ops/``): a view of ``storage`` with
        arguments already normalised (tuples of ints, a ``np.dtype``, byte strides)."""
        self = object.__new__(cls)
        self._storage, self._shape, self._dtype = storage, shape, dtype
        self._strides, self._offset, self._size = strides, offset, math.prod(shape)
        self._host_cache = None
        self.layout_key = (dtype, shape, strides)
        return self

    # -- attributes ------------------------------------------------------------------------
    # C getters (attrgetter), not lambdas: reading ``x.shape`` or ``x.device`` builds no Python
    # frame, which the hot paths read several times per call
    shape = property(attrgetter("_shape"), doc="Tuple of array dimensions.")
    dtype = property(attrgetter("_dtype"), doc="Data type of the elements.")
    strides = property(attrgetter("_strides"), doc="Bytes to step in each dimension.")
    ndim = property(lambda self: len(self._shape), doc="Number of dimensions.")
    size = property(attrgetter("_size"), doc="Number of elements.")
    itemsize = property(attrgetter("_dtype.itemsize"))
    nbytes = property(lambda self: self._size * self._dtype.itemsize,
                      doc="Bytes of the elements (not of the underlying buffer).")
    device = property(attrgetter("_storage.device"), doc="The OpenCL device holding the data.")
    storage = property(attrgetter("_storage"), doc="The shared host-mapped buffer.")
    offset = property(attrgetter("_offset"), doc="Byte offset of element 0 in the buffer.")

    @property
    def is_c_contiguous(self) -> bool:
        return self._strides == c_strides(self._shape, self.itemsize) or self.size <= 1

    @property
    def T(self) -> "DeviceArray":
        """The transpose, as a view (no copy)."""
        # reversed geometry, built directly: programs take ``w.T`` on every step (~5 us less
        # than NumPy's transpose of a template array)
        return DeviceArray.from_storage(self._storage, self._shape[::-1], self._dtype,
                                        self._strides[::-1], self._offset)

    @property
    def mT(self) -> "DeviceArray":
        """Transpose of the last two axes, as a view."""
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        shape, strides = self._shape, self._strides
        return DeviceArray.from_storage(self._storage, shape[:-2] + (shape[-1], shape[-2]),
                                        self._dtype, strides[:-2] + (strides[-1], strides[-2]),
                                        self._offset)

    def __len__(self) -> int:
        shape = self._shape
        if not shape:
            raise TypeError("len() of unsized object")
        # NumPy's shuffle takes len() first, then warns before it swaps rows as Python objects
        # (duplicating them): that warning must raise (see numpy_shuffle)
        numpy_shuffle.last_len_ndim = len(shape)
        filters = warnings.filters
        if not filters or filters[0] is not _SHUFFLE_FILTER:
            numpy_shuffle.guard()
        return shape[0]

    def __repr__(self) -> str:
        body = np.array2string(self.__array__(), separator=", ", prefix="DeviceArray(")
        return f"DeviceArray({body}, dtype={self._dtype}, device={self.device})"

    def __str__(self) -> str:
        return str(self.__array__())

    def __format__(self, spec: str) -> str:
        # NumPy's rules: a 0-d array formats as its element, others only with an empty spec.
        return format(self.__array__(), spec)

    def _elements(self) -> np.ndarray:
        """The elements for a conversion to a Python scalar, which keeps no view: the host
        view of a host-resident array (no user view recorded), else ``__array__``."""
        return self.host_view() if self._storage._host is not None else self.__array__()

    def __bool__(self) -> bool:
        return bool(self._elements())

    def __float__(self) -> float:
        return float(self._elements())

    def __int__(self) -> int:
        return int(self._elements())

    def __complex__(self) -> complex:
        return complex(self._elements())

    def __index__(self) -> int:
        return self._elements().__index__()

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._shape[0]):
            yield self[i]

    __hash__ = None  # type: ignore[assignment]  # mutable, like ndarray

    # -- geometry ----------------------------------------------------------------------------
    def _template(self) -> np.ndarray:
        """An ndarray with this geometry over a fake base address: NumPy computes views on it,
        nothing ever reads through it."""
        return np.lib.stride_tricks.as_strided(anchor(self._dtype), self._shape, self._strides)

    def _view_of(self, template_view: np.ndarray, template: np.ndarray) -> "DeviceArray":
        """The device view whose geometry ``template_view`` has, relative to ``template``."""
        delta = (template_view.__array_interface__["data"][0]
                 - template.__array_interface__["data"][0])
        return DeviceArray(self._storage, template_view.shape, self._dtype,
                           template_view.strides, self._offset + delta)

    def geometry_view(self, fn) -> "DeviceArray":
        t = self._template()
        return self._view_of(fn(t), t)

    def reshape(self, *shape, order: str = "C", copy: bool | None = None) -> "DeviceArray":
        """A view with a new shape when NumPy's rules allow it, else a device-side copy."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        if copy:
            return self.copy(order="C" if order == "C" else "F").reshape(shape, order=order)
        t = self._template()
        try:
            return self._view_of(np.reshape(t, shape, order=order, copy=False), t)
        except ValueError:
            if copy is False:
                raise
            if np.reshape(np.empty(self._shape, np.bool_), shape, order=order).size != self.size:
                raise  # pragma: no cover - np.reshape above raised already
        contiguous = self.copy(order="F" if order == "F" else "C")
        return contiguous.reshape(shape, order=order)

    def ravel(self, order: str = "C") -> "DeviceArray":
        return self.reshape(-1, order=order)

    def flatten(self, order: str = "C") -> "DeviceArray":
        return self.reshape(-1, order=order, copy=True)

    def transpose(self, *axes) -> "DeviceArray":
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], numbers.Integral)):
            axes = axes[0]
        if axes is None or len(axes) == 0:   # (an ndarray of axes has no truth value)
            return self.T
        return self.geometry_view(lambda t: t.transpose(axes))

    def swapaxes(self, axis1: int, axis2: int) -> "DeviceArray":
        return self.geometry_view(lambda t: t.swapaxes(axis1, axis2))

    def squeeze(self, axis=None) -> "DeviceArray":
        return self.geometry_view(lambda t: t.squeeze(axis))

    def __getitem__(self, key) -> "DeviceArray | Any":
        entry = view_entry(self.layout_key, key)
        if entry:  # a repeated view: from_storage written out, with the geometry remembered
            shape, strides, delta, size, layout_key = entry
            out = _new_object(DeviceArray)
            out._storage, out._shape, out._dtype = self._storage, shape, self._dtype
            out._strides, out._offset, out._size = strides, self._offset + delta, size
            out._host_cache, out.layout_key = None, layout_key
            return out
        # a device array or ndarray key is never basic
        basic = type(key) is not DeviceArray and is_basic_index(key)
        if _dispatch.GETITEM is not None and not basic:
            result = _dispatch.GETITEM(self, key)  # masks and index arrays: gather kernels
            if result is not NotImplemented:
                return result
        if isinstance(key, DeviceArray):
            key = key.__array__()
        if basic:
            fast = view_geometry(self._shape, self._strides, key)
            if fast is not None:
                shape, strides, delta = fast
                if shape is None:  # every axis indexed by an int: NumPy's scalar, from 0-d view
                    return DeviceArray.from_storage(self._storage, (), self._dtype, (),
                                                    self._offset + delta).__array__()[()]
                return DeviceArray.from_storage(self._storage, shape, self._dtype, strides,
                                                self._offset + delta)
            t = self._template()
            v = t[key]
            if not isinstance(v, np.ndarray):  # every axis indexed by an int: a NumPy scalar
                return self._view_of(t[key, ...] if not isinstance(key, tuple)
                                     else t[key + (Ellipsis,)], t).__array__()[()]
            return self._view_of(v, t)
        # Advanced indexing gathers, as in NumPy: the result is a new (device) array.
        record_host_call("__getitem__")
        return from_host(self.__array__()[key], self.device)

    def __setitem__(self, key, value) -> None:
        storage = self._storage
        if (type(value) is DeviceArray and storage._host is not None
                and value._storage._host is not None and value._dtype == self._dtype
                and value._storage.device is storage.device and type(key) is not DeviceArray
                and _dispatch.copy_on_host(storage.device, self._dtype, value._size)
                and is_basic_index(key)):
            # both in host memory (unified memory) and small: NumPy's own assignment between
            # the two mappings (its indexing, broadcasting, overlap buffering and errors),
            # without a view object for the target (a stencil's u[0, :] = u[1, :] each step)
            self.host_view(write=True)[key] = value.host_view()
            return
        if type(value) is DeviceArray and type(key) is not DeviceArray and \
                value.device is self.device:
            # a slice assignment between device arrays of one dtype, the same shape and
            # separate bytes: the view and the copy without the general checks below
            fast = view_geometry(self._shape, self._strides, key) \
                if is_basic_index(key) else None
            if (fast is not None and fast[0] == value._shape and value._dtype == self._dtype
                    and _copyable(value._dtype)):
                target = DeviceArray.from_storage(self._storage, fast[0], self._dtype, fast[1],
                                                  self._offset + fast[2])
                if _copies_on_host(target, value):   # (NumPy buffers an overlap itself)
                    np.copyto(target.host_view(write=True), value.host_view(), casting="unsafe")
                    return
                if value._storage is not self._storage or not _may_overlap(value, target):
                    target._copy_same_layout(value)
                    return
        if (_dispatch.SETITEM is not None and type(key) is tuple
                and all(type(k) in (list, np.ndarray, DeviceArray) for k in key)):
            # several index arrays: a scatter kernel
            if _dispatch.SETITEM(self, key, value) is not NotImplemented:
                return
        if isinstance(key, DeviceArray):
            key = key.__array__()
        if isinstance(value, DeviceArray) and is_basic_index(key):
            target = self[key]
            if isinstance(target, DeviceArray):
                value = _assignable(value.to_device(self.device), target._shape)
                if not np.can_cast(value.dtype, target.dtype, casting="unsafe"):
                    raise TypeError(f"cannot assign {value.dtype} to {target.dtype}")
                if device_copy_supported(value.dtype, target.dtype):
                    if value.storage is target.storage and _may_overlap(value, target):
                        value = value.copy()  # overlapping source: NumPy buffers it too
                    target.assign_from(value)
                    return
        if isinstance(value, DeviceArray):
            value = value.__array__()
        with self.host_write() as host:
            host[key] = value

    def host_write(self):
        """Map this array's whole extent for host writes (context manager giving an ndarray)."""
        return _HostWrite(self)

    def assign_from(self, value: "DeviceArray") -> None:
        """Device-side copy of ``value`` (broadcast, cast) into this view."""
        # the same shape needs no broadcast view (NumPy's broadcast_to on a template array
        # costs ~20 us a call: astype and copy of every view paid it)
        src = value if value._shape == self._shape else value.broadcast_view(self._shape)
        if _copies_on_host(self, src):
            # both sides in host memory (unified memory): NumPy copies the slice where it is,
            # no unmap of the whole buffer, kernel and map back (NumPy handles overlap)
            np.copyto(self.host_view(write=True), src.host_view(), casting="unsafe")
            return
        src_buffer = src._storage.kernel_buffer()
        dst_buffer = self._storage.kernel_buffer(write=True)
        if src._storage is self._storage:
            src_buffer = dst_buffer  # a detach for the write moved both
        try:
            _dispatch.strided_copy(self.device, self._shape,
                                   src_buffer, src.dtype, src.element_offset, src.element_strides,
                                   dst_buffer, self.dtype, self.element_offset,
                                   self.element_strides)
        except NotImplementedError:  # more dimensions than the kernel addresses: via the host
            with self.host_write() as host:
                host[...] = src.__array__()

    def _copy_same_layout(self, value: "DeviceArray") -> None:
        """:meth:`assign_from` of a device array of this shape and dtype whose bytes this view
        does not share, with the host-path question already answered (no): the copy's plan
        for the two layouts, enqueued (a slice assignment in a loop resolves nothing else)."""
        itemsize = self._dtype.itemsize
        key = (self._storage.device, self.layout_key, value.layout_key)
        copy = _same_layout_copies.find(key)
        if copy is None:
            try:
                copy = _same_layout_copies.get(key, lambda: _dispatch.copy_plan(
                    self.device, self._shape, self._dtype,
                    tuple([s // itemsize for s in value._strides]), self._dtype,
                    tuple([s // itemsize for s in self._strides])))
            except NotImplementedError:  # more dimensions than the kernel addresses
                self.assign_from(value)
                return
        if copy is not None:
            src_buffer = value._storage.kernel_buffer()
            dst_buffer = self._storage.kernel_buffer(write=True)
            if value._storage is self._storage:
                src_buffer = dst_buffer  # a detach for the write moved both
            copy(src_buffer, value._offset // itemsize, dst_buffer, self._offset // itemsize)

    def broadcast_view(self, shape: Sequence[int]) -> "DeviceArray":
        return self.geometry_view(lambda t: np.broadcast_to(t, shape))

    @property
    def element_offset(self) -> int:
        return self._offset // self.itemsize

    @property
    def element_strides(self) -> tuple[int, ...]:
        return tuple(s // self.itemsize for s in self._strides)

    # -- copies and conversion ---------------------------------------------------------------
    def copy(self, order: str = "C") -> "DeviceArray":
        """A new contiguous device array with the same data (``ndarray.copy``): on the host
        path (unified memory, below the copy crossover) NumPy's copy into a fresh host-born
        array, prepared once per geometry; else the copy kernel."""
        if order == "C" and self._storage.host_resident:
            key = (self.device, self.layout_key)
            make = _copy_makers.find(key)
            if make is None:
                make = _copy_makers.get(key, lambda: _dispatch.host_copy_maker(self))
            if make:
                return make(self)
        return self.astype(self._dtype, order=order)

    def astype(self, dtype, order: str = "K", casting: str = "unsafe", copy: bool = True
               ) -> "DeviceArray":
        """Cast on the device (``ndarray.astype``; a host round trip only for complex)."""
        dtype = np.dtype(dtype)
        if not np.can_cast(self._dtype, dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {self._dtype!r} to {dtype!r} "
                            f"according to the rule {casting!r}")
        if dtype.hasobject:  # no device buffer holds Python objects: NumPy's object array
            return self.__array__().astype(dtype, order=order)
        if not copy and dtype == self._dtype:
            return self
        f_order = order == "F" or (order in ("A", "K") and self.ndim > 1 and not
                                   self.is_c_contiguous
                                   and self._strides == f_strides(self._shape, self.itemsize))
        on_host = (self._storage.host_resident
                   and _dispatch.copy_on_host(self.device, dtype, self._size))
        out = new_array(self._shape, dtype, self.device, order="F" if f_order else "C",
                        host_resident=on_host)
        if on_host:  # the data is on the host side now: no unmap, kernel and map back
            np.copyto(out.host_view(write=True), self.host_view(), casting="unsafe")
        elif device_copy_supported(self._dtype, dtype):
            out.assign_from(self)
        else:
            with out.host_write() as host:
                host[...] = self.__array__().astype(dtype)
        return out

    def get(self) -> np.ndarray:
        """A writable NumPy copy of the data (like ``cupy.ndarray.get``)."""
        return np.array(self.__array__(), copy=True)

    def tolist(self):
        return self.__array__().tolist()

    def item(self, *args):
        return self.__array__().item(*args)

    def to_pyopencl(self, queue=None):
        """A ``pyopencl.array.Array`` over this array's buffer (no copy): the same elements,
        shape, strides and offset, on ``queue`` (this device's in-order queue by default, so
        that pyopencl's kernels and ours run in order; on another queue of the same context,
        synchronise yourself). Both see each other's writes until this package moves the
        array to a buffer of its own (a kernel writing it while a NumPy host view of it is
        alive). ValueError for another context or negative strides."""
        import pyopencl.array as cl_array
        queue = self.device.queue if queue is None else queue
        if queue.context != self.device.context:
            raise ValueError(f"the queue belongs to another context than {self.device}'s")
        if any(s < 0 for s in self._strides):
            raise ValueError("pyopencl arrays take no negative strides: pass x.copy()")
        buffer = self._storage.kernel_buffer(write=True)  # unmapped, detached where needed
        return cl_array.Array(queue, self._shape, self._dtype, strides=self._strides,
                              data=buffer, offset=self._offset)

    def to_device(self, device, /, *, stream=None) -> "DeviceArray":
        """This array on another OpenCL device (a copy through the host if it differs)."""
        dev = get_device(device)
        return self if dev == self.device else from_host(self.__array__(), dev)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if self._size == 0:
            host = np.empty(self._shape, self._dtype)
        else:
            # positional arguments: NumPy parses keywords here at ~0.25 us a call
            host = np.ndarray(self._shape, self._dtype, self._storage.read_view(), self._offset,
                              self._strides)
        if dtype is not None and np.dtype(dtype) != self._dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return host.astype(dtype)
        if copy:
            return host.copy()
        return host

    def host_view(self, write: bool = False) -> np.ndarray:
        """Internal API for ``ops/``' host path (unified-memory devices): this array's elements
        as an ndarray over the storage's persistent mapping. Unlike ``np.asarray(x)`` the view
        is not recorded as a user view, so the caller must not let it escape; ``write=True``
        detaches the storage from live user views first (copy-on-write)."""
        storage = self._storage
        mapping = storage._host
        cached = self._host_cache
        if cached is not None and cached[0] is mapping and not (write and storage.has_host_views()):
            return cached[1]  # same mapping as last time: the same view
        if self._size == 0:
            return np.empty(self._shape, self._dtype)
        raw = storage.host_bytes_for_write() if write else storage.host_bytes()
        view = np.ndarray(self._shape, self._dtype, raw, self._offset, self._strides)
        self._host_cache = (raw, view)
        return view

    # -- NumPy protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs, **kwargs):
        if method == "__call__":
            if not kwargs:  # ``np.exp(x)``, ``np.maximum(x, 0.0)`` again: see _repeated_call
                if len(inputs) == 1 and type(inputs[0]) is DeviceArray:
                    plan = _dispatch.find_elementwise_plan(
                        (ufunc, self._storage.device, self.layout_key))
                    if plan is not None and (short := plan.short) is not None:
                        return short(self)
                elif len(inputs) == 2:
                    result = _repeated_call(ufunc, *inputs)
                    if result is not None:
                        return result
            return call_ufunc(ufunc, inputs, kwargs)
        impl = _dispatch.UFUNC_METHODS.get(method)
        if impl is not None:
            try:
                result = impl(ufunc, inputs, kwargs)
            except _dispatch.NumPyDecides:
                result = NotImplemented
            if result is not NotImplemented:
                return result
        return _dispatch.host_ufunc(ufunc, method, inputs, kwargs, self.device)

    def __array_function__(self, func, types, args, kwargs):
        for t in types:  # a loop, not all(...): ~0.3 us less on every NumPy function call
            if t is not DeviceArray and not issubclass(t, (DeviceArray, np.ndarray)):
                return NotImplemented
        impl = _FUNCTIONS.get(func)
        if impl is not None:
            if func in _LIKE_FUNCTIONS:  # np.arange(..., like=x): NumPy drops like=
                kwargs = dict(kwargs, like=self)
            try:
                return impl(*args, **kwargs)
            except _dispatch.NumPyDecides:  # operands only NumPy takes: its answer or its error
                pass
        return _dispatch.host_function(func, args, kwargs)

    def __array_namespace__(self, *, api_version: str | None = None):
        return _dispatch.array_namespace(api_version)

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(kDLCPU, 0)`` on unified-memory devices, else ``(kDLOpenCL, index)``."""
        return _dispatch.dlpack_device(self)

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule: the host mapping itself on unified memory (read-only flag), a host
        copy where the standard allows one (see ``clarray_gemm.interop.dlpack``)."""
        return _dispatch.dlpack_export(self, stream=stream, max_version=max_version,
                                       dl_device=dl_device, copy=copy)

    # -- operators: straight to the op (as CuPy's own arrays do), NumPy's deferral rules -----
    __add__, __radd__, __iadd__ = _operators(np.add)
    __sub__, __rsub__, __isub__ = _operators(np.subtract)
    __mul__, __rmul__, __imul__ = _operators(np.multiply)
    __truediv__, __rtruediv__, __itruediv__ = _operators(np.true_divide)
    __matmul__, __rmatmul__, __imatmul__ = _operators(np.matmul)
    __eq__, __ne__ = _comparison(np.equal, "__eq__"), _comparison(np.not_equal, "__ne__")
    _mixin = np.lib.mixins.NDArrayOperatorsMixin
    __lt__, __le__ = _ordering(np.less, _mixin.__lt__), _ordering(np.less_equal, _mixin.__le__)
    __gt__ = _ordering(np.greater, _mixin.__gt__)
    __ge__ = _ordering(np.greater_equal, _mixin.__ge__)
    del _mixin

    def __neg__(self):
        plan = _dispatch.find_elementwise_plan(
            (np.negative, self._storage.device, self.layout_key))  # see _operators
        if plan is not None and (short := plan.short) is not None:
            return short(self)
        return call_ufunc(np.negative, (self,), {})

    def dot(self, other, out=None):
        return np.dot(self, other, out=out)

    def fill(self, value) -> None:
        with self.host_write() as host:
            host.fill(value)

    # -- the rest of ndarray's surface ---------------------------------------------------------
    # The attributes and methods of ``np.ndarray`` that are not NumPy functions (those are in
    # methods.py). Where NumPy hands out its own memory (``data``, ``ctypes``, ``view`` as an
    # ndarray) a device array hands out its read-only host view: a snapshot, since a write to
    # the array moves the array to fresh memory while host views are alive (copy-on-write).
    # Ownership is read from the geometry, as nothing records which array a view came from: an
    # array owns its buffer when it covers all of it contiguously from byte 0.

    def _set_geometry(self, shape: tuple, strides: tuple, offset: int) -> None:
        """Give this array another geometry in place (shape setter, ``resize``)."""
        self._shape, self._strides, self._offset = shape, strides, offset
        self._size = math.prod(shape)
        self._host_cache = None
        self.layout_key = (self._dtype, shape, strides)

    def _set_shape(self, shape) -> None:
        """``x.shape = s``: ndarray's in-place reshape, never a copy."""
        t = self._template()
        try:
            v = np.reshape(t, shape, copy=False)
        except ValueError:
            # NumPy's error where the sizes differ: all-zero strides reshape to any shape of
            # the same size without a copy
            zeros = np.lib.stride_tricks.as_strided(anchor(np.dtype(np.bool_)), self._shape,
                                                    (0,) * len(self._shape))
            np.reshape(zeros, shape, copy=False)
            raise AttributeError("Incompatible shape for in-place modification. Use "
                                 "`.reshape()` to make a copy with the desired shape.") from None
        delta = v.__array_interface__["data"][0] - t.__array_interface__["data"][0]
        self._set_geometry(v.shape, v.strides, self._offset + delta)

    shape = shape.setter(_set_shape)

    def _owns_storage(self) -> bool:
        """OWNDATA from the geometry: the array covers its whole buffer contiguously."""
        if self._offset or self._size * self._dtype.itemsize != self._storage.nbytes:
            return False
        flags = self._template().flags
        return flags.c_contiguous or flags.f_contiguous

    def _aligned(self) -> bool:
        """NumPy's ALIGNED rule: byte offset and strides (of axes longer than 1) multiples of
        the dtype's alignment (the buffer itself is aligned)."""
        check = self._offset
        for n, st in zip(self._shape, self._strides):
            if n == 0:
                return True
            if n > 1:
                check |= st
        return check & (self._dtype.alignment - 1) == 0

    @property
    def flags(self) -> ArrayFlags:
        """``ndarray.flags``: NumPy's flag names, keys and attributes. OWNDATA is True where the
        array covers its whole buffer contiguously from byte 0 (so also for views such as
        ``x[:]`` or ``x.T``), WRITEABLE is always True, WRITEBACKIFCOPY always False."""
        t = self._template().flags
        return ArrayFlags(self, t.c_contiguous, t.f_contiguous, self._owns_storage(),
                          self._aligned())

    def setflags(self, write=None, align=None, uic=None) -> None:
        """``ndarray.setflags``: a device array stays writeable and aligned, so ``write=False``,
        ``align=False`` and ``uic=True`` raise ValueError (no device write could be refused);
        the values the flags have are accepted."""
        if align is not None:
            if align and not self._aligned():
                raise ValueError("cannot set aligned flag of mis-aligned array to True")
            if not align:
                raise ValueError("cannot clear the ALIGNED flag of a device array")
        if uic is not None and uic:
            raise ValueError("cannot set WRITEBACKIFCOPY flag to True")
        if write is not None and not write:
            raise ValueError("cannot clear the WRITEABLE flag of a device array: device arrays "
                             "are always writeable (np.asarray(x) is a read-only host view)")

    @property
    def base(self) -> "DeviceArray | None":
        """``ndarray.base``: None for an array that owns its buffer (see ``flags``), else a 1-D
        device array over the whole buffer (of this dtype where the buffer's size is a multiple
        of the item size, else uint8; a new object each time: the array a view was made from
        is not recorded)."""
        if self._owns_storage():
            return None
        itemsize, nbytes = self._dtype.itemsize, self._storage.nbytes
        dtype = self._dtype if itemsize and nbytes % itemsize == 0 else np.dtype(np.uint8)
        return DeviceArray.from_storage(self._storage, (nbytes // dtype.itemsize,), dtype,
                                        (dtype.itemsize,), 0)

    @property
    def flat(self) -> FlatIterator:
        """``ndarray.flat``: a ``numpy.flatiter``-like object over the elements in C order
        (indexing, assignment with NumPy's repeat-to-fill rule, iteration, ``len``)."""
        return FlatIterator(self, from_host)

    @flat.setter
    def flat(self, value) -> None:
        with self.host_write() as host:
            host.flat = value.__array__() if isinstance(value, DeviceArray) else value

    def _complex_part(self, offset: int) -> "DeviceArray":
        return self.getfield(np.empty(0, self._dtype).real.dtype, offset)

    @property
    def real(self):
        """``ndarray.real``: the array itself for real dtypes (as NumPy's), a device view of
        the real parts for complex ones."""
        return self._complex_part(0) if self._dtype.kind == "c" else self

    @real.setter
    def real(self, value) -> None:
        self.real[...] = value

    @property
    def imag(self):
        """``ndarray.imag``: a device view of the imaginary parts for complex dtypes; for others
        NumPy's answer, a new read-only host array of zeros (writing to it raises)."""
        if self._dtype.kind == "c":
            return self._complex_part(self._dtype.itemsize // 2)
        zeros = np.zeros_like(self._template(), dtype=self._dtype)  # in its memory order
        zeros.flags.writeable = False
        return zeros

    @imag.setter
    def imag(self, value) -> None:
        if self._dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def _reinterpreted(self, view: np.ndarray, template: np.ndarray) -> "DeviceArray":
        """The device view of this array's buffer whose geometry and dtype ``view`` (a view of
        ``template``) has. Kernels address elements in units of the item size, so a view whose
        byte offset or strides are not multiples of it is refused."""
        delta = view.__array_interface__["data"][0] - template.__array_interface__["data"][0]
        offset, dtype = self._offset + delta, view.dtype
        itemsize = dtype.itemsize
        if itemsize and (offset % itemsize or any(
                n > 1 and st % itemsize for n, st in zip(view.shape, view.strides))):
            raise ValueError(f"a device view of {dtype} must start and step at multiples of "
                             f"{itemsize} bytes (byte offset {offset}, strides "
                             f"{view.strides}); view a copy (x.copy()) or the host view "
                             "(np.asarray(x)) instead")
        return DeviceArray.from_storage(self._storage, view.shape, dtype, view.strides, offset)

    def view(self, dtype=None, type=None):
        """``ndarray.view``: a device view of the same buffer, of another ``dtype`` by NumPy's
        rules (a different item size rescales the last axis, which must be contiguous);
        ``type=np.ndarray`` (or a subclass) gives the read-only host view instead."""
        if isinstance(dtype, builtins.type) and issubclass(dtype, (np.ndarray, DeviceArray)):
            if type is not None:
                raise ValueError("Cannot specify output type twice.")
            dtype, type = None, dtype
        if type is not None and not (isinstance(type, builtins.type)
                                     and issubclass(type, DeviceArray)):
            if not (isinstance(type, builtins.type) and issubclass(type, np.ndarray)):
                raise ValueError("Type must be a sub-type of ndarray type")
            host = self.__array__()
            return host.view(type) if dtype is None else host.view(dtype, type)
        t = self._template()
        return self._reinterpreted(t if dtype is None else t.view(dtype), t)

    def getfield(self, dtype, offset: int = 0) -> "DeviceArray":
        """``ndarray.getfield``: a device view of ``dtype`` values at byte ``offset`` of each
        element (NumPy's checks)."""
        t = self._template()
        return self._reinterpreted(t.getfield(dtype, offset), t)

    def setfield(self, val, dtype, offset: int = 0) -> None:
        """``ndarray.setfield``: write ``val`` as ``dtype`` values at byte ``offset`` of each
        element (in place)."""
        if isinstance(val, DeviceArray):
            val = val.__array__()
        with self.host_write() as host:
            host.setfield(val, dtype, offset)

    def byteswap(self, inplace: bool = False) -> "DeviceArray":
        """``ndarray.byteswap``: the elements with their bytes reversed, as a new device array,
        or in this array (which is returned) when ``inplace``."""
        if not inplace:
            return self.copy(order="A").byteswap(inplace=True)
        with self.host_write() as host:
            host.byteswap(inplace=True)
        return self

    def resize(self, *new_shape, refcheck: bool = True) -> None:
        """``ndarray.resize``: change this array's shape and size in place, in a new buffer
        whose leading bytes are the old ones and the rest zeros (C order, or F for an array
        that is F- and not C-contiguous). As NumPy, only an array that owns its buffer (see
        ``flags``) changes size, and with ``refcheck`` not while other device arrays share
        the buffer (they would keep the old one); ``np.resize`` makes a resized copy."""
        if not new_shape or (len(new_shape) == 1 and new_shape[0] is None):
            return
        if len(new_shape) == 1 and not isinstance(new_shape[0], numbers.Integral):
            new_shape = new_shape[0]
        shape = tuple(operator.index(n) for n in new_shape)
        if any(n < 0 for n in shape):
            raise ValueError("negative dimensions not allowed")
        flags = self._template().flags
        if not (flags.c_contiguous or flags.f_contiguous):
            raise ValueError("resize only works on single-segment arrays")
        itemsize = self._dtype.itemsize
        check_byte_size(shape, itemsize)
        f_order = flags.f_contiguous and not flags.c_contiguous
        strides = (f_strides if f_order else c_strides)(shape, itemsize)
        new_nbytes = math.prod(shape) * itemsize
        if math.prod(shape) == self._size:
            self._set_geometry(shape, strides, self._offset)
            return
        if not self._owns_storage():
            raise ValueError("cannot resize this array: it does not own its data")
        # the slot and getrefcount's argument: any more are other arrays on this buffer
        if refcheck and sys.getrefcount(self._storage) > 2:
            raise ValueError("cannot resize an array that references or is referenced\nby "
                             "another object in this way.\nUse the np.resize function to get a "
                             "new resized copy or\n set refcheck=False to disable this check")
        storage = Storage(self.device, new_nbytes, True)
        kept = min(new_nbytes, self._storage.nbytes)
        if new_nbytes:
            with storage.map_for_write(discard=True) as host:
                if kept:
                    host[:kept] = self._storage.read_view()[:kept]
                host[kept:new_nbytes] = 0
        self._storage = storage
        self._set_geometry(shape, strides, 0)

    def tobytes(self, order: str = "C") -> bytes:
        """``ndarray.tobytes``: the elements' bytes in ``order``."""
        return self.__array__().tobytes(order)

    def tofile(self, fid, sep: str = "", format: str = "%s") -> None:
        """``ndarray.tofile``: the elements written to a file (binary, or text with ``sep``)."""
        self.__array__().tofile(fid, sep, format)

    def dumps(self) -> bytes:
        """``ndarray.dumps``: a pickle of this array (it unpickles as a device array)."""
        return pickle.dumps(self, protocol=2)

    def dump(self, file) -> None:
        """``ndarray.dump``: :meth:`dumps` written to ``file`` (a path or a binary file)."""
        if hasattr(file, "write"):
            pickle.dump(self, file, protocol=2)
            return
        with open(os.fspath(file), "wb") as f:
            pickle.dump(self, f, protocol=2)

    @property
    def data(self) -> memoryview:
        """``ndarray.data``: a read-only memoryview of the host view of the elements (the
        mapping itself on unified memory, a snapshot of them; ``storage`` is the OpenCL
        buffer)."""
        return self.__array__().data

    @property
    def ctypes(self):
        """``ndarray.ctypes``: NumPy's ctypes helper of the host view, so its pointer addresses
        host memory with a snapshot of the elements (read-only; valid while the helper lives)."""
        return self.__array__().ctypes


class _HostWrite:
    """Map an array's buffer for writing and expose the array's elements as a writable ndarray."""

    def __init__(self, array: DeviceArray):
        self.array = array
        self._ctx = None

    def __enter__(self) -> np.ndarray:
        a = self.array
        if a.size == 0:
            return np.empty(a.shape, a.dtype)
        self._ctx = a.storage.map_for_write()
        mapped = self._ctx.__enter__()
        return np.ndarray(a.shape, a.dtype, buffer=mapped, offset=a.offset, strides=a.strides)

    def __exit__(self, *exc):
        if self._ctx is not None:
            return self._ctx.__exit__(*exc)
        return False


def new_array(shape: Any, dtype: Any, device: Device, order: str = "C",
              host_resident: bool = False) -> DeviceArray:
    """A contiguous device array in a fresh buffer (uninitialised), with NumPy's shape and
    size errors; ``host_resident`` leaves the buffer mapped for host writes that follow."""
    dtype = np.dtype(dtype)
    check_device_dtype(dtype)
    shape = normalize_shape(shape)
    check_byte_size(shape, dtype.itemsize)
    storage = Storage(device, math.prod(shape) * dtype.itemsize, host_resident)
    strides = (f_strides if order == "F" else c_strides)(shape, dtype.itemsize)
    return DeviceArray.from_storage(storage, shape, dtype, strides)


def from_host(host: np.ndarray, device: Device) -> DeviceArray:
    """A device array holding a copy of ``host`` (native byte order, no Python objects): one
    copy straight into the mapped buffer, a C-contiguous input's strides kept."""
    strides = host.strides if host.flags.c_contiguous else c_strides(host.shape, host.itemsize)
    out = DeviceArray.from_storage(Storage(device, host.nbytes, True), host.shape, host.dtype,
                                   strides)
    out._storage.write_from(host)
    return out


def is_device_array(x: Any) -> bool:
    """Whether ``x`` is a :class:`DeviceArray`."""
    return isinstance(x, DeviceArray)
