"""clarray_gemm.testing: the decorators run a test with NumPy and with clarray_gemm and compare
values, dtypes, shapes, bits, device residence and exception types; each of those checks is
shown failing on a case built to break it."""
from __future__ import annotations

import numpy as np
import pytest

from clarray_gemm.testing import numpy_clarray_allclose, numpy_clarray_array_equal


@numpy_clarray_allclose(rtol=1e-6)
def test_softmax_agrees(xp):
    x = xp.asarray(np.linspace(-3, 3, 33, dtype=np.float32))
    e = np.exp(x - x.max())
    return e / e.sum(), x @ x


@numpy_clarray_array_equal()
def test_specials_are_bit_equal(xp):
    x = xp.asarray(np.array([np.nan, -0.0, np.inf, 1.5], np.float64))
    return np.maximum(x, -0.0), x * 0


@numpy_clarray_allclose()
def test_the_same_exception_type_passes(xp):
    a = xp.asarray(np.ones((3, 4), np.float32))
    return a @ a   # ValueError from both


@pytest.mark.parametrize("size", [1, 7, 33])
@numpy_clarray_allclose(rtol=1e-6)
def test_other_parameters_pass_through(xp, size):
    return np.cumsum(xp.asarray(np.arange(size, dtype=np.float64)))


def test_each_check_fails_where_it_should():
    import clarray_gemm

    @numpy_clarray_allclose()
    def different_values(xp):
        return xp.asarray(np.array([1.0, 2.0 if xp is np else 2.5]))
    with pytest.raises(AssertionError):
        different_values()

    @numpy_clarray_allclose()
    def different_dtype(xp):
        return xp.asarray(np.arange(3, dtype=np.float32 if xp is np else np.float64))
    with pytest.raises(AssertionError, match="dtype"):
        different_dtype()

    @numpy_clarray_array_equal()
    def signed_zero(xp):
        return xp.asarray(np.array([0.0 if xp is np else -0.0]))
    with pytest.raises(AssertionError, match="bits"):
        signed_zero()

    @numpy_clarray_allclose()
    def result_left_the_device(xp):
        return np.asarray(xp.asarray(np.arange(4.0)) + 1)
    with pytest.raises(AssertionError, match="device array"):
        result_left_the_device()

    @numpy_clarray_allclose()
    def wrong_exception(xp):
        raise (ValueError if xp is np else TypeError)("shape")
    with pytest.raises(AssertionError, match="TypeError .* where NumPy raised ValueError"):
        wrong_exception()

    @numpy_clarray_allclose()
    def only_ours_raises(xp):
        if xp is clarray_gemm:
            raise RuntimeError("device")
        return np.zeros(2)
    with pytest.raises(AssertionError, match="where NumPy answered"):
        only_ours_raises()
