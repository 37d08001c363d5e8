"""Array functions on device arrays against NumPy: joins, gathers and masks, pad, products,
diagonals and triangles, creation functions and einsum; each result a device array computed
without host fallbacks."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from conftest import random_array
from parity_cases import same_values


@pytest.fixture(autouse=True)
def _count_fallbacks():
    cg.reset_host_calls()
    yield
    assert cg.on_host_calls() == {}, cg.on_host_calls()


def same(got, want, rtol=1e-6):
    assert isinstance(got, cg.DeviceArray), type(got)
    host = np.asarray(got)
    assert host.dtype == want.dtype and host.shape == want.shape, \
        (host.dtype, want.dtype, host.shape, want.shape)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(host, want)
    else:
        np.testing.assert_allclose(host, want, rtol=rtol, atol=rtol)


@pytest.fixture
def arrays():
    a = random_array((7, 33), np.float32, 1)
    b = random_array((33, 5), np.float32, 2)
    c = random_array((3, 7, 33), np.float32, 3)
    return (a, b, c), tuple(cg.asarray(v) for v in (a, b, c))


@pytest.fixture
def join_path(either_path):
    """Joins by device copies, and (unified memory) by NumPy on the mappings."""
    return either_path


def test_joins(arrays, join_path):
    (a, b, c), (x, y, z) = arrays
    same(np.concatenate([x, x[:2], a]), np.concatenate([a, a[:2], a]))
    same(np.concatenate([x.T, y], axis=1), np.concatenate([a.T, b], axis=1))
    same(np.concatenate([x, x], axis=None), np.concatenate([a, a], axis=None))
    same(np.concatenate([x, cg.asarray(a.astype(np.int8))]), np.concatenate([a, a.astype(np.int8)]))
    same(np.stack([x, x], axis=-1), np.stack([a, a], axis=-1))
    same(np.hstack([x[0], x[1]]), np.hstack([a[0], a[1]]))
    same(np.vstack([x, x[0]]), np.vstack([a, a[0]]))
    same(np.concatenate([x[:0], x]), np.concatenate([a[:0], a]))
    # the host path's join is NumPy's on the mappings: its result stays mapped for the host
    assert np.concatenate([x, x]).storage.host_resident == join_path
    with pytest.raises(ValueError, match="must match exactly"):
        np.concatenate([x, y])
    with pytest.raises(ValueError, match="same number of dimensions"):
        np.concatenate([x, x[0]])


def test_repeated_concatenations_reuse_one_plan(arrays, join_path):
    """One plan per (device, axis, dtype, casting, pieces' dtypes and shapes): a repeated call
    builds none, and a piece of another dtype or length gets its own, with NumPy's result."""
    from clarray_gemm.ops.joining import _PLANS

    (a, b, c), (x, y, z) = arrays
    same(np.concatenate([x, a], axis=-2), np.concatenate([a, a], axis=-2))
    builds = _PLANS.builds
    for _ in range(3):
        same(np.concatenate([x, a], axis=-2), np.concatenate([a, a], axis=-2))
    assert _PLANS.builds == builds
    wide = cg.asarray(a.astype(np.int64))
    same(np.concatenate([x, wide], axis=-2), np.concatenate([a, a.astype(np.int64)], axis=-2))
    same(np.concatenate([x, x[:3]], axis=-2), np.concatenate([a, a[:3]], axis=-2))
    assert _PLANS.builds == builds + 2


def test_concatenate_gives_numpys_errors_and_negative_axes(arrays, join_path):
    """NumPy's rules come from empty stand-ins of the pieces: the same exceptions and messages,
    the result shape from the pieces' own lengths."""
    (a, b, c), (x, y, z) = arrays
    same(np.concatenate([z, z[:, :2]], axis=-2), np.concatenate([c, c[:, :2]], axis=-2))
    same(np.concatenate([x, [[1.5] * 33]], axis=0), np.concatenate([a, [[1.5] * 33]], axis=0))
    same(np.concatenate([x, x], dtype=np.float64), np.concatenate([a, a], dtype=np.float64))
    for bad, kwargs in (([x, y], {}), ([x, x], {"axis": 2}), ([x, x], {"axis": -3}),
                        ([x[0, 0], x[0, 1]], {}), ([x, x], {"dtype": np.int8}),
                        ([x, x[:, :3]], {"axis": 0})):
        host = [np.asarray(p) for p in bad]
        with pytest.raises(Exception) as want:
            np.concatenate(host, **kwargs)
        with pytest.raises(type(want.value)) as got:
            np.concatenate(bad, **kwargs)
        assert str(got.value) == str(want.value)


def test_views(arrays):
    (a, b, c), (x, y, z) = arrays
    for got, want in ((np.transpose(z, (2, 0, 1)), np.transpose(c, (2, 0, 1))),
                      (np.swapaxes(z, 0, 2), np.swapaxes(c, 0, 2)),
                      (np.moveaxis(z, 0, -1), np.moveaxis(c, 0, -1)),
                      (np.expand_dims(x, (0, 2)), np.expand_dims(a, (0, 2))),
                      (np.broadcast_to(x[0], (4, 33)), np.broadcast_to(a[0], (4, 33))),
                      (np.diagonal(z, 1, 1, 2), np.diagonal(c, 1, 1, 2))):
        assert got.storage is z.storage or got.storage is x.storage  # a view, no copy
        same(got, want)


def test_gathers_and_masks(arrays):
    (a, b, c), (x, y, z) = arrays
    same(np.take(x, [0, 6, -1, 3], axis=0), np.take(a, [0, 6, -1, 3], axis=0))
    same(np.take(z, cg.asarray(np.array([[1, 0], [32, 5]])), axis=2),
         np.take(c, np.array([[1, 0], [32, 5]]), axis=2))
    same(np.take(x, [5, 40]), np.take(a, [5, 40]))
    same(x.take(3, axis=1), a.take(3, axis=1))
    same(x[[1, 3, 1]], a[[1, 3, 1]])
    same(x.T[cg.asarray(np.array([0, 32]))], a.T[np.array([0, 32])])
    same(x[x > 0], a[a > 0])
    same(z[z[:, :, 0] > 0], c[c[:, :, 0] > 0])
    same(z[cg.asarray(np.array([True, False, True]))], c[np.array([True, False, True])])
    same(x[x > 100], a[a > 100])
    with pytest.raises(IndexError, match="out of bounds"):
        np.take(x, [7], axis=0)
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[cg.asarray(np.ones(5, bool))]


def test_pad_products_diagonals_triangles(arrays):
    (a, b, c), (x, y, z) = arrays
    same(np.pad(x, ((1, 2), (0, 3)), constant_values=5), np.pad(a, ((1, 2), (0, 3)), constant_values=5))
    same(np.pad(z, 1), np.pad(c, 1))
    same(np.outer(x[0], y[:, 0]), np.outer(a[0], b[:, 0]))
    same(np.inner(x, x), np.inner(a, a), 1e-5)
    same(np.tensordot(z, y, axes=([2], [0])), np.tensordot(c, b, axes=([2], [0])), 1e-5)
    same(np.tensordot(z, z.transpose(1, 2, 0), axes=2), np.tensordot(c, c.transpose(1, 2, 0), axes=2), 1e-5)
    same(np.trace(x), np.trace(a))
    same(np.trace(z, 1, 1, 2), np.trace(c, 1, 1, 2))
    same(np.diag(x, 2), np.diag(a, 2))
    same(np.diag(x[0, :7], -1), np.diag(a[0, :7], -1))
    for k in (-2, 0, 3):
        same(np.tril(z, k), np.tril(c, k))
        same(np.triu(x, k), np.triu(a, k))
    same(np.linalg.norm(x), np.linalg.norm(a), 1e-6)
    same(np.linalg.norm(z, axis=-1), np.linalg.norm(c, axis=-1), 1e-6)


def test_creation_on_the_arrays_device(arrays):
    _, (x, _, _) = arrays
    for args in ((10,), (3, 100, 7), (0.1, 5.3, 0.2), (5, -7, -3), (2.5,)):
        got = np.arange(*args, like=x)
        assert got.device == x.device
        same(got, np.arange(*args), 0)
    same(np.arange(1, 9, dtype=np.float32, like=x), np.arange(1, 9, dtype=np.float32), 0)
    for num, endpoint in ((11, True), (1, True), (7, False), (0, True)):
        same(cg.linspace(-1.5, 2, num, endpoint=endpoint), np.linspace(-1.5, 2, num, endpoint=endpoint), 0)
    same(cg.linspace(0, 1, 5, dtype=np.float32), np.linspace(0, 1, 5, dtype=np.float32), 0)
    same(np.eye(4, 5, k=1, like=x), np.eye(4, 5, k=1))
    same(np.eye(3, dtype=np.int32, like=x), np.eye(3, dtype=np.int32))
    for f in (np.zeros_like, np.ones_like, np.empty_like):
        assert f(x).device == x.device and f(x).shape == x.shape
    same(np.full_like(x, 7), np.full_like(np.asarray(x), 7))


@pytest.mark.parametrize("func,args,kwargs", [
    (np.zeros, ((2, 3),), {}), (np.zeros, (7,), {"dtype": np.int32}),
    (np.zeros, ((3, 5),), {"dtype": np.float32, "order": "F"}), (np.zeros, (5,), {"dtype": bool}),
    (np.ones, ((31,),), {"dtype": np.float32}), (np.ones, ((0, 4),), {}),
    (np.full, ((2, 2), 7), {}), (np.full, ((3,), 2.5, np.float32), {}),
    (np.full, ((2, 3), 2.7), {"dtype": np.int16}), (np.full, ((2, 3), [1, 2, 3]), {}),
    (np.identity, (4,), {}), (np.identity, (3,), {"dtype": np.int8})])
def test_filled_creation_with_like_stays_on_the_device(arrays, func, args, kwargs):
    """``np.zeros(..., like=x)`` and its kin: a device array on ``x``'s device, NumPy's
    values, dtype and memory order, no host call."""
    _, (x, _, _) = arrays
    calls_before = dict(cg.on_host_calls())
    got = func(*args, like=x, **kwargs)
    want = func(*args, **kwargs)
    assert got.device == x.device
    same(got, want, 0)
    assert np.asarray(got).flags.f_contiguous == want.flags.f_contiguous
    assert dict(cg.on_host_calls()) == calls_before


def test_empty_with_like_has_numpys_shape_and_dtype(arrays):
    _, (x, _, _) = arrays
    for args, kwargs in (((3, 4),), {}), (((6,),), {"dtype": np.int16}), (((0,),), {}):
        got, want = np.empty(*args, like=x, **kwargs), np.empty(*args, **kwargs)
        assert type(got) is cg.DeviceArray and got.device == x.device
        assert (got.shape, got.dtype) == (want.shape, want.dtype)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(7, 33), (33, 5)]), ("bij,bjk->bik", [(3, 7, 5), (3, 5, 4)]),
    ("ij,kj->ik", [(7, 5), (4, 5)]), ("bij,jk", [(3, 7, 5), (5, 2)]), ("i,i", [(31,), (31,)]),
    ("i,j->ij", [(7,), (5,)]), ("ii->i", [(7, 7)]), ("ii", [(7, 7)]), ("ij->ji", [(7, 5)]),
    ("bij->j", [(3, 7, 5)]), ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 7, 5), (2, 3, 4, 5)]), ("ijk,k->i", [(3, 4, 5), (5,)]),
])
def test_einsum(subscripts, shapes):
    hosts = [random_array(s, np.float64, i) for i, s in enumerate(shapes)]
    got = np.einsum(subscripts, *(cg.asarray(h) for h in hosts))
    same(got, np.einsum(subscripts, *hosts), 1e-12)


def test_einsum_on_the_host_is_counted():
    h = random_array((4, 5), np.float64)
    v = random_array((1,), np.float64)
    got = np.einsum("ij,j->i", cg.asarray(h), cg.asarray(v))  # a broadcast length-1 axis
    assert isinstance(got, cg.DeviceArray)
    np.testing.assert_allclose(np.asarray(got), np.einsum("ij,j->i", h, v))
    assert cg.on_host_calls() == {"einsum": 1}
    cg.reset_host_calls()


@pytest.mark.parametrize("host_path", [True, False])
def test_small_norm_and_arange_take_the_host_path(host_path, launches):
    """Small work on unified memory: NumPy's norm on the mapping and NumPy's arange, no
    kernel; otherwise sqrt(sum(x*x)) and the iota kernel. Either way NumPy's values."""
    a = random_array((973,), np.float32, 4)
    with cg.host_path(host_path):
        x = cg.asarray(a)
        same(np.linalg.norm(x), np.linalg.norm(a), 1e-6)
        same(np.linalg.norm(x.reshape(7, 139), axis=1), np.linalg.norm(a.reshape(7, 139), axis=1),
             1e-6)
        same(np.arange(8, like=x), np.arange(8), 0)
        same(np.arange(0.5, 9, 0.25, like=x), np.arange(0.5, 9, 0.25), 0)
        same(np.arange(3, 10, 2, dtype=np.int16, like=x), np.arange(3, 10, 2, dtype=np.int16), 0)
        same(np.arange(5, 0, -1.5, like=x), np.arange(5, 0, -1.5), 0)
        same(np.arange(4, 1, like=x), np.arange(4, 1), 0)
    on_host = host_path and x.device.info.host_unified_memory
    assert (not launches) == on_host, launches


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_repeated_host_norm_is_numpys_bits(host_path, dtype):
    """The host path's repeated-call plan for ``np.linalg.norm(x)`` (contiguous vectors,
    strided and reversed vectors, matrices and their transposes): NumPy's bits on every call,
    new values included, and a 0-d device array."""
    base = random_array((31, 33), dtype, 9)
    x = cg.asarray(base)
    for _ in range(3):
        cases = [(x[3], base[3]), (x[:, 5], base[:, 5]), (x[2][::-3], base[2][::-3]),
                 (x, base), (x.T, base.T), (x[1:30:2, ::2], base[1:30:2, ::2])]
        for dev, host in cases:
            for ord in (None, 2 if dev.ndim == 1 else "fro"):
                got = np.linalg.norm(dev, ord)
                assert isinstance(got, cg.DeviceArray) and got.shape == ()
                want = np.linalg.norm(host, ord)
                assert np.asarray(got).dtype == want.dtype
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (
                    dev.shape, dev.strides, ord)
        x[...] = base * 2
        base = base * 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, axis", [((1,), None), ((7,), 0), ((31, 33), None),
                                         ((31, 33), 1), ((257, 3), 0), ((5, 1100), 0),
                                         ((3, 7, 5), (0, 2)), ((100003,), None), ((0, 4), 0)])
def test_norm_is_one_reduction_kernel_with_numpys_values(dtype, shape, axis, launches):
    """2-norms and Frobenius norms of float arrays: the sum of squares and its square root in one
    reduction (two launches where the reduction is split), as NumPy's values and dtypes."""
    a = random_array(shape, dtype, 7)
    x = cg.asarray(a)
    with cg.host_path(False):
        for keepdims in (False, True):
            launches.clear()
            got = np.linalg.norm(x, axis=axis, keepdims=keepdims)
            want = np.linalg.norm(a, axis=axis, keepdims=keepdims)
            same(got, want, 1e-6 if dtype == np.float32 else 1e-12)
            names = [k.function_name for _, k in launches]
            assert set(names) <= {"reduce", "reduce_cols"} and 1 <= len(names) <= 2, names
        view = x[::-1] if x.ndim == 1 else x.T[::2]  # strided and reversed operands
        want = np.linalg.norm(a[::-1] if a.ndim == 1 else a.T[::2])
        same(np.linalg.norm(view), want, 1e-6 if dtype == np.float32 else 1e-12)


def test_norm_special_values_are_numpys():
    a = np.array([[3.0, np.inf, 1.0], [np.nan, 2.0, -0.0], [-0.0, 0.0, -0.0]], np.float32)
    x = cg.asarray(a)
    with cg.host_path(False):
        for axis in (None, 0, 1):
            got, want = np.asarray(np.linalg.norm(x, axis=axis)), np.linalg.norm(a, axis=axis)
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_round_is_numpys_three_steps_on_the_device(dtype):
    """``np.round``/``np.around``/``x.round`` of floats: NumPy's bits (ties to even, 2.675,
    NaN (any payload: NVIDIA's float32 arithmetic returns its canonical NaN), -0.0, inf,
    overflowing scales) from device ufuncs, no host call; ``out=``; integers
    copied (negative decimals: NumPy's on the host, counted); bool raises NumPy's error."""
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((5, 7)) * 1000).astype(dtype)
    a[0, :5] = [np.nan, -0.0, 2.675, np.inf, 0.5]
    x = cg.asarray(a)
    cg.reset_host_calls()
    with np.errstate(all="ignore"):
        for d in (0, 1, 2, -1, -2, 12):
            for got, want in ((np.round(x, d), np.round(a, d)), (np.around(x, d), np.around(a, d)),
                              (x[1:].round(d), a[1:].round(d))):
                assert isinstance(got, cg.DeviceArray) and got.dtype == want.dtype
                assert same_values(np.asarray(got), want).all(), (d, np.asarray(got), want)
        out = cg.zeros((5, 7), np.float64)
        assert np.round(x, 1, out=out) is out
        np.testing.assert_array_equal(np.asarray(out), np.round(a, 1, out=np.zeros((5, 7))))
    assert cg.on_host_calls() == {}
    i = np.array([15, 25, -35, 7], np.int32)
    assert_same = np.testing.assert_array_equal
    assert_same(np.asarray(np.round(cg.asarray(i), 2)), np.round(i, 2))
    assert_same(np.asarray(np.round(cg.asarray(i), -1)), np.round(i, -1))
    assert cg.on_host_calls() == {"round": 1}
    with pytest.raises(TypeError):   # NumPy: _UFuncOutputCastingError (a TypeError)
        np.round(cg.asarray(np.array([True, False])))
    cg.reset_host_calls()   # (those two were meant)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_nan_to_num_on_the_device(dtype):
    """NaN and infinities replaced on the device, values cast to the dtype as NumPy's (a
    replacement beyond float16 becomes inf); ``copy=False`` writes the array itself."""
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 6e4], dtype)
    x = cg.asarray(a)
    with np.errstate(all="ignore"):
        for kw in ({}, {"nan": -1, "posinf": 7, "neginf": -7}, {"nan": 1e6},
                   {"posinf": np.float64(2.5)}):
            got, want = np.nan_to_num(x, **kw), np.nan_to_num(a, **kw)
            assert isinstance(got, cg.DeviceArray) and got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))
    y = cg.asarray(a.copy())
    assert np.nan_to_num(y, copy=False) is y
    np.testing.assert_array_equal(np.asarray(y), np.nan_to_num(a))
    np.testing.assert_array_equal(np.asarray(x), a)   # copy=True left x alone
