"""``np.isin``, ``np.intersect1d``, ``np.setdiff1d`` and ``np.union1d`` of device arrays: NumPy's
answers (NaN in nothing, -0.0 equal to 0.0 (either may stand for both), mixed dtypes, empty
operands, ``invert``, ``assume_unique``) without host calls; ``return_indices`` goes to NumPy
(counted)."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg


@pytest.fixture
def on_device(on_device):
    if not on_device.info.fp64:
        pytest.skip("the cases include float64")
    return on_device


def _operands(kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "float":
        a = rng.integers(0, 10, (3, 11)).astype(np.float32)
        a[0, :3] = [np.nan, -0.0, np.inf]
        b = np.array([2, 5, 0.0, np.nan, 9, 11, np.inf], np.float64)
    elif kind == "int":
        a = rng.integers(-5, 5, 37).astype(np.int16)
        b = rng.integers(0, 8, 12).astype(np.int64)
    else:
        a = rng.integers(0, 2, 9).astype(np.bool_)
        b = np.array([1], np.uint8)
    return a, b


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)   # (-0.0 or 0.0 for a zero: whichever of the
    # two NumPy's unstable sort puts first; ours keeps the input's order)


@pytest.mark.parametrize("kind", ["float", "int", "bool"])
def test_isin_and_set_functions(on_device, kind):
    a, b = _operands(kind, seed=len(kind))
    for x, y in ((cg.asarray(a, device=on_device), cg.asarray(b, device=on_device)),
                 (cg.asarray(a, device=on_device), b), (a, cg.asarray(b, device=on_device))):
        for invert in (False, True):
            got = np.isin(x, y, invert=invert)
            assert isinstance(got, cg.DeviceArray)
            _same(got, np.isin(a, b, invert=invert))
        _same(np.isin(x, y[:0]), np.isin(a, b[:0]))
        for f in (np.intersect1d, np.setdiff1d, np.union1d):
            got = f(x, y)
            assert isinstance(got, cg.DeviceArray)
            _same(got, f(a, b))
        ua, ub = np.unique(a), np.unique(b)
        for f in (np.intersect1d, np.setdiff1d):
            _same(f(cg.asarray(ua, device=on_device), ub, assume_unique=True),
                  f(ua, ub, assume_unique=True))
    assert cg.on_host_calls() == {}


def test_errors_and_host_cases(on_device):
    x = cg.asarray(np.arange(5), device=on_device)
    with pytest.raises(ValueError, match="Invalid kind"):
        np.isin(x, [1, 2], kind="fast")
    both, i, j = np.intersect1d(x, np.array([3, 1]), return_indices=True)
    want = np.intersect1d(np.arange(5), np.array([3, 1]), return_indices=True)
    for g, w in zip((both, i, j), want):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert cg.on_host_calls() == {"intersect1d": 1}


def test_host_path_gives_numpys(device):
    if not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    a, b = _operands("int", seed=2)
    x = cg.asarray(a, device=device)
    cg.reset_host_calls()
    for f in (np.isin, np.intersect1d, np.setdiff1d, np.union1d):
        got = f(x, b)
        assert isinstance(got, cg.DeviceArray)
        _same(got, f(a, b))
    assert cg.on_host_calls() == {}
