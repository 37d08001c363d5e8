"""``python -m clarray_gemm bench linalg``: ``np.linalg`` on device arrays against CuPy's cuSOLVER
on CUDA machines (NumPy's LAPACK elsewhere): batched small systems (a work-group a matrix) and
single large matrices (the blocked factorisations), float32, each answer within a relative norm
error of 1e-3 of NumPy's; see ``case_grid.py`` for the timing.
"""
from __future__ import annotations

import numpy as np

from .case_grid import Case, Row, as_json, format_report, run

__all__ = ["CASES", "SMOKE_CASES", "Row", "run", "format_report", "as_json"]


def close(got: np.ndarray, want: np.ndarray) -> bool:
    """NumPy's dtype and shape; relative norm error below 1e-3 (the matrices are well
    conditioned: float32 LU and Cholesky agree with LAPACK's far closer)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    error = np.linalg.norm((got.astype(np.float64) - want).ravel())
    return bool(error <= 1e-3 * max(np.linalg.norm(want.ravel().astype(np.float64)), 1e-30))


def dominant(a: np.ndarray) -> np.ndarray:
    """``a`` (standard normal) plus 2 sqrt(n) on the diagonal: eigenvalues at least sqrt(n)
    from zero, a condition number near 3."""
    n = a.shape[-1]
    return (a + np.float32(2 * np.sqrt(n)) * np.eye(n, dtype=a.dtype)).astype(a.dtype)


def positive_definite(a: np.ndarray) -> np.ndarray:
    """a a^T / n + I: symmetric positive definite and well conditioned."""
    n = a.shape[-1]
    spd = np.matmul(a, np.swapaxes(a, -1, -2), dtype=np.float64) / n + np.eye(n)
    return spd.astype(a.dtype)


def _solve(xp, a):
    return xp.linalg.solve(a, a[..., :, :1])


def _solve_vector(xp, a):
    return xp.linalg.solve(a, a[:, 0])


def _inv(xp, a):
    return xp.linalg.inv(a)


def _det(xp, a):
    return xp.linalg.slogdet(a)[1]


def _cholesky(xp, a):
    return xp.linalg.cholesky(a)


CASES: tuple[Case, ...] = (
    Case("solve", (1000, 32, 32), "float32", _solve, close, dominant),
    Case("inv", (1000, 32, 32), "float32", _inv, close, dominant),
    Case("cholesky", (1000, 32, 32), "float32", _cholesky, close, positive_definite),
    Case("solve", (64, 128, 128), "float32", _solve, close, dominant),
    Case("solve", (512, 512), "float32", _solve_vector, close, dominant),
    Case("solve", (1024, 1024), "float32", _solve_vector, close, dominant),
    Case("solve", (4096, 4096), "float32", _solve_vector, close, dominant),
    Case("inv", (1024, 1024), "float32", _inv, close, dominant),
    Case("inv", (4096, 4096), "float32", _inv, close, dominant),
    Case("slogdet", (1024, 1024), "float32", _det, close, dominant),
    Case("cholesky", (1024, 1024), "float32", _cholesky, close, positive_definite),
    Case("cholesky", (4096, 4096), "float32", _cholesky, close, positive_definite),
)
SMOKE_CASES: tuple[Case, ...] = (
    Case("solve", (10, 7, 7), "float32", _solve, close, dominant),
    Case("solve", (70, 70), "float32", _solve_vector, close, dominant),
    Case("cholesky", (33, 33), "float32", _cholesky, close, positive_definite),
)
