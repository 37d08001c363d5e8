"""``clarray_gemm.random``: Philox4x32-10 against Random123's known-answer vectors, the kernel's
words against the host reference bit for bit, NumPy's conversions of words to numbers, the same
numbers for a seed on every device, NumPy's signatures, results and errors, and the
distributions at n = 10^6 (moments; two-sample Kolmogorov-Smirnov against NumPy's own
generator)."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.random import Generator, default_rng, philox4x32_10


def test_philox_known_answers():
    """Random123's kat_vectors for philox4x32_10."""
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6,
                                                      0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for counter, key, want in cases:
        got = philox4x32_10(np.array([counter], np.uint32), key)[0]
        assert tuple(int(v) for v in got) == want


def _words(rng: Generator, draw: int, blocks: int) -> np.ndarray:
    """The host reference's words of draw number ``draw``: block b's counter is (b, draw)."""
    b = np.arange(blocks, dtype=np.uint64)
    counters = np.stack([b & np.uint64(0xFFFFFFFF), b >> np.uint64(32),
                         np.full(blocks, draw & 0xFFFFFFFF, np.uint64),
                         np.full(blocks, draw >> 32, np.uint64)], axis=1).astype(np.uint32)
    return philox4x32_10(counters, rng._key)


@pytest.mark.parametrize("n", [1, 7, 31, 257, 1001])
def test_kernel_words_are_the_references(device, n):
    """The kernel's numbers are the reference's words converted as NumPy converts them: 24 bits
    a float32, 53 a float64 ((a >> 5) * 2^26 + (b >> 6)), 64-bit integers scaled by range."""
    rng = default_rng(12345, device=device)
    x = np.asarray(rng.random(n, dtype=np.float32))            # draw 0
    words = _words(rng, 0, -(-n // 4)).reshape(-1)[:n]
    np.testing.assert_array_equal(x, (words >> 8).astype(np.float32) * np.float32(2.0 ** -24))
    if device.info.fp64:
        y = np.asarray(rng.random(n))                           # draw 1
        w = _words(rng, 1, -(-n // 2)).reshape(-1, 2)[:n]
        want = ((w[:, 0] >> 5).astype(np.float64) * 67108864.0
                + (w[:, 1] >> 6).astype(np.float64)) * 2.0 ** -53
        np.testing.assert_array_equal(y, want)
    k = np.asarray(rng.integers(-5, 1000, size=n))              # draw 2 (or 1)
    w = _words(rng, rng._draws - 1, -(-n // 2)).reshape(-1, 2)[:n].astype(np.uint64)
    full = (w[:, 0] << np.uint64(32)) | w[:, 1]
    want = np.array([-5 + ((int(v) * 1005) >> 64) for v in full], np.int64)
    np.testing.assert_array_equal(k, want)


def test_a_seed_gives_the_same_numbers_on_every_device():
    usable = [d for d in cg.devices() if d.usable]
    draws = []
    for dev in usable:
        rng = default_rng(7, device=dev)
        draws.append((np.asarray(rng.random(1000, dtype=np.float32)),
                      np.asarray(rng.integers(0, 1 << 40, size=999)),
                      np.asarray(rng.standard_normal(333, dtype=np.float32))))
    for other in draws[1:]:
        np.testing.assert_array_equal(other[0], draws[0][0])
        np.testing.assert_array_equal(other[1], draws[0][1])
        np.testing.assert_allclose(other[2], draws[0][2], rtol=1e-5, atol=1e-6)


def test_streams_seeds_and_spawn(device):
    a, b = default_rng(3, device=device), default_rng(3, device=device)
    first = np.asarray(a.random(100))
    np.testing.assert_array_equal(first, np.asarray(b.random(100)))
    assert not np.array_equal(first, np.asarray(a.random(100)))       # the next draw differs
    assert not np.array_equal(first, np.asarray(default_rng(4, device=device).random(100)))
    seq = np.random.SeedSequence(3)
    np.testing.assert_array_equal(first, np.asarray(default_rng(seq, device=device).random(100)))
    assert default_rng(a) is a
    kids = a.spawn(3)
    values = [np.asarray(k.random(64)) for k in kids]
    assert all(isinstance(k, Generator) and k.device is device for k in kids)
    assert len({v.tobytes() for v in values}) == 3
    fresh = [np.asarray(default_rng(device=device).random(8)) for _ in range(2)]
    assert not np.array_equal(*fresh)                                  # entropy when unseeded


def test_numpys_signatures_results_and_errors(device):
    rng = default_rng(0, device=device)
    assert type(rng.random()) is float and 0.0 <= rng.random() < 1.0
    assert type(rng.standard_normal()) is float and type(rng.integers(5)) is int
    assert type(rng.normal(2.0, 3.0)) is float
    x = rng.random((3, 4), dtype=np.float32)
    assert isinstance(x, cg.DeviceArray) and x.shape == (3, 4) and x.dtype == np.float32
    assert rng.standard_normal((0, 5)).shape == (0, 5)
    out = cg.zeros((5, 6), np.float32, device=device)
    assert rng.standard_normal(dtype=np.float32, out=out) is out
    assert np.asarray(out).std() > 0
    assert rng.random((5, 6), dtype=np.float32, out=out) is out
    with pytest.raises(ValueError):
        rng.random((2, 2), dtype=np.float32, out=out)
    with pytest.raises(TypeError):
        rng.random(3, dtype=np.float64, out=out)
    with pytest.raises(TypeError):
        rng.random(3, dtype=np.int32)
    with pytest.raises(TypeError):
        rng.standard_normal(3, dtype=np.float16)
    with pytest.raises(ValueError, match="negative dimensions"):
        rng.random(-1)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.normal(0.0, -1.0, 3)
    with pytest.raises(ValueError, match="scale < 0"):
        rng.exponential(-2.0, 3)
    with pytest.raises(OverflowError):
        rng.uniform(-np.inf, 0.0, 3)
    # integers: NumPy's own checks and messages
    for args, kwargs in (((5, 5), {}), ((0,), {}), ((0, 300), {"dtype": np.uint8}),
                         ((-1, 3), {"dtype": np.uint16}), ((3, 2), {"endpoint": True})):
        with pytest.raises(ValueError) as ours:
            rng.integers(*args, **kwargs)
        with pytest.raises(ValueError) as numpys:
            np.random.default_rng(0).integers(*args, **kwargs)
        assert str(ours.value) == str(numpys.value)
    with pytest.raises(ValueError, match="Unknown method"):
        rng.standard_exponential(3, method="x")


@pytest.mark.parametrize("dtype,low,high,endpoint", [
    (np.int64, -5, 5, False), (np.int32, 0, 7, True), (np.uint8, 0, 256, False),
    (np.int8, -128, 127, True), (np.bool_, 0, 2, False), (np.uint64, 0, 2 ** 64, False),
    (np.int64, -2 ** 63, 2 ** 63, False), (np.uint16, 65530, 65535, True)])
def test_integers_cover_their_range(device, dtype, low, high, endpoint):
    rng = default_rng(11, device=device)
    got = np.asarray(rng.integers(low, high, size=20001, dtype=dtype, endpoint=endpoint))
    assert got.dtype == np.dtype(dtype) and got.shape == (20001,)
    top = high if endpoint else high - 1
    wide = got.astype(object) if np.dtype(dtype) == np.uint64 else got.astype(np.int64)
    assert wide.min() >= low and wide.max() <= top
    span = top - low + 1
    if span <= 1000:   # every value drawn, in about equal numbers
        counts = np.bincount((got.astype(np.int64) - low))
        assert len(counts) == span and counts.min() > 0
        expected = 20001 / span
        assert np.abs(counts - expected).max() < 6 * np.sqrt(expected) + 1
    one = rng.integers(low, high, dtype=dtype, endpoint=endpoint)
    assert type(one) is (bool if np.dtype(dtype) == np.bool_ else int)


def _ks_two_sample(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return float(np.abs(np.searchsorted(a, grid, side="right") / a.size
                        - np.searchsorted(b, grid, side="right") / b.size).max())


N = 10 ** 6
KS_LIMIT = 1.95 * np.sqrt(2.0 / N)   # alpha = 0.001 for two samples of N


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_distributions_at_a_million(device, dtype):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64")
    rng, ref = default_rng(2026, device=device), np.random.default_rng(2026)
    u = np.asarray(rng.random(N, dtype=dtype)).astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / N) and abs(u.var() - 1 / 12) < 1e-3
    assert _ks_two_sample(u, ref.random(N)) < KS_LIMIT
    z = np.asarray(rng.standard_normal(N, dtype=dtype)).astype(np.float64)
    assert np.isfinite(z).all()
    assert abs(z.mean()) < 5 / np.sqrt(N) and abs(z.var() - 1) < 5 * np.sqrt(2 / N)
    assert abs(np.mean(z ** 3)) < 0.02 and abs(np.mean(z ** 4) - 3) < 0.05
    assert _ks_two_sample(z, ref.standard_normal(N)) < KS_LIMIT
    e = np.asarray(rng.standard_exponential(N, dtype=dtype)).astype(np.float64)
    assert e.min() >= 0 and abs(e.mean() - 1) < 5 / np.sqrt(N)
    assert _ks_two_sample(e, ref.standard_exponential(N)) < KS_LIMIT


def test_scaled_distributions_and_broadcast_parameters(device):
    if not device.info.fp64:
        pytest.skip("no fp64")
    rng, ref = default_rng(5, device=device), np.random.default_rng(5)
    n = 200000
    limit = 1.95 * np.sqrt(2.0 / n)
    for ours, numpys in ((rng.normal(3.0, 2.0, n), ref.normal(3.0, 2.0, n)),
                         (rng.uniform(-2.0, 5.0, n), ref.uniform(-2.0, 5.0, n)),
                         (rng.exponential(0.5, n), ref.exponential(0.5, n))):
        got = np.asarray(ours)
        assert got.dtype == np.float64
        assert _ks_two_sample(got, numpys) < limit
    u = np.asarray(rng.uniform(-2.0, 5.0, n))
    assert u.min() >= -2.0 and u.max() < 5.0
    loc = np.array([0.0, 100.0, -100.0])
    scale = cg.asarray(np.array([[1.0], [0.001]]), device=device)
    got = rng.normal(loc, scale)
    assert isinstance(got, cg.DeviceArray) and got.shape == (2, 3)
    g = np.asarray(got)
    assert np.all(np.abs(g[1] - loc) < 0.01) and np.all(np.abs(g[0] - loc) < 7)
    assert rng.normal(loc, 1.0, size=(4, 3)).shape == (4, 3)
    with pytest.raises(ValueError):
        rng.normal(loc, 1.0, size=(4, 2))
    assert np.asarray(rng.uniform(cg.asarray(np.zeros(4), device=device), 1.0)).shape == (4,)


def test_threads_drawing_from_one_generator_get_distinct_draws(device):
    """Each draw takes its own number under the generator's lock: no two threads repeat one."""
    from concurrent.futures import ThreadPoolExecutor
    rng = default_rng(99, device=device)
    with ThreadPoolExecutor(4) as pool:
        draws = list(pool.map(lambda _: np.asarray(rng.random(64, dtype=np.float32)), range(16)))
    assert rng._draws == 16
    assert len({d.tobytes() for d in draws}) == 16


def test_numpys_shuffle_of_a_device_array_raises_before_moving_anything(device):
    """NumPy's shuffle swaps the items of array types it does not know as Python objects
    (``x[i], x[j] = x[j], x[i]``), which duplicates rows of a device array (views, as NumPy's
    rows are): it raises a TypeError naming the shuffle that works, the array untouched, also
    right after a 1-D array (whose scalars it swaps correctly) was shuffled; NumPy arrays and
    other types shuffle as before."""
    rows = np.arange(40.0).reshape(20, 2)
    for x in (cg.asarray(rows, device=device), cg.asarray(rows.reshape(5, 2, 4), device=device)):
        before = np.array(x.get())
        line = cg.asarray(rows[:, 0], device=device)
        with pytest.warns(UserWarning, match="not a subclass of 'Sequence'"):   # NumPy's
            np.random.default_rng(1).shuffle(line)
        assert sorted(np.asarray(line).tolist()) == sorted(rows[:, 0].tolist())
        for shuffle in (np.random.default_rng(0).shuffle, np.random.RandomState(0).shuffle):
            len(line)   # the last len() another array's: the shuffle's own len() counts
            with pytest.raises(TypeError, match=r"clarray_gemm\.random\.default_rng"):
                shuffle(x)
            np.testing.assert_array_equal(np.asarray(x), before)
    host = rows.copy()
    np.random.default_rng(0).shuffle(host)
    assert sorted(map(tuple, host)) == sorted(map(tuple, rows)) and not np.array_equal(host, rows)
    items = list(range(10))
    np.random.default_rng(0).shuffle(items)
    assert sorted(items) == list(range(10))
    # the named way: a permutation gathered on the device, whole rows moved
    x = cg.asarray(rows, device=device)
    x[...] = x[np.random.default_rng(0).permutation(len(x))]
    assert sorted(map(tuple, np.asarray(x))) == sorted(map(tuple, rows))


def test_permutation_shuffle_and_choice(device):
    rng = default_rng(31, device=device)
    p = rng.permutation(1000)
    assert isinstance(p, cg.DeviceArray) and p.dtype == np.int64
    np.testing.assert_array_equal(np.sort(np.asarray(p)), np.arange(1000))
    np.testing.assert_array_equal(np.asarray(default_rng(31, device=device).permutation(1000)),
                                  np.asarray(p))                  # a seed's permutation
    rows = np.arange(40).reshape(20, 2)
    shuffled = np.asarray(rng.permutation(cg.asarray(rows, device=device)))
    assert sorted(map(tuple, shuffled)) == sorted(map(tuple, rows))   # whole rows move
    cols = np.asarray(rng.permutation(cg.asarray(rows, device=device), axis=1))
    assert all(sorted(r) == sorted(o) for r, o in zip(cols, rows))
    x = cg.asarray(rows, device=device)
    assert rng.shuffle(x) is None                                  # in place, rows intact
    assert sorted(map(tuple, np.asarray(x))) == sorted(map(tuple, rows))
    assert not np.array_equal(np.asarray(x), rows)
    with pytest.raises(TypeError):
        rng.shuffle(rows)
    # choice: uniform with replacement, distinct without, NumPy's rule with p
    k = np.asarray(rng.choice(5, 50000))
    assert np.abs(np.bincount(k, minlength=5) / 50000 - 0.2).max() < 0.01
    d = np.asarray(rng.choice(50, 20, replace=False))
    assert len(set(d.tolist())) == 20 and d.min() >= 0 and d.max() < 50
    w = np.asarray(rng.choice(4, 40000, p=[0.1, 0.2, 0.3, 0.4]))
    np.testing.assert_allclose(np.bincount(w, minlength=4) / 40000, [0.1, 0.2, 0.3, 0.4],
                               atol=0.01)
    picked = rng.choice(cg.asarray(np.array([10.0, 20.0, 30.0]), device=device), (2, 3))
    assert isinstance(picked, cg.DeviceArray) and picked.shape == (2, 3)
    assert set(np.asarray(picked).ravel()) <= {10.0, 20.0, 30.0}
    assert type(rng.choice(5)) is int
    assert len(set(np.asarray(rng.choice(5, 3, replace=False, p=[0.1, 0.2, 0.3, 0.2, 0.2]))
                   .tolist())) == 3
    for args, kwargs in (((5, 6), {"replace": False}), ((0, 3), {}),
                         ((5, 3), {"p": [0.5, 0.5, 0.0, 0.0, 0.1]})):
        with pytest.raises(ValueError) as ours:
            rng.choice(*args, **kwargs)
        with pytest.raises(ValueError) as numpys:
            np.random.default_rng(0).choice(*args, **kwargs)
        assert str(ours.value) == str(numpys.value)


_Z = {0.1: -1.2815515655446004, 0.5: 0.0, 0.9: 1.2815515655446004}   # normal quantiles
TRANSFORMS = {   # name: (arguments, quantile function p -> x)
    "lognormal": ((0.5, 0.7), lambda p: np.exp(0.5 + 0.7 * _Z[p])),
    "laplace": ((1.0, 2.0), lambda p: 1.0 + 2.0 * np.log(2 * p) if p < 0.5
                else 1.0 - 2.0 * np.log(2 - 2 * p)),
    "rayleigh": ((1.5,), lambda p: 1.5 * np.sqrt(-2 * np.log1p(-p))),
    "weibull": ((1.7,), lambda p: (-np.log1p(-p)) ** (1 / 1.7)),
    "pareto": ((3.0,), lambda p: (1 - p) ** (-1 / 3.0) - 1),
    "power": ((2.5,), lambda p: p ** (1 / 2.5)),
    "standard_cauchy": ((), lambda p: np.tan(np.pi * (p - 0.5))),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transformed_distributions(device, name):
    """The distributions NumPy forms from exponential and normal draws: device arrays of
    float64, finite, their empirical distribution at the 10/50/90% points within 0.01 of the
    law's (10^5 draws: about 4 standard errors); a Python float for size=None."""
    if not device.info.fp64:
        pytest.skip("float64 draws")
    args, quantile = TRANSFORMS[name]
    rng = cg.random.default_rng(7, device=device)
    cg.reset_host_calls()
    x = getattr(rng, name)(*args, size=100_000)
    assert type(x) is cg.DeviceArray and x.dtype == np.float64 and x.shape == (100_000,)
    h = np.asarray(x)
    assert np.isfinite(h).all()
    for p in (0.1, 0.5, 0.9):
        assert abs((h <= quantile(p)).mean() - p) < 0.01, (p, (h <= quantile(p)).mean())
    assert type(getattr(rng, name)(*args)) is float
    assert cg.on_host_calls() == {}


def test_transformed_distributions_errors_and_broadcasts(device):
    if not device.info.fp64:
        pytest.skip("float64 draws")
    rng = cg.random.default_rng(8, device=device)
    numpy_rng = np.random.default_rng(8)
    for name, args in (("pareto", (-1.0,)), ("power", (0.0,)), ("weibull", (-1.0,)),
                       ("lognormal", (0.0, -1.0)), ("laplace", (0.0, -1.0)),
                       ("rayleigh", (-2.0,))):
        with pytest.raises(ValueError) as ours:
            getattr(rng, name)(*args, size=3)
        with pytest.raises(ValueError) as theirs:
            getattr(numpy_rng, name)(*args, size=3)
        assert str(ours.value) == str(theirs.value)
    scales = cg.asarray(np.array([1.0, 100.0]), device=device)
    x = rng.rayleigh(scales, size=(5000, 2))
    assert x.shape == (5000, 2)
    medians = np.median(np.asarray(x), axis=0)
    assert 0.9 < medians[1] / medians[0] / 100 < 1.1
    assert rng.weibull(np.array([0.0, 2.0])).shape == (2,)
    assert float(np.asarray(rng.weibull(np.array([0.0, 2.0])))[0]) == 0.0


def _ks(a, b):
    """The two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    both = np.concatenate([a, b])
    return np.abs(np.searchsorted(a, both, "right") / a.size
                  - np.searchsorted(b, both, "right") / b.size).max()


@pytest.mark.parametrize("shape", [0.3, 1.0, 2.5, 30.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_standard_gamma_is_numpys_distribution(device, shape, dtype):
    """Against NumPy's own draws of the same distribution: two-sample KS statistic below
    0.012 at 10^5 each (the 0.001 critical value is 0.0087), mean and variance (both the
    shape) within 3%; both of NumPy's algorithms (shape below and above 1) and the
    exponential at 1."""
    if np.dtype(dtype) == np.float64 and not device.info.fp64:
        pytest.skip("needs doubles")
    rng = cg.random.default_rng(5, device=device)
    x = rng.standard_gamma(shape, size=100_000, dtype=dtype)
    assert type(x) is cg.DeviceArray and x.dtype == dtype and x.shape == (100_000,)
    h = np.asarray(x).astype(np.float64)
    assert (h >= 0).all()
    assert _ks(h, np.random.default_rng(6).standard_gamma(shape, size=100_000)) < 0.012
    assert abs(h.mean() - shape) < 0.03 * shape and abs(h.var() - shape) < 0.05 * shape


def test_gamma_family_shapes_errors_and_scalars(device):
    rng = cg.random.default_rng(7, device=device)
    assert isinstance(rng.standard_gamma(2.0), float)
    assert isinstance(rng.gamma(2.0, 3.0), float)
    shapes = cg.asarray(np.array([0.5, 1.0, 5.0]), device=device)
    drawn = rng.standard_gamma(shapes, size=(20000, 3))
    assert drawn.shape == (20000, 3)
    np.testing.assert_allclose(np.asarray(drawn).mean(axis=0), [0.5, 1.0, 5.0], rtol=0.05)
    g = np.asarray(rng.gamma(2.0, 3.0, size=50_000))
    assert abs(g.mean() - 6.0) < 0.15
    c = np.asarray(rng.chisquare(4, size=50_000))
    assert abs(c.mean() - 4.0) < 0.1 and abs(c.var() - 8.0) < 0.4
    assert rng.standard_gamma(0.0, size=3).tolist() == [0.0, 0.0, 0.0]
    out = cg.empty((5,), np.float32, device=device)
    assert rng.standard_gamma(2.0, dtype=np.float32, out=out) is out
    for call, args in ((rng.standard_gamma, (-1.0,)), (rng.gamma, (1.0, -2.0)),
                       (rng.chisquare, (0,))):
        with pytest.raises(ValueError):
            call(*args)
    with pytest.raises(TypeError, match="Unsupported dtype"):
        rng.standard_gamma(1.0, size=3, dtype=np.int32)
    with pytest.raises(ValueError):
        rng.standard_gamma(cg.asarray(np.ones(3), device=device), size=(4,))
