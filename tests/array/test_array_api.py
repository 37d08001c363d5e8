"""The Array API namespace (``clarray_gemm.array_api``): standard-only code gives NumPy's answers
on device arrays, the products run GEMM kernels, creation and views stay on the device."""
from __future__ import annotations

import array_api_compat
import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm import array_api
from clarray_gemm.kernels import gemm

from conftest import random_array


def analysis(X, w, T):
    """Array-API-only code: nothing but ``xp = array_namespace(...)`` and the standard."""
    xp = array_api_compat.array_namespace(X, w, T)
    Z = (X - xp.mean(X, axis=0)) / xp.std(X, axis=0)
    gram = xp.matmul(xp.matrix_transpose(Z), Z) / Z.shape[0]
    scores = xp.vecdot(Z, w)
    order = xp.argsort(scores, descending=True, stable=True)
    top = xp.take(Z, order[:3], axis=0)
    contracted = xp.tensordot(T, Z, axes=([1], [0]))
    return {
        "Z": Z, "gram": gram, "scores": scores, "order": order, "top": top,
        "contracted": contracted, "linalg_matmul": xp.linalg.matmul(Z, w),
        "linalg_vecdot": xp.linalg.vecdot(Z, Z, axis=0),
        "clipped": xp.where(scores > 0, scores, xp.zeros_like(scores)),
        "sorted": xp.sort(scores), "max": xp.max(gram, axis=1, keepdims=True),
        "count": xp.count_nonzero(scores > 0), "cumsum": xp.cumulative_sum(scores),
        "unique": xp.unique_values(xp.round(scores)), "norm": xp.linalg.vector_norm(gram),
        "stacked": xp.stack([scores, scores * 2], axis=1),
        "eye_plus": gram + xp.eye(gram.shape[0], dtype=gram.dtype, device=X.device),
        "arange": xp.arange(Z.shape[0], device=X.device) * 2,
    }


def test_standard_code_runs_identically_on_numpy_and_device(device):
    X = random_array((40, 6), np.float64, seed=1) * 3 + 1
    w = random_array((6,), np.float64, seed=2)
    T = random_array((2, 40, 5), np.float32, seed=3)
    expected = analysis(X, w, T)
    got = analysis(*(cg.asarray(a, device=device) for a in (X, w, T)))
    assert expected.keys() == got.keys()
    for name, exp in expected.items():
        res = got[name]
        assert isinstance(res, cg.DeviceArray), name
        assert res.device == device, name
        assert res.dtype == exp.dtype and res.shape == exp.shape, name
        tol = 1e-5 if exp.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(np.asarray(res), exp, rtol=tol, atol=tol, err_msg=name)


@pytest.fixture
def gemm_calls(monkeypatch):
    """The GEMM kernel launches made during a test, as (batch, M, N, K) tuples."""
    calls = []
    monkeypatch.setattr(gemm, "launch_log", calls)
    return calls


def _no_host_product(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("a product ran on the host")
    for name in ("matmul", "tensordot", "vecdot", "einsum", "dot"):
        monkeypatch.setattr(array_api._compat, name, forbidden)
        monkeypatch.setattr(array_api._compat.linalg, name, forbidden, raising=False)


@pytest.mark.parametrize("call, launch", [
    (lambda xp, a, b: xp.matmul(a, b), (1, 5, 3, 4)),
    (lambda xp, a, b: a @ b, (1, 5, 3, 4)),
    (lambda xp, a, b: xp.linalg.matmul(a, b), (1, 5, 3, 4)),
    (lambda xp, a, b: xp.tensordot(a, b, axes=1), (1, 5, 3, 4)),
    (lambda xp, a, b: xp.linalg.tensordot(a.mT, b, axes=([0], [0])), (1, 5, 3, 4)),
    (lambda xp, a, b: xp.vecdot(a, a), (5, 1, 1, 4)),
    (lambda xp, a, b: xp.vecdot(a, b[:, 0]), (1, 5, 1, 4)),
    (lambda xp, a, b: xp.vecdot(a[1], b.mT), (1, 3, 1, 4)),
    (lambda xp, a, b: xp.linalg.vecdot(b, b, axis=-2), (3, 1, 1, 4)),
])
def test_products_run_gemm_kernels(device, gemm_calls, monkeypatch, call, launch):
    a_np, b_np = random_array((5, 4), np.float32, 4), random_array((4, 3), np.float32, 5)
    expected = call(array_api_compat.numpy, a_np, b_np)
    a, b = cg.asarray(a_np, device=device), cg.asarray(b_np, device=device)
    _no_host_product(monkeypatch)
    result = call(array_api, a, b)
    assert isinstance(result, cg.DeviceArray)
    assert gemm_calls == [launch]
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5)


def test_host_functions_run_no_kernel_product(device, gemm_calls):
    x = cg.asarray(random_array((4, 4), np.float32), device=device)
    array_api.sum(x, axis=0)
    array_api.linalg.inv(x)
    assert gemm_calls == []


@pytest.mark.parametrize("shape_a, shape_b, axes", [
    ((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 2), 1), ((2, 3), (4,), 0), ((), (3,), 0),
    ((3, 4, 5), (5, 3, 2), ([0, -1], [1, 0])), ((2, 0, 3), (0, 3), 2), ((2, 3), (3, 0), 1),
])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
def test_tensordot_matches_numpy(device, shape_a, shape_b, axes, dtype):
    a, b = random_array(shape_a, dtype, 6), random_array(shape_b, dtype, 7)
    result = array_api.tensordot(cg.asarray(a, device=device), cg.asarray(b, device=device),
                                 axes=axes)
    expected = np.tensordot(a, b, axes=axes)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5)


@pytest.mark.parametrize("shape_a, shape_b, axis", [
    ((5,), (5,), -1), ((3, 5), (5,), -1), ((5,), (2, 3, 5), -1), ((2, 1, 4), (3, 4), -1), ((4, 3), (4, 1), -2),
    ((2, 4, 3), (4, 3), -2), ((0, 3), (3,), -1),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
def test_vecdot_matches_numpy(device, shape_a, shape_b, axis, dtype):
    a, b = random_array(shape_a, dtype, 8), random_array(shape_b, dtype, 9)
    result = array_api.vecdot(cg.asarray(a, device=device), cg.asarray(b, device=device),
                              axis=axis)
    expected = np.vecdot(a, b, axis=axis)  # conjugates the first argument too
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5)


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.tensordot(a, a, axes=([0], [0, 1])),
    lambda xp, a: xp.tensordot(a, a, axes=3),
    lambda xp, a: xp.tensordot(a, a, axes=-1),
    lambda xp, a: xp.tensordot(a, a, axes=([0, 0], [0, 1])),
    lambda xp, a: xp.tensordot(a, a, axes=([0], [1])),
    lambda xp, a: xp.vecdot(a, a[:, :2]),
    lambda xp, a: xp.vecdot(a, a[:1], axis=-2),
    lambda xp, a: xp.vecdot(a, a, axis=-3),
    lambda xp, a: xp.matmul(a, a),
    lambda xp, a: xp.matrix_transpose(a[0]),
])
def test_product_errors(device, call):
    a = cg.asarray(random_array((2, 3), np.float32), device=device)
    with pytest.raises(ValueError):
        call(array_api, a)


def test_namespace_and_versions():
    x = cg.zeros((2, 2))
    assert array_api_compat.array_namespace(x) is array_api
    assert x.__array_namespace__() is array_api
    assert array_api.__array_api_version__ == array_api_compat.numpy.__array_api_version__
    assert array_api.__array_api_version__ >= "2024.12"
    for version in ("2023.12", "2024.12", array_api.__array_api_version__, None):
        assert x.__array_namespace__(api_version=version) is array_api
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2099.12")
    assert array_api.linalg.matrix_transpose is array_api.matrix_transpose


def test_mixing_with_numpy_arrays(device):
    """array_namespace refuses a mix of libraries; the namespace itself accepts NumPy arrays and
    puts them on the device of the device operands."""
    x = cg.asarray(np.ones((2, 3)), device=device)
    h = np.arange(6.0).reshape(3, 2)
    with pytest.raises(TypeError, match="Multiple namespaces"):
        array_api_compat.array_namespace(x, h)
    for result in (array_api.matmul(x, h), array_api.matmul(h.T, x.mT), array_api.add(x, h.T),
                   array_api.tensordot(h, x, axes=1)):
        assert isinstance(result, cg.DeviceArray) and result.device == device
    np.testing.assert_array_equal(np.asarray(array_api.matmul(x, h)), np.ones((2, 3)) @ h)


def test_creation_defaults_and_devices(device):
    xp = array_api
    assert xp.zeros((2,)).dtype == np.float64 and xp.empty(3, dtype=None).dtype == np.float64
    assert xp.full((2,), 3).dtype == np.int64 and xp.full((2,), True).dtype == np.bool_
    assert xp.full((1,), 1j).dtype == np.complex128
    assert xp.asarray(1.5).shape == () and xp.asarray([1, 2]).dtype == np.int64
    for make in (lambda: xp.ones((2, 2), device=device), lambda: xp.arange(3, device=device),
                 lambda: xp.eye(3, device=device), lambda: xp.linspace(0, 1, 4, device=device),
                 lambda: xp.asarray([[1, 2]], device=device), lambda: xp.empty((1,), device=device),
                 lambda: xp.fft.fftfreq(4, device=device)):
        a = make()
        assert isinstance(a, cg.DeviceArray) and a.device == device
    x = xp.asarray(np.arange(4.0), device=device)
    np.testing.assert_array_equal(np.asarray(xp.full_like(x, 7)), np.full(4, 7.0))
    assert xp.zeros_like(x, dtype=xp.int32).dtype == np.int32
    assert xp.astype(x, xp.float64, copy=False) is x
    assert xp.astype(x, xp.int8).dtype == np.int8
    assert xp.asarray(x) is x and xp.asarray(x, copy=True) is not x
    with pytest.raises(ValueError):
        xp.asarray(np.ones(2), copy=False)
    np.testing.assert_array_equal(np.asarray(xp.from_dlpack(np.arange(3))), np.arange(3))
    if device.info.host_unified_memory:  # DLPack: the mapping itself (tests/interop/test_interop.py)
        np.testing.assert_array_equal(np.from_dlpack(x), np.arange(4.0))
    else:
        with pytest.raises(BufferError):
            np.from_dlpack(x)
    assert x.to_device(device) is x


def test_views_share_the_buffer(device):
    x = array_api.asarray(np.arange(24.0).reshape(2, 3, 4), device=device)
    views = [array_api.matrix_transpose(x), array_api.permute_dims(x, (2, 0, 1)),
             array_api.reshape(x, (6, 4)), array_api.expand_dims(x, axis=1),
             array_api.squeeze(x[:1], axis=0), array_api.moveaxis(x, 0, -1),
             array_api.broadcast_to(x[:1], (5, 3, 4))]
    host = np.arange(24.0).reshape(2, 3, 4)
    expected = [np.matrix_transpose(host), np.permute_dims(host, (2, 0, 1)),
                host.reshape(6, 4), host[:, None], host[0], np.moveaxis(host, 0, -1),
                np.broadcast_to(host[:1], (5, 3, 4))]
    for v, e in zip(views, expected):
        assert v.storage is x.storage
        np.testing.assert_array_equal(np.asarray(v), e)
    with pytest.raises(ValueError):
        array_api.reshape(x.mT, (24,), copy=False)
    assert array_api.reshape(x.mT, (24,)).storage is not x.storage


def test_results_of_host_functions_are_device_arrays(device):
    x = array_api.asarray(np.array([[3.0, 1.0], [2.0, 5.0]]), device=device)
    assert isinstance(array_api.sum(x), cg.DeviceArray) and array_api.sum(x).shape == ()
    eig = array_api.linalg.eigh(x + x.mT)
    assert type(eig).__name__ == "EighResult"
    assert all(isinstance(a, cg.DeviceArray) for a in eig)
    assert isinstance(array_api.meshgrid(x[0], x[1]), (list, tuple))
    assert array_api.result_type(x, array_api.float32) == np.float64
    assert array_api.isdtype(x.dtype, "real floating") is True
    assert array_api.finfo(x).eps == np.finfo(np.float64).eps
    assert type(array_api.finfo(x).eps) is float
    assert array_api.finfo(np.ones(1, np.complex64)).dtype == np.float32


def test_inspection_namespace(device):
    info = array_api.__array_namespace_info__()
    assert device in info.devices()
    assert info.default_device() == cg.current_device()
    assert info.default_dtypes(device=device)["integral"] == np.int64
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert info.capabilities()["boolean indexing"] is True


def test_arrays_on_two_devices_are_refused(device):
    others = [d for d in array_api.__array_namespace_info__().devices() if d != device]
    if not others:
        pytest.skip("only one usable OpenCL device")
    a = array_api.ones((2,), device=device)
    b = array_api.ones((2,), device=others[0])
    with pytest.raises(ValueError, match="different devices"):
        array_api.add(a, b)
    assert array_api.add(a, b.to_device(device)).device == device


def test_many_dimensions(device):
    """Up to the advertised "max dimensions", also past the copy kernel's eight strided axes."""
    assert array_api.__array_namespace_info__().capabilities()["max dimensions"] == 64
    h = np.arange(2 ** 10, dtype=np.float32).reshape((2,) * 10)
    order = tuple(range(10))[::-1]
    x = array_api.permute_dims(array_api.asarray(h, device=device), order)
    expected = np.permute_dims(h, order)
    np.testing.assert_array_equal(np.asarray(array_api.reshape(x, (-1,))), expected.reshape(-1))
    np.testing.assert_array_equal(np.asarray(array_api.astype(x, array_api.float64)), expected)


def test_host_functions_never_write_into_device_arrays(device):
    """Host views are read-only; clip (whose array-api-compat version assigns into array
    bounds) gets copies, and the bounds are unchanged."""
    x = array_api.asarray(np.array([1, 5, 200], np.uint8), device=device)
    low = array_api.asarray(np.array([3, 3, 3], np.uint8), device=device)
    high = array_api.asarray(np.uint8(100), device=device)
    np.testing.assert_array_equal(np.asarray(array_api.clip(x, low, high)), [3, 5, 100])
    np.testing.assert_array_equal(np.asarray(array_api.clip(x, min=low)), [3, 5, 200])
    np.testing.assert_array_equal(np.asarray(low), [3, 3, 3])
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(x)[0] = 7
