"""How an operand of ``matmul`` reaches a GEMM kernel: read in place (its leading dimension,
orientation and batch strides: one batch level, or two where batch dimensions broadcast against
each other), or first packed into a contiguous copy when no kernel can address its layout; and
which NumPy call reads the operands on the host path."""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np

from ..array import DeviceArray, asarray
from ..device import Device
from ..kernels import gemm
from ..kernels.constants import constant
from ..kernels.copy import merge_dims
from ..kernels.gemm import GemmOperand

__all__ = ["matrix_layout", "operand_layout", "two_level_layouts", "operand_strides2", "packed",
           "shape2", "host_operand", "host_product"]


def matrix_layout(shape2: tuple, strides2: tuple, batch_shape: tuple, rows: int, cols: int
                   ) -> tuple[int, bool, list[int]] | None:
    """(ld, trans, element stride per batch dimension) of an operand of 2-D-or-more ``shape2``
    / element ``strides2`` broadcast to (batch..., rows, cols); None when its matrices are not
    row- or column-major."""
    nb = len(batch_shape)
    own = len(shape2) - 2
    bstrides = [0] * (nb - own) + [0 if n == 1 else s for n, s in zip(shape2[:-2], strides2[:-2])]
    sr, sc = strides2[-2], strides2[-1]
    if cols == 1:
        sc = 1
    if rows == 1:
        sr = cols if sc == 1 else 1
    if sc == 1 and sr >= max(cols, 1):
        return sr, False, bstrides
    if sr == 1 and sc >= max(rows, 1):
        return sc, True, bstrides
    return None


def operand_layout(shape2: tuple, strides2: tuple, batch_shape: tuple, rows: int, cols: int
            ) -> tuple[int, int, bool] | None:
    """(ld, batch stride, trans) of an operand of 2-D-or-more ``shape2`` / element ``strides2``
    broadcast to (batch..., rows, cols), or None when no kernel can address that layout with
    one batch stride."""
    found = matrix_layout(shape2, strides2, batch_shape, rows, cols)
    if found is None:
        return None
    ld, trans, bstrides = found
    dims, (merged,) = merge_dims(batch_shape, bstrides)
    if len(dims) > 1 or any(s < 0 for s in merged):
        return None
    return ld, merged[0] if dims else 0, trans


def two_level_layouts(a: DeviceArray, b: DeviceArray, batch_shape: tuple, M: int, N: int,
                       K: int) -> tuple[int, tuple, tuple] | None:
    """Batch dimensions that need two strides per operand, as in (8, 1, m, k) @ (1, 32, k, n):
    (inner batch count, A's (ld, outer stride, trans, inner stride), B's likewise), or None
    when the two operands' batch strides do not merge into exactly two levels."""
    found_a = matrix_layout(*operand_strides2(a, True), batch_shape, M, K)
    found_b = matrix_layout(*operand_strides2(b, False), batch_shape, K, N)
    if found_a is None or found_b is None:
        return None
    dims, (sa, sb) = merge_dims(batch_shape, found_a[2], found_b[2])
    if len(dims) != 2 or any(s < 0 for s in (*sa, *sb)):
        return None
    return (dims[1], (found_a[0], sa[0], found_a[1], sa[1]),
            (found_b[0], sb[0], found_b[1], sb[1]))


def operand_strides2(x: DeviceArray, vec_front: bool) -> tuple[tuple, tuple]:
    """Shape and element strides of ``x`` with a 1-D operand made 2-D as matmul does."""
    isz = x.itemsize
    strides = tuple(s // isz for s in x.strides)
    if x.ndim != 1:
        return x.shape, strides
    if vec_front:
        return (1,) + x.shape, (x.shape[0] * strides[0],) + strides
    return x.shape + (1,), strides + (1,)


def packed(x: Any, batch_shape: tuple, rows: int, cols: int, compute: np.dtype,
            device: Device, vec_front: bool) -> DeviceArray:
    """``x`` as a contiguous (batch..., rows, cols) device array in the compute dtype."""
    if not isinstance(x, DeviceArray):
        return asarray(np.broadcast_to(np.asarray(x, compute).reshape(
            shape2(np.shape(x), vec_front)), batch_shape + (rows, cols)), device=device)
    view = x.reshape(shape2(x.shape, vec_front)).broadcast_view(batch_shape + (rows, cols))
    return view.astype(compute, order="C")


def shape2(shape: tuple, vec_front: bool) -> tuple:
    if len(shape) != 1:
        return tuple(shape)
    return (1,) + tuple(shape) if vec_front else tuple(shape) + (1,)


def host_operand(b: np.ndarray, batch_shape: tuple, rows: int, cols: int) -> GemmOperand:
    """A NumPy operand as (1 or batch, rows, cols) host data (one matrix stays one)."""
    batch = math.prod(batch_shape)
    b = b.reshape(shape2(b.shape, False))
    if b.ndim == 2:
        return gemm.host_operand(b[None], batch)
    full = np.broadcast_to(b, batch_shape + (rows, cols))
    return gemm.host_operand(full.reshape(batch, rows, cols), batch)


_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# Where np.matmul's own call beats ndarray.dot's: from MATMUL_MIN_WORK multiply-adds, and for a
# K of 2 to SHALLOW_K over a C of SHALLOW_MIN_C elements or more (tuned constant
# host.matmul_over_dot)
_OVER_DOT = constant("host.matmul_over_dot")
MATMUL_MIN_WORK = int(_OVER_DOT["min_work"])
SHALLOW_K = int(_OVER_DOT["shallow_k"])
SHALLOW_MIN_C = int(_OVER_DOT["shallow_min_c"])


def host_product(a: Any, b: Any, dtype: Any) -> Callable[..., Any]:
    """The NumPy function (with ``out=``) that computes ``a @ b`` on the host path: ndarray.dot
    for a C-contiguous float matrix times a contiguous vector or matrix of its dtype (without
    the ufunc machinery: 0.25 against 0.56 us a call, more inside a host-path loop) where that
    call's cost matters or K is 1; np.matmul for larger products and for a shallow K over a
    large C, where its BLAS call is faster."""
    if (dtype is None and type(a) is DeviceArray and type(b) is DeviceArray and a.ndim == 2
            and b.ndim in (1, 2) and a.dtype == b.dtype and a.dtype in _BLAS_DTYPES
            and a.is_c_contiguous and b.is_c_contiguous):
        M, K = a.shape
        N = b.shape[1] if b.ndim == 2 else 1
        if K < 2 or (M * N * K < MATMUL_MIN_WORK
                     and not (K <= SHALLOW_K and M * N >= SHALLOW_MIN_C)):
            return np.ndarray.dot
    return np.matmul if dtype is None else functools.partial(np.matmul, dtype=dtype)
