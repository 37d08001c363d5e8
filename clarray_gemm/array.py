"""``DeviceArray``: an n-d array in an OpenCL buffer that NumPy code can use unchanged.

Geometry (shape, byte strides, byte offset) follows NumPy's; indexing and reshaping reuse NumPy's
own rules by applying them to a memory-less template array, so views, errors and corner cases
are NumPy's. Operators go through ``__array_ufunc__`` (NumPy's operator mixin), NumPy functions
through ``__array_function__``: functions registered in ``_dispatch`` run OpenCL kernels; any
other NumPy function runs on read-only host views of the arrays (a mapping, not a copy, on
unified-memory devices) and returns NumPy's own answer. Ufuncs with no device kernel run the same
way and their array results are put back on the device, so operators always give device arrays.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, Sequence

import numpy as np

from . import _dispatch
from .dtypes import device_copy_supported
from .device import Device, get_device
from .fallbacks import record_host_call
from .memory import Storage

__all__ = ["DeviceArray", "asarray", "empty", "zeros", "ones", "full", "empty_like",
           "zeros_like", "ones_like", "full_like", "is_device_array"]

# Functions whose first argument NumPy writes in place: the host fallback maps it for writing.
_INPLACE_FIRST_ARG = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                      np.put_along_axis}


def _is_basic_index(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if isinstance(k, (bool, np.bool_)):
            return False
        if not (k is None or k is Ellipsis or isinstance(k, (slice, numbers.Integral))):
            return False
    return True


def _basic_view_geometry(shape: tuple, strides: tuple, key: Any):
    """(shape, strides, byte offset delta) of ``a[key]`` for a basic index that NumPy would
    accept and that leaves at least one axis, computed directly; None where NumPy's own
    template indexing should answer (errors, every axis an integer: a scalar)."""
    items = key if type(key) is tuple else (key,)
    n_index = sum(1 for k in items if k is not None and k is not Ellipsis)
    ellipses = sum(1 for k in items if k is Ellipsis)
    if ellipses > 1 or n_index > len(shape):
        return None
    out_shape, out_strides, delta, axis = [], [], 0, 0
    for k in items:
        if k is Ellipsis:
            for _ in range(len(shape) - n_index):
                out_shape.append(shape[axis])
                out_strides.append(strides[axis])
                axis += 1
        elif k is None:
            out_shape.append(1)
            out_strides.append(0)
        elif type(k) is slice:
            start, stop, step = k.indices(shape[axis])
            length = len(range(start, stop, step))
            out_shape.append(length)
            out_strides.append(strides[axis] * step)
            if length:
                delta += start * strides[axis]
            axis += 1
        else:
            i = int(k)
            if not -shape[axis] <= i < shape[axis]:
                return None
            delta += (i % shape[axis]) * strides[axis]
            axis += 1
    out_shape.extend(shape[axis:])
    out_strides.extend(strides[axis:])
    if not out_shape and n_index:
        return (None, None, None)
    return tuple(out_shape), tuple(out_strides), delta


def call_ufunc(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc(*inputs, **kwargs)`` with at least one device array among them: the registered
    device implementation (one dict lookup), else NumPy's ufunc on host views."""
    impl = _dispatch.UFUNCS.get(ufunc)
    if impl is not None:
        try:
            result = impl(ufunc, inputs, kwargs)
        except _dispatch.NumPyDecides:  # operands only NumPy takes: its answer or its error
            result = NotImplemented
        if result is not NotImplemented:
            return result
    return _host_ufunc(_device_of_inputs(inputs, kwargs), ufunc, "__call__", inputs, kwargs)


def _device_of_inputs(inputs: tuple, kwargs: dict) -> Device:
    for x in inputs + tuple(kwargs.get("out") or ()):
        if isinstance(x, DeviceArray):
            return x.device
    return get_device(None)


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


def _operators(ufunc: np.ufunc):
    """``__op__``, ``__rop__`` and ``__iop__`` for a binary ufunc."""
    def forward(self, other):
        if _should_defer(self, other):
            return NotImplemented
        return call_ufunc(ufunc, (self, other), {})

    def reverse(self, other):
        if _should_defer(self, other):
            return NotImplemented
        return call_ufunc(ufunc, (other, self), {})

    def inplace(self, other):
        if ufunc is np.matmul:  # NumPy: in-place matmul must keep the shape
            return call_ufunc(ufunc, (self, other), {"out": (self,), "axes": [(-2, -1)] * 3})
        return call_ufunc(ufunc, (self, other), {"out": (self,)})
    return forward, reverse, inplace


def _comparison(ufunc: np.ufunc, name: str):
    """``==``/``!=``: the ufunc, and where it has no loop for the operands, ``ndarray``'s own
    answer (all False / all True in the broadcast shape, or NotImplemented for void and 0-d
    operands, so that Python compares identities), as NumPy's rich comparison gives it."""
    def compare(self, other):
        if _should_defer(self, other):
            return NotImplemented
        try:
            return call_ufunc(ufunc, (self, other), {})
        except TypeError:  # NumPy's UFuncTypeError (no loop): ndarray decides as it does
            result = getattr(self.__array__(), name)(to_host(other))
            return (asarray(result, device=self.device) if isinstance(result, np.ndarray)
                    else result)
    compare.__name__ = name
    return compare


class DeviceArray(np.lib.mixins.NDArrayOperatorsMixin):
    """An array whose data lives in an OpenCL ``ALLOC_HOST_PTR`` buffer.

    ``layout_key`` (internal API for ``ops/``' plan keys) is ``(dtype, shape, strides)``.

    Create one with :func:`clarray_gemm.asarray` (or ``empty``/``zeros``/``ones``/``full``);
    get the data back with ``np.asarray(x)`` (a zero-copy read-only view on unified memory) or
    ``x.get()`` (a writable copy).
    """

    __array_priority__ = 100.0

    def __init__(self, storage: Storage, shape: Sequence[int], dtype: np.dtype,
                 strides: Sequence[int] | None = None, offset: int = 0):
        self._storage = storage
        self._shape = tuple(int(n) for n in shape)
        self._dtype = np.dtype(dtype)
        if strides is None:
            strides = _c_strides(self._shape, self._dtype.itemsize)
        self._strides = tuple(int(s) for s in strides)
        self._offset = int(offset)
        self._size = math.prod(self._shape)
        self._host_cache = None  # (mapping, view) of the last host_view()
        self.layout_key = (self._dtype, self._shape, self._strides)

    @classmethod
    def _wrap(cls, storage: Storage, shape: tuple, dtype: np.dtype, strides: tuple,
              offset: int = 0) -> "DeviceArray":
        """The hot path's constructor: arguments already normalised (ints, tuples, a dtype)."""
        self = object.__new__(cls)
        self._storage, self._shape, self._dtype = storage, shape, dtype
        self._strides, self._offset, self._size = strides, offset, math.prod(shape)
        self._host_cache = None
        self.layout_key = (dtype, shape, strides)
        return self

    # -- attributes ------------------------------------------------------------------------
    shape = property(lambda self: self._shape, doc="Tuple of array dimensions.")
    dtype = property(lambda self: self._dtype, doc="Data type of the elements.")
    strides = property(lambda self: self._strides, doc="Bytes to step in each dimension.")
    ndim = property(lambda self: len(self._shape), doc="Number of dimensions.")
    size = property(lambda self: self._size, doc="Number of elements.")
    itemsize = property(lambda self: self._dtype.itemsize)
    nbytes = property(lambda self: self._size * self._dtype.itemsize,
                      doc="Bytes of the elements (not of the underlying buffer).")
    device = property(lambda self: self._storage.device, doc="The OpenCL device holding the data.")
    storage = property(lambda self: self._storage, doc="The shared host-mapped buffer.")
    offset = property(lambda self: self._offset, doc="Byte offset of element 0 in the buffer.")

    @property
    def is_c_contiguous(self) -> bool:
        return self._strides == _c_strides(self._shape, self.itemsize) or self.size <= 1

    @property
    def T(self) -> "DeviceArray":
        """The transpose, as a view (no copy)."""
        return self.geometry_view(lambda t: t.T)

    @property
    def mT(self) -> "DeviceArray":
        """Transpose of the last two axes, as a view."""
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __repr__(self) -> str:
        body = np.array2string(self.__array__(), separator=", ", prefix="DeviceArray(")
        return f"DeviceArray({body}, dtype={self._dtype}, device={self.device})"

    def __str__(self) -> str:
        return str(self.__array__())

    def __format__(self, spec: str) -> str:
        # NumPy's rules: a 0-d array formats as its element, others only with an empty spec.
        return format(self.__array__(), spec)

    def __bool__(self) -> bool:
        return bool(self.__array__())

    def __float__(self) -> float:
        return float(self.__array__())

    def __int__(self) -> int:
        return int(self.__array__())

    def __complex__(self) -> complex:
        return complex(self.__array__())

    def __index__(self) -> int:
        return self.__array__().__index__()

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
        return np.lib.stride_tricks.as_strided(_anchor(self._dtype), self._shape, self._strides)

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
        return self.geometry_view(lambda t: t.transpose(axes) if axes else t.transpose())

    def swapaxes(self, axis1: int, axis2: int) -> "DeviceArray":
        return self.geometry_view(lambda t: t.swapaxes(axis1, axis2))

    def squeeze(self, axis=None) -> "DeviceArray":
        return self.geometry_view(lambda t: t.squeeze(axis))

    def __getitem__(self, key) -> "DeviceArray | Any":
        if _dispatch.GETITEM is not None and not _is_basic_index(key):
            result = _dispatch.GETITEM(self, key)  # masks and index arrays: gather kernels
            if result is not NotImplemented:
                return result
        if isinstance(key, DeviceArray):
            key = key.__array__()
        if _is_basic_index(key):
            fast = _basic_view_geometry(self._shape, self._strides, key)
            if fast is not None and fast[0] is not None:
                shape, strides, delta = fast
                return DeviceArray._wrap(self._storage, shape, self._dtype, strides,
                                         self._offset + delta)
            t = self._template()
            v = t[key]
            if not isinstance(v, np.ndarray):  # every axis indexed by an int: a NumPy scalar
                return self._view_of(t[key, ...] if not isinstance(key, tuple)
                                     else t[key + (Ellipsis,)], t).__array__()[()]
            return self._view_of(v, t)
        # Advanced indexing gathers, as in NumPy: the result is a new (device) array.
        record_host_call("__getitem__")
        return asarray(self.__array__()[key], device=self.device)

    def __setitem__(self, key, value) -> None:
        if isinstance(key, DeviceArray):
            key = key.__array__()
        if isinstance(value, DeviceArray) and _is_basic_index(key):
            target = self[key]
            if isinstance(target, DeviceArray):
                value = value if value.device == self.device else asarray(value, self.device)
                np.broadcast_shapes(value.shape, target.shape)  # NumPy's error if they don't fit
                if not np.can_cast(value.dtype, target.dtype, casting="unsafe"):
                    raise TypeError(f"cannot assign {value.dtype} to {target.dtype}")
                if device_copy_supported(value.dtype, target.dtype):
                    if value.storage is target.storage:
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
        src = value.broadcast_view(self._shape)
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
        """A new contiguous device array with the same data (device-side copy)."""
        return self.astype(self._dtype, order=order)

    def astype(self, dtype, order: str = "K", casting: str = "unsafe", copy: bool = True
               ) -> "DeviceArray":
        """Cast on the device (host round trip only for types OpenCL lacks: complex, float16)."""
        dtype = np.dtype(dtype)
        if not np.can_cast(self._dtype, dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {self._dtype!r} to {dtype!r} "
                            f"according to the rule {casting!r}")
        if dtype.hasobject:  # no device buffer holds Python objects: NumPy's object array
            return self.__array__().astype(dtype, order=order)
        if not copy and dtype == self._dtype:
            return self
        f_order = order == "F" or (order in ("A", "K") and self.ndim > 1 and not
                                   self.is_c_contiguous and _is_f_contiguous(self))
        on_host = (self._storage.host_resident
                   and _dispatch.copy_on_host(self.device, dtype, self._size))
        out = empty(self._shape, dtype, device=self.device, order="F" if f_order else "C",
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

    def to_device(self, device, /, *, stream=None) -> "DeviceArray":
        """This array on another OpenCL device (a copy through the host if it differs)."""
        dev = get_device(device)
        return self if dev == self.device else asarray(self.__array__(), device=dev)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if self._size == 0:
            host = np.empty(self._shape, self._dtype)
        else:
            host = np.ndarray(self._shape, self._dtype, buffer=self._storage.read_view(),
                              offset=self._offset, strides=self._strides)
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
        view = np.ndarray(self._shape, self._dtype, buffer=raw, offset=self._offset,
                          strides=self._strides)
        self._host_cache = (raw, view)
        return view

    # -- NumPy protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs, **kwargs):
        if method == "__call__":
            return call_ufunc(ufunc, inputs, kwargs)
        impl = _dispatch.UFUNC_METHODS.get(method)
        if impl is not None:
            try:
                result = impl(ufunc, inputs, kwargs)
            except _dispatch.NumPyDecides:
                result = NotImplemented
            if result is not NotImplemented:
                return result
        return _host_ufunc(self.device, ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if not all(issubclass(t, (DeviceArray, np.ndarray)) for t in types):
            return NotImplemented
        impl = _dispatch.FUNCTIONS.get(func)
        if impl is not None:
            if func in _dispatch.LIKE_FUNCTIONS:  # np.arange(..., like=x): NumPy drops like=
                kwargs = dict(kwargs, like=self)
            try:
                return impl(*args, **kwargs)
            except _dispatch.NumPyDecides:  # operands only NumPy takes: its answer or its error
                pass
        return _host_function(func, args, kwargs)

    def __array_namespace__(self, *, api_version: str | None = None):
        return _dispatch.array_namespace(api_version)

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(kDLCPU, 0)`` on unified-memory devices, else ``(kDLOpenCL, index)``."""
        from .interop.dlpack import dlpack_device
        return dlpack_device(self)

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule: the host mapping itself on unified memory (read-only flag), a host
        copy where the standard allows one (see ``clarray_gemm.interop.dlpack``)."""
        from .interop.dlpack import export
        return export(self, stream=stream, max_version=max_version, dl_device=dl_device,
                      copy=copy)

    # -- operators: straight to the op (as CuPy's own arrays do), NumPy's deferral rules -----
    __add__, __radd__, __iadd__ = _operators(np.add)
    __sub__, __rsub__, __isub__ = _operators(np.subtract)
    __mul__, __rmul__, __imul__ = _operators(np.multiply)
    __truediv__, __rtruediv__, __itruediv__ = _operators(np.true_divide)
    __matmul__, __rmatmul__, __imatmul__ = _operators(np.matmul)
    __eq__, __ne__ = _comparison(np.equal, "__eq__"), _comparison(np.not_equal, "__ne__")

    def __neg__(self):
        return call_ufunc(np.negative, (self,), {})

    def dot(self, other, out=None):
        return np.dot(self, other, out=out)

    def sum(self, *a, **k):
        return np.sum(self, *a, **k)

    def mean(self, *a, **k):
        return np.mean(self, *a, **k)

    def max(self, *a, **k):
        return np.max(self, *a, **k)

    def min(self, *a, **k):
        return np.min(self, *a, **k)

    def fill(self, value) -> None:
        with self.host_write() as host:
            host.fill(value)


def _numpy_method(name: str):
    """``x.name(...)`` as ``np.name(x, ...)`` (dispatched like any NumPy function)."""
    func = getattr(np, name)

    def method(self, *args, **kwargs):
        return func(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``np.{name}(self, ...)``."
    return method


for _name in ("prod", "var", "std", "argmin", "argmax", "any", "all", "cumsum", "cumprod",
              "clip", "take", "trace", "diagonal"):
    setattr(DeviceArray, _name, _numpy_method(_name))


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


_anchors: dict[np.dtype, np.ndarray] = {}


def _anchor(dtype: np.dtype) -> np.ndarray:
    """A one-element array of ``dtype`` that geometry templates point at (never read)."""
    anchor = _anchors.get(dtype)
    if anchor is None:
        anchor = _anchors[dtype] = np.zeros(1, dtype=dtype if dtype.itemsize else np.uint8)
    return anchor


def _c_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _f_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in shape:
        strides.append(step)
        step *= max(n, 1)
    return tuple(strides)


def _is_f_contiguous(a: DeviceArray) -> bool:
    return a.strides == _f_strides(a.shape, a.itemsize)


def is_device_array(x: Any) -> bool:
    return isinstance(x, DeviceArray)


# -- host fallback ---------------------------------------------------------------------------
def to_host(obj: Any, writable: bool = False) -> Any:
    """``obj`` with every device array in it (lists, tuples, dicts) replaced by its read-only
    host view, or by a writable host copy when ``writable``."""
    if isinstance(obj, DeviceArray):
        return obj.get() if writable else obj.__array__()
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):  # not namedtuples
        converted = [to_host(o, writable) for o in obj]
        return type(obj)(converted) if isinstance(obj, list) else tuple(converted)
    if isinstance(obj, dict):
        return {k: to_host(v, writable) for k, v in obj.items()}
    return obj


def _host_function(func, args, kwargs):
    """Run a NumPy function on host views; ``out=`` device arrays and in-place targets are
    written back to the device."""
    record_host_call(func.__name__)
    out = kwargs.get("out")
    if func in _INPLACE_FIRST_ARG and args and isinstance(args[0], DeviceArray):
        with args[0].host_write() as target:
            return func(target, *to_host(args[1:]), **to_host(kwargs))
    if isinstance(out, DeviceArray):
        host_out = np.empty(out.shape, out.dtype)
        kwargs = dict(kwargs, out=host_out)
        func(*to_host(args), **to_host(kwargs))
        out[...] = host_out
        return out
    return func(*to_host(args), **to_host(kwargs))


def _host_ufunc(device: Device, ufunc: np.ufunc, method: str, inputs, kwargs):
    """Run a ufunc on host views; array results come back as device arrays (written into device
    ``out=`` arrays when given)."""
    record_host_call(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
    outs = kwargs.get("out")
    outs = outs if isinstance(outs, tuple) else ((outs,) if outs is not None else None)
    if (method == "__call__" and outs is None and not kwargs
            and device.info.host_unified_memory):
        direct = _host_ufunc_into_mapping(device, ufunc, inputs)
        if direct is not None:
            return direct
    host_kwargs = {k: to_host(v) for k, v in kwargs.items() if k != "out"}
    host_outs = None
    if outs is not None:
        host_outs = tuple(np.empty(o.shape, o.dtype) if isinstance(o, DeviceArray) else o
                          for o in outs)
        if method == "at":
            raise TypeError("ufunc.at on device arrays is not supported; use np.asarray first")
        host_kwargs["out"] = host_outs
    if method == "at" and isinstance(inputs[0], DeviceArray):
        with inputs[0].host_write() as target:
            return getattr(ufunc, method)(target, *to_host(inputs[1:]), **host_kwargs)
    result = getattr(ufunc, method)(*to_host(inputs), **host_kwargs)
    if outs is not None:
        for o, h in zip(outs, host_outs):
            if isinstance(o, DeviceArray):
                o[...] = h
        return outs[0] if len(outs) == 1 else outs

    def wrap(r):  # object results stay NumPy's: a device buffer cannot hold Python objects
        return (asarray(r, device=device) if isinstance(r, np.ndarray) and not r.dtype.hasobject
                else r)
    return tuple(wrap(r) for r in result) if isinstance(result, tuple) else wrap(result)


def _host_ufunc_into_mapping(device: Device, ufunc: np.ufunc, inputs: tuple):
    """Unified memory: ``ufunc(*inputs)`` written by NumPy straight into host-resident device
    buffers (no copy of the result), or None when NumPy's dtype or shape resolution must be left
    to the general path (its errors included)."""
    described = []
    for x in inputs:
        if isinstance(x, (DeviceArray, np.ndarray, np.generic)):
            described.append(x.dtype)
        elif type(x) in (int, float, complex, bool):
            described.append(type(x))
        else:
            return None
    try:
        loop = ufunc.resolve_dtypes(tuple(described) + (None,) * ufunc.nout)
        shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
    except (TypeError, ValueError, OverflowError):
        return None
    out_dtypes = [np.dtype(d) for d in loop[ufunc.nin:]]
    if any(d.hasobject for d in out_dtypes):
        return None
    outs = tuple(_new(shape, d, device, host_resident=True) for d in out_dtypes)
    hosts = [x.host_view() if isinstance(x, DeviceArray) else x for x in inputs]
    ufunc(*hosts, out=tuple(o.host_view(write=True) for o in outs))
    return outs[0] if len(outs) == 1 else outs


# -- creation --------------------------------------------------------------------------------
def _new(shape, dtype, device: Device, order: str = "C", host_resident: bool = False
         ) -> DeviceArray:
    dtype = np.dtype(dtype)
    check_device_dtype(dtype)
    shape = _normalize_shape(shape)
    _check_byte_size(shape, dtype.itemsize)
    size = math.prod(shape)
    storage = Storage(device, size * dtype.itemsize, host_resident)
    strides = (_f_strides if order == "F" else _c_strides)(shape, dtype.itemsize)
    return DeviceArray(storage, shape, dtype, strides)


def check_device_dtype(dtype: np.dtype, context: str = "") -> None:
    """Raise NumPy's ``TypeError`` for a dtype no device buffer can hold (Python objects)."""
    if np.dtype(dtype).hasobject:
        raise _dispatch.NumPyDecides(f"{context}{'' if not context else ': '}dtype {np.dtype(dtype)} holds "
                        "Python objects, which an OpenCL device cannot store; use a numeric, "
                        "bool, string or bytes dtype")


_MAX_INTP = np.iinfo(np.intp).max


def _normalize_shape(shape) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(shape)
    for n in shape:
        if not isinstance(n, numbers.Integral):
            raise TypeError(f"'{type(n).__name__}' object cannot be interpreted as an integer")
        if n > _MAX_INTP:
            raise ValueError("Maximum allowed dimension exceeded")
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
    return tuple(int(n) for n in shape)


def empty(shape, dtype=np.float64, device=None, order: str = "C", *,
          host_resident: bool = False) -> DeviceArray:
    """An uninitialised device array (NumPy's default dtype, float64). ``host_resident=True``
    (unified-memory devices) leaves its buffer mapped for host writes that follow."""
    return _new(shape, dtype, get_device(device), order, host_resident)
def _check_byte_size(shape: tuple[int, ...], itemsize: int) -> None:
    """NumPy's overflow rule: the nonzero extents times the item size must fit an intp
    (even when another extent is 0), else ``ValueError: array is too big``."""
    nbytes = max(itemsize, 1)
    for n in shape:
        nbytes *= n or 1
    if nbytes > _MAX_INTP:
        raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                         "maximum possible size.")




def full(shape, fill_value, dtype=None, device=None, order: str = "C") -> DeviceArray:
    """A device array filled with ``fill_value`` (written through one write mapping)."""
    dtype = np.array(fill_value).dtype if dtype is None else np.dtype(dtype)
    a = empty(shape, dtype, device, order, host_resident=True)
    if a.size:
        with a.storage.map_for_write(discard=True) as host:
            host.view(dtype)[: a.size] = fill_value
    return a


def zeros(shape, dtype=np.float64, device=None, order: str = "C") -> DeviceArray:
    return full(shape, 0, dtype, device, order)


def ones(shape, dtype=np.float64, device=None, order: str = "C") -> DeviceArray:
    return full(shape, 1, dtype, device, order)


def _like(a, dtype, shape, device):
    dtype = a.dtype if dtype is None else dtype
    shape = np.shape(a) if shape is None else shape
    if device is None and isinstance(a, DeviceArray):
        device = a.device
    return dtype, shape, device


def empty_like(a, dtype=None, shape=None, device=None) -> DeviceArray:
    dtype, shape, device = _like(a, dtype, shape, device)
    return empty(shape, dtype, device)


def zeros_like(a, dtype=None, shape=None, device=None) -> DeviceArray:
    dtype, shape, device = _like(a, dtype, shape, device)
    return zeros(shape, dtype, device)


def ones_like(a, dtype=None, shape=None, device=None) -> DeviceArray:
    dtype, shape, device = _like(a, dtype, shape, device)
    return ones(shape, dtype, device)


def full_like(a, fill_value, dtype=None, shape=None, device=None) -> DeviceArray:
    dtype, shape, device = _like(a, dtype, shape, device)
    return full(shape, fill_value, dtype, device)


def asarray(a: Any, dtype=None, device=None, copy: bool | None = None) -> DeviceArray:
    """A device array from anything ``np.asarray`` accepts (or a device array).

    Host data is copied once, straight into the mapped device buffer. Byte-swapped input is
    stored in native byte order (values are unchanged). A device array on the requested device
    and dtype is returned as is unless ``copy=True``.
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
    if copy is False:
        raise ValueError("Unable to avoid copy while creating a device array from host data.")
    host = np.asarray(a, dtype=dtype)
    if host.dtype.hasobject:
        check_device_dtype(host.dtype, f"clarray_gemm.asarray({_short_repr(a)})")
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="))
    if host.dtype.hasobject:
        raise TypeError(f"arrays of dtype {host.dtype} (Python objects) cannot live on an "
                        "OpenCL device")
    strides = host.strides if host.flags.c_contiguous else _c_strides(host.shape, host.itemsize)
    out = DeviceArray._wrap(Storage(dev, host.nbytes, True), host.shape, host.dtype, strides)
    out.storage.write_from(host)
    return out


def _short_repr(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 40 else text[:37] + "..."


def iter_device_arrays(objs: Iterable[Any]) -> list[DeviceArray]:
    return [o for o in objs if isinstance(o, DeviceArray)]
