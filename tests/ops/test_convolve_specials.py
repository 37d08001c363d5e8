"""NaN and infinities through every convolution kernel: the pattern of NumPy's direct loops.

NumPy sums, for each output, the products of the inputs its window covers with the mask values
that meet them, so a NaN spoils only the outputs whose window covers it, ``inf * 0`` is NaN,
``inf + -inf`` is NaN, and ghost cells past the signal's ends are never multiplied (a non-finite
mask value at an edge stays out of the edge outputs it does not reach). Every kernel, forced by
name (the host strategies ``host`` and ``host_fft`` too), must give the same NaN and +-inf
positions; finite outputs match within rounding.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops.convolve import HOST_STRATEGIES
from conftest import run_or_refusal

KERNELS = list(cg.kernels("convolve")) + list(HOST_STRATEGIES)
MODES = ("full", "same", "valid")
# (n, m): short and long masks, a mask longer than gpu's mask chunk (MC = 64 for m <= 64, 256
# beyond) with a remainder of taps past a multiple of JU, v longer than a, equal lengths.
SHAPES = ((100, 7), (301, 63), (1000, 203), (40, 57), (50, 50))
PLACES = ("start", "middle", "end")


def _where(length: int, place: str) -> int:
    return {"start": 0, "middle": length // 2, "end": length - 1}[place]


def _numpy(op: str, a: np.ndarray, v: np.ndarray, mode: str) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, op)(a, v, mode)


def assert_same_specials(got, want, what: str = "") -> None:
    """NaN, +inf and -inf at the same positions; finite values within rounding."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, what
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"NaN {what}")
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want), err_msg=f"+inf {what}")
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want), err_msg=f"-inf {what}")
    finite = np.isfinite(want)
    scale = max(float(np.abs(want[finite]).max(initial=0.0)), 1.0)
    tol = 1e-4 if want.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got[finite], want[finite], rtol=tol, atol=tol * scale,
                               err_msg=what)


def _cases(dtype):
    rng = np.random.default_rng(7)
    for n, m in SHAPES:
        for value in (np.nan, np.inf, -np.inf):
            for target in ("signal", "mask"):
                for place in PLACES:
                    a = rng.standard_normal(n).astype(dtype)
                    v = rng.standard_normal(m).astype(dtype)
                    (a if target == "signal" else v)[_where(n if target == "signal" else m,
                                                            place)] = value
                    yield f"n={n} m={m} {value} in {target} at {place}", a, v
        # inf and -inf meeting in one window (NaN there), a zero mask tap meeting an inf
        a = rng.standard_normal(n).astype(dtype)
        v = rng.standard_normal(m).astype(dtype)
        a[n // 3], a[min(n - 1, n // 3 + 2)] = np.inf, -np.inf
        v[m // 2] = 0
        yield f"n={n} m={m} inf and -inf, zero tap", a, v
        # more non-finite values than the FFT path records one by one, and a run of them
        a = rng.standard_normal(n).astype(dtype)
        a[rng.choice(n, size=min(n, 40), replace=False)] = np.nan
        yield f"n={n} m={m} 40 NaN", a, v
        a = rng.standard_normal(n).astype(dtype)
        a[n // 2:n // 2 + 5] = np.inf
        yield f"n={n} m={m} a run of inf", a, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_gives_numpys_nan_and_inf_pattern(kernel, dtype, device):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64 on this device")
    failures = []
    for what, a, v in _cases(dtype):
        for op in ("convolve", "correlate"):
            for mode in MODES:
                want = _numpy(op, a, v, mode)
                got = run_or_refusal(lambda: getattr(cg, op)(a, v, mode, kernel=kernel), kernel,
                                     min(a.size, v.size) * a.itemsize, device)
                if got is None:
                    continue
                try:
                    assert_same_specials(got, want, f"{op} {mode} {what}")
                except AssertionError as exc:
                    failures.append(str(exc).splitlines()[0] + f" ({op} {mode} {what})")
    assert not failures, f"{len(failures)} cases differ:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("params", [{"WG": 16, "R": 4, "JU": 4, "MC": 8, "GPC": 1},
                                    {"WG": 32, "R": 8, "JU": 8, "MC": 16}])
def test_gpu_kernel_specials_with_chunks_and_walking_groups(params):
    """gpu with several mask chunks per tile, a tap remainder per chunk and groups walking
    tiles (GPC): the edge check runs once per group, the remainder skips padding taps."""
    rng = np.random.default_rng(3)
    for n, m in ((500, 37), (2000, 61), (64, 13)):
        for place in ("start", "middle", "end"):
            a = rng.standard_normal(n).astype(np.float32)
            v = rng.standard_normal(m).astype(np.float32)
            a[_where(n, place)] = np.nan
            v[_where(m, place)] = np.inf
            for x, y in ((a, rng.standard_normal(m).astype(np.float32)),
                         (rng.standard_normal(n).astype(np.float32), v)):
                for mode in MODES:
                    assert_same_specials(cg.convolve(x, y, mode, kernel="gpu", params=params),
                                         _numpy("convolve", x, y, mode), f"{n} {m} {mode}")


def test_fft_path_on_finite_data_is_untouched_by_the_check():
    """The check costs nothing in accuracy: finite data gives the FFT's result (within the
    float32 bound), also right after a call with NaN reused the status buffer."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal(5000).astype(np.float32)
    v = rng.standard_normal(1500).astype(np.float32)
    bad = a.copy()
    bad[10] = np.nan
    assert np.isnan(np.asarray(cg.convolve(bad, v, kernel="fft"))).any()
    got = np.asarray(cg.convolve(a, v, kernel="fft"))
    want = np.convolve(a.astype(np.float64), v.astype(np.float64))
    assert np.isfinite(got).all()
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5
