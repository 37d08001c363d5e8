"""Operands NumPy accepts (lists, tuples, scalars, N-d with 1-D), NumPy's binary-operator
deferral, and requests larger than the device allows."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from conftest import assert_matches, random_array


@pytest.mark.parametrize("a_shape, b_shape", [((2, 3, 4), (4,)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)),
                                              ((4,), (2, 4, 3)), ((5,), (5,)), ((1, 2, 3, 7), (7,))])
def test_dot_with_n_d_and_1_d_operands(device, a_shape, b_shape):
    a, b = random_array(a_shape, np.float32, 1), random_array(b_shape, np.float32, 2)
    x = cg.asarray(a, device=device)
    got = np.dot(x, b)
    want = np.dot(a.astype(np.float64), b.astype(np.float64))
    assert np.shape(got) == want.shape
    assert_matches(got, want)


def test_lists_tuples_and_scalars_as_operands(device):
    a = random_array((2, 3), np.float64, 3)
    x = cg.asarray(a, device=device)
    assert_matches(np.dot(x, [1.0, 2.0, 3.0]), np.dot(a, [1.0, 2.0, 3.0]))
    assert_matches(np.dot([[1.0, 2.0]], x), np.dot([[1.0, 2.0]], a))
    assert_matches(np.matmul(x, ((1.0,), (2.0,), (3.0,))), a @ np.array([[1.0], [2.0], [3.0]]))
    assert_matches(np.dot(x, 2.0), a * 2.0)
    assert_matches(x @ [1, 2, 3], a @ [1, 2, 3])
    assert_matches([1, 2] @ x, [1, 2] @ a)


class _Deferring:
    """Wins ``x @ other`` and ``x + other`` the way NumPy lets a higher-priority type win."""

    __array_priority__ = 1000.0

    def __rmatmul__(self, other):
        return "rmatmul"

    def __radd__(self, other):
        return "radd"

    def __rsub__(self, other):
        return "rsub"


class _NoUfuncs:
    __array_ufunc__ = None

    def __rmul__(self, other):
        return "rmul"

    def __rtruediv__(self, other):
        return "rtruediv"


def test_binary_operators_defer_as_ndarray_does(device):
    x = cg.asarray(np.ones((2, 2), np.float32), device=device)
    a = np.ones((2, 2), np.float32)
    for host, dev in ((a, x),):
        assert (host @ _Deferring(), dev @ _Deferring()) == ("rmatmul", "rmatmul")
        assert (host + _Deferring(), dev + _Deferring()) == ("radd", "radd")
        assert (host - _Deferring(), dev - _Deferring()) == ("rsub", "rsub")
        assert (host * _NoUfuncs(), dev * _NoUfuncs()) == ("rmul", "rmul")
        assert (host / _NoUfuncs(), dev / _NoUfuncs()) == ("rtruediv", "rtruediv")
    with pytest.raises(TypeError):
        x + object()
    with pytest.raises(TypeError):
        a + object()


def test_requests_larger_than_the_device_allows_raise_memory_error(device):
    limit = device.info.max_alloc_bytes
    n = limit // 4 + 1024
    with pytest.raises(MemoryError, match="largest allocation"):
        cg.empty((n,), np.float32, device=device)
    big = int(np.sqrt(limit / 4)) + 64
    with pytest.raises(MemoryError, match="CL_DEVICE_MAX_MEM_ALLOC_SIZE"):
        cg.asarray(np.ones((big, 1), np.float32), device=device) @ np.ones((1, big), np.float32)
    y = cg.asarray(np.ones((3, 3), np.float32), device=device) @ np.ones((3, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(y), np.full((3, 3), 3.0))  # still usable
