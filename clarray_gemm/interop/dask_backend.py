"""dask's array backend ``"clarray_gemm"``: with ``dask.config.set({"array.backend":
"clarray_gemm"})``, ``da.ones``, ``da.zeros``, ``da.full``, ``da.empty``, ``da.arange`` and
``da.random.RandomState(seed).random_sample(...)`` (any distribution) create device chunks on
the workers that compute them, so large inputs never travel from the client. dask finds the
backend through this package's ``dask.array.backends`` entry point (imported only then).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from dask.array.backends import ArrayBackendEntrypoint

from .. import array as _array
from ..array import DeviceArray
from .dask import device_meta, register_array

__all__ = ["DeviceRandomState", "DeviceBackendEntrypoint"]


class DeviceRandomState:
    """``numpy.random.RandomState`` whose array results are device arrays on the current device
    (what ``da.random.RandomState`` calls on each worker for each chunk)."""

    def __init__(self, seed: Any = None):
        self._state = np.random.RandomState(seed)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._state, name)
        if not callable(method):
            return method

        def on_device(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            return _array.asarray(result) if isinstance(result, np.ndarray) else result
        return on_device


def _with_device_meta(name: str, *args: Any, meta: Any = None, **kwargs: Any):
    import dask
    import dask.array as da
    dtype = kwargs.get("dtype")
    shape = args[0] if args else kwargs.get("shape", ())
    ndim = 1 if isinstance(shape, int) else len(shape)
    if meta is None:  # 0-d metas index to scalars: one with the result's dimensions
        meta = device_meta(np.float64 if dtype is None else dtype, ndim)
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=meta, **kwargs)


class DeviceBackendEntrypoint(ArrayBackendEntrypoint):
    """dask's ``array.backend = "clarray_gemm"``: creation functions make device chunks (found by
    dask through the ``dask.array.backends`` entry point of this package)."""

    def __init__(self) -> None:
        register_array()

    @classmethod
    def to_backend_dispatch(cls):
        return _array.asarray

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, DeviceArray):
            return data
        return data.map_blocks(_array.asarray, meta=device_meta(data.dtype, data.ndim), **kwargs)

    @property
    def RandomState(self):
        return DeviceRandomState

    @property
    def default_bit_generator(self):
        return np.random.PCG64

    @staticmethod
    def ones(*args, **kwargs):
        return _with_device_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_device_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_device_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_device_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        import dask
        import dask.array as da
        like = device_meta(kwargs.get("dtype") or np.int64) if like is None else like
        with dask.config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs).map_blocks(
                _array.asarray, meta=device_meta(kwargs.get("dtype") or np.int64, 1))


def register_backend() -> None:
    """``array.backend = "clarray_gemm"`` where the package is not installed (no entry point:
    a checkout run with ``PYTHONPATH``); nothing where dask found the entry point already."""
    from dask.array.backends import array_creation_dispatch
    if "clarray_gemm" not in getattr(array_creation_dispatch, "_lookup", {}):
        array_creation_dispatch.register_backend("clarray_gemm", DeviceBackendEntrypoint())
