"""NumPy's answers in corners: casts of special and out-of-range values, signed zeros, NaN and
infinities through the elementwise kernels, 0-d formatting, overflowing shapes, and dtypes no
device can hold. The same cast and elementwise checks run under Oclgrind in
test_kernels_oclgrind.py."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg

from parity_cases import cast_mismatches, elementwise_mismatches


def test_every_cast_is_numpys(device):
    problems = cast_mismatches(device)
    assert not problems, "\n".join(problems[:20])


def test_float_to_small_unsigned_wraps_like_numpy(device):
    """A float cast to uint8 wraps as NumPy's does, although OpenCL's convert_uchar saturates
    (as it does on an H100)."""
    x = np.array([-1.0, -2.5, -129.0, 300.0], np.float32)
    with np.errstate(invalid="ignore"):
        want = x.astype(np.uint8)
    np.testing.assert_array_equal(np.asarray(cg.asarray(x, device=device).astype(np.uint8)),
                                  want)


def test_elementwise_specials_are_numpys(device):
    problems = elementwise_mismatches(device)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_negative_zero(dtype, device):
    x = cg.asarray(np.zeros(3, dtype), device=device)
    assert np.signbit(np.asarray(-x)).all()
    assert np.signbit(np.asarray(np.negative(x))).all()
    # maximum/minimum of equal zeros give the second operand, as NumPy's loops do.
    z, nz = cg.asarray(np.zeros(1, dtype), device=device), -x[:1]
    for f in (np.maximum, np.minimum):
        assert np.signbit(np.asarray(f(z, nz))) == np.signbit(f(np.zeros(1, dtype),
                                                                 -np.zeros(1, dtype)))
        assert np.signbit(np.asarray(f(nz, z))) == np.signbit(f(-np.zeros(1, dtype),
                                                                 np.zeros(1, dtype)))


@pytest.mark.parametrize("value", [2.5, -0.0, 7, np.float32(1.25), True])
@pytest.mark.parametrize("spec", ["", ".3f", ">10", "e", "+"])
def test_zero_d_formats_like_numpy(value, spec, device):
    host = np.array(value)
    dev = cg.asarray(host, device=device)
    try:
        want = format(host, spec)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            format(dev, spec)
        return
    assert format(dev, spec) == want
    assert f"{dev}" == f"{host}"


def test_n_d_format_spec_is_refused_like_numpy(device):
    dev = cg.asarray(np.ones(3), device=device)
    assert format(dev, "") == format(np.ones(3), "")
    with pytest.raises(TypeError, match="unsupported format string"):
        format(dev, ".3f")


def test_zero_d_round_and_comparisons_like_numpy(device):
    host = np.array(2.5)
    dev = cg.asarray(host, device=device)
    assert (dev < 3) == (host < 3) and (dev == 2.5) == (host == 2.5) and (3 > dev) == (3 > host)
    assert float(dev) == float(host) and int(dev) == int(host)
    with pytest.raises(TypeError):   # ndarray defines no __round__ either
        round(host)
    with pytest.raises(TypeError):
        round(dev)


@pytest.mark.parametrize("shape,dtype", [((2 ** 32, 2 ** 32), np.float64),
                                         ((3, 2 ** 62), np.float64),
                                         ((0, 2 ** 62, 2 ** 62), np.float32),
                                         ((2 ** 60,), np.float64),
                                         ((2 ** 63,), np.uint8)])
def test_overflowing_shapes_raise_numpys_error(shape, dtype, device):
    with pytest.raises(ValueError) as expected:
        np.empty(shape, dtype)
    with pytest.raises(ValueError) as got:
        cg.empty(shape, dtype, device=device)
    assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError, match=str(expected.value)[:20]):
        cg.zeros(shape, dtype, device=device)


@pytest.mark.parametrize("value", [None, [1, None], np.array([1, 2], dtype=object), object()])
def test_object_dtype_is_a_type_error_naming_it(value, device):
    with pytest.raises(TypeError, match="dtype object holds Python objects"):
        cg.asarray(value, device=device)


def test_arithmetic_on_strings_raises_numpys_ufunc_error(device):
    dev = cg.asarray(np.array(["a", "b"]), device=device)
    host = np.array(["a", "b"])
    for call in (lambda x: -x, lambda x: x @ x, lambda x: x - x):
        with pytest.raises(TypeError) as expected:   # NumPy's UFuncTypeError
            call(host)
        with pytest.raises(type(expected.value), match="did not contain a loop"):
            call(dev)
