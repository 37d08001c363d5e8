"""NaN-skipping reductions and scans of device arrays: ``nanmin``, ``nanmax``, ``nanargmin``,
``nanargmax``, ``nanprod``, ``nancumsum``, ``nancumprod``, ``nanvar``, ``nanstd`` give NumPy's
values (to float rounding against float64 references: tree sums), dtypes, shapes, warnings and
errors (all-NaN slices), along every axis and with ``keepdims``; integers as the plain
functions; no host calls. ``out=`` goes to NumPy (counted)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import clarray_gemm as cg

NAMES = ["nanmin", "nanmax", "nanargmin", "nanargmax", "nanprod", "nancumsum", "nancumprod",
         "nanvar", "nanstd"]


@pytest.fixture
def on_device(on_device):
    if not on_device.info.fp64:
        pytest.skip("the cases include float64")
    return on_device


def _run(func, arr, axis, kw):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result, error = func(arr, axis=axis, **kw), None
        except ValueError as exc:
            result, error = None, str(exc)
    return result, error, [str(w.message) for w in seen]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape", [(6, 5, 4), (7, 3, 31)])
def test_nan_functions_are_numpys(on_device, name, dtype, shape):
    rng = np.random.default_rng(NAMES.index(name))
    a = (rng.standard_normal(shape) * 3).astype(dtype)
    if dtype != np.int32:
        if "prod" in name:   # values near 1: products of hundreds stay finite
            a = (1 + rng.standard_normal(shape) * 0.05).astype(dtype)
            a[rng.random(shape) < 0.15] = np.nan
        else:
            a[a > 3] = np.nan
        a[:, 1, 2] = np.nan       # an all-NaN slice along axis 0
    x = cg.asarray(a, device=on_device)
    func = getattr(np, name)
    axes = (None, 0, 2, -1) if "cum" in name or "arg" in name else (None, 0, 2, (0, 2))
    for axis in axes:
        for kw in ({},) if "cum" in name else ({}, {"keepdims": True}):
            got, got_error, got_warnings = _run(func, x, axis, kw)
            want, want_error, want_warnings = _run(func, a, axis, kw)
            assert got_error == want_error and got_warnings == want_warnings
            if want_error:
                continue
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.shape == want.shape
            if want.dtype.kind != "f":   # indices, integer sums and products: exact
                np.testing.assert_array_equal(got, want)
            else:
                ref = func(a.astype(np.float64), axis=axis, **kw)   # float64 reference
                tol = 1e-5 if dtype == np.float32 else 1e-12
                np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, equal_nan=True)
    assert cg.on_host_calls() == {}


def test_out_goes_to_numpy(on_device):
    a = np.array([[1.0, np.nan], [3.0, 4.0]])
    out = np.empty(2)
    np.nanmax(cg.asarray(a, device=on_device), axis=1, out=out)
    np.testing.assert_array_equal(out, np.nanmax(a, axis=1))
    assert cg.on_host_calls() == {"nanmax": 1}
