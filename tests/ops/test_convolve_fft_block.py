"""The block FFT convolution (``fft_block``): forced by name against NumPy on every mode, odd
and prime lengths, masks far shorter than a block and as long as one (one new output per block),
float32 and float64, NumPy's NaN/inf pattern bit for bit, every output written, its block-length
choice, its rank (never chosen on CPU drivers), and Oclgrind's checks at small sizes.

Error bound: float32 results within 1e-5 of NumPy's float64 result in relative 2-norm (measured
up to 7e-7 on PoCL and 6e-7 on the H100 at P = 16384), float64 within 1e-12.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import conv
from clarray_gemm.kernels.conv import ConvProblem
from clarray_gemm.kernels.conv_fft_block import NSPECIAL, VARIANT, block_length
from conftest import rel_error
from test_convolve_oclgrind import _run_clean
from test_convolve_specials import assert_same_specials

MODES = ("full", "same", "valid")
# (n, m, forced P or 0): odd, prime and tiny lengths; masks of a few taps in blocks of 16 and
# 256; masks one shorter than, and as long as, a block (P - m + 1 = 2 and 1 new outputs).
CASES = ((1, 1, 0), (7, 1, 0), (7, 7, 0), (31, 7, 16), (33, 31, 0), (257, 33, 0),
         (1009, 3, 16), (1009, 257, 0), (4099, 255, 256), (4099, 256, 256), (2003, 16, 16),
         (33, 257, 0), (257, 1009, 0), (4099, 1013, 2048))


def _ref(op: str, a: np.ndarray, v: np.ndarray, mode: str) -> np.ndarray:
    return getattr(np, op)(a.astype(np.float64), v.astype(np.float64), mode)


def _forced(op, a, v, mode, P=0, **params):
    return getattr(cg, op)(a, v, mode, kernel="fft_block", params={"P": P, **params})


@pytest.mark.parametrize("dtype, bound", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_matches_numpy_on_every_mode(dtype, bound, device):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64 on this device")
    rng = np.random.default_rng(0)
    failures = []
    for n, m, P in CASES:
        a = rng.standard_normal(n).astype(dtype)
        v = rng.standard_normal(m).astype(dtype)
        for op in ("convolve", "correlate"):
            for mode in MODES:
                got = _forced(op, a, v, mode, P)
                assert isinstance(got, cg.DeviceArray) and got.dtype == dtype
                want = _ref(op, a, v, mode)
                err = rel_error(got, want)
                if got.shape != want.shape or not err < bound:
                    failures.append(f"{op} n={n} m={m} P={P} {mode}: {got.shape} err {err:.1e}")
    assert not failures, "\n".join(failures)


def test_long_signal_in_many_block_pairs(device):
    """Hundreds of work-groups, a mask of a few hundred taps: the default block length, and a
    forced one whose blocks hold two new outputs each."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(200_003).astype(np.float32)
    v = rng.standard_normal(300).astype(np.float32)
    assert rel_error(_forced("convolve", a, v, "full"), _ref("convolve", a, v, "full")) < 1e-5
    b = a[:5001]
    assert rel_error(_forced("correlate", b, v, "same", 512), _ref("correlate", b, v, "same")
                     ) < 1e-5
    v = v[:255]
    assert rel_error(_forced("convolve", b, v, "valid", 256), _ref("convolve", b, v, "valid")
                     ) < 1e-5


def test_thirty_two_points_per_work_item(device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(3001).astype(np.float32)
    v = rng.standard_normal(100).astype(np.float32)
    for P in (32, 512):
        got = _forced("convolve", a, v[:min(P, 100)], "full", P, NPT=32)
        assert rel_error(got, _ref("convolve", a, v[:min(P, 100)], "full")) < 1e-5


def _numpy(op, a, v, mode):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(np, op)(a, v, mode)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_pattern_is_numpys(dtype, device):
    """Specials at block edges (P = 64, 64 - m + 1 outputs per block), in both blocks of a pair,
    more than NSPECIAL in one pair, inf and -inf meeting, and in the mask."""
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64 on this device")
    rng = np.random.default_rng(3)
    n, m, P = 700, 23, 64
    B = P - m + 1
    places = [[0], [n - 1], [B - 1], [B], [2 * B - 1], [2 * B + m // 2], [n // 2, n // 2 + 1],
              list(rng.choice(n, NSPECIAL + 9, replace=False)), list(range(300, 300 + 40))]
    cases = []
    for where in places:
        for value in (np.nan, np.inf, -np.inf):
            a = rng.standard_normal(n).astype(dtype)
            a[where] = value
            cases.append((f"{value} at {where[:3]}", a, rng.standard_normal(m).astype(dtype)))
    a = rng.standard_normal(n).astype(dtype)
    a[100], a[104] = np.inf, -np.inf
    cases.append(("inf and -inf", a, rng.standard_normal(m).astype(dtype)))
    for place in (0, m // 2, m - 1):
        v = rng.standard_normal(m).astype(dtype)
        v[place] = np.inf
        cases.append((f"inf in the mask at {place}", rng.standard_normal(n).astype(dtype), v))
    for what, a, v in cases:
        for op in ("convolve", "correlate"):
            for mode in MODES:
                for P_ in (P, 0):
                    assert_same_specials(_forced(op, a, v, mode, P_), _numpy(op, a, v, mode),
                                         f"{op} {mode} P={P_} {what}")


def test_a_call_after_specials_is_untouched(device):
    """The mask flag and the specials list are per call: finite data right after NaN and a
    non-finite mask gives the FFT's result."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal(3000).astype(np.float32)
    v = rng.standard_normal(100).astype(np.float32)
    bad_a, bad_v = a.copy(), v.copy()
    bad_a[5], bad_v[7] = np.nan, np.inf
    assert np.isnan(np.asarray(_forced("convolve", bad_a, v, "full"))).any()
    assert not np.isfinite(np.asarray(_forced("convolve", a, bad_v, "full"))).all()
    got = _forced("convolve", a, v, "full")
    assert np.isfinite(np.asarray(got)).all()
    assert rel_error(got, _ref("convolve", a, v, "full")) < 1e-5


@pytest.mark.parametrize("P", [0, 16, 128])
def test_every_output_written_at_an_offset(P, device):
    """Through the catalogue on buffers: the signal 5 elements into its buffer, the output
    poisoned with NaN first; each mode's (pad, length)."""
    rng = np.random.default_rng(5)
    for n, m in ((1, 1), (37, 9), (1000, 16), (999, 101)):
        if P and P < m:
            continue
        xh = rng.standard_normal(n + 5).astype(np.float32)
        wh = rng.standard_normal(m).astype(np.float32)
        x, w = cg.asarray(xh, device=device), cg.asarray(wh, device=device)
        for pad, length in ((m - 1, n + m - 1), (m // 2, n), (0, n - m + 1)):
            out = cg.asarray(np.full(length, np.nan, np.float32), device=device)
            problem = ConvProblem(n, m, pad, length, np.dtype(np.float32),
                                  x.storage.kernel_buffer(), 5, w.storage.kernel_buffer(),
                                  out.storage.kernel_buffer(write=True))
            conv.run(device, problem, "fft_block", {"P": P})
            xs = xh[5:].astype(np.float64)
            want = np.array([xs[max(0, k - pad):max(0, min(n, k - pad + m))]
                             @ wh.astype(np.float64)[max(0, pad - k):max(0, min(m, n - k + pad))]
                             for k in range(length)])
            got = np.asarray(out)
            assert np.isfinite(got).all(), (n, m, pad)
            assert rel_error(got, want) < 1e-5, (n, m, pad)


def test_refusals(device):
    a = np.arange(100, dtype=np.int32)
    with pytest.raises(ValueError, match="floating"):
        cg.convolve(a, a[:10], kernel="fft_block")
    x = np.ones(100, np.float32)
    with pytest.raises(ValueError, match="power of two"):
        cg.convolve(x, x[:5], kernel="fft_block", params={"P": 48})
    with pytest.raises(ValueError, match="shorter than the mask"):
        cg.convolve(x, x[:40], kernel="fft_block", params={"P": 32})
    with pytest.raises(ValueError, match="allows blocks up to"):
        cg.convolve(x, x[:5], kernel="fft_block", params={"P": 1 << 20})
    with pytest.raises(ValueError, match="NPT"):
        cg.convolve(x, x[:5], kernel="fft_block", params={"NPT": 8})
    largest = max(P for P in (2**k for k in range(4, 17))
                  if not isinstance(block_length(_problem(P + 10, P, np.float32), device.info,
                                                 {"NPT": 16, "P": P}), str))
    long_mask = np.ones(largest + 1, np.float32)
    with pytest.raises(ValueError, match="needs blocks longer"):
        cg.convolve(np.ones(largest + 5, np.float32), long_mask, kernel="fft_block")


def _problem(n: int, m: int, dtype, mode: str = "full") -> ConvProblem:
    pad, length = {"full": (m - 1, n + m - 1), "same": (m // 2, n), "valid": (0, n - m + 1)}[mode]
    return ConvProblem(n, m, pad, length, np.dtype(dtype), None, 0, None, None)


def _h100(info):
    """The H100's figures (as its OpenCL driver reports them, plus the static local memory of
    Hopper) on this device's DeviceInfo."""
    return dataclasses.replace(info, type="GPU", name="NVIDIA H100 80GB HBM3", vendor="NVIDIA "
                               "Corporation", compute_units=132, max_work_group_size=1024,
                               local_mem_bytes=48 * 1024, local_mem_is_global=False,
                               is_simulator=False, compute_capability=(9, 0))


def test_block_length_on_the_h100(device):
    info = _h100(device.info)
    assert info.static_local_bytes == 227 * 1024
    params = dict(VARIANT.defaults)
    choose = lambda n, m, dt=np.float32: block_length(_problem(n, m, dt), info, params)  # noqa
    assert choose(2**24, 8191) == 16384 and choose(2**24, 4095) == 16384
    assert choose(2**24, 255) == 2048 and choose(2**24, 1023) == 16384
    assert choose(2**20, 4095) == 8192 and choose(2**20, 1023) == 2048
    assert choose(4096, 2047) == 4096 and choose(4096, 4095) == 8192
    assert choose(2**20, 4095, np.float64) == 8192          # 16384 double2 do not fit
    assert "needs blocks longer" in choose(2**20, 8193, np.float64)
    for n in (1, 100, 2**16, 2**24):
        for m in (1, 3, 100, 1000, 8000, 16384):
            P = choose(max(n, m), m)
            assert P >= m and P & (P - 1) == 0 and 16 <= P <= 16384, (n, m, P)


def test_rank_picks_it_for_long_masks_on_gpus_only(device):
    h100 = _h100(device.info)
    rank = VARIANT.rank
    gpu = conv.CATALOGUE["gpu"].rank
    for n, m in ((4096, 1023), (2**16, 4095), (2**20, 8191), (2**24, 1023), (2**24, 255)):
        assert rank(_problem(n, m, np.float32), h100) > gpu(_problem(n, m, np.float32), h100)
    for n, m in ((4096, 255), (2**20, 511), (2**24, 63), (2**16, 1023 // 4)):
        assert rank(_problem(n, m, np.float32), h100) < gpu(_problem(n, m, np.float32), h100)
    assert rank(_problem(2**20, 4095, np.int32), h100) <= 0
    sim = dataclasses.replace(h100, is_simulator=True)
    pocl = dataclasses.replace(h100, type="CPU", local_mem_is_global=True)
    for info in (pocl, sim):
        assert rank(_problem(2**20, 4095, np.float32), info) <= 0
    text = cg.explain_convolve(np.zeros(2**16, np.float32), np.zeros(4095, np.float32))
    info = device.info
    real_gpu = info.is_gpu and not info.is_simulator and not info.local_mem_is_global
    assert ("kernel: fft_block" in text) == real_gpu, text   # never chosen on CPU drivers
    assert "kernel: fft_block" in cg.explain_convolve(np.zeros(100, np.float32),
                                                      np.zeros(5, np.float32), "same",
                                                      kernel="fft_block")


@pytest.mark.slow
@pytest.mark.parametrize("params, shapes, values", [
    ('{"P": 16}', ((1, 1), (7, 4), (37, 9)), "random"),
    ('{"P": 64}', ((150, 20), (37, 36)), "random"),
    ('{"P": 32}', ((37, 9), (150, 20)), "specials"),
    ('{"P": 32, "NPT": 32}', ((37, 9),), "random"),
], ids=["P16", "P64", "specials", "NPT32"])
def test_clean_under_oclgrind(params, shapes, values, oclgrind_env):
    # Blocks of 16 to 64 points: several block pairs per call, a pass of each radix (16 = one
    # radix-16 pass, 32 = 16 x 2, 64 = 16 x 4); NaN in the signal and inf in the mask.
    _run_clean("fft_block", shapes, oclgrind_env, params, values)
