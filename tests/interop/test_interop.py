"""xarray, scipy (SCIPY_ARRAY_API=1) and DLPack on device arrays: results stay on the device and
match NumPy."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import clarray_gemm as cg
import clarray_gemm.array_api as xp
from conftest import assert_matches, random_array


# -- xarray -------------------------------------------------------------------------------------
@pytest.fixture
def xr():
    return pytest.importorskip("xarray", reason="xarray is not installed "
                                                "(pip install 'clarray_gemm[xarray]')")


def _pair(xr, a, b):
    dev = (xr.DataArray(cg.asarray(a), dims=("x", "y")), xr.DataArray(cg.asarray(b), dims=("y", "z")))
    host = (xr.DataArray(a, dims=("x", "y")), xr.DataArray(b, dims=("y", "z")))
    return dev, host


def test_xarray_products_stay_on_the_device(xr):
    (a, b), (an, bn) = _pair(xr, random_array((6, 5), np.float32, 1),
                             random_array((5, 4), np.float32, 2))
    for got, want in ((a.dot(b), an.dot(bn)), (a @ b, an @ bn),
                      (xr.dot(a, b, dim="y"), xr.dot(an, bn, dim="y")),
                      (xr.dot(a, a, dim=...), xr.dot(an, an, dim=...))):
        assert isinstance(got.data, cg.DeviceArray), type(got.data)
        assert got.dims == want.dims
        assert_matches(got.data, want.data.astype(np.float64))


def test_xarray_shift_rolling_and_reductions(xr):
    (a, _), (an, _) = _pair(xr, random_array((8, 5), np.float32, 3), np.zeros((5, 1), np.float32))
    for got, want in ((a.shift(x=2), an.shift(x=2)), (a.shift(y=-1, fill_value=0.5),
                                                      an.shift(y=-1, fill_value=0.5)),
                      (a.rolling(x=3).mean(), an.rolling(x=3).mean())):
        assert isinstance(got.data, cg.DeviceArray)
        np.testing.assert_allclose(np.asarray(got.data), want.data, rtol=1e-6, equal_nan=True)
    for name in ("mean", "std", "max", "sum"):
        got = getattr(a, name)("x")
        assert isinstance(got.data, cg.DeviceArray), name
        np.testing.assert_allclose(np.asarray(got.data), getattr(an, name)("x").data, rtol=1e-5)
    assert f"{a.mean().data:.4f}" == f"{an.mean().data:.4f}"


# -- scipy ----------------------------------------------------------------------------------------
_ZSCORE = """
import numpy as np, clarray_gemm as cg, scipy.stats as st
rng = np.random.default_rng(0)
for a in (rng.random(100), rng.random((30, 7)).astype(np.float32)):
    x = cg.asarray(a)
    for kw in ({}, {"ddof": 1}, {"axis": None, "ddof": 1}):
        got = st.zscore(x, **kw)
        assert isinstance(got, cg.DeviceArray), type(got)
        np.testing.assert_allclose(np.asarray(got), st.zscore(a, **kw), rtol=1e-5, atol=1e-6)
import scipy.signal as sg
s, v = rng.random(200), rng.random(9)
for f in (sg.convolve, sg.fftconvolve, sg.oaconvolve):
    got = f(cg.asarray(s), cg.asarray(v))
    assert isinstance(got, cg.DeviceArray), (f, type(got))
    np.testing.assert_allclose(np.asarray(got), np.convolve(s, v), rtol=1e-10)
print("ok")
"""


def test_scipy_array_api_zscore_and_convolve():
    pytest.importorskip("scipy", reason="scipy is not installed")
    env = dict(os.environ, SCIPY_ARRAY_API="1")  # read by scipy at import: a fresh process
    run = subprocess.run([sys.executable, "-c", _ZSCORE], env=env, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]


def test_namespace_zero_d_results_stay_in_the_namespace():
    x = cg.asarray(random_array((10,), np.float64, 4))
    for result in (xp.sum(x), xp.mean(x) > 0, xp.all(x == x), xp.max(x) == xp.max(x)):
        assert isinstance(result, cg.DeviceArray) and result.shape == ()


# -- DLPack --------------------------------------------------------------------------------------
def test_dlpack_export_shares_the_mapping_read_only(device):
    if not device.info.host_unified_memory:
        pytest.skip("zero-copy export needs a device whose memory is the host's")
    a = random_array((4, 5), np.float32, 5)
    x = cg.asarray(a)
    assert x.__dlpack_device__() == (1, 0)
    h = np.from_dlpack(x)
    assert not h.flags.writeable and np.shares_memory(h, np.asarray(x))
    np.testing.assert_array_equal(h, a)
    x += 1  # copy-on-write: the consumer keeps its snapshot
    np.testing.assert_array_equal(h, a)
    np.testing.assert_array_equal(np.asarray(x), a + 1)
    copied = np.from_dlpack(x, copy=True)
    assert copied.flags.writeable and not np.shares_memory(copied, np.asarray(x))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float16, np.float64,
                                   np.complex64])
@pytest.mark.parametrize("max_version", [None, (0, 0), (1, 0), (2, 0)])
@pytest.mark.parametrize("copy", [None, False, True])
def test_dlpack_export_every_version_and_copy_mode(device, dtype, max_version, copy):
    if not device.info.host_unified_memory and copy is False:
        pytest.skip("a discrete device cannot export without a copy")
    x = cg.asarray(random_array((3, 2), dtype, 6))
    capsule = x.__dlpack__(max_version=max_version, copy=copy, dl_device=(1, 0))
    assert type(capsule).__name__ == "PyCapsule"


def test_dlpack_legacy_no_copy_export_is_the_buffer(device):
    if not device.info.host_unified_memory:
        pytest.skip("zero-copy export needs a device whose memory is the host's")

    class Legacy:  # a consumer of the DLPack 0.x protocol (no read-only flag)
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, **kwargs):
            return self.x.__dlpack__(max_version=None, copy=False)

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    x = cg.asarray(np.arange(4, dtype=np.float32))
    h = np.from_dlpack(Legacy(x))
    assert np.shares_memory(h, np.asarray(x))  # NumPy itself imports legacy tensors read-only
    np.testing.assert_array_equal(h, np.arange(4))


def test_dlpack_refusals():
    x = cg.asarray(np.ones(3, np.float32))
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))  # a CUDA device
    with pytest.raises(BufferError):
        xp.from_dlpack(np.ones(3), copy=False)


def test_from_dlpack_imports_cpu_producers():
    a = random_array((3, 4), np.int32, 7)

    class Producer:  # any CPU producer, e.g. a torch CPU tensor
        def __dlpack__(self, **kwargs):
            return a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    for source in (a, Producer()):
        y = xp.from_dlpack(source)
        assert isinstance(y, cg.DeviceArray)
        np.testing.assert_array_equal(np.asarray(y), a)
    x = cg.asarray(a)
    assert xp.from_dlpack(x) is x
    assert xp.from_dlpack(x, copy=True) is not x
    torch = pytest.importorskip("torch", reason="torch is not installed (optional producer)")
    t = torch.arange(6, dtype=torch.float32)
    np.testing.assert_array_equal(np.asarray(xp.from_dlpack(t)), np.arange(6, dtype=np.float32))
