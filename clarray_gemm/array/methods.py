"""The array methods that are NumPy functions (``x.sum(axis=0)`` is ``np.sum(x, axis=0)``), as a
base class of :class:`~clarray_gemm.array.DeviceArray`: each dispatches like the NumPy function,
and where the method's other arguments are plain options it skips NumPy's search for overrides
(only ``x`` can implement ``__array_function__`` then)."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["NumPyFunctionMethods"]

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
    return method


class NumPyFunctionMethods:
    """``sum mean max min prod var std argmin argmax any all cumsum cumprod clip take trace
    diagonal`` as methods."""

    __slots__ = ()

    sum, mean, max, min, prod = (_numpy_method(n) for n in ("sum", "mean", "max", "min", "prod"))
    var, std, argmin, argmax = (_numpy_method(n) for n in ("var", "std", "argmin", "argmax"))
    any, all, cumsum, cumprod = (_numpy_method(n) for n in ("any", "all", "cumsum", "cumprod"))
    clip, take, trace, diagonal = (_numpy_method(n) for n in ("clip", "take", "trace",
                                                               "diagonal"))
