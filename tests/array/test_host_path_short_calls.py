"""The short paths of small host-path calls (small calls on PoCL, where a call's fixed cost is
most of its time): operators with a scalar operand, ``np.where``, ``np.concatenate``/
``np.stack`` and boolean-mask indexing. Each answer must be NumPy's to the bit, with NumPy's
dtype and exception, on the first call (which builds the plan) and on repeated calls that hit
the cached plan with another scalar value or another operand of the same key; the kernels (host
path off) must agree too."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import clarray_gemm as cg
import ufunc_cases
from clarray_gemm.array.device_array import DeviceArray

SHAPES = [(), (1,), (7,), (33, 7), (0,), (3, 0)]
DTYPES = [np.float32, np.float64, np.int32, np.int8, np.uint8, np.bool_]
SCALARS = [2, -3, 300, 2.5, True, np.float32(3), np.float64(0.5), np.int64(3), np.int8(-2),
           np.uint8(7), np.bool_(False)]
OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt,
             operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.fixture
def path(either_path):
    """The kernels, then the host path (conftest's ``either_path``): whether it is on."""
    return either_path


def sample(shape: tuple, dtype, seed: int) -> np.ndarray:
    """Values of ``dtype`` with negatives, zeros and (for floats) fractions."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-4, 5, shape) * (1.5 if np.dtype(dtype).kind == "f" else 1)
    return np.asarray(values).astype(dtype)


def outcome(fn):
    """``fn()``'s result, or the type of the exception it raised."""
    try:
        with np.errstate(all="ignore"):
            return fn()
    except Exception as exc:  # noqa: BLE001 - the type is compared, whatever it is
        return type(exc)


def assert_same(got, want, device_result: bool = True) -> None:
    """A device array (an array where not ``device_result``) with NumPy's dtype, shape and
    values (NaN where NumPy has NaN, signed zeros as NumPy's; a NaN's payload is the
    hardware's: an NVIDIA GPU makes 0x7fffffff where x86 makes 0xffc00000), or the same
    exception type."""
    if isinstance(want, type):
        assert got is want, f"raised {got}, NumPy raised {want}"
        return
    assert isinstance(got, DeviceArray) or not device_result, type(got)
    want = np.asarray(want)
    host = np.asarray(got)
    assert (host.dtype, host.shape) == (want.dtype, want.shape)
    if want.dtype.kind != "f":
        assert host.tobytes() == want.tobytes()
        return
    np.testing.assert_array_equal(host, want)  # NaN positions and values
    np.testing.assert_array_equal(np.signbit(host[~np.isnan(host)]),
                                  np.signbit(want[~np.isnan(want)]))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_operators_with_a_scalar_are_numpys(device, path, shape, dtype):
    a = sample(shape, dtype, 1)
    x = cg.asarray(a, device=device)
    for op in OPERATORS:
        for s in SCALARS:
            for _ in range(2):  # the second call hits the plan the first one built
                assert_same(outcome(lambda: op(x, s)), outcome(lambda: op(a, s)))
                assert_same(outcome(lambda: op(s, x)), outcome(lambda: op(s, a)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_powers_with_a_scalar_exponent_are_numpys(device, path, dtype):
    a = sample((33, 7), dtype, 2)
    x = cg.asarray(a, device=device)
    # Not here (both as they were): a Python -1 for unsigned ints raises ValueError where NumPy
    # raises OverflowError; the kernels' pow of integers to 0.5 is not NumPy's to the bit.
    exponents = (2, 2.0, -1.0, 3, np.int32(2), np.float64(2))
    if np.dtype(dtype).kind == "f" or path:
        exponents += (0.5, np.float32(0.5))
    for e in exponents + ((-1,) if np.dtype(dtype).kind != "u" else ()):
        assert_same_power(outcome(lambda: x ** e), outcome(lambda: a ** e), path)
        assert_same_power(outcome(lambda: np.power(x, e)), outcome(lambda: np.power(a, e)), path)


def assert_same_power(got, want, path: bool) -> None:
    """:func:`assert_same`; float powers a kernel computes within OpenCL's pow bound instead
    (tests/ufunc_cases.py: NVIDIA's pow(x, 3.0) of 4.5 is 91.12501, NumPy's 91.125)."""
    if path or isinstance(want, type) or np.asarray(want).dtype.kind != "f":
        assert_same(got, want)
        return
    assert isinstance(got, DeviceArray), type(got)
    ufunc_cases.assert_same(got, want, np.power)


def test_a_cached_scalar_plan_takes_each_calls_value_and_operand(device, path):
    """One key (layouts and the scalar's type), many values and operands."""
    a, b = sample((33, 7), np.float32, 3), sample((33, 7), np.float32, 4)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    for s in (0.0, 1.5, -2.25, 1e30, float("nan"), float("inf")):
        for p, q in ((x, a), (y, b)):
            assert_same(p + s, q + s)
            assert_same(p > s, q > s)
            assert_same(s / p, s / q)
            assert_same(p * np.float32(s), q * np.float32(s))
    assert_same(x, a)  # the caller's arrays are never written
    assert_same(y, b)


def test_repeated_unary_and_array_operators_take_each_calls_operands(device, path):
    """``-x``, ``np.exp(x)``, ``x + y`` and ``x @ y`` again on other operands of one key: each
    call's own values (the operators find the cached plan themselves)."""
    a, b = sample((33, 7), np.float32, 7), sample((33, 7), np.float32, 8)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    for p, q, hp, hq in ((x, y, a, b), (y, x, b, a), (x, x, a, a)):
        assert_same(-p, -hp)
        ufunc_cases.assert_same(np.exp(p), np.exp(hp), np.exp)  # a kernel's exp: OpenCL's bound
        assert_same(np.absolute(p), np.absolute(hp))
        assert_same(p + q, hp + hq)
        assert_same(p - q, hp - hq)
        assert_same(p >= q, hp >= hq)
        assert_same(2 ** p, 2 ** hp)
    assert_same(x, a)
    assert_same(y, b)


def test_repeated_views_are_numpys_and_bounds_of_other_types_keep_numpys_answer(device):
    """A view whose geometry is remembered per key (``u[1:-1, 2:]`` in a loop) is NumPy's, on
    every array of that layout; bounds that compare equal to a remembered key's (``1.0``,
    ``True``, NumPy integers) get NumPy's own answer or error, not the remembered view."""
    a = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
    b = a[::-1].copy()
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    keys = [(slice(1, -1), slice(2, None)), (1, slice(None)), (slice(None), -2), 3,
            slice(None, None, -2), (slice(4, 1, -1), 0), (slice(1, 1),)]
    for _ in range(2):
        for key in keys:
            for arr, host in ((x, a), (y, b)):
                got = arr[key]
                assert isinstance(got, DeviceArray)
                np.testing.assert_array_equal(np.asarray(got), host[key])
                assert got.strides == host[key].strides
    for key in [(slice(1.0, -1), slice(2, None)), slice(None, None, -2.0), (True, slice(None)),
                (np.int64(1), slice(None)), (5, slice(None)), (slice(None), 6), (1, 2, 3)]:
        want, got = outcome(lambda: a[key]), outcome(lambda: x[key])
        if isinstance(want, type):
            assert got is want, (key, got, want)
        else:
            np.testing.assert_array_equal(np.asarray(got), want)
            assert np.shape(got) == want.shape


def test_python_ints_out_of_the_arrays_range_raise_as_numpy_does(device, path):
    a = sample((7,), np.uint8, 5)
    x = cg.asarray(a, device=device)
    for s in (255, 256, -1, 10 ** 30):
        for op in (operator.add, operator.lt, operator.eq):
            assert_same(outcome(lambda: op(x, s)), outcome(lambda: op(a, s)))


def test_comparisons_with_other_operands_keep_numpys_rules(device, path):
    """Lists, ndarrays and 0-d arrays go the general route, with NumPy's answers."""
    a = sample((3, 4), np.float32, 6)
    x = cg.asarray(a, device=device)
    for other in ([1, 2, 3, 4], a[0], np.float32(1).reshape(()), cg.asarray(a[1], device=device)):
        host = np.asarray(other)
        for op in (operator.lt, operator.ge, operator.add):
            assert_same(op(x, other), op(a, host))
            assert_same(op(other, x), op(host, a))


WHERE_OPERANDS = [
    ("x", "y"), ("x", 0.0), (0, "y"), ("x", np.float64(2)), (np.int8(3), "y"), (True, "y"),
    ("x", 7), (1.5, 2.5),
]


def _where_operand(spec, arrays):
    return arrays[spec] if isinstance(spec, str) else spec


@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 7), (0,), (3, 0)])
@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.float32, np.float64),
                                    (np.int32, np.float32), (np.uint8, np.uint8),
                                    (np.bool_, np.int8)])
def test_where_is_numpys(device, path, shape, dtypes):
    a, b = sample(shape, dtypes[0], 7), sample(shape, dtypes[1], 8)
    c = sample(shape, np.float32, 9) > 0
    x, y, m = (cg.asarray(t, device=device) for t in (a, b, c))
    host, ours = {"x": a, "y": b}, {"x": x, "y": y}
    for p, q in WHERE_OPERANDS:
        for _ in range(2):
            want = outcome(lambda: np.where(c, _where_operand(p, host), _where_operand(q, host)))
            got = outcome(lambda: np.where(m, _where_operand(p, ours), _where_operand(q, ours)))
            assert_same(got, want)
    assert_same(np.where(x > 0, x, y), np.where(a > 0, a, b))
    assert_same(np.where(x, x, y), np.where(a, a, b))  # a condition that is not bool


def test_where_with_a_cached_plan_takes_each_calls_operands(device, path):
    shape = (33, 7)
    arrays = [sample(shape, np.float32, k) for k in range(4)]
    x, y, z, w = (cg.asarray(t, device=device) for t in arrays)
    a, b, c, d = arrays
    for s in (0.0, -1.5, float("nan")):
        assert_same(np.where(x > s, y, s), np.where(a > s, b, s))
        assert_same(np.where(z > s, w, x), np.where(c > s, d, a))
    assert_same(np.where(x > 0, x.T.T, y[::-1]), np.where(a > 0, a, b[::-1]))
    xf = cg.asarray(np.asfortranarray(a), device=device)  # NumPy's result is F-ordered here
    assert_same(np.where(xf > 0, xf, 1.0), np.where(a > 0, a, 1.0))


def test_where_errors_are_numpys(device, path):
    a = sample((7,), np.uint8, 10)
    x, m = cg.asarray(a, device=device), cg.asarray(a > 1, device=device)
    for args in ((m, x, 300), (m, x, -1), (m, x, 2 ** 70),
                 (m, x, cg.asarray(a[:3], device=device))):
        host = [np.asarray(v) if isinstance(v, DeviceArray) else v for v in args]
        # the kernels' route leaves these to NumPy's fallback, an ndarray (as it did)
        assert_same(outcome(lambda: np.where(*args)), outcome(lambda: np.where(*host)),
                    device_result=path)
    with pytest.raises(ValueError):
        np.where(m, x)


JOIN_PIECES = [
    [((33, 7), np.float32), ((33, 7), np.float32)],
    [((1,), np.int32), ((7,), np.int8), ((0,), np.float64)],
    [((3, 0), np.uint8), ((3, 0), np.uint8)],
    [((2, 5), np.float64), ((2, 5), np.float32), ((2, 5), np.bool_)],
]


def _pieces(spec, device, seed: int = 11) -> tuple:
    hosts = [sample(shape, dtype, seed + k) for k, (shape, dtype) in enumerate(spec)]
    return hosts, [cg.asarray(h, device=device) for h in hosts]


@pytest.mark.parametrize("spec", JOIN_PIECES)
def test_concatenate_is_numpys(device, path, spec):
    hosts, pieces = _pieces(spec, device)
    for axis in (0, -1, None):
        for kwargs in ({}, {"dtype": np.float64}, {"dtype": np.int8, "casting": "unsafe"},
                       {"dtype": np.int8}):
            for _ in range(2):
                want = outcome(lambda: np.concatenate(hosts, axis=axis, **kwargs))
                assert_same(outcome(lambda: np.concatenate(pieces, axis=axis, **kwargs)), want)
                assert_same(outcome(lambda: np.concatenate(tuple(pieces), axis, **kwargs)),
                            want)


def test_concatenate_with_a_cached_plan_takes_each_calls_pieces(device, path):
    spec = [((33, 7), np.float32)] * 2
    (a, b), (x, y) = _pieces(spec, device, 20)
    (c, d), (z, w) = _pieces(spec, device, 30)
    for pieces, hosts in (([x, y], [a, b]), ([z, w], [c, d]), ([y, x], [b, a]),
                          ([x.T.T, y[::-1]], [a, b[::-1]])):
        assert_same(np.concatenate(pieces), np.concatenate(hosts))
        assert_same(np.stack(pieces), np.stack(hosts))
    assert_same(x, a)


def test_concatenate_errors_are_numpys(device, path):
    (a, b), (x, y) = _pieces([((3, 4), np.float32), ((3, 5), np.float32)], device)
    for fn in (lambda p, q: np.concatenate([p, q]), lambda p, q: np.concatenate([p, q], 2),
               lambda p, q: np.stack([p, q]), lambda p, q: np.stack([p, p], axis=3),
               lambda p, q: np.stack([]), lambda p, q: np.concatenate([])):
        assert_same(outcome(lambda: fn(x, y)), outcome(lambda: fn(a, b)))


@pytest.mark.parametrize("spec", JOIN_PIECES[:2] + [[((3, 0), np.uint8)] * 2,
                                                      [((), np.float32)] * 3])
def test_stack_is_numpys(device, path, spec):
    spec = [(spec[0][0], dtype) for _, dtype in spec]  # stack takes pieces of one shape
    hosts, pieces = _pieces(spec, device)
    ndim = len(spec[0][0]) + 1
    for axis in range(-ndim, ndim):
        for kwargs in ({}, {"dtype": np.float64}, {"dtype": np.int8, "casting": "unsafe"}):
            for _ in range(2):
                assert_same(outcome(lambda: np.stack(pieces, axis, **kwargs)),
                            outcome(lambda: np.stack(hosts, axis, **kwargs)))


@pytest.mark.parametrize("shape", [(1,), (7,), (33, 7), (0,), (4, 0), (2, 3, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_])
def test_boolean_mask_indexing_is_numpys(device, path, shape, dtype):
    a = sample(shape, dtype, 12)
    x = cg.asarray(a, device=device)
    for k, mask in enumerate((sample(shape, np.float32, 13) > 0, np.zeros(shape, bool),
                              np.ones(shape, bool), sample(shape[:1], np.float32, 14) > 0)):
        m = cg.asarray(mask, device=device)
        for _ in range(2):
            assert_same(x[m], a[mask])
            assert_same(x[mask], a[mask])
        assert_same(x[x > 0] if dtype != np.bool_ else x[x], a[a > 0] if dtype != np.bool_
                    else a[a])
    bad = cg.asarray(np.ones(shape[:-1] + (shape[-1] + 1,), bool), device=device)
    assert_same(outcome(lambda: x[bad]), outcome(lambda: a[np.asarray(bad)]))


def test_a_mask_result_is_independent_of_its_operands(device, path):
    a = sample((33, 7), np.float32, 15)
    x = cg.asarray(a, device=device)
    m = x > 0
    got = x[m]
    x[...] = 0.0
    np.testing.assert_array_equal(np.asarray(got), a[a > 0])
    got[...] = 1.0
    assert not np.asarray(x).any()


def test_repeated_short_calls_build_no_plan(device, host_path):
    """A repeated call with another scalar value or operand of the same key is one dict hit."""
    from clarray_gemm.ops.elementwise import _PLANS as ELEMENTWISE
    from clarray_gemm.ops.joining import _PLANS as JOINS

    (a, b), (x, y) = _pieces([((33, 7), np.float32)] * 2, device, 40)
    calls = (lambda s, p, q: p > s, lambda s, p, q: s * p, lambda s, p, q: p ** 2,
             lambda s, p, q: np.where(p > s, p, q), lambda s, p, q: np.where(p > 0, s, q),
             lambda s, p, q: np.exp(p))
    for call in calls:
        call(0.5, x, y)
    np.concatenate([x, y]), np.stack([x, y])
    builds = ELEMENTWISE.builds, JOINS.builds
    for s, p, q in ((1.5, y, x), (-2.0, x, x)):
        for call in calls:
            want = call(s, a if p is x else b, a if q is x else b)
            assert_same(call(s, p, q), want)
        assert_same(np.concatenate([p, q]), np.concatenate([np.asarray(p), np.asarray(q)]))
        assert_same(np.stack([q, p]), np.stack([np.asarray(q), np.asarray(p)]))
    assert (ELEMENTWISE.builds, JOINS.builds) == builds


METHOD_CALLS = [("sum", (0,), {}), ("sum", (), {"axis": -1, "keepdims": True}),
                ("sum", ((0, 1),), {"dtype": np.float64}), ("max", (), {"axis": -1}),
                ("max", (1, None, True), {}), ("min", (), {}), ("mean", (0,), {}),
                ("mean", (), {"axis": 1, "dtype": np.float64}), ("argmax", (), {}),
                ("argmin", (1,), {"keepdims": True}), ("argmin", (), {"axis": 0}),
                ("any", (0,), {}), ("all", (), {}), ("prod", (), {"axis": 2}),
                ("cumsum", (1,), {}), ("clip", (-0.5, 0.5), {}), ("std", (), {"ddof": 1})]


@pytest.mark.parametrize("name,args,kwargs", METHOD_CALLS)
def test_methods_with_plain_options_are_numpys(device, path, name, args, kwargs):
    """``x.sum(0)`` and friends skip NumPy's dispatch: NumPy's answer on every call, on the
    host path to the bit, for another operand of the same key too."""
    a = sample((7, 33, 3), np.float32, 16)
    b = sample((7, 33, 3), np.float32, 17)
    a[1, 2, 0] = 9.0
    for host in (a, b, a):
        x = cg.asarray(host, device=device)
        got = outcome(lambda: getattr(x, name)(*args, **kwargs))
        want = outcome(lambda: getattr(host, name)(*args, **kwargs))
        if path or name not in ("sum", "mean", "prod", "std", "cumsum"):
            assert_same(got, want)
        else:  # a kernel's order of sums
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_methods_with_array_arguments_keep_numpys_dispatch(device, path):
    a = sample((7, 33), np.float32, 18)
    x = cg.asarray(a, device=device)
    out = cg.empty((33,), np.float32, device=device)
    assert x.max(axis=0, out=out) is out
    assert_same(out, a.max(axis=0))
    mask = a > 0
    assert_same(x.sum(where=cg.asarray(mask, device=device)), a.sum(where=mask))
    assert_same(x.take([1, 3]), a.take([1, 3]))
    with pytest.raises(TypeError):
        x.sum(bogus=1)


@pytest.mark.parametrize("shape", [(), (7,), (33, 7), (3, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_repeated_scans_are_numpys(device, path, shape, dtype):
    """np.cumsum / np.cumprod: the host path's cached call (a fresh result for each call, the
    operand as it is now) gives NumPy's bits; the kernels NumPy's values."""
    ndim = len(shape)
    for func in (np.cumsum, np.cumprod):
        for axis in (None,) + tuple(range(-ndim, ndim)):
            for kwargs in ({}, {"dtype": np.float64}, {"dtype": np.int32}):
                results = []
                for seed in (19, 20, 19):
                    a = sample(shape, dtype, seed)
                    x = cg.asarray(a, device=device)
                    got = outcome(lambda: func(x, axis=axis, **kwargs))
                    want = outcome(lambda: func(a, axis=axis, **kwargs))
                    if path or np.dtype(want.dtype if not isinstance(want, type)
                                        else dtype).kind != "f":
                        assert_same(got, want)
                    else:  # a kernel's order of sums
                        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
                    results.append((got, np.asarray(got).copy()))
                for got, seen in results:  # fresh results: later calls left each alone
                    if not isinstance(got, type):
                        assert np.asarray(got).tobytes() == seen.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.bool_])
def test_copy_of_every_geometry(path, dtype):
    """``x.copy()`` (prepared once per geometry on the host path): NumPy's values and C order
    for contiguous, transposed, strided and offset views, empty arrays and 0-d ones; a fresh
    array each call (writing it leaves the source alone)."""
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((9, 14)) * 50).astype(dtype)
    x = cg.asarray(a)
    for view, want in ((x, a), (x.T, a.T), (x[::2, 3:], a[::2, 3:]), (x[1:, ::-1], a[1:, ::-1]),
                       (x[:0], a[:0]), (x[2, 3:4].reshape(()), a[2, 3:4].reshape(()))):
        for _ in range(2):   # the first call prepares, the second reuses
            got = view.copy()
            assert type(got) is DeviceArray and got.flags.c_contiguous
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), want.copy())
        if got.size:
            got[(0,) * got.ndim] = 0
            np.testing.assert_array_equal(np.asarray(view), want)
    np.testing.assert_array_equal(np.asarray(x.copy(order="F")), a)
    assert x.copy(order="F").flags.f_contiguous
