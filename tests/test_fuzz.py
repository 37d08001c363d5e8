"""Property-based comparison with NumPy (hypothesis): the elementwise operators, ``np.dot``,
``np.matmul`` and ``np.convolve`` on device arrays give NumPy's answers for random odd
shapes, broadcasting, integer and float dtypes, and special values (NaN, +-inf, -0.0).

Elementwise results must equal NumPy's bit for bit (any NaN for a NaN). Products and
convolutions sum in another order than NumPy, so there: integers exactly, NaN and infinities
at the same places, finite values within rounding. The examples are derandomized and few
(about 30 s in all, kernel builds included) so that the suite stays fast and reproducible.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import clarray_gemm as cg  # noqa: E402

from parity_cases import same_values  # noqa: E402

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

INT_DTYPES = [np.dtype(t) for t in ("int8", "uint8", "int32", "int64", "uint64")]
FLOAT_DTYPES = [np.dtype(t) for t in ("float32", "float64")]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0]


def elements(dtype: np.dtype, specials: bool = True, bound: float = 1e6):
    """Values of ``dtype``: integers over their whole range (wrap-around included); floats
    of moderate size with the special values mixed in."""
    if dtype.kind in "iu":
        return st.integers(int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    finite = st.floats(-bound, bound, width=dtype.itemsize * 8, allow_subnormal=True)
    return st.one_of(finite, st.sampled_from(SPECIALS)) if specials else finite


def arrays(dtype: np.dtype, shape, specials: bool = True, bound: float = 1e6):
    return hnp.arrays(dtype, shape, elements=elements(dtype, specials, bound))


BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.minimum]


@FUZZ
@given(data=st.data(), op=st.sampled_from(BINARY + [np.negative]),
       dtypes=st.sampled_from([(t, t) for t in INT_DTYPES + FLOAT_DTYPES]
                              + [(np.dtype("int32"), np.dtype("float64")),
                                 (np.dtype("uint8"), np.dtype("int8")),
                                 (np.dtype("float32"), np.dtype("float64"))]),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                max_side=9))
def test_elementwise_operators_match_numpy(data, op, dtypes, shapes):
    a = data.draw(arrays(dtypes[0], shapes.input_shapes[0]), label="a")
    b = data.draw(arrays(dtypes[1], shapes.input_shapes[1]), label="b")
    da, db = cg.asarray(a), cg.asarray(b)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if op is np.negative:
            want, got = -a, -da
        else:
            want, got = op(a, b), op(da, db)
    assert isinstance(got, cg.DeviceArray)
    host = np.asarray(got)
    assert host.dtype == want.dtype and host.shape == want.shape
    assert same_values(host, want).all(), (a, b, host, want)


def assert_close_with_specials(got, want, scale: float = 0.0) -> None:
    """Floats: NaN/inf where NumPy has them, finite values within 64 eps of the larger of the
    result's magnitude and ``scale`` (the magnitude the computation's terms reach), times 64."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    tol = 64 * np.finfo(want.dtype).eps
    scale = max(float(np.abs(want[finite]).max(initial=0.0)), scale, 1.0)
    np.testing.assert_allclose(got[finite], want[finite], rtol=tol, atol=tol * scale * 64)


# Finite values stay below 1e3 so that no product overflows (which would depend on the order
# of the sums); NaN and infinities propagate the same way in any order.
@FUZZ
@given(data=st.data(), dtype=st.sampled_from(INT_DTYPES[2:] + FLOAT_DTYPES),
       m=st.integers(1, 13), k=st.integers(1, 13), n=st.integers(1, 13),
       batch=st.sampled_from([(), (1,), (3,)]), func=st.sampled_from(["matmul", "dot"]),
       vector_b=st.booleans())
def test_dot_and_matmul_match_numpy(data, dtype, m, k, n, batch, func, vector_b):
    a = data.draw(arrays(dtype, batch + (m, k), bound=1e3), label="a")
    b = data.draw(arrays(dtype, (k,) if vector_b else (k, n), bound=1e3), label="b")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, func)(a, b)
        got = getattr(np, func)(cg.asarray(a), cg.asarray(b))
    assert isinstance(got, cg.DeviceArray)
    assert_close_with_specials(got, want)


# Every convolution kernel forced by name (None: the catalogue's choice), with NaN, +-inf and
# -0.0 mixed into signal and mask: NaN and infinities where NumPy's direct loops put them.
@FUZZ
@given(data=st.data(), dtype=st.sampled_from(INT_DTYPES[2:] + FLOAT_DTYPES),
       n=st.integers(1, 40), m=st.integers(1, 40),
       mode=st.sampled_from(["full", "same", "valid"]),
       op=st.sampled_from(["convolve", "correlate"]),
       kernel=st.sampled_from([None] + cg.kernels("convolve")))
def test_convolve_matches_numpy(data, dtype, n, m, mode, op, kernel):
    if kernel in ("fft", "fft_block") and dtype.kind != "f":
        kernel = None  # the FFT paths refuse integers (test_convolve.py checks the refusal)
    a = data.draw(arrays(dtype, (n,), bound=1e3), label="a")
    v = data.draw(arrays(dtype, (m,), bound=1e3), label="v")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, op)(a, v, mode)
        got = getattr(cg, op)(cg.asarray(a), cg.asarray(v), mode, kernel=kernel)
    assert isinstance(got, cg.DeviceArray)
    # an FFT's round-off is relative to all the products, also those outside the mode's window
    terms = 0.0
    if dtype.kind == "f":
        largest = [float(np.abs(x[np.isfinite(x)]).max(initial=0.0)) for x in (a, v)]
        terms = largest[0] * largest[1] * min(n, m)
    assert_close_with_specials(got, want, terms)
