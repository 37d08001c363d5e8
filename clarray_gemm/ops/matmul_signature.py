"""NumPy's rules for ``matmul``'s signature ``(n?,k),(k,m?)->(n?,m?)``: the result dtype, the
core-dimension check with NumPy's message, and the shapes (1-D operands promoted, batch
dimensions broadcast)."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_core", "result_dtypes", "shapes"]

_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


def result_dtypes(a_dtype: np.dtype, b_dtype: np.dtype, dtype: Any) -> tuple:
    """The loop's (input, input, output) dtypes, as ``np.matmul`` resolves them (``dtype=``
    as its signature)."""
    if dtype is None:
        return np.matmul.resolve_dtypes((a_dtype, b_dtype, None))
    return np.matmul.resolve_dtypes((a_dtype, b_dtype, None), signature=(None, None, np.dtype(dtype)))


def check_core(a_shape: tuple, b_shape: tuple) -> None:
    """NumPy's ValueError where the core dimensions cannot be multiplied."""
    for i, shape in enumerate((a_shape, b_shape)):
        if len(shape) == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, "
                             f"gufunc core with signature {_SIGNATURE} requires 1)")
    k_a = a_shape[-1]
    k_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if k_a != k_b:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {_SIGNATURE} (size {k_b} is different from {k_a})")


def shapes(a_shape: tuple, b_shape: tuple) -> tuple:
    """(a's and b's shapes with 1-D operands promoted, M, N, K, the broadcast batch shape, the
    result's shape)."""
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    a2 = (1,) + tuple(a_shape) if a_vec else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if b_vec else tuple(b_shape)
    M, K = a2[-2], a2[-1]
    N = b2[-1]
    batch_shape = np.broadcast_shapes(a2[:-2], b2[:-2])
    out_shape = batch_shape + (() if a_vec else (M,)) + (() if b_vec else (N,))
    return a2, b2, M, N, K, tuple(batch_shape), tuple(out_shape)
