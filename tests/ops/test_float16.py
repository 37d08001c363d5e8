"""float16 on the device kernels against NumPy. Ufuncs: the operands stored as float16, computed
in float and each result rounded once, as NumPy's loops do; so every answer is NumPy's bit for
bit (NaN positions, signed zeros), the transcendental functions within one float16 ULP (their
float32 values are within a few float32 ULPs of NumPy's). Mixed-dtype calls, ``out=`` of another
dtype, scalars, views and ``np.where``/``np.clip`` too. Casts to and from float16 bit for bit.
Reductions: max/min/arg/any/all exactly, sums and means accumulated in float and rounded once.
Every call checked to have stayed on the device (the host path is off in the suite)."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from ufunc_cases import ALL_UFUNCS, FLOAT_SPECIALS, TRANSCENDENTAL

HALF = np.dtype(np.float16)
# float16's own edges beside the shared specials: the largest finite, the smallest normal and
# subnormal, an integer past the exact range, values that round on the way in
SPECIALS = np.array(FLOAT_SPECIALS + [65504.0, -65504.0, 6.103515625e-05, 5.960464477539063e-08,
                                      2048.0, 3.140625, -0.333251953125, 100.0], HALF)
NOT_ON_DEVICE = {np.nextafter}   # NumPy steps one float16, not one float


@pytest.fixture(autouse=True)
def _kernels_only():
    cg.reset_host_calls()
    with cg.host_path(False):
        yield
    assert cg.on_host_calls() == {}, cg.on_host_calls()


def half_loop(ufunc) -> bool:
    """Whether NumPy's loop for float16 inputs is a float16 one (float16 or bool throughout)."""
    try:
        loop = ufunc.resolve_dtypes((HALF,) * ufunc.nin + (None,) * ufunc.nout)
    except TypeError:
        return False
    return all(np.dtype(d) in (HALF, np.dtype(np.bool_)) for d in loop)


def same(got, want, ufunc=None) -> None:
    """NumPy's answer: dtype, shape, NaN positions, values and signs bit for bit (within one
    float16 ULP for the transcendental functions)."""
    assert isinstance(got, cg.DeviceArray), type(got)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    if ufunc in TRANSCENDENTAL and want.dtype == HALF:
        g, w = got[~nan].view(np.int16).astype(np.int32), want[~nan].view(np.int16).astype(np.int32)
        order = lambda b: np.where(b < 0, -(b & 0x7FFF), b)  # noqa: E731
        assert np.abs(order(g) - order(w)).max(initial=0) <= 1
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        return
    np.testing.assert_array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))


CASES = [u for u in ALL_UFUNCS if half_loop(u) and u not in NOT_ON_DEVICE]


@pytest.mark.parametrize("ufunc", CASES, ids=lambda u: u.__name__)
def test_every_float16_loop_on_special_values(ufunc):
    if ufunc.nin == 1:
        args = (SPECIALS,)
    elif ufunc.nin == 2:
        args = (SPECIALS[:, None], SPECIALS[None, :])
    else:   # clip: values x lower bounds, the upper bound a scalar array
        args = (SPECIALS[:, None], SPECIALS[None, :], SPECIALS[3:4])
    with np.errstate(all="ignore"):
        want = ufunc(*args)
        got = ufunc(*(cg.asarray(a) for a in args))
    for g, w in zip(got, want) if isinstance(want, tuple) else ((got, want),):
        same(g, w, ufunc)


def test_random_values_and_views():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((33, 257)) * 30).astype(HALF)
    b = (rng.standard_normal(257) * 30).astype(HALF)
    x, y = cg.asarray(a), cg.asarray(b)
    with np.errstate(all="ignore"):
        same(x + y, a + b)                                  # a broadcast row
        same(x[:, ::3] * y[::3], a[:, ::3] * b[::3])        # strided
        same(x.T / 7, a.T / 7)                              # transposed, a Python scalar
        same(2.5 - x[5:, 1:], 2.5 - a[5:, 1:])              # offset views
        same(np.exp(x / 16), np.exp(a / 16), np.exp)
        same(np.sqrt(np.abs(x)), np.sqrt(np.abs(a)))
        same(x > y, a > b)
        q, r = np.divmod(x, y)
        same(q, np.divmod(a, b)[0]), same(r, np.divmod(a, b)[1])


def test_mixed_dtypes_and_outputs_of_other_dtypes():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(300) * 100).astype(HALF)
    i8 = rng.integers(-128, 127, 300, dtype=np.int8)
    f32 = rng.standard_normal(300).astype(np.float32)
    x, xi, xf = cg.asarray(a), cg.asarray(i8), cg.asarray(f32)
    same(x + xi, a + i8)                        # int8 into a float16 loop (exact)
    same(x * xf, a * f32)                       # float16 into a float32 loop
    same(np.add(x, x, out=cg.zeros(300, np.float32)), np.add(a, a, out=np.zeros(300, np.float32)))
    half_out = cg.zeros(300, HALF)              # a float32 loop rounded into float16
    same(np.multiply(xf, xf, out=half_out, casting="same_kind"),
         np.multiply(f32, f32, out=np.zeros(300, HALF), casting="same_kind"))
    same(x.astype(np.float32) * 3, a.astype(np.float32) * 3)
    with np.errstate(all="ignore"):
        same(np.where(xf > 0, x, -x), np.where(f32 > 0, a, -a))
        same(np.clip(x, -50, 50), np.clip(a, -50, 50))
        w = cg.asarray(np.full(300, np.nan, HALF))
        np.exp(x / 64, out=w, where=xf > 0)
        want = np.full(300, np.nan, HALF)
        np.exp(a / 64, out=want, where=f32 > 0)
        same(w, want, np.exp)


def test_float16_sums_stay_exact_per_step():
    # each step of an accumulation in a Python loop rounds to float16, as NumPy's does
    a = np.full(64, 0.1, HALF)
    x = cg.asarray(a)
    total, want = x[0:1], a[0:1]
    for k in range(1, 64):
        total, want = total + x[k:k + 1], want + a[k:k + 1]
    same(total, want)


CAST_DTYPES = [np.float64, np.float32, np.int8, np.int16, np.int32, np.int64, np.uint8,
               np.uint16, np.uint32, np.uint64, np.bool_]


def _cast_values() -> np.ndarray:
    rng = np.random.default_rng(2)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519, 65520, 1e-8, -1e-8, 6e-8,
             2.98e-8, 2.99e-8, 1e6, -1e6, 0.5, 1.5, 2.5, 2049, 2051, 4097]
    return np.concatenate([rng.standard_normal(200) * 1000, edges])


@pytest.mark.parametrize("dtype", CAST_DTYPES, ids=lambda d: np.dtype(d).name)
def test_astype_to_float16_is_numpys_rounding(dtype):
    """Every dtype into float16 on the copy kernel: rounded to nearest even (float64 directly,
    integers through float, as NumPy's casts), overflow to inf, NaN kept; bits equal."""
    with np.errstate(all="ignore"):
        vals = _cast_values()
        a = vals > 0 if dtype is np.bool_ else vals.astype(dtype)
        if np.dtype(dtype).kind in "iu":
            info = np.iinfo(dtype)
            a = np.concatenate([a, np.array([info.max, info.min], dtype)])
        want = a.astype(HALF)
    got = cg.asarray(a).astype(HALF)
    assert isinstance(got, cg.DeviceArray)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("dtype", CAST_DTYPES, ids=lambda d: np.dtype(d).name)
def test_astype_from_float16_is_numpys(dtype):
    """float16 into every dtype: its exact value, then NumPy's cast from float (NaN and
    out-of-range values to integers as NumPy gives them on x86-64; -0.0 is False)."""
    h = _cast_values().astype(HALF)
    with np.errstate(all="ignore"):
        want = h.astype(dtype)
    got = np.asarray(cg.asarray(h).astype(dtype))
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    else:
        np.testing.assert_array_equal(got, want)


def test_float16_copies_of_views():
    h = _cast_values().astype(HALF).reshape(13, -1)
    x = cg.asarray(h)
    for view, want in ((x.T, h.T), (x[:, ::3], h[:, ::3]), (x[::-1, 2:], h[::-1, 2:])):
        np.testing.assert_array_equal(np.asarray(view.copy()).view(np.uint16),
                                      want.copy().view(np.uint16))
        np.testing.assert_array_equal(np.asarray(view.astype(np.float32)), want.astype(np.float32))


@pytest.mark.parametrize("shape", [(7,), (33, 257), (20000,), (3, 5000)], ids=str)
def test_reductions(shape):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shape) * 10).astype(HALF)
    a.flat[3], a.flat[1] = -0.0, 0.0
    x = cg.asarray(a)
    a64 = a.astype(np.float64)
    for axis in (None, 0, -1):
        for name in ("max", "min", "argmax", "argmin", "any", "all"):
            same(getattr(np, name)(x, axis=axis), getattr(np, name)(a, axis=axis))
        for name in ("sum", "mean"):
            got = getattr(np, name)(x, axis=axis)
            want = getattr(np, name)(a, axis=axis)
            assert isinstance(got, cg.DeviceArray) and got.dtype == want.dtype == HALF
            exact = getattr(np, name)(a64, axis=axis)
            scale = np.abs(a64).sum(axis=axis) / (a.size / np.size(exact) if name == "mean" else 1)
            # the float sum's own error, then one rounding to float16
            bound = a.size * 2.0 ** -24 * scale + np.abs(exact) * 2.0 ** -11
            assert (np.abs(np.asarray(got).astype(np.float64) - exact) <= bound).all()
    nan = a.copy()
    nan.flat[5] = np.nan
    same(np.max(cg.asarray(nan)), np.max(nan))
    same(np.argmin(cg.asarray(nan)), np.argmin(nan))
    assert float(np.sum(cg.asarray(np.ones(10000, HALF)))) == 10000.0   # no float16 steps


def test_gathers_and_masks_move_the_bits():
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((50, 7)) * 100).astype(HALF)
    a[3, 2], a[4, 1] = -0.0, np.nan
    x = cg.asarray(a)
    idx = np.array([3, 0, 49, 4, 4, -1])
    for got, want in ((x[cg.asarray(idx)], a[idx]), (x[idx], a[idx]),
                      (x[:, 1][cg.asarray(idx)], a[:, 1][idx]),
                      (x[x[:, 0] > 50], a[a[:, 0] > 50]), (x[x > 50], a[a > 50]),
                      (np.take(x, cg.asarray(idx[:2]), axis=1), np.take(a, idx[:2], axis=1))):
        assert isinstance(got, cg.DeviceArray) and got.dtype == HALF
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))


def test_conversions_are_numpys_for_every_float16_and_the_rounding_edges():
    """Every float16 bit pattern to float32 and float64 (NaN positions; a driver may quiet a
    signalling NaN's payload), and floats and doubles to float16, bits equal (NaN payloads
    too): random bit patterns, the halfway points between neighbouring float16 values (ties to
    even), the subnormal range and the overflow edge."""
    every = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(HALF)
    x = cg.asarray(every)
    nan = np.isnan(every)
    for dt in (np.float32, np.float64):
        got = np.asarray(x.astype(dt))
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan].view(np.uint8),
                                      every[~nan].astype(dt).view(np.uint8))
    rng = np.random.default_rng(5)
    finite = every[np.isfinite(every)].astype(np.float64)
    finite = np.unique(finite)
    mids = (finite[:-1] + finite[1:]) / 2
    doubles = np.concatenate([
        rng.integers(0, 2 ** 64, 200_000, dtype=np.uint64).view(np.float64),
                              mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
                              [65519.99, 65520.0, -65520.0, 2.0 ** -25, 2.0 ** -26,
                               3 * 2.0 ** -26]])
    floats = np.concatenate([rng.integers(0, 2 ** 32, 200_000, dtype=np.uint64).astype(
        np.uint32).view(np.float32), mids.astype(np.float32),
        np.arange(0x477FE000, 0x47800100, dtype=np.uint32).view(np.float32)])
    for values in (doubles, floats):
        with np.errstate(all="ignore"):
            want = values.astype(HALF)
        got = np.asarray(cg.asarray(values).astype(HALF))
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
