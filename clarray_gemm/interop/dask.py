"""Device arrays as dask chunks: dask.array dispatch, tokenizing, sizes and serialization.

Nothing here runs at ``import clarray_gemm``: :mod:`clarray_gemm.interop` calls each
``register_*`` function when dask (or dask.distributed) finishes importing.

- ``register_array``: :class:`~clarray_gemm.DeviceArray` is a registered chunk type (dask does
  not defer to it), and dask's lookups join, contract and allocate chunks on the device:
  ``concatenate`` (device copies), ``tensordot`` and ``einsum`` (GEMM kernels), ``empty``,
  ``take``, ``percentile``; so multi-chunk results (``(x @ x.T).sum().compute()``,
  ``map_blocks(np.convolve, ...)``, ``map_overlap``) are device arrays.
- ``register_sizeof`` / ``register_tokenize``: the scheduler sees a chunk's bytes, and
  ``da.from_array`` hashes a device array's elements as it hashes NumPy's.
- ``register_serialization``: dask.distributed sends a device array as one frame that is a view
  of its mapped buffer (no copy on the sending side on unified memory) and writes it into a
  buffer of the receiving worker's device.

The array backend (``array.backend = "clarray_gemm"``) is in :mod:`.dask_backend`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import array as _array
from ..array import DeviceArray
from ..ops import einsum as _einsum, joining as _joining

__all__ = ["register_array", "register_sizeof", "register_tokenize", "register_serialization",
           "device_meta"]


def device_meta(dtype: Any = np.float64, ndim: int = 1) -> DeviceArray:
    """An empty device array for dask's ``meta=``: tells dask its chunks are device arrays. Give
    the collection's ``ndim``: dask indexes a meta with ``ndim`` slices, and a 0-d one would
    index to a NumPy scalar, as NumPy's do."""
    return _array.empty((0,) * ndim, dtype)


# -- dask.array --------------------------------------------------------------------------------
def _tensordot(a: Any, b: Any, axes: Any = 2) -> DeviceArray:
    from .. import array_api
    return array_api.tensordot(a, b, axes=axes)


def _take(a: Any, indices: Any, axis: int | None = None, **kwargs: Any) -> DeviceArray:
    device = a.device if isinstance(a, DeviceArray) else None
    return _array.asarray(np.take(_array.to_host(a), _array.to_host(indices), axis=axis, **kwargs),
                          device=device)


def _to_numpy(x: DeviceArray, **kwargs: Any) -> np.ndarray:
    return x.get()


def register_array() -> None:
    """Register device arrays with ``dask.array`` (chunk type and dispatch lookups)."""
    from dask.array.chunk_types import register_chunk_type
    from dask.array.dispatch import (concatenate_lookup, einsum_lookup, empty_lookup,
                                     percentile_lookup, take_lookup, tensordot_lookup,
                                     to_numpy_dispatch)
    register_chunk_type(DeviceArray)
    concatenate_lookup.register(DeviceArray, _joining.concatenate)
    tensordot_lookup.register(DeviceArray, _tensordot)
    einsum_lookup.register(DeviceArray, _einsum.einsum)
    empty_lookup.register(DeviceArray, _array.empty)
    take_lookup.register(DeviceArray, _take)
    percentile_lookup.register(DeviceArray, percentile_lookup.dispatch(np.ndarray))
    to_numpy_dispatch.register(DeviceArray, _to_numpy)


def register_sizeof() -> None:
    """``dask.sizeof`` of a device array: the bytes of its elements."""
    from dask.sizeof import sizeof
    sizeof.register(DeviceArray, lambda x: x.nbytes)


def register_tokenize() -> None:
    """Deterministic tokens for device arrays: their elements, dtype, shape and device."""
    from dask.tokenize import normalize_token

    @normalize_token.register(DeviceArray)
    def _normalize(x: DeviceArray):
        return "clarray_gemm.DeviceArray", str(x.device), normalize_token(np.asarray(x))


# -- dask.distributed -------------------------------------------------------------------------
def register_serialization() -> None:
    """dask.distributed's "dask" serializer for device arrays: NumPy's header and frames of a
    host view (the mapping itself on unified memory); the receiver copies the frame into a
    buffer of its current device."""
    from distributed.protocol.numpy import deserialize_numpy_ndarray, serialize_numpy_ndarray
    from distributed.protocol.serialize import dask_deserialize, dask_serialize

    @dask_serialize.register(DeviceArray)
    def _serialize(x: DeviceArray, context: Any = None):
        return serialize_numpy_ndarray(np.asarray(x), context)

    @dask_deserialize.register(DeviceArray)
    def _deserialize(header: dict, frames: list):
        return _array.asarray(deserialize_numpy_ndarray(header, frames))
