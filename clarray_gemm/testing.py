"""Test helpers for code that must give NumPy's answers on device arrays, in the style of CuPy's
``numpy_cupy_allclose``: a test written once against an array module ``xp`` runs with NumPy and
with clarray_gemm, and the two results (or the two exceptions) are compared.

    import numpy as np
    from clarray_gemm.testing import numpy_clarray_allclose

    @numpy_clarray_allclose(rtol=1e-6)
    def test_softmax(xp):
        x = xp.asarray(np.linspace(-3, 3, 33, dtype=np.float32))
        e = np.exp(x - x.max())
        return e / e.sum()

``xp`` is :mod:`numpy` in the first run and :mod:`clarray_gemm` in the second; NumPy's own
functions (``np.exp``) dispatch to the device for device arrays, so the body is ordinary NumPy
code. In the clarray_gemm run every array the test returns must be a device array (results stay
on the device), unless ``device_results=False``.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from .array import DeviceArray

__all__ = ["numpy_clarray_allclose", "numpy_clarray_array_equal"]


def _run(test: Callable[..., Any], xp: Any, args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """(result, None) or (None, the exception) of one run."""
    try:
        return test(*args, xp=xp, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - compared with the other run's
        return None, exc


def _leaves(obj: Any) -> list[Any]:
    """The arrays and scalars of a result (tuples and lists walked, in order)."""
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in _leaves(item)]
    return [obj]


def _compare(check: Callable[[np.ndarray, np.ndarray], None], type_check: bool,
             device_results: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorator(test: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            import clarray_gemm
            expected, numpy_error = _run(test, np, args, kwargs)
            got, our_error = _run(test, clarray_gemm, args, kwargs)
            if numpy_error is not None or our_error is not None:
                if numpy_error is None:
                    raise AssertionError(f"clarray_gemm raised {our_error!r} where NumPy "
                                         f"answered") from our_error
                if our_error is None:
                    raise AssertionError(f"NumPy raised {numpy_error!r} where clarray_gemm "
                                         f"answered {got!r}") from numpy_error
                if not isinstance(our_error, type(numpy_error)):
                    raise AssertionError(f"clarray_gemm raised {type(our_error).__name__} "
                                         f"({our_error}) where NumPy raised "
                                         f"{type(numpy_error).__name__} ({numpy_error})")
                return
            ours, theirs = _leaves(got), _leaves(expected)
            if len(ours) != len(theirs):
                raise AssertionError(f"{len(ours)} results from clarray_gemm, {len(theirs)} "
                                     f"from NumPy")
            for i, (mine, want) in enumerate(zip(ours, theirs)):
                if device_results and isinstance(want, np.ndarray) \
                        and not isinstance(mine, DeviceArray):
                    raise AssertionError(f"result {i}: a {type(mine).__name__} where a device "
                                         f"array was expected (NumPy gave an ndarray)")
                mine_h, want_h = np.asarray(mine), np.asarray(want)
                if type_check and mine_h.dtype != want_h.dtype:
                    raise AssertionError(f"result {i}: dtype {mine_h.dtype}, NumPy's "
                                         f"{want_h.dtype}")
                if mine_h.shape != want_h.shape:
                    raise AssertionError(f"result {i}: shape {mine_h.shape}, NumPy's "
                                         f"{want_h.shape}")
                check(mine_h, want_h)
        # pytest must not ask for an ``xp`` fixture: the wrapper supplies it
        params = [p for name, p in inspect.signature(test).parameters.items() if name != "xp"]
        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return wrapper
    return decorator


def numpy_clarray_allclose(rtol: float = 1e-7, atol: float = 0.0, *, type_check: bool = True,
                           device_results: bool = True, equal_nan: bool = True):
    """Decorator: run the test with ``xp=numpy`` and ``xp=clarray_gemm`` and assert that the
    returned arrays (a tuple or list of them too) agree within ``rtol``/``atol``
    (``np.testing.assert_allclose``), with NumPy's dtypes and shapes (``type_check``), and, where
    NumPy raised, that clarray_gemm raised the same exception type.

    Args: ``rtol``, ``atol``, ``equal_nan`` as in ``np.testing.assert_allclose``;
    ``type_check``: compare dtypes; ``device_results``: require device arrays where NumPy
    returned ndarrays. Mirrors ``cupy.testing.numpy_cupy_allclose``."""
    def check(mine: np.ndarray, want: np.ndarray) -> None:
        np.testing.assert_allclose(mine, want, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return _compare(check, type_check, device_results)


def numpy_clarray_array_equal(*, type_check: bool = True, device_results: bool = True):
    """Decorator: as :func:`numpy_clarray_allclose`, the results equal bit for bit (NaN
    payloads, -0.0 and integers included: the bytes are compared). Mirrors
    ``cupy.testing.numpy_cupy_array_equal``."""
    def check(mine: np.ndarray, want: np.ndarray) -> None:
        if mine.tobytes() != np.ascontiguousarray(want, dtype=mine.dtype).tobytes():
            np.testing.assert_array_equal(mine, want)   # NumPy's report of the difference
            raise AssertionError("the results differ in their bits (NaN payloads or -0.0)")
    return _compare(check, type_check, device_results)
