"""Every ufunc of ``ops.ufuncs`` against NumPy on the device kernels (the host path is off in the
suite): special values and integer edge cases bit for bit, transcendental functions within
``ULP_BOUND``, and each call checked to have stayed on the device."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from ufunc_cases import (ALL_UFUNCS, TRANSCENDENTAL, assert_same, binary_grid, loop_on_device,
                         specials)

# The special-value grid builds one kernel per (ufunc, dtype): bool, the narrowest and the widest
# integers and both floats (int32/int64/uint8 loops are covered by the integer-edge, parity and
# fuzz tests), to keep the suite within CI's time.
DTYPES = [np.bool_, np.int8, np.uint64, np.float32, np.float64]


@pytest.fixture(autouse=True)
def _count_fallbacks():
    cg.reset_host_calls()
    yield


def on_device():
    assert cg.on_host_calls() == {}, cg.on_host_calls()


def numpy_answer(ufunc, *args, **kwargs):
    with np.errstate(all="ignore"):
        try:
            return ufunc(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001 - the device must raise the same
            return None, e


def check(ufunc, host_args, device_args, **kwargs):
    want, error = numpy_answer(ufunc, *host_args, **kwargs)
    if error is not None:
        with pytest.raises(type(error)):
            ufunc(*device_args, **kwargs)
        return
    got = ufunc(*device_args, **kwargs)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            assert_same(g, w, ufunc)
    else:
        assert isinstance(got, cg.DeviceArray)
        assert_same(got, want, ufunc)
    on_device()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ufunc", ALL_UFUNCS, ids=lambda u: u.__name__)
def test_ufunc_matches_numpy_on_special_values(ufunc, dtype):
    if not loop_on_device(ufunc, (dtype,) * ufunc.nin):
        pytest.skip("NumPy's loop for this dtype is not a device loop")
    if ufunc.nin == 1:
        a = specials(dtype)
        args = (a,)
    elif ufunc.nin == 2:
        args = binary_grid(dtype)
    else:  # clip: values x lower bounds, with the upper bound a scalar array
        a, lo = binary_grid(dtype)
        args = (a, lo, specials(dtype)[3:4])
    if ufunc in (np.power, np.float_power) and np.dtype(dtype).kind in "iu":
        args = (args[0], np.abs(args[1]) % 9)  # NumPy raises for negative integer exponents
    check(ufunc, args, tuple(cg.asarray(x) for x in args))


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.subtract, np.maximum, np.arctan2,
                                   np.floor_divide, np.less, np.logical_xor])
def test_random_operands_odd_shapes(ufunc):
    rng = np.random.default_rng(1)
    for shape in [(1,), (7,), (31, 1), (33, 257), ()]:
        a = rng.standard_normal(shape).astype(np.float32)
        b = rng.standard_normal(shape[-1:] if shape else ()).astype(np.float32)
        check(ufunc, (a, b), (cg.asarray(a), cg.asarray(b)))


def test_integer_division_edges():
    for dt in (np.int8, np.int32, np.int64):
        info = np.iinfo(dt)
        a = np.array([-7, 7, -7, 7, info.min, info.min, 5, 0], dt)
        b = np.array([2, -2, -2, 2, -1, 1, 0, 0], dt)
        x, y = cg.asarray(a), cg.asarray(b)
        for u in (np.floor_divide, np.remainder, np.fmod, np.divmod):
            check(u, (a, b), (x, y))


def test_integer_power_rules():
    a, b = np.array([2, 3, -2, 0], np.int32), np.array([31, 21, 3, 0], np.int32)
    check(np.power, (a, b), (cg.asarray(a), cg.asarray(b)))  # wraps like NumPy
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        np.power(cg.asarray(a), cg.asarray(np.array([1, -1, 0, 0], np.int32)))
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        cg.asarray(a) ** -1
    check(np.power, (a, 2), (cg.asarray(a), 2))
    assert_same(cg.asarray(a.astype(np.float32)) ** 2, a.astype(np.float32) ** 2)


UNARY_SHORT_KEY = [np.negative, np.absolute, np.square, np.sqrt, np.exp, np.reciprocal, np.isnan,
                   np.floor]


@pytest.mark.parametrize("host", [False, True], ids=["kernels", "host-path"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape", [(1,), (7,), (31, 33), (257,)], ids=str)
def test_unary_ufuncs_on_their_short_key(device, shape, dtype, host):
    """``ufunc(x)`` with no keywords (a plan on a short key, a fixed flat launch or NumPy's loop
    into a fresh mapping): NumPy's answers on odd sizes, contiguous and strided, every element
    written (the fresh buffers come back from the pool with every bit set), twice (cached plan)."""
    if host and not device.info.host_unified_memory:
        pytest.skip("no host path on this device")
    base = specials(dtype)
    a = np.resize(base, int(np.prod(shape)) * 2).reshape(shape[:-1] + (shape[-1] * 2,))
    with cg.host_path(host), np.errstate(all="ignore"):
        x = cg.asarray(a, device=device)
        for ufunc in UNARY_SHORT_KEY:
            if not loop_on_device(ufunc, (dtype,)) or (ufunc is np.sqrt and dtype == np.int32):
                continue
            for view, host_view in ((x, a), (x[..., ::2], a[..., ::2])):
                want = ufunc(host_view)
                for _ in range(2):
                    poison = cg.full((max(want.nbytes, 1),), 0xFF, np.uint8, device=device)
                    del poison  # its buffer goes back to the pool, all bits set (NaN, -1)
                    got = ufunc(view)
                    assert isinstance(got, cg.DeviceArray)
                    assert_same(got, want, ufunc)


SCALAR_POWER_SPECIALS = np.array([-0.0, 0.0, -np.inf, np.inf, 4.0, np.nan, -2.0, 1e-30, 3.3e38,
                                  0.3, 7.0], np.float32)


@pytest.mark.parametrize("host", [False, True], ids=["kernels", "host-path"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64])
@pytest.mark.parametrize("exponent", [2, -1, 0.5, 2.0, -1.0, 3, 1.5])
def test_scalar_powers_give_numpys_answers(device, dtype, exponent, host):
    """``x ** e``, ``np.power(x, e)`` and ``x **= e`` as NumPy computes them: its operator takes
    square / reciprocal / sqrt for 2, -1 and 0.5 (sqrt keeps -0.0 and gives NaN at -inf, where
    pow gives +0.0 and +inf), and its float32/float64 power loop does the same for a scalar 0.5.
    Those are exact; other exponents run OpenCL's pow, which may be a few ulp from NumPy's on
    finite results."""
    if host and not device.info.host_unified_memory:
        pytest.skip("no host path on this device")
    a = SCALAR_POWER_SPECIALS.astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * a[::-1]
    with cg.host_path(host), np.errstate(all="ignore"):
        x, inplace = cg.asarray(a, device=device), cg.asarray(a, device=device)
        inplace **= exponent
        expected_inplace = a.copy()
        expected_inplace **= exponent
        for got, want in ((x ** exponent, a ** exponent),
                          (np.power(x, exponent), np.power(a, exponent)),
                          (inplace, expected_inplace)):
            if exponent in (2, -1, 0.5) or np.dtype(dtype).kind != "f" or dtype == np.float16:
                assert_same(got, want)   # exact values, NaN positions, signed zeros
            else:
                assert_same(got, want, np.power)   # OpenCL's pow: within ULP_BOUND


def test_layouts_strided_transposed_broadcast():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((33, 31)).astype(np.float64)
    x = cg.asarray(a)
    check(np.add, (a.T, a[::-1].T), (x.T, x[::-1].T))
    check(np.multiply, (a[::2, 1::3], a[0, 1::3]), (x[::2, 1::3], x[0, 1::3]))
    check(np.exp, (a[:, 5],), (x[:, 5],))
    b = rng.standard_normal((4, 1, 5, 1, 3, 1, 2, 3)).astype(np.float32)
    c = rng.standard_normal((1, 3, 5, 2, 1, 2, 2, 3)).astype(np.float32)
    check(np.subtract, (b, c), (cg.asarray(b), cg.asarray(c)))  # 8 broadcast dimensions
    b = rng.standard_normal((2, 1, 2, 1, 2, 1, 2, 1, 2)).astype(np.float32)
    c = rng.standard_normal((1, 2, 1, 2, 1, 2, 1, 2, 1)).astype(np.float32)
    assert_same(np.subtract(cg.asarray(b), cg.asarray(c)), b - c)  # 9: NumPy's loop
    assert cg.on_host_calls() == {"subtract": 1}


def test_empty_and_zero_d():
    for shape in [(0,), (3, 0), ()]:
        a = np.ones(shape, np.float32)
        check(np.sqrt, (a,), (cg.asarray(a),))
        check(np.add, (a, a), (cg.asarray(a), cg.asarray(a)))


def test_scalars_follow_nep50():
    a = np.arange(7, dtype=np.int8)
    x = cg.asarray(a)
    check(np.add, (a, 3), (x, 3))                      # weak Python int: int8
    check(np.multiply, (a, 2.5), (x, 2.5))             # Python float: float64
    check(np.add, (a, np.int64(3)), (x, np.int64(3)))  # NumPy scalar: strong
    check(np.add, (a, True), (x, True))
    # Out-of-range Python ints: NumPy's own loop raises its OverflowError, or applies its
    # comparison rule (counted as host fallbacks).
    with pytest.raises(OverflowError):
        np.subtract(x, 1000)
    assert_same(np.equal(x, 1000), np.equal(a, 1000))
    assert cg.on_host_calls() == {"subtract": 1, "equal": 1}


def test_out_where_dtype_casting():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((7, 33)).astype(np.float32)
    x = cg.asarray(a)
    out = cg.zeros((7, 33), np.float64)
    np.multiply(x, x, out=out)
    assert_same(out, (a * a).astype(np.float64))
    mask = a > 0
    host_out = np.full((7, 33), -1.0, np.float32)
    dev_out = cg.asarray(host_out)
    np.sqrt(x, out=dev_out, where=cg.asarray(mask))
    np.sqrt(a, out=host_out, where=mask)
    assert_same(dev_out, host_out)
    assert_same(np.add(x, x, dtype=np.float64), np.add(a, a, dtype=np.float64))
    on_device()
    with pytest.raises(TypeError):
        np.add(x, x, out=cg.zeros((7, 33), np.int32))  # same_kind forbids float -> int
    cg.reset_host_calls()  # NumPy raised that error
    ints = cg.zeros((7, 33), np.int32)
    np.add(x, x, out=ints, casting="unsafe")
    assert_same(ints, np.add(a, a).astype(np.int32))
    t = cg.asarray(a.copy())
    np.add(t[:, :-1], 1, out=t[:, 1:])  # overlapping out: NumPy's buffered answer
    ref = a.copy()
    np.add(ref[:, :-1], 1, out=ref[:, 1:])
    assert_same(t, ref)
    on_device()


def test_comparisons_give_bool_and_logical_ops():
    a, b = binary_grid(np.float32)
    x, y = cg.asarray(a), cg.asarray(b)
    assert (x < y).dtype == np.bool_
    assert_same(np.logical_and(x > 0, y > 0), np.logical_and(a > 0, b > 0))
    assert_same(~(x > y), ~(a > b))
    on_device()


def test_where_and_clip():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((31, 7)).astype(np.float32)
    a[0, 0] = np.nan
    x = cg.asarray(a)
    assert_same(np.where(x > 0, x, 0), np.where(a > 0, a, 0))
    assert_same(np.where(x > 0, x, 0.5), np.where(a > 0, a, 0.5))
    assert_same(np.where(x[:, :1] > 0, x.T[:1, :7], x), np.where(a[:, :1] > 0, a.T[:1, :7], a))
    assert_same(np.clip(x, -0.5, 0.5), np.clip(a, -0.5, 0.5))
    assert_same(np.clip(x, 1.0, -1.0), np.clip(a, 1.0, -1.0))
    assert_same(x.clip(min=0), a.clip(min=0))
    assert_same(np.clip(cg.asarray(np.arange(9)), 2, 6), np.clip(np.arange(9), 2, 6))
    on_device()
    rows, cols = np.where(x > 0)  # indices: np.nonzero's, found on the device
    assert isinstance(rows, cg.DeviceArray) and isinstance(cols, cg.DeviceArray)
    want_rows, want_cols = np.where(a > 0)
    np.testing.assert_array_equal(np.asarray(rows), want_rows)
    np.testing.assert_array_equal(np.asarray(cols), want_cols)
    assert cg.on_host_calls() == {}


def test_loops_without_device_kernels_fall_back_and_are_counted():
    h = np.arange(5, dtype=np.float16)
    r = np.nextafter(cg.asarray(h), cg.asarray(h[::-1]))   # NumPy steps one float16
    assert_same(r, np.nextafter(h, h[::-1]))
    c = np.arange(3) + 1j
    assert_same(np.exp(cg.asarray(c)), np.exp(c))
    assert cg.on_host_calls() == {"nextafter": 1, "exp": 1}


def test_plans_are_cached():
    from clarray_gemm.kernels.programs import build_count
    x = cg.asarray(np.ones((5, 3), np.float32))
    np.tanh(x)
    before = build_count()
    for _ in range(3):
        np.tanh(x)
        np.tanh(x.T)
    assert build_count() - before <= 1  # the transposed layout class, once


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ufunc", sorted(TRANSCENDENTAL, key=lambda u: u.__name__),
                         ids=lambda u: u.__name__)
def test_transcendental_accuracy_on_random_values(ufunc, dtype):
    if not loop_on_device(ufunc, (dtype,) * ufunc.nin) or (ufunc is np.float_power
                                                            and dtype == np.float32):
        pytest.skip("float64 loop only")
    rng = np.random.default_rng(5)
    a = np.concatenate([rng.standard_normal(1500) * 3, rng.uniform(-1, 1, 500),
                        rng.uniform(0, 100, 500)]).astype(dtype)
    args = (a,) if ufunc.nin == 1 else (a, np.roll(a, 7))
    check(ufunc, args, tuple(cg.asarray(x) for x in args))
