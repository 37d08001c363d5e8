"""Operands and comparisons shared by the ufunc tests: special values per dtype, NumPy's answers
bit for bit (NaN, inf, signed zeros), and ULP distances for the transcendental functions."""
from __future__ import annotations

import numpy as np

from clarray_gemm.ops.ufuncs import SPECS

FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, -1e10, 1e-30, np.inf, -np.inf,
                  np.nan]
INT_SPECIALS = [0, 1, -1, 2, -2, 3, -7, 7, 5, 31, 32, 33, 64, 100]

# OpenCL's built-ins are not correctly rounded (nor are NumPy's SIMD loops): these are compared in
# ULPs. Measured on PoCL 3.0 against NumPy 2.4 (AVX2) on this machine over 30k random values and
# the specials: at most 3 ULP in float32 and in float64 (log and tan float32, cbrt and tan
# float64; most functions 1-2 ULP). The bound, 4 ULP (float64: ~9e-16 relative), leaves a little
# room for other drivers.
TRANSCENDENTAL = {np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin, np.cos,
                  np.tan, np.arcsin, np.arccos, np.arctan, np.arctan2, np.hypot, np.sinh, np.cosh,
                  np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.cbrt, np.power, np.float_power}
ULP_BOUND = {np.dtype(np.float32): 4, np.dtype(np.float64): 4}


def specials(dtype: np.dtype) -> np.ndarray:
    """The edge values of ``dtype``: specials for floats, limits and small values for ints."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.array(FLOAT_SPECIALS, dtype)
    if dtype.kind == "b":
        return np.array([False, True])
    info = np.iinfo(dtype)
    values = [v for v in INT_SPECIALS if info.min <= v <= info.max] + [info.min, info.max,
                                                                      info.min + 1, info.max - 1]
    return np.array(values, dtype)


def binary_grid(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of special values (a 2-D grid, so broadcasting is covered too)."""
    s = specials(dtype)
    return s[:, None], s[None, :]


def loop_on_device(ufunc: np.ufunc, dtypes: tuple) -> bool:
    """Whether NumPy's loop for these input dtypes is one the device kernel runs."""
    try:
        loop = ufunc.resolve_dtypes(tuple(np.dtype(d) for d in dtypes) + (None,) * ufunc.nout)
    except TypeError:
        return False
    loop = [np.dtype(d) for d in loop]
    return (all(d.kind in "biuf" and d != np.float16 for d in loop)
            and len(set(loop[:ufunc.nin])) == 1)


def _ordered(a: np.ndarray) -> np.ndarray:
    """Float bit patterns as integers in the floats' order (-0.0 and 0.0 both 0)."""
    bits = a.view(np.int32 if a.dtype == np.float32 else np.int64).astype(np.int64)
    magnitude = bits & (0x7FFFFFFF if a.dtype == np.float32 else 0x7FFFFFFFFFFFFFFF)
    return np.where(bits < 0, -magnitude, magnitude)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """ULPs between two float arrays of one dtype (0 where both are NaN or equal)."""
    got, want = np.asarray(got), np.asarray(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(over="ignore"):
        d = np.abs(_ordered(got) - _ordered(want))
    return np.where(same, 0, d)


def assert_same(got, want, ufunc=None) -> None:
    """NumPy's result exactly: dtype, shape, values, NaN positions and signed zeros; within
    ``ULP_BOUND`` for the transcendental functions."""
    got_host = np.asarray(got)
    want = np.asarray(want)
    assert got_host.dtype == want.dtype, (got_host.dtype, want.dtype)
    assert got_host.shape == want.shape, (got_host.shape, want.shape)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got_host, want)
        return
    if ufunc in TRANSCENDENTAL:
        np.testing.assert_array_equal(np.isnan(got_host), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got_host), np.isinf(want))
        worst = ulp_distance(got_host, want).max(initial=0)
        assert worst <= ULP_BOUND[want.dtype], f"{worst} ULP"
        return
    np.testing.assert_array_equal(got_host, want)
    np.testing.assert_array_equal(np.signbit(got_host[~np.isnan(got_host)]),
                                  np.signbit(want[~np.isnan(want)]))


ALL_UFUNCS = sorted(SPECS, key=lambda u: u.__name__)
