"""``matmul`` / ``@`` / ``np.dot`` with NumPy's semantics, run by the GEMM catalogue.

NumPy's rules, then one launch: 1-D operands are promoted and the added dimension removed,
batch dimensions broadcast, the ufunc's own dtype resolution (``np.matmul.resolve_dtypes``)
decides the result type, errors are NumPy's. Operands go to the kernel as views (transposed and
Fortran-order ones too: the kernels take a TRANS flag); only layouts no kernel can address
(negative or two-dimensional strides, multi-axis broadcast batches) are packed on the device first.
Where the device has no kernel for the dtype (complex, float64 without fp64) the product runs on
the host through mapped views and the result comes back as a device array.
"""
from __future__ import annotations

import operator
from typing import Any, Mapping

import numpy as np

from .._dispatch import implements, implements_ufunc
from ..array import DeviceArray, asarray, empty, zeros
from ..device import Device
from ..kernels import gemm
from ..kernels.copy import merge_dims
from ..kernels.gemm import GemmOperand, GemmProblem
from ._common import compute_dtype, device_of

try:  # NumPy's own exception type for this error (a TypeError subclass); private in NumPy 2.x
    from numpy._core._exceptions import _UFuncOutputCastingError as _OutputCastingError
except ImportError:  # pragma: no cover
    _OutputCastingError = None

__all__ = ["matmul", "dot", "explain_matmul"]

_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


def _result_dtypes(a_dtype: np.dtype, b_dtype: np.dtype, dtype: Any) -> tuple:
    if dtype is None:
        return np.matmul.resolve_dtypes((a_dtype, b_dtype, None))
    return np.matmul.resolve_dtypes((a_dtype, b_dtype, None), signature=(None, None, np.dtype(dtype)))


def _check_core(a_shape, b_shape):
    for i, shape in enumerate((a_shape, b_shape)):
        if len(shape) == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, "
                             f"gufunc core with signature {_SIGNATURE} requires 1)")
    k_a = a_shape[-1]
    k_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if k_a != k_b:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {_SIGNATURE} (size {k_b} is different from {k_a})")


def _operand(x: DeviceArray, batch_shape: tuple, rows: int, cols: int) -> GemmOperand | None:
    """Describe ``x`` broadcast to (batch..., rows, cols) as a kernel operand, or None when its
    layout needs packing first."""
    view = x._broadcast_to(batch_shape + (rows, cols))
    strides = view.element_strides
    sr, sc = strides[-2], strides[-1]
    if cols == 1:
        sc = 1
    if rows == 1:
        sr = cols if sc == 1 else 1
    if sc == 1 and sr >= max(cols, 1):
        trans, ld = False, sr
    elif sr == 1 and sc >= max(rows, 1):
        trans, ld = True, sc
    else:
        return None
    dims, (bstrides,) = merge_dims(batch_shape, strides[:-2])
    if len(dims) > 1 or any(s < 0 for s in bstrides):
        return None
    return GemmOperand(view.storage.buffer, view.element_offset, ld,
                       bstrides[0] if dims else 0, trans)


def _as_operand(x: DeviceArray, batch_shape: tuple, rows: int, cols: int) -> tuple[GemmOperand, DeviceArray]:
    op = _operand(x, batch_shape, rows, cols)
    if op is None:  # pack on the device into a contiguous (batch..., rows, cols) array
        x = x._broadcast_to(batch_shape + (rows, cols)).copy()
        op = _operand(x, batch_shape, rows, cols)
    return op, x


def _prepare(a, b, dtype, device: Device):
    """Bring both operands to the device in the kernel's compute dtype (NumPy operands: one copy)."""
    a_dt, b_dt = np.result_type(a), np.result_type(b)
    _, _, result = _result_dtypes(a_dt, b_dt, dtype)
    return result, compute_dtype(result, device)


def _to_device(x: Any, compute: np.dtype, device: Device) -> DeviceArray:
    if isinstance(x, DeviceArray):
        return x if x.dtype == compute else x.astype(compute)
    return asarray(x, dtype=compute, device=device)


def _write_out(result: DeviceArray, out: Any, casting: str) -> Any:
    if out is None:
        return result
    if tuple(out.shape) != result.shape:
        raise ValueError(f"matmul: Output operand 0 has a mismatch in its core dimension or "
                         f"shape: expected {result.shape}, got {tuple(out.shape)}")
    if not np.can_cast(result.dtype, out.dtype, casting=casting):
        if _OutputCastingError is not None:
            raise _OutputCastingError(np.matmul, casting, result.dtype, out.dtype, 0)
        raise TypeError(f"Cannot cast ufunc 'matmul' output from {result.dtype!r} to "
                        f"{out.dtype!r} with casting rule {casting!r}")
    if isinstance(out, DeviceArray):
        out[...] = result
    else:
        np.copyto(out, np.asarray(result), casting="unsafe")
    return out


def matmul(a: Any, b: Any, /, out: Any = None, *, dtype: Any = None, casting: str = "same_kind",
           axes: Any = None, kernel: str | None = None,
           params: Mapping[str, int] | None = None) -> DeviceArray:
    """``np.matmul`` on the device: NumPy's semantics; ``kernel=`` forces a GEMM variant (see
    :func:`clarray_gemm.kernels`) and ``params=`` its ``-D`` parameters."""
    if axes is not None:
        return _matmul_axes(a, b, out, dtype, casting, axes, kernel, params)
    device = device_of(a, b, out)
    a_shape, b_shape = np.shape(a), np.shape(b)
    _check_core(a_shape, b_shape)
    result_dtype, compute = _prepare(a, b, dtype, device)
    if compute is None:
        host = np.matmul(np.asarray(a), np.asarray(b), dtype=dtype)
        return _write_out(asarray(host, device=device), out, casting)
    # A NumPy B stays on the host until the kernel is chosen: the image kernel maps its image
    # and fills it straight from B; for the others gemm.run uploads it to a buffer.
    b_in = _to_device(b, compute, device) if isinstance(b, DeviceArray) else np.asarray(b, compute)
    res = _device_matmul(_to_device(a, compute, device), b_in, a_shape, b_shape, device,
                         kernel, params)
    if res.dtype != result_dtype:
        res = res.astype(result_dtype) if result_dtype != np.float16 else asarray(
            np.asarray(res).astype(np.float16), device=device)
    return _write_out(res, out, casting)


def _shapes(a_shape, b_shape):
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    a2 = (1,) + tuple(a_shape) if a_vec else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if b_vec else tuple(b_shape)
    M, K = a2[-2], a2[-1]
    N = b2[-1]
    batch_shape = np.broadcast_shapes(a2[:-2], b2[:-2])
    out_shape = batch_shape + (() if a_vec else (M,)) + (() if b_vec else (N,))
    return a2, b2, M, N, K, tuple(batch_shape), out_shape


def _host_operand(b: np.ndarray, batch_shape: tuple, rows: int, cols: int) -> GemmOperand:
    """A NumPy operand as (1 or batch, rows, cols) host data (one matrix stays one)."""
    batch = int(np.prod(batch_shape, dtype=np.int64))
    if b.ndim == 2:
        return gemm.host_operand(b[None], batch)
    full = np.broadcast_to(b, batch_shape + (rows, cols))
    return gemm.host_operand(full.reshape(batch, rows, cols), batch)


def _device_matmul(a: DeviceArray, b: DeviceArray | np.ndarray, a_shape, b_shape,
                   device: Device, kernel: str | None, params) -> DeviceArray:
    a2_shape, b2_shape, M, N, K, batch_shape, out_shape = _shapes(a_shape, b_shape)
    a2 = a.reshape(a2_shape)
    b2 = b.reshape(b2_shape)
    c = empty(batch_shape + (M, N), a.dtype, device=device)
    if c.size == 0:
        return c.reshape(out_shape)
    if K == 0:
        return zeros(out_shape, a.dtype, device=device)
    batch = int(np.prod(batch_shape, dtype=np.int64))
    op_a, a2 = _as_operand(a2, batch_shape, M, K)
    a2.storage.check_kernel_access()
    if isinstance(b2, DeviceArray):
        op_b, b2 = _as_operand(b2, batch_shape, K, N)
        b2.storage.check_kernel_access()
    else:
        op_b = _host_operand(b2, batch_shape, K, N)
    problem = GemmProblem(batch, M, N, K, a.dtype, op_a, op_b,
                          GemmOperand(c.storage.buffer, 0, N, M * N, False))
    gemm.run(device, problem, kernel, params)
    return c.reshape(out_shape)


def _problem_for(a: DeviceArray, b: DeviceArray) -> tuple[Device, GemmProblem]:
    device = device_of(a, b)
    a2_shape, b2_shape, M, N, K, batch_shape, _ = _shapes(a.shape, b.shape)
    op_a = _operand(a.reshape(a2_shape), batch_shape, M, K)
    op_b = _operand(b.reshape(b2_shape), batch_shape, K, N)
    dummy = GemmOperand(a.storage.buffer, 0, max(K, 1), M * K)
    batch = int(np.prod(batch_shape, dtype=np.int64))
    return device, GemmProblem(batch, M, N, K, a.dtype, op_a or dummy, op_b or dummy,
                               GemmOperand(a.storage.buffer, 0, N, M * N))


def explain_matmul(a: Any, b: Any, kernel: str | None = None) -> str:
    """Which GEMM kernel ``a @ b`` runs, with which parameters, and why."""
    device = device_of(a, b)
    _check_core(np.shape(a), np.shape(b))
    result_dtype, compute = _prepare(a, b, None, device)
    if compute is None:
        return (f"host: NumPy's matmul through mapped views (no {result_dtype} kernel on "
                f"{device.name})")
    da, db = (x if isinstance(x, DeviceArray) and x.dtype == compute else
              empty(np.shape(x), compute, device=device) for x in (a, b))
    _, problem = _problem_for(da, db)
    head = (f"matmul {np.shape(a)} @ {np.shape(b)} -> {result_dtype} on {device.name}"
            f" (batch={problem.batch}, M={problem.M}, N={problem.N}, K={problem.K},"
            f" computed in {compute})")
    return head + "\n" + gemm.choose(device, problem, kernel).describe()


def _matmul_axes(a, b, out, dtype, casting, axes, kernel, params):
    try:
        ax_a, ax_b, ax_out = (tuple(x) if isinstance(x, (tuple, list)) else (x,) for x in axes)
    except (TypeError, ValueError):
        raise ValueError("axes should be a list with an entry for every operand") from None
    a_d = a if isinstance(a, DeviceArray) else asarray(a, device=device_of(a, b))
    b_d = b if isinstance(b, DeviceArray) else asarray(b, device=device_of(a, b))

    def to_end(x: DeviceArray, core: tuple) -> DeviceArray:
        core = tuple(operator.index(i) % x.ndim for i in core) if x.ndim else core
        rest = [i for i in range(x.ndim) if i not in core]
        return x.transpose(rest + list(core))
    res = matmul(to_end(a_d, ax_a), to_end(b_d, ax_b), dtype=dtype, kernel=kernel, params=params)
    n_core = len(ax_out)
    src = list(range(res.ndim - n_core, res.ndim))
    res_view = res._geometry_op(lambda t: np.moveaxis(t, src, list(ax_out)))
    return _write_out(res_view, out, casting)


# -- NumPy entry points ------------------------------------------------------------------------
_UNSUPPORTED_KW = {"axis", "signature", "where", "order", "subok", "keepdims", "extobj"}


@implements_ufunc(np.matmul)
def _matmul_ufunc(ufunc, inputs, kwargs):
    if len(inputs) != 2 or _UNSUPPORTED_KW & kwargs.keys():
        return NotImplemented  # NumPy's answer through the host
    out = kwargs.get("out")
    if isinstance(out, tuple):
        out = out[0]
    return matmul(*inputs, out=out, dtype=kwargs.get("dtype"),
                  casting=kwargs.get("casting", "same_kind"), axes=kwargs.get("axes"))


@implements(np.dot)
def dot(a: Any, b: Any, out: Any = None) -> Any:
    """``np.dot`` on the device (N-d operands reshaped into one 2-D product)."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if len(a_shape) == 0 or len(b_shape) == 0:
        return np.multiply(a, b, out=out)
    k_a = a_shape[-1]
    k_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if k_a != k_b:
        axis_b = max(len(b_shape) - 2, 0)
        raise ValueError(f"shapes {a_shape} and {b_shape} not aligned: {k_a} (dim "
                         f"{len(a_shape) - 1}) != {k_b} (dim {axis_b})")
    if len(a_shape) <= 2 and len(b_shape) <= 2:
        result = matmul(a, b)
    else:
        device = device_of(a, b)
        a_d = a if isinstance(a, DeviceArray) else asarray(a, device=device)
        b_d = b if isinstance(b, DeviceArray) else asarray(b, device=device)
        b_moved = b_d if b_d.ndim == 1 else b_d._geometry_op(lambda t: np.moveaxis(t, -2, 0))
        prod = matmul(a_d.reshape(-1, k_a), b_moved.reshape(k_b, -1))
        result = prod.reshape(a_shape[:-1] + b_shape[:-2] + b_shape[-1:])
    if out is not None:
        ok = (tuple(out.shape) == result.shape and out.dtype == result.dtype and
              (out.is_c_contiguous if isinstance(out, DeviceArray) else out.flags.c_contiguous))
        if not ok:
            raise ValueError("output array is not acceptable (must have the right datatype, "
                             "number of dimensions, and be a C-Array)")
        return _write_out(result, out, "no")
    return result
