"""``np.linalg.solve``, ``inv``, ``det``, ``slogdet`` and ``cholesky`` of stacks of matrices on
the device. Matrices whose factorisation fits three quarters of the local memory (64 x 64
float32 and more on GPUs) take ``opencl/linalg_small.cl``: a work-group a matrix, the LU
factorisation with partial pivoting in local memory as LAPACK's getrf orders it (the right-hand
sides carried along), then back substitution; ``inv`` solves against the identity, ``det`` is
NumPy's sign * exp(sum of log|pivot|); ``cholesky`` a column at a time from the lower triangle.
Larger ones take the blocked factorisations of ``ops/linalg_blocked.py`` (panels by one
work-group, trailing updates on the GEMM kernels). NumPy's result dtypes, shapes (NumPy 2's
rule: ``b`` is a vector only when 1-D; batch axes broadcast) and ``LinAlgError("Singular
matrix")`` (a read of one status word per matrix: the call waits for the factorisation, as
CuPy's does when it checks).

Where it runs: real float32/float64 matrices on devices without a host path. Every other case
takes NumPy's LAPACK (on the mapping where the device has a host path).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import implements
from ..array import DeviceArray, adopt_host, asarray, empty, host_function, zeros
from ..device import Device
from ..kernels.crossover import has_host_path
from ..kernels.programs import get_kernel
from ..memo import Memo
from . import linalg_blocked

__all__ = ["solve", "inv", "det", "slogdet", "cholesky"]

SOURCE = "linalg_small.cl"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _square_stack(a: Any) -> bool:
    return (type(a) is DeviceArray and a.ndim >= 2 and a.shape[-1] == a.shape[-2]
            and a.shape[-1] > 0 and a.size > 0)


def _fits(device: Device, n: int, k: int, dtype: np.dtype) -> bool:
    return (n * n + n * max(k, 1)) * dtype.itemsize <= device.info.local_mem_bytes * 3 // 4


def _device_dtype(a: DeviceArray, result: np.dtype) -> bool:
    return (not has_host_path(a.device) and result in _FLOATS
            and (result != np.float64 or bool(a.device.info.fp64)))


def _host_first(a: Any) -> bool:
    """Whether ``a`` lives on a device with a host path: there NumPy's LAPACK on the mapping
    beats the kernels at every size (multithreaded BLAS against work-groups on the same
    cores), so the call goes there before any other check (a few us of a small call)."""
    return type(a) is DeviceArray and has_host_path(a.device)


def _on_host(func: Any, args: tuple) -> Any:
    """``func`` by NumPy: on the mapping where the device has a host path (device arrays
    back), else through the host fallback."""
    first = args[0]
    if type(first) is DeviceArray and has_host_path(first.device):
        device = first.device
        views = []
        for x in args:
            if type(x) is DeviceArray:
                if x.device is not device and x.device != device:
                    return host_function(func, args, {})
                x = x.host_view()
            views.append(x)
        found = func(*views)
        if isinstance(found, tuple):
            return type(found)(*(_adopted(v, device) for v in found))
        return _adopted(found, device)
    return host_function(func, args, {})


def _adopted(value: Any, device: Device) -> Any:
    """A NumPy result as a device array; NumPy's scalars (one matrix's determinant) stay
    scalars, as the host fallback keeps them."""
    if type(value) is np.ndarray and value.ndim:
        return adopt_host(value if value.flags.c_contiguous else np.ascontiguousarray(value),
                          device)
    return value if np.ndim(value) == 0 else adopt_host(np.ascontiguousarray(value), device)


def _stack(x: DeviceArray, shape: tuple, dtype: np.dtype) -> DeviceArray:
    """``x`` broadcast to ``shape`` as a C-contiguous array of ``dtype``."""
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    if x.dtype != dtype:
        x = x.astype(dtype)
    return x if x.is_c_contiguous else x.copy()


def _launch(device: Device, a: DeviceArray, b: DeviceArray | None, n: int, k: int,
            batch: int, det: bool, identity: bool = False) -> tuple:
    """The kernel over ``batch`` matrices: (solutions or None, status, det, sign, logdet)."""
    dtype = a.dtype
    wg = min(64 if n <= 16 else (128 if n <= 32 else 256), device.info.max_work_group_size)
    defines = {"T": "double" if dtype == np.float64 else "float",
               "IS_FP64": int(dtype == np.float64), "N": n, "K": k, "WG": wg,
               "DET": int(det), "IDENTITY": int(identity)}
    kernel = get_kernel(device, SOURCE, "lu_solve", defines)
    status = empty((batch,), np.int32, device=device)
    x = empty((batch, n, k), dtype, device=device) if k else None
    outs = [empty((batch,), dtype, device=device) for _ in range(3)] if det else [None] * 3
    spare = status.storage.kernel_buffer(write=True)

    def buf(v, write=False):
        return v.storage.kernel_buffer(write=write) if v is not None else spare
    src_b = b if b is not None else a
    kernel.launch(device, (batch * wg,), (wg,), buf(a), np.int64(a.offset // a.itemsize),
                  np.int64(n * n), buf(src_b), np.int64(src_b.offset // src_b.itemsize),
                  np.int64(n * k if b is not None else 0), buf(x, True), spare,
                  *(buf(v, True) for v in outs))
    return (x, status, *outs)


def _check(status: DeviceArray) -> None:
    if np.asarray(status).any():
        raise np.linalg.LinAlgError("Singular matrix")


_RESULTS: Memo[Any] = Memo("linalg result dtypes", capacity=1024)


def _result_dtype(func: Any, *dtypes: np.dtype) -> np.dtype | None:
    """NumPy's result dtype of ``func`` for operands of ``dtypes`` (found on stand-ins once);
    None where NumPy refuses them (its error then comes from NumPy)."""
    def build():
        try:
            stand_ins = [np.eye(2, dtype=dtypes[0])] + [np.ones(2, dtype=d) for d in dtypes[1:]]
            out = func(*stand_ins)
            return np.asarray(out[0] if isinstance(out, tuple) else out).dtype
        except Exception:   # noqa: BLE001 - NumPy's own error comes from its own call
            return False
    key = (func, *dtypes)
    found = _RESULTS.find(key)
    if found is None:
        found = _RESULTS.get(key, build)
    return found or None


@implements(np.linalg.solve)
def solve(a: Any, b: Any) -> Any:
    """``np.linalg.solve``: x with a @ x = b for each matrix of the stack ``a``."""
    if _host_first(a):
        return _on_host(np.linalg.solve, (a, b))
    if not _square_stack(a) or not isinstance(b, (DeviceArray, np.ndarray)):
        return _on_host(np.linalg.solve, (a, b))
    result = _result_dtype(np.linalg.solve, a.dtype, b.dtype)
    n = a.shape[-1]
    vector = b.ndim == 1
    if result is None or not _device_dtype(a, result) or b.size == 0 or \
            (vector and b.shape[0] != n) or (not vector and (b.ndim < 2 or b.shape[-2] != n)):
        return _on_host(np.linalg.solve, (a, b))
    k = 1 if vector else b.shape[-1]
    try:
        batch_shape = np.broadcast_shapes(a.shape[:-2], () if vector else b.shape[:-2])
    except ValueError:
        return _on_host(np.linalg.solve, (a, b))
    b = asarray(b, device=a.device)
    batch = int(np.prod(batch_shape, dtype=np.int64))
    a2 = _stack(a, batch_shape + (n, n), result)
    b2 = _stack(b.reshape(n, 1) if vector else b, batch_shape + (n, k), result)
    if _fits(a.device, n, k, result):
        x, status, *_ = _launch(a.device, a2, b2, n, k, batch, False)
        _check(status)
    else:   # blocked, on copies it overwrites
        lu = _owned(a2, a, (batch, n, n))
        piv, status = linalg_blocked.lu_factor(lu)
        _check(status)
        x = linalg_blocked.lu_solve(lu, piv, _owned(b2, b, (batch, n, k)))
    return x.reshape(batch_shape + ((n,) if vector else (n, k)))


def _owned(x: DeviceArray, source: DeviceArray, shape: tuple) -> DeviceArray:
    """``x`` (``_stack``'s C-contiguous form of ``source``) as ``shape``, a stack of matrices to
    overwrite: copied where it still shares the caller's buffer."""
    return (x.copy() if x.storage is source.storage else x).reshape(shape)


def _identities(batch: int, n: int, dtype: np.dtype, device: Device) -> DeviceArray:
    """``batch`` n x n identity matrices, made on the device."""
    out = zeros((batch, n, n), dtype, device=device)
    out.geometry_view(lambda t: np.diagonal(t, 0, -2, -1))[...] = asarray(
        np.ones((), dtype), device=device)
    return out


@implements(np.linalg.inv)
def inv(a: Any) -> Any:
    """``np.linalg.inv``: the inverse of each matrix of the stack (a solve against I)."""
    if _host_first(a):
        return _on_host(np.linalg.inv, (a,))
    result = _result_dtype(np.linalg.inv, a.dtype) if _square_stack(a) else None
    if result is None or not _device_dtype(a, result):
        return _on_host(np.linalg.inv, (a,))
    n = a.shape[-1]
    batch = a.size // (n * n)
    if not _fits(a.device, n, n, result):   # blocked: a solve against identities
        lu = _owned(_stack(a, a.shape, result), a, (batch, n, n))
        piv, status = linalg_blocked.lu_factor(lu)
        _check(status)
        x = linalg_blocked.lu_solve(lu, piv, _identities(batch, n, result, a.device))
        return x.reshape(a.shape)
    x, status, *_ = _launch(a.device, _stack(a, a.shape, result), None, n, n, batch, False,
                            identity=True)
    _check(status)
    return x.reshape(a.shape)


def _determinants(func: Any, a: Any) -> tuple | None:
    result = _result_dtype(func, a.dtype) if _square_stack(a) else None
    if result is None or not _device_dtype(a, result):
        return None
    n = a.shape[-1]
    batch = a.size // (n * n)
    if _fits(a.device, n, 0, result):
        _, _, det_, sign, logdet = _launch(a.device, _stack(a, a.shape, result), None, n, 0,
                                           batch, True)
    else:   # blocked (a singular matrix is no error here: its zero pivot gives det 0)
        lu = _owned(_stack(a, a.shape, result), a, (batch, n, n))
        piv, _ = linalg_blocked.lu_factor(lu)
        det_, sign, logdet = linalg_blocked.lu_det(lu, piv)
    shape = a.shape[:-2]
    return det_.reshape(shape), sign.reshape(shape), logdet.reshape(shape)


@implements(np.linalg.det)
def det(a: Any) -> Any:
    """``np.linalg.det``: the determinant of each matrix of the stack (0-d for one matrix)."""
    if _host_first(a):
        return _on_host(np.linalg.det, (a,))
    found = _determinants(np.linalg.det, a)
    return _on_host(np.linalg.det, (a,)) if found is None else found[0]


@implements(np.linalg.slogdet)
def slogdet(a: Any) -> Any:
    """``np.linalg.slogdet``: (sign, log|det|) of each matrix of the stack, NumPy's named
    tuple."""
    if _host_first(a):
        return _on_host(np.linalg.slogdet, (a,))
    found = _determinants(np.linalg.slogdet, a)
    if found is None:
        return _on_host(np.linalg.slogdet, (a,))
    return type(np.linalg.slogdet(np.eye(1)))(found[1], found[2])


@implements(np.linalg.cholesky)
def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """``np.linalg.cholesky``: the lower factor L of each matrix (L @ L.T = a, from a's lower
    triangle), or its transpose with ``upper``; NumPy's LinAlgError where a pivot is not
    positive."""
    if _host_first(a):
        return _on_host_kw(np.linalg.cholesky, a, upper)
    result = _result_dtype(np.linalg.cholesky, a.dtype) if _square_stack(a) else None
    if result is None or not _device_dtype(a, result):
        return _on_host_kw(np.linalg.cholesky, a, upper)
    n = a.shape[-1]
    batch = a.size // (n * n)
    src = _stack(a, a.shape, result)
    if not _fits(a.device, n, 0, result):   # blocked, on a copy it overwrites
        out = _owned(src, a, (batch, n, n))
        if np.asarray(linalg_blocked.cholesky_factor(out)).any():
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        out = out.reshape(a.shape)
        return np.swapaxes(out, -1, -2).copy() if upper else out
    wg = min(64 if n <= 16 else (128 if n <= 32 else 256), a.device.info.max_work_group_size)
    defines = {"T": "double" if result == np.float64 else "float",
               "IS_FP64": int(result == np.float64), "N": n, "K": 0, "WG": wg}
    kernel = get_kernel(a.device, SOURCE, "cholesky", defines)
    out = empty(a.shape, result, device=a.device)
    status = empty((batch,), np.int32, device=a.device)
    kernel.launch(a.device, (batch * wg,), (wg,), src.storage.kernel_buffer(),
                  np.int64(src.offset // src.itemsize), np.int64(n * n),
                  out.storage.kernel_buffer(write=True), status.storage.kernel_buffer(write=True))
    if np.asarray(status).any():
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return np.swapaxes(out, -1, -2).copy() if upper else out


def _on_host_kw(func: Any, a: Any, upper: bool) -> Any:
    """``np.linalg.cholesky`` by NumPy (``upper`` passed only where given: NumPy before 2.0
    has no such keyword)."""
    if not upper:
        return _on_host(func, (a,))
    if type(a) is DeviceArray and has_host_path(a.device):
        return _adopted(func(a.host_view(), upper=True), a.device)
    return host_function(func, (a,), {"upper": True})
