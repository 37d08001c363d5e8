"""Operands only NumPy computes with (strings, bytes, void, objects, datetimes) in operators and
functions: the call gives NumPy's answer, the same exception type and message as NumPy raises for
the same call with an ``ndarray`` in place of the device array, or NumPy's result where NumPy
has one (object loops, ``==`` without a loop). One rule decides it (``dtypes.numpy_only``):
such operands go to NumPy's own function, so NumPy's order of checks (dtypes before shapes for
``@``, shapes before dtypes for ``np.dot``) is kept."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import clarray_gemm as cg

OTHERS = {
    "str": "a",
    "bytes": b"a",
    "str_1d": np.array(["a", "b", "c"]),
    "str_1": np.array(["a"]),
    "str_4": np.array(["a", "b", "c", "d"]),
    "void": np.zeros(3, "V4"),
    "void_0d": np.zeros((), "V4"),
    "object": np.array([1.0, 2, 3], dtype=object),
    "object_none": np.array([None, None, None], dtype=object),
    "datetime": np.array([1, 2, 3], "M8[s]"),
    "timedelta": np.array([1, 2, 3], "m8[s]"),
    "str_list": ["a", "b", "c"],
}

CALLS = {
    "x @ o": operator.matmul,
    "o @ x": lambda x, o: o @ x,
    "x @= o": operator.imatmul,
    "np.matmul": np.matmul,
    "np.dot": np.dot,
    "x.dot": lambda x, o: x.dot(o),
    "np.inner": np.inner,
    "np.tensordot": lambda x, o: np.tensordot(x, o, 1),
    "np.einsum": lambda x, o: np.einsum("ij,j->i", x, o),
    "x + o": operator.add,
    "o + x": lambda x, o: o + x,
    "x - o": operator.sub,
    "x * o": operator.mul,
    "x / o": operator.truediv,
    "x += o": operator.iadd,
    "np.maximum": np.maximum,
    "x < o": operator.lt,
    "x == o": operator.eq,
    "x != o": operator.ne,
    "np.convolve": lambda x, o: np.convolve(x[0], o),
    "np.correlate": lambda x, o: np.correlate(x[0], o),
    "np.where": lambda x, o: np.where(x > 1, x, o),
}


def _outcome(call, x, other):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "result", call(x, other)
        except Exception as exc:  # noqa: BLE001 - the exception is what is compared
            return "raised", exc


@pytest.mark.parametrize("other", list(OTHERS), ids=list(OTHERS))
@pytest.mark.parametrize("call", list(CALLS), ids=list(CALLS))
def test_numpy_only_operand_gets_numpys_answer(call, other, device):
    host = np.arange(9, dtype=np.float32).reshape(3, 3)
    kind, expected = _outcome(CALLS[call], host.copy(), OTHERS[other])
    got_kind, got = _outcome(CALLS[call], cg.asarray(host, device=device), OTHERS[other])
    if kind == "raised":
        assert got_kind == "raised", f"NumPy raised {expected!r}, the device call gave {got!r}"
        assert type(got) is type(expected), (got, expected)
        assert str(got) == str(expected)
        return
    assert got_kind == "result", f"NumPy gave a result, the device call raised {got!r}"
    got = np.asarray(got) if isinstance(got, cg.DeviceArray) else got
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    assert np.array_equal(np.asarray(got), np.asarray(expected))


def test_string_matmul_raises_numpys_ufunc_type_error(device):
    """The case that raised ValueError (the core-dimension check ran before the dtype check)."""
    x = cg.asarray(np.ones((3, 3), np.float32), device=device)
    ufunc_type_error = type(pytest.raises(TypeError, np.matmul, np.ones((3, 3)), "a").value)
    for call in (lambda: x @ "a", lambda: "a" @ x, lambda: x @ np.array(["a"]),
                 lambda: np.matmul(x, "a"), lambda: cg.matmul(x, "a"),
                 lambda: cg.matmul(x, "a", kernel="naive")):
        with pytest.raises(ufunc_type_error, match="did not contain a loop"):
            call()


def test_object_results_are_numpys_arrays(device):
    """Python objects cannot live in a device buffer: object results are NumPy's arrays."""
    x = cg.asarray(np.ones((2, 3), np.float32), device=device)
    objects = np.array([1, 2, 3], dtype=object)
    for got, expected in ((x @ objects, np.ones((2, 3), np.float32) @ objects),
                          (x + objects, np.ones((2, 3), np.float32) + objects),
                          (x.astype(object), np.ones((2, 3), np.float32).astype(object))):
        assert type(got) is np.ndarray and got.dtype == object
        assert np.array_equal(got, expected)
    assert "NumPy's own np.matmul" in cg.explain_matmul(x, objects)
