"""Host fallbacks (NumPy functions with no device implementation) give device arrays on the
operands' device, so the code after them stays on the device; scalars, host objects and the
caller's own arrays stay NumPy's; ``CLARRAY_GEMM_FALLBACK_RESULTS=host`` gives NumPy's objects."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm import settings
from conftest import assert_matches, random_array


@pytest.fixture(autouse=True)
def counted():
    cg.reset_host_calls()
    yield
    cg.reset_host_calls()


@pytest.fixture
def host_results(monkeypatch):
    """``CLARRAY_GEMM_FALLBACK_RESULTS=host`` for one test (settings read again around it)."""
    monkeypatch.setenv("CLARRAY_GEMM_FALLBACK_RESULTS", "host")
    settings.reload()
    yield
    monkeypatch.undo()
    settings.reload()


def _symmetric(n: int = 6, seed: int = 1) -> np.ndarray:
    a = random_array((n, n), np.float64, seed)
    return a + a.T + n * np.eye(n)


def _parts(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _assert_same_values(got, want) -> None:
    """Device arrays whose values are NumPy's: floats by allclose, integers exactly."""
    got, want = _parts(got), _parts(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, cg.DeviceArray), type(g)
        host, w = np.asarray(g), np.asarray(w)
        assert host.shape == w.shape and host.dtype == w.dtype, (host.shape, host.dtype, w.dtype)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(host, w)
        else:
            np.testing.assert_allclose(host, w, rtol=1e-12, atol=1e-12)


_S = _symmetric()
_INTS = np.array([4, 1, 3, 4, 1, 1, 7, 0], np.int64)
CASES = {
    "eigh": (lambda m: np.linalg.eigh(m), _S, "eigh"),
    "svd": (lambda m: np.linalg.svd(m), _S, "svd"),
    "pinv": (lambda m: np.linalg.pinv(m), _S, "pinv"),
    "histogram2d": (lambda m: np.histogram2d(m[0], m[1], bins=3), _S, "histogram2d"),
    "gradient": (lambda m: np.gradient(m, axis=1), _S, "gradient"),
    "apply_along_axis": (lambda m: np.apply_along_axis(np.sum, 0, m), _S, "apply_along_axis"),
    "unique rows": (lambda m: np.unique(m.reshape(4, 2), axis=0, return_counts=True), _INTS,
                    "unique"),
    "polyfit": (lambda m: np.polyfit(m[0], m[1], 2), _S, "polyfit"),
    "unwrap": (lambda m: np.unwrap(m, axis=1), _S, "unwrap"),
    "percentile": (lambda m: np.percentile(m, [10, 50, 90], axis=0, method="inverted_cdf",
                                           weights=np.ones(m.shape[0])), _S, "percentile"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fallback_results_are_device_arrays_with_numpys_values(device, name):
    func, data, counted_as = CASES[name]
    x = cg.asarray(data, device=device)
    got = func(x)
    want = func(data)
    if isinstance(want, tuple):  # EighResult, SVDResult, tuples: NumPy's containers
        assert type(got) is type(want)
    _assert_same_values(got, want)
    assert all(p.device == device for p in _parts(got))
    assert cg.on_host_calls() == {counted_as: 1}, cg.on_host_calls()


def test_complex_results_are_device_arrays(device):
    x = cg.asarray(_S, device=device)
    got = np.fft.fft(x)
    assert isinstance(got, cg.DeviceArray) and got.dtype == np.complex128
    np.testing.assert_allclose(np.asarray(got), np.fft.fft(_S))


def test_namedtuples_keep_their_fields(device):
    x = cg.asarray(_S, device=device)
    w, v = np.linalg.eigh(x)
    result = np.linalg.eigh(x)
    assert isinstance(result.eigenvalues, cg.DeviceArray)
    assert isinstance(result.eigenvectors, cg.DeviceArray)
    u = np.linalg.svd(x)
    assert isinstance(u.S, cg.DeviceArray) and isinstance(u.Vh, cg.DeviceArray)
    everything = np.unique_all(cg.asarray(_INTS, device=device))
    assert type(everything).__name__ == "UniqueAllResult"
    _assert_same_values(tuple(everything), tuple(np.unique_all(_INTS)))
    # the code after the fallback stays on the device: no further fallback
    cg.reset_host_calls()
    rebuilt = v @ np.diag(w) @ v.T
    assert isinstance(rebuilt, cg.DeviceArray)
    assert_matches(rebuilt, _S)
    assert cg.on_host_calls() == {}, cg.on_host_calls()


def test_lists_of_arrays(device):
    x = cg.asarray(np.arange(12.0).reshape(3, 4), device=device)
    parts = np.split(x, 2, axis=1)
    assert type(parts) is list and all(isinstance(p, cg.DeviceArray) for p in parts)
    _assert_same_values(parts, np.split(np.arange(12.0).reshape(3, 4), 2, axis=1))
    rows, cols = np.nonzero(x > 4)
    _assert_same_values((rows, cols), np.nonzero(np.arange(12.0).reshape(3, 4) > 4))


def test_scalars_stay_scalars(device):
    x = cg.asarray(_S, device=device)
    cond = np.linalg.cond(x)
    assert type(cond) is np.float64 and cond == pytest.approx(np.linalg.cond(_S), rel=1e-12)
    rank = np.linalg.matrix_rank(x)
    assert isinstance(rank, np.integer) and rank == np.linalg.matrix_rank(_S)
    position = np.searchsorted(cg.asarray(np.arange(10.0), device=device), 3.5)
    assert type(position) is np.intp and position == 4
    x_, residuals, rank, s = np.linalg.lstsq(x, cg.asarray(_S[:, 0], device=device))
    assert isinstance(rank, (int, np.integer))
    assert all(isinstance(p, cg.DeviceArray) for p in (x_, residuals, s))


def test_answers_that_are_not_arrays_stay_numpys(device):
    x = cg.asarray(_S, device=device)
    assert np.array_equal(x, x) is True
    assert np.allclose(x, x) is True
    assert type(np.shares_memory(x, x)) is bool
    assert type(np.may_share_memory(x, x)) is bool
    assert isinstance(np.array2string(x), str) and isinstance(np.array_repr(x), str)
    assert type(np.isclose(x, x)) is cg.DeviceArray  # an array of bools: a device array


def test_conversions_to_numpy_stay_numpy(device):
    """np.asarray and friends convert through ``__array__``: no fallback, NumPy's arrays."""
    x = cg.asarray(_S, device=device)
    for convert in (np.asarray, np.array, np.asanyarray, np.ascontiguousarray,
                    np.asarray_chkfinite):
        assert type(convert(x)) is np.ndarray
    assert cg.on_host_calls() == {}, cg.on_host_calls()


def test_out_and_the_callers_own_arrays_are_kept(device):
    x = cg.asarray(_S, device=device)
    host_out = np.empty_like(_S)
    assert np.round(x, 2, out=host_out) is host_out
    np.testing.assert_array_equal(host_out, np.round(_S, 2))
    device_out = cg.empty(_S.shape, device=device)
    assert np.round(x, 2, out=device_out) is device_out
    np.testing.assert_array_equal(np.asarray(device_out), np.round(_S, 2))
    # an operand NumPy hands back unchanged is the device array itself
    assert np.real_if_close(x) is x
    # a NumPy operand handed back unchanged stays the caller's object
    edges = np.array([0.0, 5.0, 10.0, 20.0])
    counts, bins = np.histogram(x, bins=edges)
    assert isinstance(counts, cg.DeviceArray) and bins is edges
    np.testing.assert_array_equal(np.asarray(counts), np.histogram(_S, bins=edges)[0])


def test_results_a_device_array_does_not_hold_stay_numpy(device):
    x = cg.asarray(_S, device=device)
    objects = np.apply_along_axis(lambda row: {"first": row[0]}, 1, x)
    assert type(objects) is np.ndarray and objects.dtype == object
    text = np.apply_along_axis(lambda row: f"{row[0]:.1f}", 1, x)
    assert type(text) is np.ndarray and text.dtype.kind == "U"
    masked = np.ma.masked_greater(x, 6.0)  # an ndarray subclass: its mask would be lost
    assert type(masked) is np.ma.MaskedArray


def test_window_views_stay_numpy(device):
    x = cg.asarray(np.arange(20.0), device=device)
    windows = np.lib.stride_tricks.sliding_window_view(x, 5)
    assert type(windows) is np.ndarray and windows.shape == (16, 5)
    assert cg.on_host_calls() == {"sliding_window_view": 1}


def test_fresh_results_are_taken_over_without_a_copy(device):
    if not device.info.host_unified_memory:
        pytest.skip("results are copied into device buffers on discrete devices")
    x = cg.asarray(_S, device=device)
    sorted_ = np.sort(x, axis=None)
    sorted_[0] = -1.0  # a device array of its own: the operand keeps its elements
    assert np.asarray(x).min() == _S.min()
    assert np.asarray(sorted_)[0] == -1.0


def test_memory_of_other_operands_is_copied_not_taken_over(device):
    class Holder:  # hands NumPy its own array without a copy, as pandas objects do
        def __init__(self):
            self.edges = np.array([0.0, 5.0, 10.0, 20.0])

        def __array__(self, dtype=None, copy=None):
            return self.edges

    holder = Holder()
    x = cg.asarray(_S, device=device)
    counts, bins = np.histogram(x, bins=holder)
    assert isinstance(bins, cg.DeviceArray)
    bins[0] = -1.0
    np.testing.assert_array_equal(holder.edges, [0.0, 5.0, 10.0, 20.0])


def test_setting_host_gives_numpys_objects(device, host_results):
    assert settings.fallback_results() == "host"
    x = cg.asarray(_S, device=device)
    w, v = np.linalg.eigh(x)
    assert type(w) is np.ndarray and type(v) is np.ndarray
    assert type(np.histogram2d(x[0], x[1], bins=3)[0]) is np.ndarray
    assert type(np.linalg.pinv(x)) is np.ndarray
    rows = _INTS.reshape(4, 2)
    values, counts = np.unique(cg.asarray(rows, device=device), axis=0, return_counts=True)
    assert type(values) is np.ndarray and type(counts) is np.ndarray
    np.testing.assert_array_equal(counts, np.unique(rows, axis=0, return_counts=True)[1])
    assert cg.on_host_calls() == {"eigh": 1, "histogram2d": 1, "pinv": 1, "unique": 1}


def test_setting_is_read_again_by_reload(monkeypatch):
    monkeypatch.setenv("CLARRAY_GEMM_FALLBACK_RESULTS", "Host ")
    try:
        assert settings.reload().fallback_results == "host"
        monkeypatch.setenv("CLARRAY_GEMM_FALLBACK_RESULTS", "nonsense")
        assert settings.reload().fallback_results == "device"
        monkeypatch.delenv("CLARRAY_GEMM_FALLBACK_RESULTS")
        assert settings.reload().fallback_results == "device"
    finally:
        monkeypatch.undo()
        settings.reload()


# -- dask ----------------------------------------------------------------------------------------
def test_dask_chunk_functions_compute_device_arrays(device):
    da = pytest.importorskip("dask.array")
    import dask
    a = random_array((40, 6), np.float64, 3)
    with dask.config.set(scheduler="sync"):
        x = da.from_array(cg.asarray(a, device=device), chunks=(10, 6))
        v = da.from_array(cg.asarray(a[:, 0].copy(), device=device), chunks=10)
        q, r = da.linalg.qr(x)
        u, s, vh = da.linalg.svd(x)
        cases = [
            (da.percentile(v, [10, 50, 90]), None),
            (q @ r, a), (da.linalg.tsqr(x)[0] @ da.linalg.tsqr(x)[1], a),
            (s, np.linalg.svd(a, compute_uv=False)),
            (da.histogram(v, bins=5, range=(-3, 3))[0], np.histogram(a[:, 0], 5, (-3, 3))[0]),
            (da.fft.fft(v.rechunk(40)), np.fft.fft(a[:, 0])),
            (da.round(x, 2), np.round(a, 2)),
            (da.topk(v, 3), np.sort(a[:, 0])[::-1][:3]),
        ]
        for lazy, want in cases:
            got = lazy.compute()
            assert isinstance(got, cg.DeviceArray), type(got)
            if want is not None:
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)
        # dask's unique packs its per-chunk results into structured NumPy arrays: NumPy's
        values = da.unique(da.from_array(cg.asarray(_INTS, device=device), chunks=3)).compute()
        np.testing.assert_array_equal(np.asarray(values), np.unique(_INTS))


def test_generalized_ufuncs_on_the_host_keep_their_core_shapes(device):
    """A gufunc that falls back (``np.vecdot``; ``np.matmul`` of 1-D complex operands) returns
    NumPy's shape, not the operands' broadcast one."""
    a = (np.arange(5) + 1j * np.arange(5)[::-1]).astype(np.complex128)
    x, y = cg.asarray(a, device=device), cg.asarray(a[::-1].copy(), device=device)
    for func in (np.matmul, np.vecdot):
        got = func(x, y)
        want = func(a, a[::-1])
        assert np.shape(got) == np.shape(want) == ()
        assert complex(np.asarray(got)) == pytest.approx(complex(want))
