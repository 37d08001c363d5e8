"""``np.kron``, ``np.trapezoid``, ``np.interp``, ``np.cov`` and ``np.corrcoef`` of device arrays
stay on the device with NumPy's answers: kron bit for bit, interp bit for bit (its knots,
repeated points, infinities, NaN, ``left``/``right``, a scalar back as NumPy's float64),
trapezoid, cov and corrcoef to rounding against float64 references; NumPy's errors; weights
of ``cov`` go to NumPy on the host (counted)."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg


@pytest.fixture
def on_device(on_device):
    if not on_device.info.fp64:
        pytest.skip("the functions compute in float64")
    return on_device


def _dev(a, device):
    return cg.asarray(a, device=device)


def _close(got, want, tol=1e-6, scale=None):
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    ref = np.asarray(want, dtype=np.float64)
    scale = max(np.linalg.norm(ref) if scale is None else scale, 1e-30)
    assert np.linalg.norm(got.astype(np.float64) - ref) / scale <= tol


@pytest.mark.parametrize("sa,sb", [((3, 4), (2, 5)), ((7,), (3, 3)), ((2, 1, 3), (4,)),
                                   ((), (3,)), ((5,), ()), ((1,), (1,)), ((2, 3), (0, 2))])
@pytest.mark.parametrize("types", [(np.float32, np.float32), (np.float64, np.int16),
                                   (np.int32, np.uint8), (np.bool_, np.float32)])
def test_kron_is_numpys_bit_for_bit(on_device, sa, sb, types):
    rng = np.random.default_rng(len(sa) * 7 + len(sb))
    a = (rng.standard_normal(sa) * 5).astype(types[0])
    b = (rng.standard_normal(sb) * 5).astype(types[1])
    for x, y in ((_dev(a, on_device), _dev(b, on_device)), (_dev(a, on_device), b)):
        got = np.kron(x, y)
        want = np.kron(a, b)
        assert isinstance(got, cg.DeviceArray)
        assert np.asarray(got).dtype == want.dtype and np.asarray(got).tobytes() == want.tobytes()
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("shape,axis", [((9,), -1), ((4, 31), -1), ((33, 3), 0), ((2, 5, 7), 1)])
def test_trapezoid(on_device, shape, axis):
    rng = np.random.default_rng(sum(shape))
    y = rng.standard_normal(shape).astype(np.float32)
    x1 = np.sort(rng.standard_normal(shape[axis]))
    xn = np.sort(rng.standard_normal(shape), axis=axis)
    yd, y64 = _dev(y, on_device), y.astype(np.float64)
    for kw, host_kw in (({}, {}), ({"dx": 0.25}, {"dx": 0.25}),
                        ({"x": _dev(x1, on_device)}, {"x": x1}),
                        ({"x": _dev(xn, on_device)}, {"x": xn})):
        got = np.trapezoid(yd, axis=axis, **kw)
        assert isinstance(got, cg.DeviceArray)
        assert np.asarray(got).dtype == np.trapezoid(y, axis=axis, **host_kw).dtype
        magnitude = np.linalg.norm(np.trapezoid(np.abs(y64), axis=axis, **host_kw))
        _close(np.asarray(got).astype(np.float64), np.trapezoid(y64, axis=axis, **host_kw),
               scale=magnitude)   # a sum of terms of both signs: float32 rounding of the terms
    assert cg.on_host_calls() == {}


XP = np.array([-2.0, 0.0, 1.0, 1.0, 2.5, 4.0, 7.0])
FP = np.array([3.0, 1.0, 3.0, 2.0, np.inf, -1.0, 5.0])
XS = np.array([-9, -2, -1, 0, 0.5, 1.0, 1.5, 2.5, 3.0, 4.0, 6.9, 7.0, 8.0, np.nan, np.inf,
               -np.inf])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("lr", [(None, None), (-7.0, 9.5)])
def test_interp_is_numpys_bit_for_bit(on_device, dtype, lr):
    xs = XS if dtype != np.int32 else np.arange(-3, 9)
    xs = xs.astype(dtype) if dtype != np.float64 else xs
    want = np.interp(xs, XP, FP, left=lr[0], right=lr[1])
    for args in ((_dev(xs, on_device), XP, FP), (xs, _dev(XP, on_device), _dev(FP, on_device)),
                 (_dev(xs.reshape(2, -1)[:, ::-1], on_device), XP, _dev(FP, on_device))):
        got = np.interp(*args, left=lr[0], right=lr[1])
        assert isinstance(got, cg.DeviceArray)
        host = np.asarray(args[0]) if isinstance(args[0], cg.DeviceArray) else args[0]
        w = want if host.ndim == 1 else np.interp(host, XP, FP, left=lr[0], right=lr[1])
        assert np.asarray(got).dtype == w.dtype and np.asarray(got).tobytes() == w.tobytes()
    one = np.interp(2.0, _dev(XP, on_device), FP)
    assert type(one) is np.float64 and one == np.interp(2.0, XP, FP)
    single = np.interp(_dev(xs, on_device), XP[:1], FP[:1])
    np.testing.assert_array_equal(np.asarray(single), np.interp(xs, XP[:1], FP[:1]))
    assert cg.on_host_calls() == {}


def test_interp_errors_and_period(on_device):
    x = _dev(np.arange(3.0), on_device)
    for xp, fp in ((np.ones((2, 2)), np.ones((2, 2))), (XP, FP[:-1]), (np.zeros(0), np.zeros(0))):
        with pytest.raises(ValueError) as want:
            np.interp(np.arange(3.0), xp, fp)
        with pytest.raises(ValueError, match=str(want.value)):
            np.interp(x, xp, fp)
    got = np.interp(x, XP, FP, period=3.0)   # NumPy's, on the host (counted)
    np.testing.assert_array_equal(np.asarray(got), np.interp(np.arange(3.0), XP, FP, period=3.0))
    assert cg.on_host_calls() == {"interp": 1}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("kw", [{}, {"rowvar": False}, {"bias": True}, {"ddof": 3},
                                {"dtype": np.float32}, {"y": "row"}])
@pytest.mark.parametrize("shape", [(3, 20), (33,), (5, 7)])
def test_cov_and_corrcoef(on_device, dtype, kw, shape):
    rng = np.random.default_rng(shape[0])
    m = (rng.standard_normal(shape) * 4).astype(dtype)
    kw = dict(kw)
    if kw.get("y") == "row":
        kw["y"] = (m.reshape(-1, shape[-1])[0] * 2 + 1)
    host_kw = dict(kw)
    dev_kw = {k: (_dev(v, on_device) if k == "y" else v) for k, v in kw.items()}
    got = np.cov(_dev(m, on_device), **dev_kw)
    want = np.cov(m, **host_kw)
    assert isinstance(got, cg.DeviceArray)
    reference = np.cov(m.astype(np.float64), **{k: (v.astype(np.float64) if k == "y" else v)
                                                for k, v in host_kw.items() if k != "dtype"})
    _close(got, reference.astype(want.dtype), 1e-5 if want.dtype == np.float32 else 1e-12)
    ckw = {k: v for k, v in dev_kw.items() if k in ("y", "rowvar", "dtype")}
    got_c = np.corrcoef(_dev(m, on_device), **ckw)
    want_c = np.corrcoef(m, **{k: v for k, v in host_kw.items() if k in ("y", "rowvar", "dtype")})
    _close(got_c, want_c, 1e-5 if want_c.dtype == np.float32 else 1e-12)
    assert cg.on_host_calls() == {}


def test_cov_errors_and_weights(on_device):
    m = np.arange(12.0).reshape(3, 4) ** 1.5
    md = _dev(m, on_device)
    with pytest.raises(ValueError, match="ddof must be integer"):
        np.cov(md, ddof=1.5)
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        np.cov(_dev(np.ones((2, 2, 2)), on_device))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        np.cov(_dev(np.ones((2, 1)), on_device))
    got = np.cov(md, fweights=[1, 2, 1, 3])   # NumPy's, on the host (counted)
    np.testing.assert_allclose(np.asarray(got), np.cov(m, fweights=[1, 2, 1, 3]), rtol=1e-12)
    assert cg.on_host_calls() == {"cov": 1}


@pytest.mark.parametrize("bins", [[-2.0, 0.0, 1.0, 4.0], [4.0, 1.0, 1.0, -2.0], [1.0],
                                  [0, 0, 0], np.array([-3, 5], np.int32)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_digitize_is_numpys(on_device, bins, dtype):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(57) * 3).round(0).astype(dtype)
    if dtype != np.int16:
        x[[3, 9]] = [np.nan, np.inf]
    for right in (False, True):
        for given in (bins, _dev(np.asarray(bins), on_device)):
            got = np.digitize(_dev(x, on_device), given, right=right)
            want = np.digitize(x, bins, right=right)
            assert isinstance(got, cg.DeviceArray) and np.asarray(got).dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), want)
    assert cg.on_host_calls() == {}
    with pytest.raises(ValueError, match="monotonically"):
        np.digitize(_dev(x, on_device), [1.0, 0.0, 2.0])


@pytest.mark.parametrize("p", [[1, -2, 3], np.array([2.5, 0, 1], np.float32), [3],
                               np.array([1, 2], np.int8)])
@pytest.mark.parametrize("xdtype", [np.float64, np.float32, np.int64])
def test_polyval_is_numpys(on_device, p, xdtype):
    x = (np.random.default_rng(5).standard_normal(13) * 4).astype(xdtype)
    for coeffs in (p, _dev(np.asarray(p), on_device)):
        got = np.polyval(coeffs, _dev(x, on_device))
        want = np.polyval(p, x)
        assert isinstance(got, cg.DeviceArray) and np.asarray(got).dtype == want.dtype
        assert np.asarray(got).tobytes() == want.tobytes()
    assert cg.on_host_calls() == {}
