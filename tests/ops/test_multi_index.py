"""Indexing with several integer arrays, ``a[i0, ..., ik]``, on the device: the indices folded
into one row index of a's leading axes (opencl/gather.cl ravel_index) and one take gather,
against NumPy bit for bit: 2-D and 3-D arrays, element types, odd sizes, negative and broadcast
indices, index arrays as lists, ndarrays and device arrays of several integer types, NumPy's
IndexError for an index out of range and for shapes that do not broadcast, empty indices,
strided sources. Assignment ``a[i0, ..., ik] = v`` (and ``-=``) scatters on the device: NumPy's
cast and broadcast of v, the last of repeated positions written, NumPy's errors in its order.
ravel_index and the scatter kernels under Oclgrind with its checks on."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg

from conftest import assert_clean_under_oclgrind

DTYPES = ["float32", "float64", "int32", "float16"]


def _source(shape, dtype) -> np.ndarray:
    rng = np.random.default_rng(sum(shape) + len(dtype))
    dt = np.dtype(dtype)
    if dt.kind in "iu":  # distinct and never -1 (the poison's value)
        return np.arange(int(np.prod(shape)), dtype=dt).reshape(shape)
    return rng.standard_normal(shape).astype(dt)


def _poison(nbytes: int) -> None:
    """Leave an all-ones buffer (NaN, or -1) of the result's size in the pool for the gather."""
    p = cg.full(max(nbytes, 1), 0xFF, dtype=np.uint8)
    np.asarray(p)
    del p


def _same(got, want) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


def _as(kind, idx, device, dtype=np.int64):
    if kind == "list":
        return np.asarray(idx).tolist()
    if kind == "numpy":
        return np.asarray(idx, dtype)
    return cg.asarray(np.asarray(idx, dtype), device=device)


def _skip_fp64(device, dtype):
    if dtype == "float64" and not device.info.fp64:
        pytest.skip("no fp64 on this device")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", [(1, 1), (7, 31), (33, 7), (31, 33)])
def test_rows_and_labels_like_numpy(device, dtype, rows, cols):
    """``P[np.arange(B), y]`` with y on the device, and negative labels, no host call."""
    _skip_fp64(device, dtype)
    a = _source((rows, cols), dtype)
    x = cg.asarray(a, device=device)
    rng = np.random.default_rng(rows * cols)
    y = rng.integers(-cols, cols, size=rows)
    want = a[np.arange(rows), y]
    before = cg.on_host_calls()
    for idx_dtype in (np.int32, np.int64):
        _poison(want.nbytes)
        _same(x[np.arange(rows), cg.asarray(y.astype(idx_dtype), device=device)], want)
    assert cg.on_host_calls() == before


@pytest.mark.parametrize("kinds", [("list", "numpy"), ("numpy", "device"), ("device", "list"),
                                   ("device", "device")])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64, np.uint8])
def test_broadcast_index_shapes_and_kinds(device, kinds, idx_dtype):
    a = _source((7, 33), "float32")
    x = cg.asarray(a, device=device)
    i0 = np.array([[0], [6], [3], [1], [5]])
    i1 = np.array([32, 0, 17])
    if idx_dtype != np.uint8:
        i0, i1 = i0 - 7 * (i0 % 2), i1 - 33 * (i1 % 2)  # some negative
    want = a[i0, i1]
    before = cg.on_host_calls()
    _poison(want.nbytes)
    got = x[_as(kinds[0], i0, device, idx_dtype), _as(kinds[1], i1, device, idx_dtype)]
    _same(got, want)
    assert isinstance(got, cg.DeviceArray) and cg.on_host_calls() == before


@pytest.mark.parametrize("dtype", DTYPES)
def test_three_dimensional_trailing_axes_kept(device, dtype):
    _skip_fp64(device, dtype)
    a = _source((7, 5, 3), dtype)
    x = cg.asarray(a, device=device)
    i0, i1, i2 = np.array([6, -7, 2, 0]), np.array([[4], [-1]]), np.array([2, 0, -3, 1])
    before = cg.on_host_calls()
    for key, want in (((i0, i1), a[i0, i1]), ((i0, i1, i2), a[i0, i1, i2]),
                      ((cg.asarray(i1, device=device), i0[2:3]), a[i1, i0[2:3]])):
        _poison(want.nbytes)
        _same(x[key], want)
    assert cg.on_host_calls() == before


def test_strided_and_transposed_sources(device):
    a = _source((31, 33), "float32")
    x = cg.asarray(a, device=device)
    i0, i1 = np.array([0, 5, -1, 2]), np.array([3, -2, 7, 0])
    for view, host in ((x.T, a.T), (x[1::3, ::-2], a[1::3, ::-2]), (x[2:9], a[2:9])):
        _same(view[i0 % host.shape[0], i1], host[i0 % host.shape[0], i1])
    b = _source((7, 5, 3), "int32")
    y = cg.asarray(b, device=device)
    t, bt = y.transpose(1, 0, 2), b.transpose(1, 0, 2)
    _same(t[[4, 0, -5], [6, 6, -7]], bt[[4, 0, -5], [6, 6, -7]])


@pytest.mark.parametrize("on_device", [False, True], ids=["numpy-indices", "device-indices"])
def test_out_of_range_raises_numpys_error(device, on_device):
    a = _source((3, 4), "float32")
    x = cg.asarray(a, device=device)
    cases = [([5, 10], [0, 0]), ([10, 5], [0, 0]), ([1, -4], [0, 9]), ([0, 0], [9, 7]),
             ([[0], [1]], [9, -7]), ([2], [3, -5]), ([-9, 5], [0, 0])]
    for i0, i1 in cases:
        key = tuple(cg.asarray(np.array(i), device=device) if on_device else np.array(i)
                    for i in (i0, i1))
        with pytest.raises(IndexError) as numpys:
            a[np.array(i0), np.array(i1)]
        with pytest.raises(IndexError) as ours:
            x[key]
        assert str(ours.value) == str(numpys.value)
    # a device array's bad index on axis 0 is named before a host array's on axis 1
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 3"):
        x[cg.asarray(np.array([0, 7]), device=device), np.array([9, 0])]
    # transposed index array: NumPy names the first bad index in memory order
    t = np.array([[0, 7], [5, 0]]).T
    with pytest.raises(IndexError) as numpys:
        a[t, [0]]
    with pytest.raises(IndexError) as ours:
        x[cg.asarray(np.array([[0, 7], [5, 0]]), device=device).T if on_device else t, [0]]
    assert str(ours.value) == str(numpys.value)
    # nothing is left behind: the next gather with good indices succeeds
    _same(x[cg.asarray(np.array([2, 0]), device=device), [3, 1]], a[[2, 0], [3, 1]])


def test_shape_mismatch_and_empty_indices(device):
    a = _source((3, 4), "int32")
    x = cg.asarray(a, device=device)
    with pytest.raises(IndexError) as numpys:
        a[[0, 2, 1], [1, 2]]
    with pytest.raises(IndexError) as ours:
        x[[0, 2, 1], cg.asarray(np.array([1, 2]), device=device)]
    assert str(ours.value) == str(numpys.value)
    before = cg.on_host_calls()
    for i0, i1 in (([], []), ([[], []], [1]), ([], [7]), (np.zeros((3, 0), int), [[1], [2], [5]])):
        _same(x[i0, i1], a[i0, i1])
        _same(x[cg.asarray(np.array(i0, np.int64), device=device), i1], a[i0, i1])
    e = np.zeros((3, 4, 0), np.float32)
    _same(cg.asarray(e, device=device)[[0, 2], [3, -4]], e[[0, 2], [3, -4]])
    assert cg.on_host_calls() == before


def test_other_forms_keep_their_path(device):
    a = _source((4, 5), "float32")
    x = cg.asarray(a, device=device)
    for key in ((1, [0, 2]), ([0, 1], slice(None)), (np.array([True, False, True, True]), 0),
                ([0.0, 1.0], [1, 2])):
        try:
            want = a[key]
        except IndexError as numpys:
            with pytest.raises(IndexError) as ours:
                x[key]
            assert str(ours.value) == str(numpys)
            continue
        _same(x[key], want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 31), (33, 7), (7, 5, 3)])
def test_assignment_last_repeat_wins_like_numpy(device, dtype, shape):
    _skip_fp64(device, dtype)
    a = _source(shape, dtype)
    x = cg.asarray(a, device=device)
    rng = np.random.default_rng(len(shape) + shape[0])
    m = 3 * shape[0] * shape[1] + 5   # many repeats: every position claimed several times
    i0 = rng.integers(-shape[0], shape[0], size=m)
    i1 = cg.asarray(rng.integers(-shape[1], shape[1], size=m).astype(np.int32), device=device)
    v = _source((m,) + shape[2:], dtype)[::-1].copy()
    before = cg.on_host_calls()
    x[i0, i1] = cg.asarray(v, device=device)
    a[i0, np.asarray(i1)] = v
    _same(x, a)
    x[i0[:5], i1[:5]] = 7          # a scalar, broadcast
    a[i0[:5], np.asarray(i1)[:5]] = 7
    _same(x, a)
    assert cg.on_host_calls() == before


@pytest.mark.parametrize("dtype", DTYPES)
def test_augmented_assignment_of_labels(device, dtype):
    """``g[np.arange(B), y] -= 1`` (softmax cross-entropy's gradient), y on the device."""
    _skip_fp64(device, dtype)
    g = _source((33, 7), dtype)
    x = cg.asarray(g, device=device)
    y = np.random.default_rng(1).integers(0, 7, size=33)
    before = cg.on_host_calls()
    x[np.arange(33), cg.asarray(y, device=device)] -= 1
    g[np.arange(33), y] -= 1
    x[[0, 0, 2], [1, 1, -1]] += 3   # repeated: added once, as NumPy's get then set
    g[[0, 0, 2], [1, 1, -1]] += 3
    _same(x, g)
    assert cg.on_host_calls() == before


def test_assignment_casts_and_broadcasts_values(device):
    a = _source((7, 5, 3), "int32")
    x = cg.asarray(a, device=device)
    i0, i1 = np.array([[0], [6], [-2]]), np.array([4, -5])
    for v in (np.array([1.7, -2.9, 3.2]), [[[9]]], np.arange(6 * 3).reshape(1, 3, 2, 3),
              cg.asarray(np.array([-1.5, 2.5, 7.9]), device=device),
              cg.asarray(np.arange(6, dtype=np.uint8).reshape(3, 2, 1), device=device)):
        x[i0, i1] = v
        a[i0, i1] = np.asarray(v)
        _same(x, a)
    # a value that is a view of the target: read in full before any write, as NumPy buffers it
    c = _source((7, 5), "float32")
    z = cg.asarray(c, device=device)
    z[[1, 0, 2, 3, 4], [0, 1, 2, 3, 4]] = z[0]
    c[[1, 0, 2, 3, 4], [0, 1, 2, 3, 4]] = c[0]
    _same(z, c)
    # a strided target: NumPy's answer through the host path
    y, b = cg.asarray(a, device=device)[:, ::2], a[:, ::2].copy()
    y[[1, 2], [0, 1]] = 5
    b[[1, 2], [0, 1]] = 5
    _same(y, b)


def test_assignment_errors_in_numpys_order(device):
    a = _source((3, 4), "int32")
    x = cg.asarray(a, device=device)
    dev = cg.asarray(np.array([0, 9]), device=device)
    cases = [(([0, 9], [0, 1]), np.ones(3)), (([0, 1, 2], [0, 1]), np.ones(3)),
             (([0, 9], [0, 1]), 2 ** 40), (([], []), np.ones(3)), (([0, 1], [0, 1]),
             np.ones((2, 1))), (([1, -4], [0, 1]), 5), (([0, 1], [9, 1]), [1, 2]),
             ((dev, [0, 1]), 1), (([0, 1, 2], [0, 1]), 2 ** 40)]
    for key, v in cases:
        host_key = tuple(np.asarray(k) if isinstance(k, cg.DeviceArray) else k for k in key)
        with pytest.raises(Exception) as numpys:
            a[host_key] = v
        with pytest.raises(type(numpys.value)) as ours:
            x[key] = v
        assert str(ours.value) == str(numpys.value)
    _same(x, a)   # nothing written by a failed assignment
    x[[], [7]] = 5   # no positions: no check, as NumPy
    a[[], [7]] = 5
    _same(x, a)


# ravel_index alone under Oclgrind: every define combination, broadcast strides, offsets,
# a bad index flagged; the flat indices written are compared with NumPy's ravel_multi_index.
# Then the three scatter kernels, compared with NumPy's assignment.
SCRIPT = r"""
import sys
import numpy as np
import pyopencl as cl
import clarray_gemm as cg
from clarray_gemm.kernels.copy import as_long8, merge_dims
from clarray_gemm.kernels.programs import ctype, get_kernel

dev = next(d for d in cg.devices() if d.info.is_simulator)
ctx, queue = dev.context, dev.queue
kept = []

def buffer(host):
    kept.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                          hostbuf=host))
    return kept[-1]

rng = np.random.default_rng(0)
for dims, shapes, dt in [((7, 5), [(3, 1), (4,)], np.int32), ((3, 4, 5), [(5,), (2, 1), (1,)],
                         np.uint8), ((33,), [(31,)], np.int64)]:
    bshape = np.broadcast_shapes(*shapes)
    n = int(np.prod(bshape))
    idx = [rng.integers(-d if dt != np.uint8 else 0, d, size=s).astype(dt)
           for d, s in zip(dims, shapes)]
    for check in (0, 1):
        flat = buffer(np.full(n, -7, np.int64))
        flag = buffer(np.zeros(1, np.int32))
        for axis, (i, d) in enumerate(zip(idx, dims)):
            host = np.concatenate([np.zeros(3, dt), i.ravel()])   # an offset of 3
            view = np.broadcast_to(i, bshape)
            shp, (st,) = merge_dims(bshape, [s // i.itemsize for s in view.strides])
            k = get_kernel(dev, "gather.cl", "ravel_index",
                           {"NDIM": len(shp), "IDX_T": ctype(np.dtype(dt)), "CHECK": check,
                            "FIRST": int(axis == 0)})
            args = [np.int64(n), as_long8(shp, 1), as_long8(st, 0), buffer(host), np.int64(3),
                    np.int64(d), flat] + ([flag, np.int32(5)] if check else [])
            k(queue, (-(-n // 4) * 4,), (4,), *args)
        got = np.empty(n, np.int64)
        cl.enqueue_copy(queue, got, flat)
        word = np.empty(1, np.int32)
        cl.enqueue_copy(queue, word, flag)
        want = np.ravel_multi_index(tuple(np.broadcast_to(i.astype(np.int64) % d, bshape)
                                          for i, d in zip(idx, dims)), dims).ravel()
        if not np.array_equal(got, want) or word[0] != 0:
            print("MISMATCH", dims, check, got, want, word)
            sys.exit(3)
    # one index out of range: the word takes the epoch
    bad = np.array([0, 9, 1], np.int32)
    flat, flag = buffer(np.zeros(3, np.int64)), buffer(np.zeros(1, np.int32))
    k = get_kernel(dev, "gather.cl", "ravel_index",
                   {"NDIM": 1, "IDX_T": "int", "CHECK": 1, "FIRST": 1})
    k(queue, (4,), (4,), np.int64(3), as_long8([3], 1), as_long8([1], 0), buffer(bad),
      np.int64(0), np.int64(7), flat, flag, np.int32(11))
    word = np.empty(1, np.int32)
    cl.enqueue_copy(queue, word, flag)
    if word[0] != 11:
        print("NOT FLAGGED", word)
        sys.exit(3)

# the scatter: rows of a (5, 2, 3) target seen as 5 rows of 6 columns, a strided column layout
# (every other element of the innermost axis), repeated rows; the winner words poisoned (the
# atomic exchange that clears them reads the old word, which Oclgrind would call uninitialised)
target = np.arange(5 * 2 * 6, dtype=np.float32).reshape(5, 2, 6)
flat_rows = np.array([3, 0, 3, 4, 3, 0, 1], np.int64)
src = (100 + np.arange(7 * 6, dtype=np.float32)).reshape(7, 2, 3)
shp, (st,) = merge_dims((2, 3), [6, 2])
defines = {"T": "float", "NDIM": len(shp)}
tbuf, fbuf, sbuf = buffer(target.copy()), buffer(flat_rows), buffer(src)
winner = buffer(np.full(5, 0x5A5A5A5A, np.int32))
for name in ("scatter_clear", "scatter_claim"):
    get_kernel(dev, "gather.cl", name, defines)(queue, (8,), (4,), np.int64(7), fbuf, winner)
get_kernel(dev, "gather.cl", "scatter_rows", defines)(
    queue, (44,), (4,), np.int64(42), np.int64(6), fbuf, winner, tbuf, np.int64(0),
    np.int64(12), as_long8(shp, 1), as_long8(st, 0), sbuf)
got = np.empty_like(target)
cl.enqueue_copy(queue, got, tbuf)
want = target.copy()
want[:, :, ::2][flat_rows] = src
if not np.array_equal(got, want):
    print("SCATTER MISMATCH", got, want)
    sys.exit(3)
queue.finish()
print("ok")
"""


def test_ravel_index_and_scatter_are_clean_under_oclgrind(oclgrind):
    assert_clean_under_oclgrind(SCRIPT)
