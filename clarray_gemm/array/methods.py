"""The array methods that are NumPy functions (``x.sum(axis=0)`` is ``np.sum(x, axis=0)``), as a
base class of :class:`~clarray_gemm.array.DeviceArray`: each dispatches like the NumPy function,
and where the method's other arguments are plain options it skips NumPy's search for overrides
(only ``x`` can implement ``__array_function__`` then). The in-place ones (``sort``,
``partition``, ``put``) write the function's result back into the array.

Also here, since they need nothing of the class but its public methods: :class:`ArrayFlags`
(``x.flags``) and :class:`FlatIterator` (``x.flat``)."""
from __future__ import annotations

import inspect
import operator
from typing import Any

import numpy as np

__all__ = ["NumPyFunctionMethods", "ArrayFlags", "FlatIterator"]

# Arguments that cannot implement ``__array_function__``: where a method's other arguments are
# all of these, NumPy's dispatch of ``np.name(x, ...)`` finds x's type alone among the types.
_OPTION_TYPES = frozenset((int, bool, float, str, tuple, type(None), type))


def _numpy_method(name: str):
    """``x.name(...)`` as ``np.name(x, ...)``; with only plain options besides ``x``, the
    ``__array_function__`` call NumPy's dispatch would make, made directly."""
    func = getattr(np, name)

    def method(self, *args: Any, **kwargs: Any) -> Any:
        for v in args:
            if type(v) not in _OPTION_TYPES:
                return func(self, *args, **kwargs)
        for v in kwargs.values():
            if type(v) not in _OPTION_TYPES:
                return func(self, *args, **kwargs)
        return self.__array_function__(func, (type(self),), (self, *args), kwargs)
    method.__name__ = name
    method.__qualname__ = f"NumPyFunctionMethods.{name}"
    method.__doc__ = f"``np.{name}(self, ...)``."
    try:  # help() and inspect show ndarray's parameters, not (*args, **kwargs)
        method.__signature__ = inspect.signature(getattr(np.ndarray, name))
    except (AttributeError, TypeError, ValueError):  # pragma: no cover - NumPy without one
        pass
    return method


def _axis(axis: Any) -> Any:
    """NumPy's in-place ``sort``/``partition`` take an integer axis only (``np.sort`` would
    flatten for ``axis=None``, which has no in-place meaning): its TypeError otherwise."""
    return operator.index(axis)


class NumPyFunctionMethods:
    """``sum mean max min prod var std argmin argmax any all cumsum cumprod clip take trace
    diagonal argsort argpartition choose nonzero put repeat round searchsorted compress sort
    partition conj conjugate`` as methods."""

    __slots__ = ()

    sum, mean, max, min, prod = (_numpy_method(n) for n in ("sum", "mean", "max", "min", "prod"))
    var, std, argmin, argmax = (_numpy_method(n) for n in ("var", "std", "argmin", "argmax"))
    any, all, cumsum, cumprod = (_numpy_method(n) for n in ("any", "all", "cumsum", "cumprod"))
    clip, take, trace, diagonal = (_numpy_method(n) for n in ("clip", "take", "trace",
                                                               "diagonal"))
    # the method's arguments follow ``x`` in the function's order
    argsort, argpartition, choose = (_numpy_method(n) for n in ("argsort", "argpartition",
                                                                 "choose"))
    nonzero, repeat, round, searchsorted = (_numpy_method(n) for n in ("nonzero", "repeat",
                                                                        "round", "searchsorted"))
    # in place: the host fallback writes np.put's target back to the device
    put = _numpy_method("put")

    def compress(self, condition, axis=None, out=None):
        """``ndarray.compress``: ``np.compress(condition, self, axis, out)``."""
        return np.compress(condition, self, axis=axis, out=out)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None) -> None:
        """``ndarray.sort``: ``np.sort(self, ...)`` written back into this array (in place)."""
        self[...] = np.sort(self, axis=_axis(axis), kind=kind, order=order, stable=stable)

    def partition(self, kth, axis=-1, kind="introselect", order=None) -> None:
        """``ndarray.partition``: ``np.partition(self, ...)`` written back (in place)."""
        self[...] = np.partition(self, kth, axis=_axis(axis), kind=kind, order=order)

    def conjugate(self):
        """``ndarray.conjugate``: the complex conjugate; an array of real numbers is its own
        conjugate, so like NumPy's method (not its ufunc) this returns the array itself."""
        kind = self.dtype.kind
        if kind in "biuf":
            return self
        if kind == "c" or (kind == "V" and self.dtype.names is None
                           and self.dtype.subdtype is None):  # complex, or a number NumPy
            return np.conjugate(self)                          # does not know (bfloat16)
        raise TypeError("cannot conjugate non-numeric dtype")

    def conj(self):
        """``ndarray.conj``: the same as :meth:`conjugate`."""
        return self.conjugate()


_FLAG_NAMES = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
               "WRITEBACKIFCOPY")
# the keys ndarray.flags takes besides the full names, and what each one reads
_FLAG_KEYS = {"C": "c_contiguous", "CONTIGUOUS": "c_contiguous", "F": "f_contiguous",
              "FORTRAN": "f_contiguous", "O": "owndata", "W": "writeable", "A": "aligned",
              "X": "writebackifcopy", "B": "behaved", "CA": "carray", "FA": "farray",
              "FNC": "fnc", "FORC": "forc", "BEHAVED": "behaved", "CARRAY": "carray",
              "FARRAY": "farray", **{n: n.lower() for n in _FLAG_NAMES}}
_NUMPY_FLAGS = type(np.empty(0).flags)
_SETTABLE = {"writeable": "write", "aligned": "align", "writebackifcopy": "uic"}
# NumPy's flag bits, for ``num``
_FLAG_BITS = {"c_contiguous": 0x1, "f_contiguous": 0x2, "owndata": 0x4, "aligned": 0x100,
              "writeable": 0x400, "writebackifcopy": 0x2000}


class ArrayFlags:
    """``ndarray.flags`` of a device array: NumPy's flag names, keys and attributes, read from
    the array's geometry when the object is made (as NumPy's flags object is). Setting
    ``writeable``/``aligned``/``writebackifcopy`` calls the array's ``setflags``."""

    __slots__ = ("_array", "c_contiguous", "f_contiguous", "owndata", "writeable", "aligned",
                 "writebackifcopy")

    def __init__(self, array, c_contiguous: bool, f_contiguous: bool, owndata: bool,
                 aligned: bool):
        object.__setattr__(self, "_array", array)
        for name, value in (("c_contiguous", c_contiguous), ("f_contiguous", f_contiguous),
                            ("owndata", owndata), ("writeable", True), ("aligned", aligned),
                            ("writebackifcopy", False)):
            object.__setattr__(self, name, bool(value))

    contiguous = property(lambda self: self.c_contiguous, doc="Alias of ``c_contiguous``.")
    fortran = property(lambda self: self.f_contiguous, doc="Alias of ``f_contiguous``.")
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous,
                   doc="F_CONTIGUOUS and not C_CONTIGUOUS.")
    forc = property(lambda self: self.f_contiguous or self.c_contiguous,
                    doc="F_CONTIGUOUS or C_CONTIGUOUS.")
    behaved = property(lambda self: self.aligned and self.writeable,
                       doc="ALIGNED and WRITEABLE.")
    carray = property(lambda self: self.behaved and self.c_contiguous,
                      doc="BEHAVED and C_CONTIGUOUS.")
    # NumPy's test is any of ALIGNED, WRITEABLE, F_CONTIGUOUS and not C_CONTIGUOUS (so a
    # strided array of neither order reports True): the same answer here
    farray = property(lambda self: (self.aligned or self.writeable or self.f_contiguous)
                      and not self.c_contiguous,
                      doc="``ndarray.flags.farray``: NumPy's answer (see above).")

    @property
    def num(self) -> int:
        """The flags as NumPy's bit field."""
        return sum(bit for name, bit in _FLAG_BITS.items() if getattr(self, name))

    def __getitem__(self, key: str) -> bool:
        try:
            return getattr(self, _FLAG_KEYS[key])
        except (KeyError, TypeError):
            raise KeyError("Unknown flag") from None

    def __setitem__(self, key: str, value: Any) -> None:
        name = _FLAG_KEYS.get(key) if isinstance(key, str) else None
        if name not in _SETTABLE:
            raise KeyError("Unknown flag")
        setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _SETTABLE:
            raise AttributeError(f"attribute {name!r} of {type(self).__name__!r} objects is "
                                 "not writable")
        self._array.setflags(**{_SETTABLE[name]: value})
        object.__setattr__(self, name, bool(value))

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, (ArrayFlags, _NUMPY_FLAGS)):
            return NotImplemented
        return all(getattr(self, n.lower()) == getattr(other, n.lower()) for n in _FLAG_NAMES)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "".join(f"  {n} : {getattr(self, n.lower())}\n" for n in _FLAG_NAMES)


class FlatIterator:
    """``ndarray.flat`` of a device array (as ``numpy.flatiter``): its elements in C order.
    Indexing reads NumPy's ``flatiter`` of the array's host view (array results come back as
    new device arrays, as a flatiter's are copies); assignment writes through ``flatiter``
    into the array's mapped memory, so NumPy's rules apply (values repeat to fill the
    selection). Iteration reads a snapshot taken at the first ``next``. ``from_host(host,
    device)`` makes the device arrays (this module sits below the class's)."""

    __slots__ = ("base", "_from_host", "_iter")

    def __init__(self, array, from_host):
        self.base = array
        self._from_host = from_host
        self._iter = None  # the host flatiter of a snapshot, once iteration starts

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self) -> "FlatIterator":
        return self

    def __next__(self):
        if self._iter is None:
            self._iter = self.base.__array__().flat
        return next(self._iter)

    @property
    def index(self) -> int:
        """The flat index of the next element."""
        return 0 if self._iter is None else self._iter.index

    @property
    def coords(self) -> tuple:
        """The N-dimensional index of the next element."""
        return (0,) * self.base.ndim if self._iter is None else self._iter.coords

    def __getitem__(self, key):
        result = self.base.__array__().flat[_host(key)]
        if isinstance(result, np.ndarray) and not result.dtype.hasobject:
            return self._from_host(np.ascontiguousarray(result), self.base.device)
        return result

    def __setitem__(self, key, value) -> None:
        key, value = _host(key), _host(value)
        with self.base.host_write() as host:
            host.flat[key] = value

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        flat = self.base.__array__().reshape(-1)  # (a copy where the array is not contiguous)
        return flat if dtype is None else flat.astype(dtype, copy=False)

    def copy(self):
        """``flatiter.copy``: the elements as a new 1-D device array."""
        return self.base.flatten()


def _host(value: Any) -> Any:
    """A device array (the only subclass of these methods) as its host view, anything else as
    it is."""
    return value.__array__() if isinstance(value, NumPyFunctionMethods) else value
