"""Every public name of ``np.ndarray`` on a DeviceArray, each checked against NumPy: values,
dtypes, in-place effects and error types, on the kernels and on the host path."""
import ctypes
import pickle

import numpy as np
import pytest

import clarray_gemm as cg
from conftest import random_array

DTYPES = [np.float32, np.int32, np.float64]
SHAPES = [(7,), (33,), (3, 11), (5, 7)]


@pytest.fixture(autouse=True)
def _path(either_path):
    """Each test on the kernels, then on the host path."""
    yield either_path


def pair(shape, dtype, seed=0):
    """A NumPy array and a device copy of it."""
    a = random_array(shape, dtype, seed)
    return a, cg.asarray(a)


def check(result, expected):
    """The same values, shape and dtype (whether ``result`` is a device or a NumPy array)."""
    got = np.asarray(result)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


def same_error(numpy_call, device_call):
    """Both calls raise, the device one an exception of the NumPy one's type."""
    with pytest.raises(Exception) as expected:
        numpy_call()
    with pytest.raises(expected.type):
        device_call()


cases = pytest.mark.parametrize("shape", SHAPES, ids=str)
dtypes = pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)


def test_every_public_ndarray_name_is_present():
    public = [n for n in dir(np.ndarray) if not n.startswith("_")]
    x2, x1 = cg.asarray(np.ones((2, 3), np.float32)), cg.asarray(np.ones(5, np.int32))
    assert [n for n in public if not hasattr(cg.DeviceArray, n)] == []
    assert [n for n in public if not hasattr(x2, n)] == []
    assert [n for n in public if n != "mT" and not hasattr(x1, n)] == []
    with pytest.raises(ValueError):  # as NumPy's: no matrix transpose of a 1-D array
        x1.mT


def test_methods_have_numpy_signatures():
    import inspect
    for name in ("argsort", "searchsorted", "repeat", "round", "put"):
        assert (inspect.signature(getattr(cg.DeviceArray, name)).parameters.keys()
                == inspect.signature(getattr(np.ndarray, name)).parameters.keys())


# -- NumPy functions as methods ---------------------------------------------------------------
@cases
@dtypes
def test_argsort_and_sort(shape, dtype):
    a, x = pair(shape, dtype)
    check(x.argsort(kind="stable"), a.argsort(kind="stable"))
    check(x.argsort(axis=0, stable=True), a.argsort(axis=0, stable=True))
    expected = a.copy()
    assert expected.sort() is None and x.sort() is None
    check(x, expected)
    b, y = pair(shape, dtype, 1)
    b.sort(axis=0)
    y.sort(axis=0)
    check(y, b)
    same_error(lambda: a.sort(axis=None), lambda: x.sort(axis=None))
    same_error(lambda: a.sort(axis=len(shape)), lambda: x.sort(axis=len(shape)))


@dtypes
def test_sort_of_a_view_writes_into_its_base(dtype):
    a, x = pair((5, 7), dtype)
    a[1:, ::2].sort(axis=0)
    x[1:, ::2].sort(axis=0)
    check(x, a)


def assert_partitioned(result, source, kth, axis):
    """``result`` holds ``source``'s values along ``axis`` with each kth in its sorted place."""
    got = np.moveaxis(np.asarray(result), axis, -1)
    ordered = np.sort(np.moveaxis(source, axis, -1), axis=-1)
    np.testing.assert_array_equal(np.sort(got, axis=-1), ordered)
    for k in np.atleast_1d(kth):
        np.testing.assert_array_equal(got[..., k], ordered[..., k])
        assert np.all(got[..., :k] <= got[..., k:k + 1])
        assert np.all(got[..., k + 1:] >= got[..., k:k + 1])


@cases
@dtypes
def test_partition_and_argpartition(shape, dtype):
    a, x = pair(shape, dtype)
    kth = shape[-1] // 2
    idx = np.asarray(x.argpartition(kth))
    assert idx.dtype == a.argpartition(kth).dtype
    assert_partitioned(np.take_along_axis(a, idx, axis=-1), a, kth, -1)
    assert x.partition((1, kth)) is None
    assert_partitioned(x, a, (1, kth), -1)
    b, y = pair(shape, dtype, 2)
    y.partition(1, axis=0)
    assert_partitioned(y, b, 1, 0)
    same_error(lambda: a.copy().partition(shape[-1]), lambda: x.partition(shape[-1]))
    same_error(lambda: a.copy().partition(1, axis=None), lambda: x.partition(1, axis=None))


@cases
def test_choose(shape):
    index = (np.arange(np.prod(shape)).reshape(shape) % 3).astype(np.int32)
    choices = [random_array(shape, np.float32, s) for s in range(3)]
    x = cg.asarray(index)
    check(x.choose(choices), index.choose(choices))
    check(x.choose([cg.asarray(c) for c in choices]), index.choose(choices))
    check(x.choose(choices, mode="wrap"), index.choose(choices, mode="wrap"))
    same_error(lambda: index.choose(choices[:2]), lambda: x.choose(choices[:2]))
    floats = index.astype(np.float64)
    same_error(lambda: floats.choose(choices), lambda: cg.asarray(floats).choose(choices))


@cases
@dtypes
def test_compress(shape, dtype):
    a, x = pair(shape, dtype)
    condition = [True, False, True]
    check(x.compress(condition), a.compress(condition))
    check(x.compress(condition, axis=0), a.compress(condition, axis=0))
    check(x.compress(cg.asarray(np.array(condition)), 0), a.compress(condition, 0))
    same_error(lambda: a.compress(condition, axis=3), lambda: x.compress(condition, axis=3))


@cases
@dtypes
def test_conj_and_conjugate(shape, dtype):
    a, x = pair(shape, dtype)
    assert x.conj() is x and x.conjugate() is x  # NumPy's methods: a real array is its own
    assert a.conj() is a
    c = (random_array(shape, np.float32, 1) + 1j * random_array(shape, np.float32, 2))
    c = c.astype(np.complex64)
    z = cg.asarray(c)
    check(z.conj(), c.conj())
    check(z.conjugate(), c.conjugate())


@cases
@dtypes
def test_nonzero(shape, dtype):
    a = random_array(shape, dtype) * (np.arange(np.prod(shape)).reshape(shape) % 3 == 0)
    a = a.astype(dtype)
    got = cg.asarray(a).nonzero()
    assert isinstance(got, tuple) and len(got) == a.ndim
    for g, e in zip(got, a.nonzero()):
        check(g, e)
    same_error(lambda: np.array(1.0).nonzero(), lambda: cg.asarray(np.array(1.0)).nonzero())


@cases
@dtypes
def test_put_writes_in_place(shape, dtype):
    for mode in ("raise", "wrap", "clip"):
        a, x = pair(shape, dtype)
        indices = [0, 2, 5] if mode == "raise" else [0, -40, 5, 40]
        values = np.array([7, 8], dtype)
        assert x.put(indices, values, mode) is None
        a.put(indices, values, mode)
        check(x, a)
    a, x = pair(shape, dtype)
    x.put(cg.asarray(np.array([1, 3])), cg.asarray(np.array([4, 5], dtype)))
    a.put([1, 3], np.array([4, 5], dtype))
    check(x, a)
    same_error(lambda: a.put([1000], 1), lambda: x.put([1000], 1))
    check(x, a)  # a refused put leaves the array as it was


@cases
@dtypes
def test_repeat(shape, dtype):
    a, x = pair(shape, dtype)
    check(x.repeat(3), a.repeat(3))
    check(x.repeat(2, axis=0), a.repeat(2, axis=0))
    reps = np.arange(shape[-1]) % 3
    check(x.repeat(reps, axis=-1), a.repeat(reps, axis=-1))
    check(x.repeat(cg.asarray(reps), axis=-1), a.repeat(reps, axis=-1))
    same_error(lambda: a.repeat(-1), lambda: x.repeat(-1))
    same_error(lambda: a.repeat([1, 2], axis=0), lambda: x.repeat([1, 2], axis=0))


@cases
@dtypes
def test_round(shape, dtype):
    a, x = pair(shape, dtype)
    a = a * 10.3 if a.dtype.kind == "f" else a
    x = cg.asarray(a)
    for decimals in (0, 1, 2, -1):
        check(x.round(decimals), a.round(decimals))
    check(x.round(), a.round())
    out = cg.empty(shape, a.dtype)
    assert x.round(1, out=out) is out
    check(out, a.round(1))


@dtypes
def test_searchsorted(dtype):
    a = np.sort(random_array(33, dtype))
    x = cg.asarray(a)
    v = random_array((3, 5), dtype, 4)
    check(x.searchsorted(v), a.searchsorted(v))
    check(x.searchsorted(cg.asarray(v), side="right"), a.searchsorted(v, side="right"))
    check(x.searchsorted(a[3]), a.searchsorted(a[3]))
    unsorted = random_array(7, dtype, 5)
    sorter = np.argsort(unsorted)
    check(cg.asarray(unsorted).searchsorted(v, sorter=sorter),
          unsorted.searchsorted(v, sorter=sorter))
    same_error(lambda: a.searchsorted(v, side="bad"), lambda: x.searchsorted(v, side="bad"))


# -- in-place shape changes -------------------------------------------------------------------
@dtypes
def test_resize_in_place(dtype):
    for new_shape in [(9,), (3, 5), (2, 2), (0,), ()]:
        a, x = pair((7,), dtype)
        assert x.resize(new_shape, refcheck=False) is None
        a.resize(new_shape, refcheck=False)
        check(x, a)  # the leading elements kept, the rest zero
        assert x.strides == a.strides
    a, x = pair((2, 3), dtype)
    x.resize(3, 3)
    a.resize(3, 3)
    check(x, a)
    assert x.resize() is None and x.resize(None) is None and x.shape == (3, 3)
    f = np.asfortranarray(random_array((2, 3), dtype))
    y = cg.asarray(f).T.T.copy(order="F")
    y.resize((3, 3))
    f.resize((3, 3))
    check(y, f)
    assert y.strides == f.strides  # an F-ordered array keeps its memory order


@dtypes
def test_resize_refusals(dtype):
    a, x = pair((7,), dtype)
    same_error(lambda: a[1:].resize(3), lambda: x[1:].resize(3))
    same_error(lambda: a[::2].resize(5), lambda: x[::2].resize(5))
    same_error(lambda: a.resize(-1), lambda: x.resize(-1))
    view = x[:]
    with pytest.raises(ValueError, match="referenced"):
        x.resize(9)
    x.resize(9, refcheck=False)  # the other array keeps the old buffer
    check(view, a)
    check(x, np.concatenate([a, np.zeros(2, dtype)]))
    b, y = pair((7,), dtype)
    v, w = b[1:5], y[1:5]
    v.resize((2, 2))  # the same size: a new shape for any single-segment array
    w.resize((2, 2))
    check(w, v)


@cases
@dtypes
def test_shape_setter(shape, dtype):
    a, x = pair(shape, dtype)
    x.shape = (-1, 1)
    a.shape = (-1, 1)
    check(x, a)
    assert x.strides == a.strides
    x.shape = a.size
    check(x, a.reshape(-1))
    b, y = pair((3, 11), dtype)
    same_error(lambda: setattr(b.T, "shape", (33,)), lambda: setattr(y.T, "shape", (33,)))
    with pytest.raises(AttributeError, match="Incompatible shape for in-place modification"):
        y.T.shape = (33,)
    same_error(lambda: setattr(b, "shape", (4, 8)), lambda: setattr(y, "shape", (4, 8)))
    v = y[:, 1:]
    v.shape = (3, 2, 5)  # a view of a view: no copy, the same buffer
    v[...] = 0
    b[:, 1:] = 0
    check(y, b)


# -- attributes -------------------------------------------------------------------------------
VIEWS = {"whole": lambda t: t, "T": lambda t: t.T, "rows": lambda t: t[1:],
         "cols": lambda t: t[:, ::2], "reversed": lambda t: t[::-1], "row": lambda t: t[2]}


@pytest.mark.parametrize("view", list(VIEWS))
@dtypes
def test_flags(view, dtype):
    a, x = pair((5, 7), dtype)
    v, w = VIEWS[view](a), VIEWS[view](x)
    for name in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY",
                 "C", "F", "W", "A", "X", "FNC", "FORC", "BEHAVED", "CARRAY", "FARRAY"):
        assert w.flags[name] == v.flags[name], name
        assert getattr(w.flags, name.lower(), v.flags[name]) == v.flags[name], name
    # ownership is read from the geometry: a view covering the whole buffer owns it
    assert w.flags.owndata == (view in ("whole", "T")) == (w.base is None)
    assert a.flags.owndata and x.flags.owndata and x.flags.num == a.flags.num
    assert repr(x.flags) == repr(a.flags)
    assert x.flags == a.flags
    with pytest.raises(KeyError):
        x.flags["U"]
    with pytest.raises(AttributeError):
        x.flags.c_contiguous = False


def test_setflags():
    a, x = pair((3, 11), np.float32)
    assert x.setflags(write=True, align=True, uic=False) is None
    x.flags.writeable = True
    same_error(lambda: a.setflags(uic=True), lambda: x.setflags(uic=True))
    with pytest.raises(ValueError, match="WRITEABLE"):  # a device array cannot be read-only
        x.setflags(write=False)
    with pytest.raises(ValueError):
        x.flags.writeable = False
    assert x.flags.writeable


@dtypes
def test_base(dtype):
    a, x = pair((5, 7), dtype)
    assert x.base is None
    b = x[1:, 2].base
    assert b is not None and b.shape == (35,) and b.dtype == x.dtype and b.base is None
    check(b, a.reshape(-1))
    b[0] = 9  # the buffer itself
    assert np.asarray(x)[0, 0] == 9


@cases
@dtypes
def test_flat(shape, dtype):
    a, x = pair(shape, dtype)
    for key in (3, -1, slice(1, 6), slice(None, None, -2), [0, 4, 2], np.array([1, 1]),
                np.arange(a.size) % 2 == 0, Ellipsis):
        check(x.flat[key], a.flat[key])
    same_error(lambda: a.flat[a.size], lambda: x.flat[a.size])
    assert len(x.flat) == a.size and x.flat.base is x
    assert list(x.flat) == list(a.flat)
    check(x.flat.copy(), a.flat.copy())
    check(np.asarray(x.flat), np.asarray(a.flat))
    it, expected = x.flat, a.flat
    assert (it.index, it.coords) == (expected.index, expected.coords)
    assert next(it) == next(expected) and (it.index, it.coords) == (expected.index, expected.coords)
    x.flat[[0, 1, 2, 3]] = [5, 6]  # values repeat to fill, as NumPy's flatiter does
    a.flat[[0, 1, 2, 3]] = [5, 6]
    x.flat[4:6] = cg.asarray(np.array([9], dtype))
    a.flat[4:6] = 9
    check(x, a)
    x.flat = [1, 2, 3]
    a.flat = [1, 2, 3]
    check(x, a)


@dtypes
def test_flat_of_a_view(dtype):
    a, x = pair((5, 7), dtype)
    check(x.T.flat[3:9], a.T.flat[3:9])
    x.T.flat[3:9] = 0
    a.T.flat[3:9] = 0
    check(x, a)
    assert list(x[:, ::3].flat) == list(a[:, ::3].flat)


@cases
@dtypes
def test_real_imag(shape, dtype):
    a, x = pair(shape, dtype)
    assert x.real is x
    imag = x.imag
    check(imag, a.imag)
    assert not np.asarray(imag).flags.writeable  # NumPy's: a read-only array of zeros
    x.real = 3
    a.real = 3
    check(x, a)
    same_error(lambda: setattr(a, "imag", 1), lambda: setattr(x, "imag", 1))
    c = (random_array(shape, np.float64, 1) + 1j * random_array(shape, np.float64, 2))
    z = cg.asarray(c)
    check(z.real, c.real)
    check(z.imag, c.imag)
    z.imag[...] = 5  # views of the complex array, as NumPy's
    z.real = cg.asarray(np.full(shape, 2.0))
    c.imag[...] = 5
    c.real = 2
    check(z, c)
    z.imag = 1
    c.imag = 1
    check(z, c)


@pytest.mark.parametrize("target", [np.int32, np.float32, np.uint32, np.int16, np.int8,
                                    np.float64, np.int64])
@dtypes
def test_view(target, dtype):
    a, x = pair((3, 12), dtype)
    check(x.view(target), a.view(target))
    check(x.view(dtype=target), a.view(dtype=target))
    check(x[1:].view(target), a[1:].view(target))
    check(x[:, 4:8].view(target), a[:, 4:8].view(target))


@dtypes
def test_view_shares_memory_and_types(dtype):
    a, x = pair((5, 7), dtype)
    v = x.view()
    assert isinstance(v, cg.DeviceArray) and v is not x
    check(x.view(cg.DeviceArray), a)
    host = x.view(np.ndarray)
    assert type(host) is np.ndarray and not host.flags.writeable
    check(host, a)
    check(x.view(np.uint8, np.ndarray), a.view(np.uint8, np.ndarray))
    check(x.view(type=np.ndarray), a)
    bits = x.view(np.uint8)
    bits[...] = 0  # writes go to the same buffer
    check(x, np.zeros_like(a))
    same_error(lambda: a.view(type=int), lambda: x.view(type=int))
    same_error(lambda: a.view(np.ndarray, np.int16), lambda: x.view(np.ndarray, np.int16))


@dtypes
def test_view_errors(dtype):
    a, x = pair((3, 7), dtype)
    same_error(lambda: a.view(np.complex128), lambda: x.view(np.complex128))  # 7 * 4 / 16
    same_error(lambda: a.T.view(np.int8), lambda: x.T.view(np.int8))  # last axis strided
    same_error(lambda: a.view(object), lambda: x.view(object))
    scalar = np.array(a[0, 0])  # a 0-d array keeps its item size
    same_error(lambda: scalar.view(np.int8), lambda: cg.asarray(scalar).view(np.int8))
    same_error(lambda: a[:, ::-1].view(np.int8), lambda: x[:, ::-1].view(np.int8))


def test_view_that_kernels_cannot_address_is_refused():
    # NumPy's view starts at byte 4 of an 8-byte item: device kernels address whole items
    x = cg.asarray(np.arange(9, dtype=np.int32))
    expected = np.arange(9, dtype=np.int32)[1:].view(np.int64)
    with pytest.raises(ValueError, match="multiples"):
        x[1:].view(np.int64)
    check(x[1:].copy().view(np.int64), expected)
    with pytest.raises(ValueError, match="multiples"):
        x.getfield(np.int16, 1)  # NumPy's is a misaligned view


@cases
@dtypes
def test_byteswap(shape, dtype):
    a, x = pair(shape, dtype)
    swapped = x.byteswap()
    check(swapped, a.byteswap())
    check(x, a)  # untouched
    assert x.byteswap(inplace=True) is x
    check(x, a.byteswap())
    b, y = pair((5, 7), dtype)
    y[:, 1::2].byteswap(inplace=True)
    b[:, 1::2].byteswap(inplace=True)
    check(y, b)


@dtypes
def test_getfield_setfield(dtype):
    a, x = pair((5, 7), dtype)
    check(x.getfield(np.int16, 2), a.getfield(np.int16, 2))
    check(x.getfield(np.uint8), a.getfield(np.uint8))
    check(x.getfield(dtype), a.getfield(dtype))
    end = a.itemsize - 1  # an int16 there would pass the element's end
    same_error(lambda: a.getfield(np.int16, end), lambda: x.getfield(np.int16, end))
    same_error(lambda: a.getfield(np.int64, 4), lambda: x.getfield(np.int64, 4))
    assert x.setfield(3, np.int16, 2) is None
    a.setfield(3, np.int16, 2)
    check(x, a)
    x[1:].setfield(cg.asarray(np.full((4, 7), 7, np.int8)), np.int8, 0)
    a[1:].setfield(np.full((4, 7), 7, np.int8), np.int8, 0)
    check(x, a)
    same_error(lambda: a.setfield(1, np.int64, end - 3), lambda: x.setfield(1, np.int64, end - 3))
    c = (random_array(7, np.float32, 1) + 1j * random_array(7, np.float32, 2)).astype(np.complex64)
    z = cg.asarray(c)
    check(z.getfield(np.float32, 4), c.getfield(np.float32, 4))


@cases
@dtypes
def test_bytes_files_and_pickles(shape, dtype, tmp_path):
    a, x = pair(shape, dtype)
    for order in ("C", "F", "A", "K"):
        assert x.tobytes(order) == a.tobytes(order)
    assert x.T.tobytes() == a.T.tobytes()
    x.tofile(tmp_path / "bin")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "bin", dtype), a.reshape(-1))
    with open(tmp_path / "text", "w") as f:
        x.tofile(f, sep=",", format="%s")
    with open(tmp_path / "expected", "w") as f:
        a.tofile(f, sep=",", format="%s")
    assert (tmp_path / "text").read_text() == (tmp_path / "expected").read_text()
    back = pickle.loads(x.dumps())
    assert isinstance(back, cg.DeviceArray)
    check(back, a)
    x.dump(tmp_path / "pickle")
    with open(tmp_path / "pickle", "rb") as f:
        check(pickle.load(f), a)
    with open(tmp_path / "pickle2", "wb") as f:
        x.dump(f)
    check(np.load(tmp_path / "pickle2", allow_pickle=True), a)


@cases
@dtypes
def test_data_and_ctypes(shape, dtype):
    a, x = pair(shape, dtype)
    data = x.data
    assert isinstance(data, memoryview) and data.readonly
    assert data.tobytes() == a.data.tobytes() and data.shape == a.data.shape
    assert data.format == a.data.format
    helper = x.ctypes
    assert isinstance(helper.data, int) and tuple(helper.shape) == a.shape
    ctype = np.ctypeslib.as_ctypes_type(np.dtype(dtype))
    host = np.ctypeslib.as_array(helper.data_as(ctypes.POINTER(ctype)), shape)
    np.testing.assert_array_equal(host, a)
    snapshot = np.array(data)
    x[...] = 0  # the memoryview keeps the elements it was taken of
    np.testing.assert_array_equal(np.asarray(data), snapshot)
