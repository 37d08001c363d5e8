"""``python -m clarray_gemm bench fft``: ``np.fft`` on device arrays against CuPy's cuFFT on CUDA
machines (NumPy's pocketfft elsewhere): the lengths and batches of the FFT targets (powers of
two to 2^24, a batch of rows, 2-D, and lengths 1000, 4099 (a prime: Bluestein) and 3^10), each
answer within a relative norm error of 1e-4 of NumPy's; see ``case_grid.py`` for the timing.
"""
from __future__ import annotations

import numpy as np

from .case_grid import Case, Row, as_json, format_report, run

__all__ = ["CASES", "SMOKE_CASES", "Row", "run", "format_report", "as_json"]


def close(got: np.ndarray, want: np.ndarray) -> bool:
    """float32 transforms: NumPy's dtype and shape, relative norm error below 1e-4."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    scale = np.linalg.norm(want.ravel().astype(np.complex128))
    error = np.linalg.norm((got.astype(np.complex128) - want).ravel())
    return bool(error <= 1e-4 * max(scale, 1e-30))


def _fft(xp, a):
    return xp.fft.fft(a)


def _rfft(xp, a):
    return xp.fft.rfft(a)


def _irfft(xp, a):
    return xp.fft.irfft(a)


def _fft2(xp, a):
    return xp.fft.fft2(a)


CASES: tuple[Case, ...] = (
    Case("fft", (1 << 20,), "complex64", _fft, close),
    Case("fft", (1 << 24,), "complex64", _fft, close),
    Case("rfft", (1 << 24,), "float32", _rfft, close),
    Case("irfft", (1 << 20,), "complex64", _irfft, close),
    Case("fft rows", (1024, 4096), "complex64", _fft, close),
    Case("fft rows", (16384, 64), "complex64", _fft, close),
    Case("fft2", (4096, 4096), "complex64", _fft2, close),
    Case("fft", (1000,), "complex64", _fft, close),
    Case("fft", (4099,), "complex64", _fft, close),
    Case("fft", (3 ** 10,), "complex64", _fft, close),
    Case("fft rows", (1000, 1000), "complex64", _fft, close),
    Case("fft rows", (64, 4099), "complex64", _fft, close),
)
SMOKE_CASES: tuple[Case, ...] = (
    Case("fft", (1024,), "complex64", _fft, close),
    Case("rfft", (7, 33), "float32", _rfft, close),
    Case("fft", (31,), "complex64", _fft, close),
)
