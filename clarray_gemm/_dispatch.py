"""The table of NumPy functions and ufuncs that have OpenCL implementations (NEP 18 / NEP 13).

``ops/`` modules register into it with ``@implements(np.matmul)``; the array type only looks
things up here, so it never imports ``ops/`` (the package ``__init__`` does, to fill the table).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {}
# ``a @ b`` for two device arrays (ops/matmul registers its plan lookup on a short key):
# (a, b) -> result, or NotImplemented for the ufunc route. The elementwise operators find
# their plans through ``find_elementwise_plan`` instead.
OPERATORS: dict[np.ufunc, Callable[[Any, Any], Any]] = {}
# ufunc methods other than __call__ ("reduce", "accumulate"): (ufunc, inputs, kwargs) -> result
# or NotImplemented.
UFUNC_METHODS: dict[str, Callable[..., Any]] = {}
# Creation functions called with ``like=<device array>``: their implementations get ``like=``.
LIKE_FUNCTIONS: set[Callable[..., Any]] = set()
# The elementwise plans on their short keys, ``(ufunc, device, operand key[, operand key])``
# with each operand's key its ``layout_key`` (a device array) or its type (a scalar of
# ``dtypes.TYPED_SCALARS``): ``ops/elementwise.py``'s plan cache installs its lookup (the
# cache's own ``find``: the plan or None), so that an operator reaches a repeated call's plan in
# one dict hit. A plan's ``short(*operands)`` runs that keyword-free call, or is None.
find_elementwise_plan: Callable[[tuple], Any] = {}.get
# Advanced (non-basic) indexing of a device array: (array, key) -> result or NotImplemented.
GETITEM: Callable[[Any, Any], Any] | None = None
# Advanced assignment with a tuple of index arrays: (array, key, value) -> None or
# NotImplemented.
SETITEM: Callable[[Any, Any, Any], Any] | None = None

__all__ = ["NumPyDecides", "FUNCTIONS", "UFUNCS", "OPERATORS",
           "UFUNC_METHODS", "LIKE_FUNCTIONS", "implements", "implements_ufunc",
           "register_namespace", "array_namespace",
           "register_strided_copy", "strided_copy", "copy_plan", "register_copy_on_host",
           "copy_on_host",
           "register_host_copy", "host_copy_maker",
           "find_elementwise_plan", "register_elementwise_plans",
           "register_host_fallback", "host_function", "host_ufunc", "register_dlpack",
           "dlpack_device", "dlpack_export"]



class NumPyDecides(TypeError):
    """Raised where an operand is one no device operation takes: a dtype the device does not
    compute with (strings, bytes, void, datetimes; see ``dtypes.numpy_only``) or data a device
    buffer cannot hold (Python objects). The dispatcher (``__array_ufunc__``,
    ``__array_function__``) then runs NumPy's own function on host views, so the answer,
    result or exception, is NumPy's. Called directly (``clarray_gemm.asarray(None)``), it is
    the ``TypeError`` it derives from."""


_namespace_factory: Callable[[str | None], Any] | None = None
_strided_copy: Callable[..., Any] | None = None
# kernels/copy.py's copy_plan(device, shape, src_dtype, src_strides, dst_dtype, dst_strides)
copy_plan: Callable[..., Any] | None = None
_host_copy_maker: Callable[[Any], Any] = lambda array: False
_host_function: Callable[..., Any] | None = None
_host_ufunc: Callable[..., Any] | None = None
_dlpack: tuple[Callable[..., Any], Callable[..., Any]] | None = None


def register_dlpack(device: Callable[[Any], Any], export: Callable[..., Any]) -> None:
    """Install DLPack export (``interop/dlpack.py``): ``device(array)`` answers
    ``__dlpack_device__``, ``export(array, **kwargs)`` ``__dlpack__``."""
    global _dlpack
    _dlpack = (device, export)


def dlpack_device(array: Any) -> Any:
    """``array.__dlpack_device__()`` (see :func:`register_dlpack`)."""
    return _dlpack[0](array)


def dlpack_export(array: Any, **kwargs: Any) -> Any:
    """``array.__dlpack__(**kwargs)`` (see :func:`register_dlpack`)."""
    return _dlpack[1](array, **kwargs)


def register_elementwise_plans(find: Callable[[tuple], Any]) -> None:
    """Install the elementwise plan cache's lookup on short keys (see ``find_elementwise_plan``)."""
    global find_elementwise_plan
    find_elementwise_plan = find


def register_host_fallback(function: Callable[..., Any], ufunc: Callable[..., Any]) -> None:
    """Install the host fallback (``array/host_fallback.py``): ``function(func, args, kwargs)``
    runs a NumPy function on host views, ``ufunc(ufunc, method, inputs, kwargs, device)`` a
    ufunc method, for calls with no device implementation."""
    global _host_function, _host_ufunc
    _host_function, _host_ufunc = function, ufunc


def host_function(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` on host views (see :func:`register_host_fallback`)."""
    return _host_function(func, args, kwargs)


def host_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict,
               device: Any = None) -> Any:
    """``getattr(ufunc, method)(*inputs, **kwargs)`` on host views, array results back on
    ``device`` (see :func:`register_host_fallback`)."""
    return _host_ufunc(ufunc, method, inputs, kwargs, device)


def register_host_copy(maker_for: Callable[[Any], Any]) -> None:
    """Install ``maker_for(array)`` (``array/host_results.py``): the host path's prepared copy
    ``make(x)`` of arrays of ``array``'s geometry, or False where the copy kernel runs it."""
    global _host_copy_maker
    _host_copy_maker = maker_for


def host_copy_maker(array: Any) -> Any:
    return _host_copy_maker(array)


def register_copy_on_host(rule: Callable[[Any, Any, int], bool]) -> None:
    """Install the rule (``kernels/crossover.py``'s host path) saying when a copy or cast of
    ``size`` elements of host-resident data runs as NumPy on the mapping: it becomes
    :func:`copy_on_host` itself (a slice assignment in a loop asks it on every call)."""
    global copy_on_host
    copy_on_host = rule


def copy_on_host(device: Any, dtype: Any, size: int) -> bool:
    """Whether a copy of host-resident data to ``dtype`` runs on the host (see
    :func:`register_copy_on_host`; never, until a rule is installed)."""
    return False


def register_strided_copy(copy: Callable[..., Any], plan: Callable[..., Any]) -> None:
    """Install the device copy between two strided layouts and its per-geometry plan
    (``kernels/copy.py`` registers ``strided_copy`` and ``copy_plan``), which the array type
    uses for ``astype``, ``copy`` and assignments without importing the kernels, which sit
    above it."""
    global _strided_copy, copy_plan
    _strided_copy, copy_plan = copy, plan


def strided_copy(*args: Any, **kwargs: Any) -> Any:
    """The registered device copy (see :func:`register_strided_copy`)."""
    return _strided_copy(*args, **kwargs)


def register_namespace(factory: Callable[[str | None], Any]) -> None:
    """Install the Array API namespace (``clarray_gemm.array_api`` registers itself), so that
    the array type answers ``__array_namespace__`` without importing the namespace module."""
    global _namespace_factory
    _namespace_factory = factory


def array_namespace(api_version: str | None = None) -> Any:
    """The registered Array API namespace for ``api_version``."""
    if _namespace_factory is None:  # pragma: no cover - the package __init__ registers it
        raise RuntimeError("the Array API namespace is not registered")
    return _namespace_factory(api_version)


def implements(*numpy_functions: Callable[..., Any]):
    """Register the decorated function as the device implementation of ``numpy_functions``."""
    def decorator(impl):
        for f in numpy_functions:
            FUNCTIONS[f] = impl
        return impl
    return decorator


def implements_ufunc(*ufuncs: np.ufunc):
    """Register the decorated function for ``ufunc.__call__``; it receives (ufunc, inputs, kwargs)
    and returns ``NotImplemented`` to let the host fallback answer."""
    def decorator(impl):
        for u in ufuncs:
            UFUNCS[u] = impl
        return impl
    return decorator
