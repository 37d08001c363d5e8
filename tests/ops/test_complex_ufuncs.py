"""Complex ufunc loops on the device (opencl/complex.cl, the host path off) against NumPy's:
dtypes (NEP 50), shapes, broadcasting, strided views and scalars; sums, differences,
negation, conjugates and comparisons bit for bit, products, quotients, squares and magnitudes
within 4 ulp (NumPy's own SIMD loops fuse some of them), special values where NumPy has them."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg

EXACT = [np.add, np.subtract, np.equal, np.not_equal]
CLOSE = [np.multiply, np.divide]
UNARY_EXACT = [np.negative, np.positive, np.conjugate, np.isnan, np.isinf, np.isfinite]
UNARY_CLOSE = [np.square, np.absolute]


def _complex(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    flat = z.reshape(-1)
    specials = [complex(np.inf, np.nan), 0j, complex(np.nan, 1.0), complex(-np.inf, 2.0),
                complex(0.0, -0.0), complex(3.0, np.inf)]
    for k, v in enumerate(specials[:flat.size]):
        flat[(k * 7) % flat.size] = v
    return z


def _same(got, want, exact):
    got = np.asarray(got)
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "b":
        assert np.array_equal(got, want)
        return
    parts = (lambda z: (z.real, z.imag)) if want.dtype.kind == "c" else (lambda z: (z,))
    for g, w in zip(parts(got), parts(want)):
        nan = np.isnan(w)
        assert (np.isnan(g) == nan).all()   # NaN where NumPy has NaN (payloads unspecified)
        if exact:
            assert (g.view(f"u{g.itemsize}")[~nan] == w.view(f"u{w.itemsize}")[~nan]).all()
        else:
            finite = np.isfinite(w)
            assert (g[~finite & ~nan] == w[~finite & ~nan]).all()   # the infinities
            # 4 ulp of the largest finite part: products and quotients cancel
            big = np.abs(w[finite]).max() if finite.any() else 0.0
            assert (np.abs(g[finite] - w[finite]) <= 4 * np.finfo(w.dtype).eps * big).all()


def _pairs(dtype, device):
    a = _complex((5, 7), dtype, 1)
    b = _complex((7,), dtype, 2)
    r = np.random.default_rng(3).standard_normal((5, 1)).astype(
        np.float32 if dtype == np.complex64 else np.float64)
    x, y, xr = (cg.asarray(v, device=device) for v in (a, b, r))
    return [((x, y), (a, b)), ((x, xr), (a, r)), ((xr, y), (r, b)), ((x, 2.5 - 1j), (a, 2.5 - 1j)),
            ((3, y), (3, b)), ((x.T, x.T[::-1]), (a.T, a.T[::-1])),
            ((x[1:, ::3], np.complex64(1j)), (a[1:, ::3], np.complex64(1j)))]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("ufunc", EXACT + CLOSE, ids=lambda u: u.__name__)
def test_binary_loops_are_numpys(on_device, ufunc, dtype):
    if dtype == np.complex128 and not on_device.info.fp64:
        pytest.skip("complex128 needs doubles")
    cg.reset_host_calls()
    with np.errstate(all="ignore"):
        for ours, theirs in _pairs(dtype, on_device):
            got = ufunc(*ours)
            assert type(got) is cg.DeviceArray
            _same(got, ufunc(*theirs), ufunc in EXACT)
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("ufunc", UNARY_EXACT + UNARY_CLOSE, ids=lambda u: u.__name__)
def test_unary_loops_are_numpys(on_device, ufunc, dtype):
    if dtype == np.complex128 and not on_device.info.fp64:
        pytest.skip("complex128 needs doubles")
    a = _complex((6, 9), dtype, 4)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    with np.errstate(all="ignore"):
        for ours, theirs in ((x, a), (x[::-2, 1:], a[::-2, 1:]), (x.T, a.T)):
            _same(ufunc(ours), ufunc(theirs), ufunc in UNARY_EXACT)
    assert cg.on_host_calls() == {}


def test_operators_and_mixed_precision(on_device):
    if not on_device.info.fp64:
        pytest.skip("complex128 needs doubles")
    a = _complex((4, 6), np.complex64, 5)
    d = np.random.default_rng(6).standard_normal(6)
    x, xd = cg.asarray(a, device=on_device), cg.asarray(d, device=on_device)
    cg.reset_host_calls()
    with np.errstate(all="ignore"):
        _same(x * xd, a * d, False)         # complex64 with float64: complex128
        _same(x + 1j, a + 1j, True)         # a Python complex keeps complex64 (NEP 50)
        _same(-x, -a, True)
        _same(abs(x), abs(a), False)
        _same(x / x[0], a / a[0], False)
        _same(x == x, a == a, True)
        _same(np.conj(x), np.conj(a), True)
    assert cg.on_host_calls() == {}


def test_what_stays_with_numpy(on_device):
    """Keywords and ufuncs without a device complex loop are the host fallback's, with NumPy's
    answer; integer arrays beside complex ones too."""
    a = _complex((3, 4), np.complex64, 7)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    with np.errstate(all="ignore"):
        _same(np.exp(x), np.exp(a), False)
        out = cg.empty((3, 4), np.complex64, device=on_device)
        np.add(x, x, out=out)
        _same(out, a + a, True)
        ints = cg.asarray(np.arange(4), device=on_device)
        _same(x + ints, a + np.arange(4), True)
    assert set(cg.on_host_calls()) == {"exp", "add"}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("func", [np.sum, np.mean], ids=lambda f: f.__name__)
def test_sums_and_means_of_complex_numbers(on_device, func, dtype):
    """The real and imaginary parts reduced apart (a float sum's tree order: within a few
    ulp of NumPy's pairwise sums)."""
    if dtype == np.complex128 and not on_device.info.fp64:
        pytest.skip("complex128 needs doubles")
    a = np.random.default_rng(8).standard_normal((6, 5, 33)).astype(np.float64)
    a = (a + 1j * a[::-1]).astype(dtype)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    for ours, theirs in ((x, a), (x[:, ::2, 1:], a[:, ::2, 1:]), (x.T, a.T)):
        for kwargs in ({}, {"axis": 0}, {"axis": (0, 2), "keepdims": True}, {"axis": -1}):
            got, want = func(ours, **kwargs), func(theirs, **kwargs)
            assert type(got) is cg.DeviceArray
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.shape == np.shape(want)
            scale = np.abs(theirs).sum() / max(want.size, 1) if func is np.sum else \
                np.abs(theirs).max()
            assert np.abs(got - want).max() <= 64 * np.finfo(dtype).eps * scale
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_products_run_as_real_ones(on_device, dtype):
    """``a @ b`` of complex arrays: four real products of the parts on the GEMM kernels (two
    with a real operand), within K ulp of NumPy's; batched and transposed operands too."""
    if dtype == np.complex128 and not on_device.info.fp64:
        pytest.skip("complex128 needs doubles")
    rng = np.random.default_rng(9)
    real = np.float32 if dtype == np.complex64 else np.float64

    def c(shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    a, b, ab, bb = c((33, 17)), c((17, 9)), c((3, 5, 7)), c((3, 7, 4))
    r = rng.standard_normal((17, 9)).astype(real)
    x, y, xb, yb, xr = (cg.asarray(v, device=on_device) for v in (a, b, ab, bb, r))
    cg.reset_host_calls()
    for got, want, k in ((x @ y, a @ b, 17), (np.matmul(x, y), a @ b, 17), (x @ xr, a @ r, 17),
                         (x[:9].T @ x[:9], a[:9].T @ a[:9], 9), (xb @ yb, ab @ bb, 7)):
        assert type(got) is cg.DeviceArray
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.abs(got - want).max() <= 4 * k * np.finfo(real).eps * np.abs(want).max()
    assert cg.on_host_calls() == {}


def test_parts_angles_and_tests_stay_on_the_device(on_device):
    """np.real / np.imag (views), np.angle (radians and degrees), np.iscomplex, np.isreal:
    NumPy's values, dtypes and shapes, for complex and real arrays."""
    a = _complex((4, 5), np.complex64, 11)
    a[1, 2] = 3.0 + 0.0j
    r = np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5)
    x, xr = cg.asarray(a, device=on_device), cg.asarray(r, device=on_device)
    cg.reset_host_calls()
    with np.errstate(all="ignore"):
        for ours, theirs in ((x, a), (x.T, a.T), (xr, r)):
            for func in (np.real, np.iscomplex, np.isreal, np.angle,
                         lambda z: np.angle(z, deg=True)):
                got, want = func(ours), func(theirs)
                assert type(got) is cg.DeviceArray
                got = np.asarray(got)
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=4e-7, atol=0)
        _same(np.imag(x), np.imag(a), True)
    view = np.real(x)
    view[0, 0] = 9.0   # a view: the write lands in x
    assert np.asarray(x)[0, 0].real == 9.0
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_cumsum_of_complex_numbers(on_device, dtype):
    if dtype == np.complex128 and not on_device.info.fp64:
        pytest.skip("complex128 needs doubles")
    a = np.random.default_rng(12).standard_normal((5, 33))
    a = (a + 1j * a[::-1]).astype(dtype)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    for ours, theirs, axis in ((x, a, None), (x, a, 1), (x.T, a.T, 0), (x[:, ::3], a[:, ::3], -1)):
        got, want = np.cumsum(ours, axis=axis), np.cumsum(theirs, axis=axis)
        assert type(got) is cg.DeviceArray
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.abs(got - want).max() <= 64 * np.finfo(dtype).eps * np.abs(theirs).sum()
    assert cg.on_host_calls() == {}
