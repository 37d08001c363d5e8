"""The host strategies of the convolution on unified-memory devices: NumPy's own loops
(``host``) and the overlap-add FFT (``host_fft``, ``ops/convolve_host.py``): NumPy's results in
every mode and order, the cost model's transform lengths, the mask-spectrum cache and dispatch's
choice (the host path on)."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import convolve_host
from clarray_gemm.ops.convolve_host import block_length, smooth_length
from conftest import assert_matches, random_array

MODES = ("full", "same", "valid")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,m", [(1, 1), (7, 3), (100, 64), (1000, 257), (4099, 4093),
                                 (65537, 1023), (33, 31)])
def test_host_fft_matches_numpy(n, m, dtype):
    a, v = random_array(n, dtype, n), random_array(m, dtype, m + 1)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for op in ("convolve", "correlate"):
        for x, y in ((a, v), (v, a)):
            for mode in MODES:
                want = getattr(np, op)(x.astype(np.float64), y.astype(np.float64), mode)
                got = getattr(cg, op)(x, y, mode, kernel="host_fft")
                assert isinstance(got, cg.DeviceArray) and got.dtype == np.dtype(dtype)
                assert_matches(got, want, rtol)


@pytest.mark.parametrize("backend", ["scipy", "numpy"])
def test_host_fft_on_several_threads_matches_numpy(monkeypatch, backend):
    """The threaded transforms (scipy's workers, or numpy.fft's blocks spread over a pool),
    taken here at sizes that run on one thread by default."""
    monkeypatch.setattr(convolve_host, "_THREAD_MIN_POINTS", 1)
    monkeypatch.setattr(convolve_host, "_cores", lambda: 2)
    if backend == "numpy":
        monkeypatch.setattr(convolve_host, "_backend",
                            lambda: (np.fft.rfft, np.fft.irfft, {}, False))
    for n, m in ((4099, 31), (20000, 257), (65537, 1023)):
        a, v = random_array(n, np.float32, n), random_array(m, np.float32, m)
        got = convolve_host.fft_convolve_full(a, v)
        assert_matches(got, np.convolve(a.astype(np.float64), v.astype(np.float64)))


def test_host_fft_takes_integer_and_mixed_inputs_with_a_float_result():
    a = random_array(3000, np.int16, 1)
    v = random_array(300, np.float32, 2)
    assert_matches(cg.convolve(a, v, kernel="host_fft"), np.convolve(a, v.astype(np.float64)))
    with pytest.raises(ValueError, match="host_fft"):
        cg.convolve(a, a[:10], kernel="host_fft")          # an integer result must be exact
    with pytest.raises(ValueError, match="host_fft"):
        cg.convolve(np.ones(9, np.complex64), np.ones(3), kernel="host_fft")


def test_host_direct_is_numpys_bit_for_bit():
    a, v = random_array(5000, np.float32, 3), random_array(40, np.float32, 4)
    for mode in MODES:
        np.testing.assert_array_equal(np.asarray(cg.correlate(a, v, mode, kernel="host")),
                                      np.correlate(a, v, mode))
    c = random_array(50, np.complex128, 5)
    np.testing.assert_array_equal(np.asarray(cg.correlate(c, c[:7], kernel="host")),
                                  np.correlate(c, c[:7]))


def test_transform_lengths_follow_the_cost_model():
    for n in (10, 1000, 2**20):
        for m in (1, 3, 63, 1023, 8191):
            if m > n:
                continue
            P = block_length(n, m)
            assert P == smooth_length(P) and P >= m
            assert P >= 2 * m or P >= n + m - 1       # blocks of at least m + 1 outputs
            whole = smooth_length(n + m - 1)
            assert convolve_host.fft_cost(n, m, P) <= convolve_host.fft_cost(n, m, whole)
    assert smooth_length(1) == 1 and smooth_length(7) == 8 and smooth_length(1001) == 1024
    assert smooth_length(97) == 100


def test_mask_spectrum_is_cached_for_a_repeated_mask(monkeypatch):
    calls = []
    real = convolve_host._backend

    def counting():
        rfft, irfft, kw, keeps = real()
        return (lambda *a, **k: (calls.append(a[0].shape), rfft(*a, **k))[1], irfft, kw, keeps)
    monkeypatch.setattr(convolve_host, "_backend", counting)
    convolve_host._SPECTRA.clear()
    a, v = random_array(50000, np.float32, 6), random_array(500, np.float32, 7)
    cg.convolve(a, v, kernel="host_fft")
    first = [s for s in calls if len(s) == 1]               # the mask's 1-D transform
    cg.convolve(a, v, kernel="host_fft")
    assert len(first) == 1 and len([s for s in calls if len(s) == 1]) == 1
    v2 = v.copy()
    v2[0] += 1
    cg.convolve(a, v2, kernel="host_fft")                   # another mask: a new spectrum
    assert len([s for s in calls if len(s) == 1]) == 2


def test_dispatch_takes_the_host_fft_for_long_masks(host_path):
    a = random_array(2**16, np.float32, 8)
    text = cg.explain_convolve(a, random_array(1023, np.float32, 9))
    assert "host_fft" in text and "taps" in text
    assert "host_fft" not in cg.explain_convolve(a, random_array(3, np.float32, 9))
    assert "host_fft" not in cg.explain_convolve(a.astype(np.int32),
                                                  random_array(1023, np.int32, 9))
    v = random_array(1023, np.float32, 10)
    assert_matches(np.convolve(cg.asarray(a), v), np.convolve(a.astype(np.float64), v))


@pytest.mark.parametrize("n, m, fft", [(4096, 31, True), (16385, 24, True), (4096, 23, False),
                                      (4095, 255, False), (1024, 127, False)])
def test_below_the_kernel_crossover_long_enough_masks_take_the_host_fft(host_path, n, m, fft):
    """Small work on the host path: NumPy's direct loop for short signals or masks, the host's
    overlap-add FFT from 24 taps on signals of 4096 samples and more (float results only)."""
    a, v = random_array(n, np.float32, n), random_array(m, np.float32, m)
    a[n // 2] = np.nan  # spoils only the outputs whose window covers it, as NumPy's loop does
    text = cg.explain_convolve(cg.asarray(a), v, "same")
    assert ("host overlap-add FFT" in text and "NumPy's direct loop" in text) == fft, text
    want = np.convolve(a.astype(np.float64), v.astype(np.float64), "same")
    got = np.asarray(np.convolve(cg.asarray(a), v, "same"))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    assert_matches(got[finite], want[finite], 1e-5)
    ints = random_array(n, np.int32, 1), random_array(m, np.int32, 2)
    assert "FFT" not in cg.explain_convolve(cg.asarray(ints[0]), ints[1])  # integers: exact
    np.testing.assert_array_equal(np.asarray(np.convolve(cg.asarray(ints[0]), ints[1])),
                                  np.convolve(*ints))


def test_no_host_fft_without_the_host_path(device):
    with cg.host_path(False):
        text = cg.explain_convolve(random_array(2**16, np.float32, 8),
                                   random_array(1023, np.float32, 9))
    assert "host_fft" not in text


def test_host_threads_setting_limits_the_transform_threads(monkeypatch):
    from clarray_gemm import settings
    monkeypatch.setenv("CLARRAY_GEMM_HOST_THREADS", "1")
    settings.reload()
    try:
        assert convolve_host._cores() == 1
    finally:
        monkeypatch.delenv("CLARRAY_GEMM_HOST_THREADS")
        settings.reload()
    assert convolve_host._cores() >= 1 and settings.host_threads() is None


def test_numpys_small_mask_loop_keeps_numpy_signals_on_the_host(host_path, monkeypatch):
    """NumPy's loop for float masks of up to 11 taps costs about a third per multiply-add of its
    general one, and a NumPy signal would be uploaded before a kernel could run: such calls
    count N*m at SMALL_CORRELATE_COST against the crossover; a device signal keeps N*m."""
    from clarray_gemm.ops import convolve as convolve_ops
    monkeypatch.setattr(convolve_ops, "crossover", lambda device, family, dtype: (1e6, False))
    plans = type(convolve_ops._CALL_PLANS)("t")
    monkeypatch.setattr(convolve_ops, "_CALL_PLANS", plans)
    monkeypatch.setattr(convolve_ops, "_find_call_plan", plans.find)
    a = random_array(2**19, np.float32, 11)                # N*m = 2.1e6 with m = 4
    v = random_array(4, np.float32, 12)                    # (3 taps: host_taps)
    text = cg.explain_convolve(a, v)
    assert text.splitlines()[-1].startswith("host:") and "counted at 0.3" in text, text
    assert "host:" not in cg.explain_convolve(cg.asarray(a), v)               # device signal
    assert "host:" not in cg.explain_convolve(a, random_array(12, np.float32, 13))  # 12 taps
    assert "host:" not in cg.explain_convolve(a.astype(np.int32), v.astype(np.int32))
    assert "host:" in cg.explain_convolve(a[:2**18].astype(np.float64),
                                          random_array(11, np.float64, 14))
    # the call: NumPy's own result, bit for bit; the repeated-call cache keys the operand kind
    np.testing.assert_array_equal(np.asarray(cg.convolve(a, v)), np.convolve(a, v))
    assert_matches(np.asarray(cg.convolve(cg.asarray(a), v)),
                   np.convolve(a.astype(np.float64), v))
    kinds = {"numpy" if key[2][0] is np.ndarray else "device":
             isinstance(entry, convolve_ops._NumPyLoopPlan) for key, entry in plans.items()}
    assert kinds == {"numpy": True, "device": False}, kinds


def test_repeated_host_fft_calls_run_their_cached_plan(host_path, monkeypatch):
    """A repeated call that the host FFT runs takes its cached entry: no plan is built or
    chosen again, in both operand orders of np.convolve and np.correlate."""
    from clarray_gemm.ops import convolve as convolve_module
    a, v = random_array(4096, np.float32, 21), random_array(1023, np.float32, 22)
    a[100] = np.inf  # the FFT path's non-finite handling runs from the entry too
    assert "\nhost_fft: " in cg.explain_convolve(a, v)
    calls = [(np.convolve, a, v, "full"), (np.convolve, v, a, "same"),
             (np.correlate, a, v, "valid"), (np.correlate, v, a, "full")]
    for func, x, y, mode in calls:  # the first call of each makes its entry
        func(x, cg.asarray(y), mode)
    built = []
    real = convolve_module._Plan
    monkeypatch.setattr(convolve_module, "_Plan", lambda *args: built.append(args) or real(*args))
    for func, x, y, mode in calls:
        with np.errstate(all="ignore"):
            want = func(x.astype(np.float64), y.astype(np.float64), mode)
        got = np.asarray(func(x, cg.asarray(y), mode))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        assert_matches(got[finite], want[finite])
    assert built == []


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(4096, 3), (3, 4096), (7, 7), (1, 5), (33, 1)])
def test_repeated_calls_numpys_loop_answers_are_numpys(host_path, mode, n, m):
    """Calls NumPy's own loop answers, repeated (the second takes the cached plan's direct core
    call, the longer operand first): np.convolve's and np.correlate's bits and dtype, as device
    arrays, NumPy and device operands alike."""
    for dtype in (np.float32, np.float64, np.int32):
        a, v = random_array(n, dtype, n), random_array(m, dtype, m + 1)
        for x, w in ((a, v), (cg.asarray(a), cg.asarray(v))):
            for _ in range(3):
                for ours, theirs in ((cg.convolve, np.convolve), (cg.correlate, np.correlate)):
                    got, want = ours(x, w, mode), theirs(a, v, mode)
                    assert isinstance(got, cg.DeviceArray) and got.dtype == want.dtype
                    assert np.asarray(got).tobytes() == want.tobytes(), (ours, dtype)
