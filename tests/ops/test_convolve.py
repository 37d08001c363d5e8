"""np.convolve / np.correlate on the device: every kernel forced against NumPy, NumPy's semantics
(modes, swapping, conjugation, dtypes, errors) and dispatch through ``__array_function__``."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import conv as conv_kernels
from conftest import assert_matches, random_array, run_or_refusal

KERNELS = cg.kernels("convolve")
DIRECT = [k for k in KERNELS if not k.startswith("fft")]
FAST = ("vec", "fft")
LENGTHS = (1, 2, 7, 100, 1000, 65537)
MASKS = (1, 2, 3, 5, 63, 64, "longer")
MODES = ("full", "same", "valid")


def _mask_len(m, n: int) -> int:
    return n + 5 if m == "longer" else m


# -- references --------------------------------------------------------------------------------
def _offset(op: str, la: int, lv: int, mode: str) -> tuple[int, int]:
    """(start, length) of NumPy's ``mode`` result inside the full result."""
    n, m = max(la, lv), min(la, lv)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return m - 1, n - m + 1
    inverted = op == "correlate" and la < lv
    return (m // 2 if inverted else (m - 1) // 2), n


def _fft_full(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    size = len(a) + len(w) - 1
    P = 1 << (size - 1).bit_length()
    return np.fft.irfft(np.fft.rfft(a, P) * np.fft.rfft(w, P), P)[:size]


def fast_reference(op: str, a: np.ndarray, v: np.ndarray, mode: str) -> np.ndarray:
    """NumPy's answer computed through a float64 FFT (NumPy's own loops take seconds for
    65537 x 65537); integer results are rounded, exact for the test data's magnitudes."""
    w = v if op == "convolve" else v[::-1]
    full = _fft_full(a.astype(np.float64), w.astype(np.float64))
    start, length = _offset(op, len(a), len(v), mode)
    out = full[start:start + length]
    if a.dtype.kind in "iu":
        return np.rint(out).astype(np.int64).astype(np.result_type(a, v))
    return out


_REFS: dict = {}


def reference(op: str, a: np.ndarray, v: np.ndarray, mode: str, key) -> np.ndarray:
    """NumPy's result (float inputs in float64), cached across kernels."""
    if key not in _REFS:
        if len(a) * len(v) > 2_000_000:
            _REFS[key] = fast_reference(op, a, v, mode)
        else:
            func = getattr(np, op)
            if a.dtype.kind == "f":
                _REFS[key] = func(a.astype(np.float64), v.astype(np.float64), mode)
            else:
                _REFS[key] = func(a, v, mode)
    return _REFS[key]


@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("la,lv", [(1, 1), (7, 2), (2, 7), (100, 64), (64, 100), (63, 100),
                                   (100, 63), (5, 5)])
def test_fast_reference_is_numpy(op, la, lv):
    """The FFT reference used for the largest cases agrees with NumPy's own function."""
    a, v = random_array(la, np.int32, 1), random_array(lv, np.int32, 2)
    for mode in MODES:
        np.testing.assert_array_equal(fast_reference(op, a, v, mode), getattr(np, op)(a, v, mode))


# -- every kernel against NumPy ----------------------------------------------------------------
def _cases(kernel: str, dtype):
    for n in LENGTHS:
        for m in MASKS:
            for mode in MODES:
                mlen = _mask_len(m, n)
                big = n * mlen > 2_000_000 and mode != "valid"
                if big and kernel not in FAST:
                    continue  # 65537 x 65542 full/same: seconds per call for the scalar kernels
                yield n, mlen, mode


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_matches_numpy(kernel, dtype, device):
    if kernel.startswith("fft") and dtype == np.int32:
        pytest.skip("the FFT paths are for floating dtypes (test_fft_refuses_integers)")
    failures = []
    for n, m, mode in _cases(kernel, dtype):
        a, v = random_array(n, dtype, n), random_array(m, dtype, m + 1)
        ops = ("convolve", "correlate") if n * m <= 2_000_000 or mode == "valid" else ("convolve",)
        for op in ops:
            expected = reference(op, a, v, mode, (op, np.dtype(dtype).str, n, m, mode))
            # The shorter operand is the mask ("const" keeps it in __constant memory).
            try:
                result = run_or_refusal(lambda: getattr(cg, op)(a, v, mode, kernel=kernel),
                                        kernel, min(n, m) * a.itemsize, device)
            except ValueError as exc:
                # fft_block refuses masks longer than its blocks (test_convolve_fft_block.py)
                if kernel == "fft_block" and "needs blocks longer" in str(exc):
                    continue
                raise
            if result is None:
                continue
            assert isinstance(result, cg.DeviceArray)
            try:
                assert result.dtype == np.dtype(dtype)
                assert_matches(result, expected)
            except AssertionError as exc:
                failures.append(f"{op} n={n} m={m} {mode}: {exc}")
    assert not failures, "\n".join(failures[:10])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("kernel", sorted(set(KERNELS) - set(FAST) - {"fft_block"}))
def test_scalar_kernels_on_the_largest_full_and_same_cases(kernel, dtype, device):
    """What test_kernel_matches_numpy leaves to the fast kernels: a long signal (16411) x a
    longer mask in 'full' and 'same' mode (about 2.7e8 multiply-adds per call; the fast
    kernels take 65537, where these scalar loops cost the suite a minute on two cores and
    exercise no other path). fft_block refuses masks longer than its blocks
    (test_convolve_fft_block.py)."""
    n = 16411
    a, v = random_array(n, dtype, n), random_array(n + 5, dtype, n + 6)
    for mode in ("full", "same"):
        result = run_or_refusal(lambda: cg.convolve(a, v, mode, kernel=kernel), kernel,
                                n * a.itemsize, device)
        if result is not None:
            expected = reference("convolve", a, v, mode,
                                 ("convolve", np.dtype(dtype).str, n, n + 5, mode))
            assert_matches(result, expected)


@pytest.mark.parametrize("kernel", ["vec", "fft"])
def test_largest_correlate_both_orders(kernel):
    a, v = random_array(65537, np.float32, 3), random_array(65542, np.float32, 4)
    for mode in MODES:
        for x, y in ((a, v), (v, a)):
            expected = reference("correlate", x, y, mode, ("corr-big", len(x), len(y), mode))
            assert_matches(cg.correlate(x, y, mode, kernel=kernel), expected)


@pytest.mark.parametrize("kernel", KERNELS)
def test_float64(kernel, device):
    if not device.info.fp64:
        pytest.skip("no fp64 on this device")
    a, v = random_array(1000, np.float64, 5), random_array(63, np.float64, 6)
    for mode in MODES:
        assert_matches(cg.convolve(a, v, mode, kernel=kernel), np.convolve(a, v, mode), 1e-12)
        assert_matches(cg.correlate(v, a, mode, kernel=kernel), np.correlate(v, a, mode), 1e-12)


def test_fft_refuses_integers():
    a = np.arange(10, dtype=np.int32)
    with pytest.raises(ValueError, match="floating"):
        cg.convolve(a, a, kernel="fft")


def test_unknown_kernel():
    with pytest.raises(ValueError, match="unknown convolve kernel"):
        cg.convolve([1.0, 2.0], [1.0], kernel="nope")
    with pytest.raises(ValueError, match="unknown convolve kernel"):
        cg.convolve([1j, 2.0], [1.0], kernel="nope")


def test_forced_kernel_refuses_host_dtypes():
    with pytest.raises(ValueError, match="does not fit"):
        cg.correlate(np.ones(5, np.complex64), np.ones(2, np.complex64), kernel="vec")


def test_const_refuses_masks_beyond_constant_memory(device):
    m = device.info.constant_mem_bytes // 4 + 1
    a = np.ones(m + 1, np.float32)
    with pytest.raises(ValueError, match="constant memory"):
        cg.convolve(a, np.ones(m, np.float32), "valid", kernel="const")


@pytest.mark.parametrize("params", [{"VW": 4, "NV": 1}, {"VW": 8, "NV": 2}, {"VW": 2, "NV": 3}])
def test_vec_parameters(params):
    a, v = random_array(1000, np.int32, 7), random_array(37, np.int32, 8)
    for mode in MODES:
        assert_matches(cg.convolve(a, v, mode, kernel="vec", params=params),
                       np.convolve(a, v, mode))


# -- dtypes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("params", [{"WG": 16, "R": 4, "JU": 4, "MC": 8, "GPC": 1},
                                    {"WG": 32, "R": 8, "JU": 8, "MC": 16, "GPC": 2},
                                    {"R": 24, "JU": 8}, {"WG": 128, "R": 16, "MC": 1024},
                                    {"FIXED_M": 0}, {"FIXED_M": 0, "WG": 32, "R": 8, "MC": 16}])
def test_gpu_parameters(params):
    # Tiles walked by few groups (GPC), several mask chunks per tile (MC < m), partial tiles;
    # the mask length compiled in (FIXED_M 1, the default, up to 64 taps) or an argument.
    for n, m in ((1, 1), (300, 7), (1000, 63), (5001, 200)):
        a, v = random_array(n, np.float32, n), random_array(m, np.float32, m)
        for mode in MODES:
            assert_matches(cg.convolve(a, v, mode, kernel="gpu", params=params),
                           np.convolve(a.astype(np.float64), v.astype(np.float64), mode))


def test_gpu_refuses_bad_parameters():
    with pytest.raises(ValueError, match="multiples of 4"):
        cg.convolve(np.ones(10, np.float32), np.ones(3, np.float32), kernel="gpu",
                    params={"R": 6})
    with pytest.raises(ValueError, match="FIXED_M"):
        cg.convolve(np.ones(10, np.float32), np.ones(3, np.float32), kernel="gpu",
                    params={"FIXED_M": 2})


def test_gpu_ranks_first_only_on_gpus(device):
    text = cg.explain_convolve(np.zeros(2**20, np.float32), np.zeros(63, np.float32))
    on_gpu = device.info.is_gpu and not device.info.is_simulator
    assert ("kernel: gpu" in text) == on_gpu
    # Long masks: on GPUs the blocked FFT in local memory (from its measured crossovers), on
    # CPU devices the whole-signal FFT.
    text = cg.explain_convolve(np.zeros(2**24, np.float32), np.zeros(8191, np.float32))
    assert ("kernel: fft_block" if on_gpu else "kernel: fft (") in text, text


@pytest.mark.parametrize("dt_a,dt_v", [(np.int32, np.int32), (np.int64, np.int64),
                                       (np.uint32, np.uint32), (np.uint64, np.int8),
                                       (np.int8, np.int8), (np.uint8, np.uint16),
                                       (np.int16, np.int16), (np.bool_, np.bool_),
                                       (np.int8, np.float32), (np.int32, np.float64),
                                       (np.float16, np.float16), (np.uint64, np.int64)])
def test_dtype_promotion_and_exact_integers(dt_a, dt_v):
    a, v = random_array(300, dt_a, 9), random_array(20, dt_v, 10)
    for op in ("convolve", "correlate"):
        expected = getattr(np, op)(a, v, "full")
        result = getattr(cg, op)(a, v, "full")
        assert result.dtype == expected.dtype
        rtol = 1e-3 if expected.dtype == np.float16 else 1e-5
        assert_matches(result, expected, rtol)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.int8, np.int16])
@pytest.mark.parametrize("kernel", DIRECT)
def test_integer_overflow_wraps_like_numpy(dtype, kernel):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(11)
    a = rng.integers(info.max // 2, info.max, size=200, endpoint=True).astype(dtype)
    v = rng.integers(info.max // 2, info.max, size=9, endpoint=True).astype(dtype)
    with np.errstate(over="ignore"):
        for mode in MODES:
            np.testing.assert_array_equal(np.asarray(cg.convolve(a, v, mode, kernel=kernel)),
                                          np.convolve(a, v, mode))


def test_complex_goes_through_the_host():
    a = random_array(50, np.complex64, 12)
    v = random_array(7, np.complex128, 13)
    for op in ("convolve", "correlate"):
        for x, y in ((a, v), (v, a)):
            for mode in MODES:
                result = getattr(cg, op)(x, y, mode)
                expected = getattr(np, op)(x, y, mode)
                assert isinstance(result, cg.DeviceArray)
                assert result.dtype == expected.dtype
                np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5)
    assert "host" in cg.explain_convolve(a, v)


def test_correlate_real_and_complex_mixed_conjugates_v():
    a = random_array(30, np.float64, 14)
    v = random_array(5, np.complex128, 15)
    np.testing.assert_allclose(np.asarray(np.correlate(cg.asarray(a), v, "full")),
                               np.correlate(a, v, "full"))
    np.testing.assert_allclose(np.asarray(np.correlate(cg.asarray(v), a, "same")),
                               np.correlate(v, a, "same"))


# -- semantics ---------------------------------------------------------------------------------
@pytest.mark.parametrize("la,lv", [(10, 3), (3, 10), (4, 6), (6, 4), (5, 5), (1, 8), (8, 1)])
@pytest.mark.parametrize("mode", MODES + (0, 1, 2))
def test_operand_order_and_modes(la, lv, mode):
    a, v = random_array(la, np.int32, 16), random_array(lv, np.int32, 17)
    for op in ("convolve", "correlate"):
        func = getattr(np, op)
        expected = func(a, v, mode)
        for x, y in ((cg.asarray(a), v), (a, cg.asarray(v)), (cg.asarray(a), cg.asarray(v))):
            result = func(x, y, mode)
            assert isinstance(result, cg.DeviceArray)
            np.testing.assert_array_equal(np.asarray(result), expected)


def test_default_modes():
    a, v = random_array(20, np.float32, 18), random_array(4, np.float32, 19)
    assert cg.convolve(a, v).shape == np.convolve(a, v).shape == (23,)
    assert cg.correlate(a, v).shape == np.correlate(a, v).shape == (17,)


def test_lists_and_scalars():
    assert_matches(cg.convolve([1, 2, 3], [0, 1, 0.5]), np.convolve([1, 2, 3], [0, 1, 0.5]))
    assert_matches(cg.convolve(5, [1, 2]), np.convolve(5, [1, 2]))
    assert_matches(np.convolve(cg.asarray(np.float32(2)), [1.0, 2.0]),
                   np.convolve(np.float32(2), [1.0, 2.0]))


def _numpy_error(func, *args):
    try:
        func(*args)
    except Exception as exc:  # noqa: BLE001 - we compare whatever NumPy raises
        return type(exc), str(exc)
    raise AssertionError(f"NumPy accepted {args!r}")


@pytest.mark.parametrize("args", [
    ([], [1.0]), ([1.0], []), ([], []),
    (np.zeros((2, 2)), np.zeros(2)), (np.zeros(2), np.zeros((2, 2))),
    (np.zeros((1, 2)), np.zeros(2)), (np.zeros((0, 2)), np.zeros(2)),
    (np.float64(3), np.zeros(2)), (np.zeros(2), np.array(3.0)),
    (np.zeros(3), np.zeros(2), "x"), (np.zeros(3), np.zeros(2), "V"),
    (np.zeros(3), np.zeros(2), "sa"), (np.zeros(3), np.zeros(2), 5),
    (np.zeros(3), np.zeros(2), None), (np.zeros(3), np.zeros(2), True),
    (np.zeros(3), np.zeros(2), 2.0), ([], [1.0], "x"), (np.zeros((2, 2)), np.zeros(2), "x"),
])
@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("on_device", [False, True])
def test_errors_are_numpys(op, args, on_device):
    func = getattr(np, op)
    try:
        func(*args)
    except Exception:  # noqa: BLE001
        pass
    else:
        pytest.skip("NumPy accepts this call")
    kind, message = _numpy_error(func, *args)
    dev_args = list(args)
    if on_device:
        dev_args[0] = cg.asarray(np.asarray(args[0], dtype=np.float64))
        dev_args[1] = cg.asarray(np.asarray(args[1], dtype=np.float64))
        calls = (lambda: func(*dev_args),)
    else:
        calls = (lambda: getattr(cg, op)(*dev_args),)
    for call in calls:
        with pytest.raises(kind) as info:
            call()
        assert str(info.value) == message


def test_inputs_are_not_modified():
    a = random_array(500, np.float32, 20)
    v = random_array(30, np.float32, 21)
    a0, v0 = a.copy(), v.copy()
    xa, xv = cg.asarray(a), cg.asarray(v)
    for kernel in KERNELS:
        for op in ("convolve", "correlate"):
            getattr(cg, op)(xa, xv, "full", kernel=kernel)
            getattr(cg, op)(a, v, "same", kernel=kernel)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(v, v0)
    np.testing.assert_array_equal(np.asarray(xa), a0)
    np.testing.assert_array_equal(np.asarray(xv), v0)


def test_strided_and_reversed_device_inputs():
    base = random_array(400, np.float32, 22)
    x = cg.asarray(base)
    m = cg.asarray(random_array(40, np.float32, 23))
    cases = [(x[::2], m), (x[::-1], m[::-1]), (x[10:300], m[3:20:3]), (m[::-1], x[5:])]
    for a, v in cases:
        for op in ("convolve", "correlate"):
            for mode in MODES:
                expected = getattr(np, op)(np.asarray(a).astype(np.float64),
                                           np.asarray(v).astype(np.float64), mode)
                assert_matches(getattr(np, op)(a, v, mode), expected)


def _direct_choice() -> str:
    """The direct kernel the catalogue picks for long signals on the default device."""
    info = cg.default_device().info
    return "gpu" if info.is_gpu and not info.is_simulator and not info.local_mem_is_global \
        else "vec"


def test_numpy_call_runs_on_the_device():
    x = cg.asarray(random_array(5000, np.float32, 24))
    v = random_array(63, np.float32, 25)
    before = sum(conv_kernels.launch_counts.values())
    result = np.convolve(x, v)
    assert sum(conv_kernels.launch_counts.values()) == before + 1
    assert isinstance(result, cg.DeviceArray)
    before = conv_kernels.launch_counts.copy()
    np.correlate(v, x, "same")
    assert sum((conv_kernels.launch_counts - before).values()) == 1
    assert f"kernel: {_direct_choice()}" in cg.explain_convolve(x, v)


def test_explain_names_the_choice():
    text = cg.explain_convolve(np.zeros(2**20, np.float32), np.zeros(63, np.float32))
    assert f"kernel: {_direct_choice()}" in text and "why:" in text and "parameters:" in text
    text = cg.explain_convolve(np.zeros(2**20, np.float32), np.zeros(2**14, np.float32))
    assert "kernel: fft" in text
    text = cg.explain_convolve(np.zeros(2**20, np.int32), np.zeros(2**14, np.int32))
    assert "kernel: fft" not in text
    text = cg.explain_convolve(np.zeros(10), np.zeros(3), kernel="tiled", op="correlate")
    assert "kernel: tiled" in text and "forced" in text


def test_kernels_lists_the_catalogue():
    assert set(cg.kernels("convolve")) == {"basic", "const", "tiled", "cached", "vec", "gpu",
                                           "fft", "fft_block"}


def test_programs_are_built_once_per_defines():
    from clarray_gemm.kernels.programs import build_count
    a = random_array(1000, np.float32, 26)
    # fft_block's transform length (a define) follows both lengths: one block length here
    params = {k: ({"P": 256} if k == "fft_block" else None) for k in KERNELS}
    for kernel in KERNELS:
        # gpu's mask chunk (a define) follows the mask (64, then 256 taps), and masks of up to
        # 64 taps are compiled in (FIXED_M): one build per mask length there
        for m in (3, 10, 64, 100):
            cg.convolve(a, a[:m], kernel=kernel, params=params[kernel])
    before = build_count()
    for n, m in ((1000, 10), (777, 64), (65, 3), (3000, 100)):
        for kernel in KERNELS:
            cg.convolve(random_array(n, np.float32, 27), random_array(m, np.float32, 28),
                        kernel=kernel, params=params[kernel])
    assert build_count() == before
