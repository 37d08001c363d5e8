"""``np.sort`` / ``np.argsort`` and the methods on device arrays: the rows sorted on the device
(``opencl/sort.cl``) give NumPy's stable order bit for bit for every dtype (NaN last, -0.0 and
0.0 in their order, infinities, ties), along every axis, odd lengths, rows in local memory and
longer rows radix-sorted; the host path gives NumPy's; ``order=`` and bad arguments go to NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import radix_sort, sorting

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.uint32, np.int64, np.uint64, np.bool_]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = (rng.standard_normal(shape) * 4).round(1).astype(dt)   # rounding: many ties
        flat = a.reshape(-1)
        specials = [np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan, -0.0]
        for i, v in enumerate(specials[:flat.size]):
            flat[(i * 7919) % flat.size] = v
        return a
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    info = np.iinfo(dt)
    a = rng.integers(max(info.min, -50), min(info.max, 50), shape).astype(dt)
    a.reshape(-1)[0] = info.max
    a.reshape(-1)[-1] = info.min
    return a


def _same_bits(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def _same_bits_or_nans(got, want):
    """Bit for bit, except that a NaN made by arithmetic (inf - inf) may carry the device's
    own payload: NumPy does not specify NaN payloads, and GPUs make 0x7fffffff."""
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = f"u{want.itemsize}" if want.dtype.kind == "f" else want.dtype
    same = got.view(bits) == want.view(bits)
    if want.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
    assert same.all(), (got, want)


def _same_values(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)   # NaN where NumPy has NaN; -0.0 == 0.0


@pytest.fixture
def on_device(on_device):
    if not on_device.info.fp64:
        pytest.skip("the cases include float64")
    return on_device


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1,), (7,), (33,), (257,), (3, 31), (31, 3), (4, 5, 6)])
def test_sort_and_argsort_are_numpys_stable_order(on_device, dtype, shape):
    a = _data(shape, dtype, seed=sum(shape))
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    for axis in range(-1, -len(shape) - 1, -1):
        got = np.sort(x, axis=axis)
        assert isinstance(got, cg.DeviceArray) and got.flags.c_contiguous
        _same_bits(got, np.sort(a, axis=axis, kind="stable"))
        _same_bits(np.argsort(x, axis=axis), np.argsort(a, axis=axis, kind="stable"))
    _same_bits(np.sort(x, axis=None), np.sort(a, axis=None, kind="stable"))
    _same_bits(np.argsort(x, axis=None), np.argsort(a, axis=None, kind="stable"))
    assert cg.on_host_calls() == {}


def test_kinds_views_methods_and_empty_rows(on_device):
    a = _data((6, 40), np.float32, seed=3)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    for kind in (None, "quicksort", "mergesort", "heapsort", "stable"):
        _same_bits(np.sort(x, kind=kind), np.sort(a, kind="stable"))
    _same_bits(np.sort(x, stable=True), np.sort(a, kind="stable"))
    view = x.T[::2, 1:]                       # a strided view, sorted along each axis
    host = a.T[::2, 1:]
    for axis in (0, 1):
        _same_bits(np.sort(view, axis=axis), np.sort(host, axis=axis, kind="stable"))
        _same_bits(np.argsort(view, axis=axis), np.argsort(host, axis=axis, kind="stable"))
    _same_bits(x.argsort(axis=0), np.argsort(a, axis=0, kind="stable"))
    y = cg.asarray(a.copy(), device=on_device)
    assert y.sort(axis=0) is None             # in place, as ndarray.sort
    _same_bits(y, np.sort(a, axis=0, kind="stable"))
    assert np.sort(cg.zeros((3, 0), np.int32, device=on_device)).shape == (3, 0)
    assert np.argsort(cg.zeros((0, 4), np.int32, device=on_device), axis=0).shape == (0, 4)
    assert cg.on_host_calls() == {}
    x[...] = 1.0                              # the caller's array stays as it was otherwise
    assert np.all(np.asarray(np.sort(x)) == 1.0)


RADIX_SHAPES = [radix_sort.RadixShape(4, 16, 4), radix_sort.RadixShape(6, 8, 3),
                radix_sort.RadixShape(8, 256, 2)]


@pytest.mark.parametrize("radix", RADIX_SHAPES, ids=lambda r: f"{r.bits}bit-{r.wg}x{r.items}")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(65,), (1000,), (3, 257), (300, 11), (2, 129, 3)])
def test_rows_longer_than_a_block_radix_sort(on_device, monkeypatch, radix, dtype, shape):
    """Rows past a block (forced to 8 slots) radix-sorted: digits of 4, 6 and 8 bits, work-groups
    of one to eight vote words, tiles cut short, keys of 8 to 64 bits, integer sorts without
    indices, and several rows (300 rows: the row number's digits take more than one pass). The
    6-bit digits run radix_scan (forced; hundreds of 24-element tiles: its blocks carry over),
    the others sum the tiles' counts in radix_scatter."""
    monkeypatch.setattr(sorting, "max_row", lambda device, dt: 8)
    if radix.bits == 6:
        monkeypatch.setattr(radix_sort, "_SUMMED_TILES", 0)
    monkeypatch.setattr(radix_sort, "radix_shape", lambda device, key_bytes, pairs: radix)
    monkeypatch.setattr(radix_sort, "_BARE_FLOATS", 0)   # float rows without indices
    a = _data(shape, dtype, seed=len(shape) + shape[-1])
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    for axis in (-1, 0, None):
        _same_bits(np.sort(x, axis=axis), np.sort(a, axis=axis, kind="stable"))
        _same_bits(np.argsort(x, axis=axis), np.argsort(a, axis=axis, kind="stable"))
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("bare", [0, 1 << 30], ids=["keys", "pairs"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_radix_sort_keeps_the_bits_of_zeros_and_nans(on_device, monkeypatch, dtype, bare):
    """The radix sort's last pass turns keys back into values, but for the zeros and NaNs (their
    keys are shared): those come from the source, each NaN's sign and payload and each zero's
    sign in their stable order, beside denormals, infinities and the extremes; sorted with
    indices (gathered by index) and without (put back after the sort)."""
    monkeypatch.setattr(sorting, "max_row", lambda device, dt: 8)
    monkeypatch.setattr(radix_sort, "_BARE_FLOATS", bare)
    monkeypatch.setattr(radix_sort, "radix_shape",
                        lambda device, key_bytes, pairs: radix_sort.RadixShape(8, 16, 2))
    dt = np.dtype(dtype)
    bits = np.dtype(f"u{dt.itemsize}")
    info = np.finfo(dt)
    exp = np.array(info.nexp, bits)   # a NaN: all exponent bits, a payload, either sign
    quiet = (((1 << int(exp)) - 1) << info.nmant) | (1 << (info.nmant - 1))
    sign = 1 << (8 * dt.itemsize - 1)
    nans = np.array([quiet, quiet | 1, quiet | sign, quiet | 5 | sign], bits).view(dt)
    rng = np.random.default_rng(11)
    specials = np.concatenate([nans, np.array([0.0, -0.0, -0.0, 0.0, np.inf, -np.inf,
                                               info.max, -info.max, info.tiny,
                                               info.smallest_subnormal, -info.tiny], dt)])
    a = np.concatenate([rng.standard_normal(150).astype(dt), specials, specials])
    a = a[rng.permutation(a.size)]
    x = cg.asarray(a, device=on_device)
    _same_bits(np.sort(x), np.sort(a, kind="stable"))
    _same_bits(np.argsort(x), np.argsort(a, kind="stable"))


def test_radix_shape_fits_local_memory(device):
    for key_bytes in (4, 8):
        for pairs in (False, True):
            shape = radix_sort.radix_shape(device, key_bytes, pairs)
            assert shape.wg <= device.info.max_work_group_size
            need = radix_sort._scatter_local_bytes(shape, key_bytes, pairs)
            assert need <= device.info.local_mem_bytes


def test_a_long_row_and_bad_arguments(on_device):
    n = sorting.max_row(on_device, np.dtype(np.float32)) * 2 + 3
    a = _data((n,), np.float32, seed=5)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    _same_bits(np.sort(x), np.sort(a, kind="stable"))
    _same_bits(np.argsort(x), np.argsort(a, kind="stable"))
    assert cg.on_host_calls() == {}
    with pytest.raises(ValueError):
        np.sort(x, kind="bogus")
    with pytest.raises(ValueError):
        np.sort(x, kind="stable", stable=True)
    with pytest.raises(np.exceptions.AxisError):
        np.sort(cg.asarray(a[:10], device=on_device), axis=1)
    with pytest.raises(np.exceptions.AxisError):
        np.sort(cg.asarray(np.float32(3.0), device=on_device))
    zero_d = np.argsort(cg.asarray(np.float32(3.0), device=on_device))   # NumPy: [0]
    np.testing.assert_array_equal(np.asarray(zero_d), np.argsort(np.float32(3.0)))
    cg.reset_host_calls()


def test_host_path_gives_numpys_sort(device):
    if not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    a = _data((5, 33), np.float64 if device.info.fp64 else np.float32, seed=9)
    x = cg.asarray(a, device=device)
    cg.reset_host_calls()
    with cg.host_path(True):
        got = np.sort(x, axis=0)
        assert isinstance(got, cg.DeviceArray)
        _same_bits(got, np.sort(a, axis=0))
        _same_bits(np.argsort(x), np.argsort(a))
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8,
                                   np.int64, np.bool_])
@pytest.mark.parametrize("shape", [(1,), (7,), (8,), (4, 9), (5, 2, 6)])
def test_median_is_numpys(on_device, dtype, shape):
    a = _data(shape, dtype, seed=shape[-1] + 1)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    axes = [None] + list(range(len(shape))) + ([(0, len(shape) - 1)] if len(shape) > 1 else [])
    with np.errstate(invalid="ignore"):
        for axis in axes:
            for keepdims in (False, True):
                got = np.median(x, axis=axis, keepdims=keepdims)
                want = np.asarray(np.median(a, axis=axis, keepdims=keepdims))
                assert isinstance(got, cg.DeviceArray)
                got = np.asarray(got)
                assert got.dtype == want.dtype and got.shape == want.shape, (axis, keepdims)
                np.testing.assert_array_equal(got, want)   # NaN where NumPy has NaN
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint64, np.bool_])
@pytest.mark.parametrize("shape", [(1,), (31,), (6, 9), (3, 4, 5)])
def test_unique_with_every_flag_is_numpys(on_device, dtype, shape):
    a = _data(shape, dtype, seed=7 + shape[0])
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    # Without return_index NumPy sorts unstably: which of -0.0 and 0.0 stands for the zeros is
    # its sort's choice (ours: the first in the input); the values are equal
    _same_values(np.unique(x), np.unique(a))
    for flags in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)):
        index, inverse, counts = flags
        got = np.unique(x, return_index=index, return_inverse=inverse, return_counts=counts)
        want = np.unique(a, return_index=index, return_inverse=inverse, return_counts=counts)
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert isinstance(g, cg.DeviceArray)
            (_same_bits if index else _same_values)(g, np.asarray(w))
    if a.dtype.kind == "f":   # NaNs each their own value without equal_nan
        _same_values(np.unique(x, equal_nan=False), np.unique(a, equal_nan=False))
    assert cg.on_host_calls() == {}
    if a.ndim > 1:   # axis=: NumPy's, counted
        _same_values(np.unique(x, axis=0), np.unique(a, axis=0))
        assert cg.on_host_calls() == {"unique": 1}
    cg.reset_host_calls()


def test_median_and_unique_on_the_host_path(device):
    if not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    a = _data((5, 8), np.float32, seed=4)
    x = cg.asarray(a, device=device)
    cg.reset_host_calls()
    with cg.host_path(True), np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.asarray(np.median(x, axis=0)), np.median(a, axis=0))
        got = np.unique(x, return_counts=True)
        for g, w in zip(got, np.unique(a, return_counts=True)):
            assert isinstance(g, cg.DeviceArray)
            _same_values(g, w)
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8,
                                   np.int64])
def test_searchsorted_is_numpys(on_device, dtype):
    a = np.sort(_data((101,), dtype, seed=13), kind="stable")
    probe = np.concatenate([a[::7], _data((40,), dtype, seed=14)])
    x, v = cg.asarray(a, device=on_device), cg.asarray(probe, device=on_device)
    cg.reset_host_calls()
    for side in ("left", "right"):
        strided = (v[1:].reshape(6, -1)[:, ::2], probe[1:].reshape(6, -1)[:, ::2])
        for values, host in ((v, probe), strided, (probe[:9].tolist(), probe[:9].tolist())):
            got = np.searchsorted(x, values, side=side)
            assert isinstance(got, cg.DeviceArray)
            _same_bits(got, np.searchsorted(a, host, side=side))
        got = np.searchsorted(x, a[50].item(), side=side)   # a scalar: NumPy's intp scalar
        assert type(got) is np.intp and got == np.searchsorted(a, a[50].item(), side=side)
    shuffled = np.random.default_rng(1).permutation(len(a))
    unsorted = a[shuffled]
    order = np.argsort(unsorted, kind="stable")
    got = np.searchsorted(cg.asarray(unsorted, device=on_device), v, side="right",
                          sorter=cg.asarray(order, device=on_device))
    _same_bits(got, np.searchsorted(unsorted, probe, side="right", sorter=order))
    assert cg.on_host_calls() == {}
    with pytest.raises(ValueError):
        np.searchsorted(x, v, side="middle")
    cg.reset_host_calls()


def test_searchsorted_on_the_host_path(device):
    if not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    a = np.arange(0.0, 50.0, 0.5)
    with cg.host_path(True):
        got = np.searchsorted(cg.asarray(a, device=device), [3.25, -1.0, 80.0])
        assert isinstance(got, cg.DeviceArray)
        _same_bits(got, np.searchsorted(a, [3.25, -1.0, 80.0]))


QS = [0.3, 0.0, 1.0, [0.1, 0.5, 0.99], [[0.2], [0.7]], np.float64(0.75), np.float32(0.5)]


METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased", "normal_unbiased",
           "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_are_numpys(on_device, method, dtype):
    """Every other method of NumPy's table: its points and weights (NumPy's own functions),
    the sorted rows' elements taken or interpolated on the device, NumPy's bits."""
    a = _data((6, 9), dtype, seed=22)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    with np.errstate(invalid="ignore"):
        for q in (0.3, [0.0, 0.1, 0.5, 0.99, 1.0], np.float32(0.75)):
            for func, qq in ((np.quantile, q), (np.percentile, np.multiply(q, 100))):
                for axis in (None, 0, 1):
                    for keepdims in (False, True):
                        got = np.asarray(func(x, qq, axis=axis, keepdims=keepdims, method=method))
                        want = np.asarray(func(a, qq, axis=axis, keepdims=keepdims,
                                               method=method))
                        _same_bits_or_nans(got, want)
    assert cg.on_host_calls() == {}
    with pytest.raises(ValueError, match="is not a valid method"):
        np.quantile(x, 0.5, method="sideways")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8])
@pytest.mark.parametrize("q", QS, ids=range(len(QS)))
def test_quantile_and_percentile_linear_are_numpys(on_device, dtype, q):
    a = _data((6, 9), dtype, seed=21)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    percent = np.multiply(q, 100) if not isinstance(q, np.floating) else type(q)(q * 100)
    with np.errstate(invalid="ignore"):
        for func, qq in ((np.quantile, q), (np.percentile, percent)):
            for axis in (None, 0, 1, (0, 1)):
                for keepdims in (False, True):
                    got = np.asarray(func(x, qq, axis=axis, keepdims=keepdims))
                    want = np.asarray(func(a, qq, axis=axis, keepdims=keepdims))
                    _same_bits_or_nans(got, want)   # NumPy's _lerp, step by step
    assert cg.on_host_calls() == {}
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        np.quantile(x, 1.5)
    with pytest.raises(ValueError, match="Percentiles must be in the range"):
        np.percentile(x, -1)
    w = np.ones(a.shape[1])   # weights: NumPy's, counted
    got = np.quantile(x, 0.4, axis=1, method="inverted_cdf", weights=w)
    np.testing.assert_array_equal(np.asarray(got),
                                  np.quantile(a, 0.4, axis=1, method="inverted_cdf", weights=w))
    assert cg.on_host_calls() == {"quantile": 1}
    cg.reset_host_calls()



@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float64])
@pytest.mark.parametrize("shape,axis,kth", [((33,), -1, 5), ((7, 31), 1, [0, 3, -1]),
                                            ((31, 7), 0, -2), ((4, 5, 6), None, 17)])
def test_partition_and_argpartition_place_every_kth(on_device, dtype, shape, axis, kth):
    """Each kth element where the sort puts it, none smaller after it and none larger before
    (the arrangement within each side is NumPy's choice to leave open; ours is sorted)."""
    a = _data(shape, dtype, seed=sum(shape))
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    got = np.partition(x, kth, axis=axis)
    idx = np.argpartition(x, kth, axis=axis)
    assert isinstance(got, cg.DeviceArray) and isinstance(idx, cg.DeviceArray)
    assert cg.on_host_calls() == {}
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    want = np.sort(flat, axis=ax, kind="stable")
    got, idx = np.asarray(got), np.asarray(idx)
    n = flat.shape[ax]
    for k in np.atleast_1d(kth):
        k = k % n
        kth_got = np.take(got, [k], axis=ax)
        np.testing.assert_array_equal(kth_got, np.take(want, [k], axis=ax))
        before, after = np.take(got, range(k), axis=ax), np.take(got, range(k + 1, n), axis=ax)
        assert np.all(~(before > kth_got)) and np.all(~(after < kth_got))   # NaN sorts last
    np.testing.assert_array_equal(np.take_along_axis(flat, idx, axis=ax), got)
    if axis is not None:   # the method, in place
        y = x.copy()
        assert y.partition(kth, axis=axis) is None
        np.testing.assert_array_equal(np.asarray(y), got)


def test_partition_errors_are_numpys(on_device):
    x = cg.asarray(np.arange(3.0, dtype=np.float32), device=on_device)
    a = np.arange(3.0, dtype=np.float32)
    for kth in (5, -4, [1, 5], 1.5, True):
        with pytest.raises(Exception) as want:
            np.partition(a, kth)
        with pytest.raises(type(want.value), match=str(want.value).split("(")[0]):
            np.partition(x, kth)
    with pytest.raises(ValueError):
        np.partition(x, 1, kind="quicksort")
    with pytest.raises(np.exceptions.AxisError):
        np.argpartition(x, 1, axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 2), -1])
def test_nanmedian_is_numpys(on_device, dtype, axis):
    """The middle of each row's values that are not NaN, bit for bit; NaN and NumPy's warning
    for a row of NaNs; keepdims."""
    import warnings
    rng = np.random.default_rng(7)
    a = rng.standard_normal((5, 6, 7)).astype(dtype)
    a[a > 1.0] = np.nan
    a[1, 2, :] = np.nan
    a[2, :, 3] = np.nan
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    for keepdims in (False, True):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            got = np.nanmedian(x, axis=axis, keepdims=keepdims)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            want = np.nanmedian(a, axis=axis, keepdims=keepdims)
        _same_bits(got, np.asarray(want))
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert cg.on_host_calls() == {}
    ints = np.array([[3, 1, 2, 9]], np.int32)
    _same_bits(np.nanmedian(cg.asarray(ints, device=on_device), axis=1), np.nanmedian(ints, axis=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("q", QS, ids=range(len(QS)))
def test_nanquantile_and_nanpercentile_are_numpys(on_device, dtype, q):
    """Each row's quantile of its values that are not NaN, bit for bit; NaN and NumPy's
    warning for a row of NaNs; integers as np.quantile."""
    import warnings
    rng = np.random.default_rng(8)
    a = (rng.standard_normal((5, 8)) * 7).astype(dtype)
    if dtype != np.int16:
        a[a > 6] = np.nan
        a[2, :] = np.nan
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    percent = np.multiply(q, 100) if not isinstance(q, np.floating) else type(q)(q * 100)
    for func, qq in ((np.nanquantile, q), (np.nanpercentile, percent)):
        for axis in (None, 0, 1):
            for keepdims in (False, True):
                with warnings.catch_warnings(record=True) as ours:
                    warnings.simplefilter("always")
                    got = np.asarray(func(x, qq, axis=axis, keepdims=keepdims))
                with warnings.catch_warnings(record=True) as theirs:
                    warnings.simplefilter("always")
                    want = np.asarray(func(a, qq, axis=axis, keepdims=keepdims))
                _same_bits_or_nans(got, want)
                assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert cg.on_host_calls() == {}
