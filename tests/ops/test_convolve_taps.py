"""The ``host_taps`` strategy (``ops/convolve_taps.py``): one multiply and one add a tap over the
whole signal. NumPy's values in every mode, order and dtype it takes (integers exactly; floats
bit for bit away from the edges, where NumPy's own loop adds the products in the same order
from 0), signed zeros and non-finite values as NumPy gives them, chunk boundaries, the repeated
call's plan, and dispatch's choice."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import convolve_taps
from clarray_gemm.ops.convolve import HOST_TAPS_MIN_SIGNAL, _core_shape
from clarray_gemm.ops.convolve_taps import correlate_taps, tap_passes
from conftest import assert_matches, random_array

MODES = ("full", "same", "valid")
DTYPES = (np.float32, np.float64, np.int8, np.int32, np.int64, np.uint16)
SIZES = ((1, 1), (7, 3), (31, 2), (33, 5), (257, 11), (1009, 7), (4099, 1))


def _interior(want: np.ndarray, n: int, m: int, mode: str) -> slice:
    """The outputs whose window lies inside the signal (NumPy's small_correlate's)."""
    pad = {"full": m - 1, "same": m // 2, "valid": 0}[mode]
    return slice(pad, pad + n - m + 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,m", SIZES)
def test_host_taps_match_numpy(n, m, dtype):
    a, v = random_array(n, dtype, n), random_array(m, dtype, m + 1)
    before = a.copy(), v.copy()
    for op in ("convolve", "correlate"):
        for x, y in ((a, v), (v, a)):
            for mode in MODES:
                want = getattr(np, op)(x, y, mode)
                got = getattr(cg, op)(x, y, mode, kernel="host_taps")
                assert isinstance(got, cg.DeviceArray) and got.dtype == want.dtype
                host = np.asarray(got)
                if np.dtype(dtype).kind != "f":
                    np.testing.assert_array_equal(host, want)
                    continue
                assert_matches(host, getattr(np, op)(x.astype(np.float64),
                                                     y.astype(np.float64), mode))
                if len(x) >= len(y):  # the interior: NumPy's own sums, bit for bit
                    inner = _interior(want, len(x), len(y), mode)
                    assert host[inner].tobytes() == want[inner].tobytes(), (op, mode)
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(v, before[1])


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_every_output_is_written_across_chunks(monkeypatch, mode):
    """Chunks of a few outputs (the passes' cache blocking) give the one-chunk answer, and every
    output of a poisoned result is overwritten."""
    n, m = 1031, 3
    a, v = random_array(n, np.float32, 1), random_array(m, np.float32, 2)
    pad, length = _core_shape(n, m, mode)
    whole = correlate_taps(np.full(length, np.nan, np.float32), a, v, pad)
    monkeypatch.setattr(convolve_taps, "CHUNK_BYTES", 28)  # 7 outputs a chunk
    tap_passes.cache_clear()
    try:
        chunked = correlate_taps(np.full(length, np.nan, np.float32), a, v, pad)
    finally:
        tap_passes.cache_clear()
    assert not np.isnan(chunked).any()
    assert chunked.tobytes() == whole.tobytes()
    want = np.correlate(a.astype(np.float64), v.astype(np.float64), ("valid", "same", "full")[mode])
    assert_matches(chunked, want)


def test_signed_zeros_and_non_finite_values_are_numpys_bit_for_bit():
    """Exact small values: every output, edges included, is NumPy's to the bit: -0.0 products
    sum to +0.0 (NumPy's sums start at 0), inf * 0 is NaN, a NaN spoils only its windows; no
    floating-point warning (NumPy's loop raises none)."""
    a = np.array([1, -0.0, np.nan, 2, np.inf, 3, -0.0, -0.0, -0.0, 4, 5, -np.inf, 6, -0.0],
                 np.float32)
    for v in (np.array([0.0, 1.0, -2.0], np.float32), np.array([-1.0, 0.5], np.float32),
              np.array([np.inf, 1.0, 0.0], np.float32), np.array([-0.0], np.float32)):
        for op in ("convolve", "correlate"):
            for mode in MODES:
                with np.errstate(all="ignore"):
                    want = getattr(np, op)(a, v, mode)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    got = np.asarray(getattr(cg, op)(a, v, mode, kernel="host_taps"))
                assert got.tobytes() == want.tobytes(), (op, mode, v, got, want)


def test_strided_device_operands_and_a_cast_mask(device):
    a = random_array(3001, np.float32, 5)
    x = cg.asarray(a, device=device)[::3]
    v8 = np.array([3, -1, 2], np.int8)  # result float32: the mask is cast, the signal is not
    want = np.convolve(a[::3].astype(np.float64), v8.astype(np.float64), "same")
    assert_matches(cg.convolve(x, v8, "same", kernel="host_taps"), want)
    assert_matches(cg.correlate(cg.asarray(v8, device=device), x, "full", kernel="host_taps"),
                   np.correlate(v8.astype(np.float64), a[::3].astype(np.float64), "full"))


@pytest.mark.parametrize("a,v", [
    (np.ones(9, np.complex64), np.ones(3, np.complex64)),   # complex: NumPy's dot
    (np.ones(9, np.float16), np.ones(3, np.float16)),       # NumPy sums half floats in float32
    (np.ones(9, np.int16), np.ones(3, np.float32)),         # the signal is not the result dtype
])
def test_forcing_host_taps_where_it_does_not_fit_names_it(a, v):
    with pytest.raises(ValueError, match="host_taps"):
        cg.convolve(a, v, kernel="host_taps")


def test_dispatch_takes_the_taps_for_three_taps_on_long_signals(host_path, monkeypatch):
    """The repeated call runs the plan it cached: the passes, not NumPy's loop."""
    from clarray_gemm.ops import convolve as convolve_module
    n = HOST_TAPS_MIN_SIGNAL[3]
    a, v = random_array(n + 7, np.float32, 8), random_array(3, np.float32, 9)
    assert "\nhost_taps: " in cg.explain_convolve(a, v)
    assert "host_taps" not in cg.explain_convolve(a[: n - 1], v)          # too short
    assert "host_taps" not in cg.explain_convolve(a, random_array(4, np.float32, 9))
    assert "host_taps" not in cg.explain_convolve(a.astype(np.complex64), v)
    calls = []
    real = convolve_module.correlate_taps

    def counted(out, x, w, pad):
        calls.append(len(w))
        return real(out, x, w, pad)
    monkeypatch.setattr(convolve_module, "correlate_taps", counted)
    want = np.convolve(a.astype(np.float64), v.astype(np.float64), "same")
    for _ in range(2):  # the first call makes the plan, the second runs it
        assert_matches(np.convolve(a, cg.asarray(v), "same"), want)
        assert_matches(cg.correlate(v, a, "same"),
                       np.correlate(v.astype(np.float64), a.astype(np.float64), "same"))
    assert calls == [3, 3, 3, 3]
    with cg.host_path(False):
        assert "host_taps" not in cg.explain_convolve(a, v)
