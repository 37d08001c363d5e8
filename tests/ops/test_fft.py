"""np.fft on device arrays: the kernels of opencl/fft.cl (the host path off) against NumPy's
pocketfft, by relative norm error against a more precise reference (float64 for 32-bit inputs,
long double for 64-bit ones), within 4x NumPy's own error; NumPy's dtypes, shapes and errors."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels.crossover import has_host_path
import clarray_gemm.ops.fft as fft_ops
from clarray_gemm.kernels import plans
from clarray_gemm.ops.fft import split_length, stockham_radices

LENGTHS = [1, 2, 7, 8, 12, 31, 33, 64, 105, 257, 1000, 2187]
ONE_AXIS = [np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(-20 if dt.kind == "i" else 0, 20, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _rel(got, ref):
    got, ref = np.asarray(got, dtype=ref.dtype), np.asarray(ref)
    scale = np.linalg.norm(ref.ravel())
    return np.linalg.norm((got - ref).ravel()) / (scale if scale else 1.0)


def _precise(a):
    """``a`` in the next precision up (long double for 64-bit floats)."""
    if a.dtype in (np.float64, np.complex128):
        return a.astype(np.longdouble if a.dtype.kind == "f" else np.clongdouble)
    if a.dtype.kind in "fc":
        return a.astype(np.float64 if a.dtype.kind == "f" else np.complex128)
    return a.astype(np.longdouble)   # integers: NumPy transforms them as float64


def _check(func, x, a, **kwargs):
    """``func`` on the device array ``x`` against NumPy on ``a``: dtype and shape, and an error
    within 4x NumPy's against the more precise reference."""
    got = np.asarray(func(x, **kwargs))
    want = func(a, **kwargs)
    assert type(func(x, **kwargs)) is cg.DeviceArray
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    ref = func(_precise(a), **kwargs)
    eps = np.finfo(want.dtype).eps
    assert _rel(got, ref) <= 4 * max(_rel(want, ref), eps), (_rel(got, ref), _rel(want, ref))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64, np.complex128,
                                   np.int16])
@pytest.mark.parametrize("func", ONE_AXIS, ids=lambda f: f.__name__)
def test_one_axis_transforms_are_numpys(on_device, func, dtype, n):
    if dtype in (np.float64, np.complex128, np.int16) and not on_device.info.fp64:
        pytest.skip("complex128 results need doubles")
    if func in (np.fft.rfft, np.fft.ihfft) and np.dtype(dtype).kind == "c":
        pytest.skip("real inputs only")
    if func in (np.fft.irfft, np.fft.hfft) and n == 1:
        pytest.skip("NumPy's default n is 0 there (its error: test_errors)")
    a = _data((3, n), dtype, seed=n)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    _check(func, x, a)
    _check(func, x, a, n=n + 5, norm="ortho")            # zero-padded
    _check(func, x, a, n=max(n // 2, 2), norm="forward")  # truncated
    _check(func, x, a, axis=0)                           # rows along the first axis
    assert cg.on_host_calls() == {}


def test_views_and_axes(on_device):
    a = _data((5, 6, 40), np.complex64, seed=3)
    r = _data((5, 6, 40), np.float32, seed=4)
    x, xr = cg.asarray(a, device=on_device), cg.asarray(r, device=on_device)
    cg.reset_host_calls()
    _check(np.fft.fft, x[1:, ::2, 3:], a[1:, ::2, 3:])     # offset, strided rows and elements
    _check(np.fft.ifft, x, a, axis=1)                      # a middle axis: rows copied out
    _check(np.fft.rfft, xr.transpose(2, 0, 1), r.transpose(2, 0, 1))
    _check(np.fft.irfft, x[:, 0, ::-1], a[:, 0, ::-1], n=77)   # negative element stride
    _check(np.fft.hfft, x[2], a[2], axis=0, norm="forward")
    _check(np.fft.fft, xr[:, :, 7], r[:, :, 7], axis=-2)
    assert cg.on_host_calls() == {}


ND = [np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn, np.fft.fft2, np.fft.ifft2,
      np.fft.rfft2, np.fft.irfft2]


@pytest.mark.parametrize("func", ND, ids=lambda f: f.__name__)
def test_n_dimensional_transforms_are_numpys(on_device, func):
    a = _data((6, 10, 15), np.float32, seed=5)
    c = _data((4, 9, 16), np.complex64, seed=6)
    x, xc = cg.asarray(a, device=on_device), cg.asarray(c, device=on_device)
    cg.reset_host_calls()
    _check(func, x, a)
    _check(func, x, a, axes=(0, 2), norm="ortho")
    _check(func, x, a, s=(8, 9), axes=(1, 0))
    if func not in (np.fft.rfftn, np.fft.rfft2):
        _check(func, xc, c, axes=(-1, 0), s=(5, -1))
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("n", [64, 105, 1000, 31, 257, 2187, 512])
def test_long_row_paths(on_device, monkeypatch, n):
    """Rows longer than the local memory holds: the four-step FFT (two launches), Bluestein on
    it, and one launch a pass where the length does not split (a 16-element local memory)."""
    monkeypatch.setattr(fft_ops, "local_max", lambda device, dtype: 16)
    a = _data((3, n), np.complex64, seed=n)
    r = _data((2, n), np.float32, seed=n + 1)
    x, xr = cg.asarray(a, device=on_device), cg.asarray(r, device=on_device)
    cg.reset_host_calls()
    _check(np.fft.fft, x, a)
    _check(np.fft.ifft, x, a, n=n + 3, norm="ortho")
    _check(np.fft.rfft, xr, r, n=n - 1)
    _check(np.fft.irfft, x, a, axis=0)
    _check(np.fft.fft, x[:, ::-1], a[:, ::-1])
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("lpad,group", [(1, (256, 8)), (4, (512, 4))])
def test_padded_local_rows_are_numpys(on_device, monkeypatch, lpad, group):
    """fft_rows with its local rows padded (LPAD, one unused element after every 2^lpad) and
    GPUs' work-group shapes (up to 512 work-items of 4 elements) gives NumPy's transforms:
    several short rows a work-group, one long row, Bluestein's lengths, and the four-step FFT's
    two launches (a 64-element local memory)."""
    monkeypatch.setattr(fft_ops, "_local_pad", lambda device: lpad)
    monkeypatch.setattr(fft_ops, "_group_shape", lambda device: group)
    plans.clear_all()   # launches bound before (keyed by geometry alone) must not answer
    try:
        a = _data((5, 1000), np.complex64, seed=lpad)
        x = cg.asarray(a, device=on_device)
        cg.reset_host_calls()
        _check(np.fft.fft, x[:, :8], a[:, :8])       # 128 rows a group at most: several here
        _check(np.fft.ifft, x, a, norm="ortho")      # one 1000-point row a group
        _check(np.fft.fft, x[:, :257], a[:, :257])   # Bluestein on 512
        _check(np.fft.fft, x, a, axis=0)             # rows along the first axis, strided
        monkeypatch.setattr(fft_ops, "local_max", lambda device, dtype: 64)
        _check(np.fft.fft, x, a)                     # four-step: 25 x 40
        assert cg.on_host_calls() == {}
    finally:
        plans.clear_all()   # nor answer later tests with these settings


@pytest.mark.parametrize("n, limit, split", [(64, 16, (8, 8)), (1000, 64, (25, 40)),
                                             (2 ** 20, 4096, (1024, 1024)), (97, 64, None),
                                             (512, 16, None)])
def test_split_length(n, limit, split):
    assert split_length(n, limit) == split


def test_errors_are_numpys(on_device):
    a = _data((4, 8), np.float32)
    x = cg.asarray(a, device=on_device)
    for func, args, kwargs in (
            (np.fft.fft, (), {"n": 0}), (np.fft.ifft, (), {"n": -3}),
            (np.fft.fft, (), {"norm": "sideways"}), (np.fft.fft, (), {"axis": 2}),
            (np.fft.irfft, (), {"n": 0}), (np.fft.fftn, (), {"s": (3, 4), "axes": (0,)}),
            (np.fft.fft2, (), {"axes": (0, 5)})):
        with pytest.raises(Exception) as ours:
            func(x, *args, **kwargs)
        with pytest.raises(Exception) as theirs:
            func(a, *args, **kwargs)
        assert type(ours.value) is type(theirs.value), (func, kwargs)
        assert str(ours.value) == str(theirs.value)
    c = cg.asarray(_data((4, 8), np.complex64), device=on_device)
    with pytest.raises(TypeError):
        np.fft.rfft(c)
    one = cg.asarray(np.ones(1, np.float32), device=on_device)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        np.fft.irfft(one)


def test_nan_spoils_its_row_only(on_device):
    a = _data((3, 24), np.float32, seed=7)
    a[1, 5] = np.nan
    x = cg.asarray(a, device=on_device)
    got, want = np.asarray(np.fft.fft(x)), np.fft.fft(a)
    assert (np.isnan(got).any(axis=1) == np.isnan(want).any(axis=1)).all()
    np.testing.assert_allclose(got[[0, 2]], want[[0, 2]], rtol=1e-4, atol=1e-4)


def test_host_path_is_numpys(device):
    """Where the device has a host path (CPU devices), NumPy's pocketfft runs on the mapping:
    its bits, in a device array."""
    a = _data((3, 20), np.float32, seed=8)
    x = cg.asarray(a, device=device)
    got = np.fft.rfft(x)
    assert type(got) is cg.DeviceArray
    want = np.fft.rfft(a)
    if has_host_path(device):
        assert np.asarray(got).tobytes() == want.tobytes()
    else:
        assert _rel(got, want.astype(np.complex128)) < 1e-5


def test_shifts_and_complex_copies_stay_on_the_device(on_device):
    a = _data((5, 8, 7), np.complex64, seed=9)
    r = _data((6, 9), np.float32, seed=10)
    x, xr = cg.asarray(a, device=on_device), cg.asarray(r, device=on_device)
    cg.reset_host_calls()
    for func in (np.fft.fftshift, np.fft.ifftshift):
        for axes in (None, 1, (0, 2), [-1]):
            assert np.array_equal(np.asarray(func(x, axes=axes)), func(a, axes=axes))
        assert np.array_equal(np.asarray(func(xr)), func(r))
    assert np.array_equal(np.asarray(x.transpose(2, 0, 1).copy()), a.transpose(2, 0, 1))
    y = cg.zeros((5, 8, 7), np.complex64, device=on_device)
    y[1:, ::2] = x[:-1, 1::2]
    want = np.zeros_like(a)
    want[1:, ::2] = a[:-1, 1::2]
    got = np.asarray(y)
    assert got.tobytes() == want.tobytes()
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("n, radices", [(1, []), (8, [8]), (16, [8, 2]), (32, [8, 4]),
                                        (105, [3, 5, 7]), (1000, [8, 5, 5, 5]), (11, None),
                                        (2 * 13, None)])
def test_stockham_radices(n, radices):
    assert stockham_radices(n) == radices
