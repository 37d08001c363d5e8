"""DeviceArray: creation, views, conversion, indexing, NumPy protocols and host fallback."""
import subprocess
import sys

import numpy as np
import pytest

import clarray_gemm as cg
from conftest import assert_matches, random_array


def test_creation_functions(device):
    assert cg.empty((2, 3)).dtype == np.float64  # NumPy's default dtype
    np.testing.assert_array_equal(np.asarray(cg.zeros((2, 3), np.int32)), np.zeros((2, 3), np.int32))
    np.testing.assert_array_equal(np.asarray(cg.ones(4, np.float32)), np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(cg.full((2, 2), 7, np.int64)), np.full((2, 2), 7))
    x = cg.asarray([[1, 2], [3, 4]], dtype=np.float32, device=device)
    assert x.device == device and x.shape == (2, 2) and x.dtype == np.float32
    assert cg.asarray(x) is x
    assert cg.asarray(x, copy=True) is not x
    z = cg.zeros_like(x)
    assert z.shape == x.shape and z.dtype == x.dtype and z.device == device
    assert np.zeros_like(x).__class__ is cg.DeviceArray
    with pytest.raises(ValueError, match="negative dimensions"):
        cg.empty((-1, 2))
    with pytest.raises(TypeError):
        cg.asarray(np.array([object()]))


def test_attributes_and_repr(device):
    a = random_array((3, 5), np.float32, 1)
    x = cg.asarray(a)
    assert (x.shape, x.dtype, x.ndim, x.size, x.nbytes, len(x)) == ((3, 5), a.dtype, 2, 15, 60, 3)
    assert device.name in repr(x) and "DeviceArray" in repr(x)
    with pytest.raises(TypeError):
        len(cg.asarray(np.float32(1)))


@pytest.mark.parametrize("index", [(), (slice(1, None), slice(None, None, -2)),
                                   (slice(None, None, -1), 2), (Ellipsis, slice(3, 4))])
def test_transposes_of_views_have_numpys_geometry(index):
    a = random_array((7, 5, 3), np.float32, 5)
    x = cg.asarray(a)
    view, expected = x[index], a[index]
    for got, want in [(view.T, expected.T), (view.transpose(), expected.transpose()),
                      (np.transpose(view), np.transpose(expected))] + (
                         [(view.mT, np.swapaxes(expected, -1, -2))] if expected.ndim >= 2 else []):
        assert got.shape == want.shape and got.strides == want.strides
        assert got.storage is x.storage
        np.testing.assert_array_equal(np.asarray(got), want)


def test_views_share_storage_and_match_numpy():
    a = random_array((4, 6, 5), np.float32, 2)
    x = cg.asarray(a)
    for view, expected in [(x.T, a.T), (x[1:, ::2, -1], a[1:, ::2, -1]), (x[..., None, 1], a[..., None, 1]),
                           (x.reshape(24, 5), a.reshape(24, 5)), (x.transpose(1, 0, 2), a.transpose(1, 0, 2)),
                           (x.mT, np.swapaxes(a, -1, -2)), (x[::-1, 2], a[::-1, 2]), (x.swapaxes(0, 2), a.swapaxes(0, 2)),
                           (np.transpose(x), a.T), (np.reshape(x, (-1,)), a.ravel())]:
        assert isinstance(view, cg.DeviceArray)
        assert view.storage is x.storage  # a view, not a copy
        np.testing.assert_array_equal(np.asarray(view), expected)
    copied = x.T.reshape(-1)  # not expressible as a view: NumPy copies, so do we
    np.testing.assert_array_equal(np.asarray(copied), a.T.reshape(-1))
    with pytest.raises(ValueError):
        x.reshape(7, 7)
    with pytest.raises(IndexError):
        x[4]


def test_repeated_views_and_unhashable_bounds_keep_numpys_geometry():
    """The view geometry remembered per (layout, key) answers again for each layout (a key
    whose negative bounds mean another slice on another shape), and a bound Python cannot
    hash (a 0-d device array, as a rank computed on the device) still indexes as NumPy."""
    for shape in [(7, 5), (9, 3)]:
        a = random_array(shape, np.float32, 4)
        x = cg.asarray(a)
        for _ in range(2):
            for key in [(slice(1, -1), slice(1, -1)), (0, slice(None)), (-1,), (slice(None), -2)]:
                np.testing.assert_array_equal(np.asarray(x[key]), a[key])
    a = random_array((6, 4), np.float32, 5)
    x = cg.asarray(a)
    rank = cg.asarray(np.array(3))
    np.testing.assert_array_equal(np.asarray(x[:rank, :]), a[:3, :])
    x[:rank, 0] = x[3:, 1]
    a[:3, 0] = a[3:, 1]
    np.testing.assert_array_equal(np.asarray(x), a)
    # a float bound hashes as the int one a view just used; NumPy refuses it all the same
    x[1:3]
    with pytest.raises(TypeError):
        a[1.0:3]
    with pytest.raises(TypeError):
        x[1.0:3]


def test_scalar_and_advanced_indexing():
    a = random_array((5, 4), np.int32, 3)
    x = cg.asarray(a)
    assert x[2, 3] == a[2, 3] and isinstance(x[2, 3], np.int32)
    np.testing.assert_array_equal(np.asarray(x[[0, 3, 3]]), a[[0, 3, 3]])
    np.testing.assert_array_equal(np.asarray(x[a > 0]), a[a > 0])
    assert [int(r[0]) for r in x] == list(a[:, 0])
    zero_d = cg.asarray(np.array(7.5, np.float32))
    assert type(zero_d[()]) is np.float32 and zero_d[()] == 7.5    # NumPy's scalar
    assert isinstance(zero_d[...], cg.DeviceArray) and zero_d[...].shape == ()
    assert isinstance(x[2, 3, ...], cg.DeviceArray) and x[2, 3, ...].shape == ()
    assert isinstance(x[()], cg.DeviceArray) and x[()].shape == (5, 4)
    zero_d[()] = 2.0
    assert float(zero_d) == 2.0


def test_setitem_host_and_device_values():
    a = np.zeros((4, 5), np.float32)
    x = cg.asarray(a)
    x[1] = 3.0
    x[:, 2] = np.arange(4)
    x[2:, :2] = cg.asarray(np.full((2, 2), 9, np.int32))  # device-side copy with cast
    x[x.__array__() > 8] = -1
    a[1] = 3.0
    a[:, 2] = np.arange(4)
    a[2:, :2] = 9
    a[a > 8] = -1
    np.testing.assert_array_equal(np.asarray(x), a)
    with pytest.raises(ValueError):
        x[0] = np.ones(3)


def test_setitem_from_an_overlapping_view_of_itself():
    a = np.arange(1000, dtype=np.float32)
    x = cg.asarray(a)
    x[1:] = x[:-1]
    x[::2] = x[::-1][::2]
    a[1:] = a[:-1]
    a[::2] = a[::-1][::2]
    np.testing.assert_array_equal(np.asarray(x), a)


def test_copy_astype_get():
    a = random_array((6, 7), np.float64, 4)
    x = cg.asarray(a)
    c = x.T.copy()
    assert c.storage is not x.storage and c.is_c_contiguous
    np.testing.assert_array_equal(np.asarray(c), a.T)
    for dt in (np.float32, np.int32, np.int64, np.uint8, np.bool_, np.float16, np.complex64):
        np.testing.assert_array_equal(np.asarray(x.astype(dt)), a.astype(dt))
    g = x.get()
    assert g.flags.writeable and g.flags.owndata
    g[0, 0] = 123
    assert np.asarray(x)[0, 0] == a[0, 0]
    with pytest.raises(TypeError):
        x.astype(np.int32, casting="safe")


def test_ufuncs_and_operators_stay_on_device():
    a = random_array((3, 4), np.float32, 5)
    x = cg.asarray(a)
    for got, expected in [(x + 1, a + 1), (2 * x, 2 * a), (x - a, x.__array__() - a), (x / 2, a / 2),
                          (-x, -a), (np.sqrt(np.abs(x)), np.sqrt(np.abs(a))), (x > 0, a > 0),
                          (np.maximum(x, a.T[:4].T), np.maximum(a, a)), (a + x, a + a), (x ** 2, a ** 2)]:
        assert isinstance(got, cg.DeviceArray), type(got)
        assert got.dtype == expected.dtype
        assert_matches(got, expected)
    i = cg.asarray(np.array([2 ** 31 - 1], np.int32))
    np.testing.assert_array_equal(np.asarray(i + 1), np.array([2 ** 31 - 1], np.int32) + 1)  # wraps


@pytest.mark.parametrize("da,db", [(np.float64, np.float16), (np.float16, np.int32), (np.bool_, np.int8),
                                   (np.uint8, np.int8), (np.int64, np.uint64), (np.float32, np.bool_)])
def test_mixed_dtype_arithmetic_matches_numpy(da, db):
    a = (random_array((4, 3), np.float64, 1) * 40).astype(da)
    b = (random_array((3,), np.float64, 2) * 40).astype(db)
    for op in (np.add, np.subtract, np.multiply, np.true_divide, np.maximum):
        with np.errstate(all="ignore"):
            expected = op(a, b)
            got = op(cg.asarray(a), b)
        assert isinstance(got, cg.DeviceArray) and got.dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_inplace_and_out_arguments():
    a = random_array((3, 4), np.float32, 6)
    x = cg.asarray(a)
    x += 1
    x *= 2
    np.testing.assert_allclose(np.asarray(x), (a + 1) * 2, rtol=1e-6)
    out = cg.full((3, 4), np.nan, dtype=np.float32)
    assert np.add(x, 1, out=out) is out
    np.testing.assert_allclose(np.asarray(out), (a + 1) * 2 + 1, rtol=1e-6)
    out2 = cg.empty((3, 4), np.float32)
    assert np.exp(x, out=out2) is out2  # host fallback, written back to the device
    np.testing.assert_allclose(np.asarray(out2), np.exp((a + 1) * 2), rtol=1e-6)
    y = cg.asarray(np.arange(6, dtype=np.int64))
    np.add(y[1:], y[:-1], out=y[1:])  # overlapping: NumPy semantics (inputs read first)
    expected = np.arange(6)
    np.add(expected[1:], expected[:-1], out=expected[1:])
    np.testing.assert_array_equal(np.asarray(y), expected)


def test_functions_without_kernels_give_numpys_answer():
    a = random_array((5, 4), np.float64, 7)
    x = cg.asarray(a)
    np.testing.assert_allclose(np.asarray(np.linalg.norm(x)), np.linalg.norm(a), rtol=1e-15)
    np.testing.assert_array_equal(np.sort(x, axis=0), np.sort(a, axis=0))
    np.testing.assert_array_equal(np.concatenate([x, a]), np.concatenate([a, a]))
    # Device tree sums: NumPy's pairwise sum to float64 rounding.
    np.testing.assert_allclose(np.asarray(np.sum(x)), np.sum(a), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(x.sum()), a.sum(), rtol=1e-14)
    np.testing.assert_array_equal(np.where(x > 0, x, 0), np.where(a > 0, a, 0))
    u, s, vt = np.linalg.svd(x)
    np.testing.assert_allclose(s, np.linalg.svd(a)[1])
    # In-place NumPy functions write through to the device array.
    np.copyto(x, 5.0)
    np.fill_diagonal(x, -1)
    ref = np.full_like(a, 5.0)
    np.fill_diagonal(ref, -1)
    np.testing.assert_array_equal(np.asarray(x), ref)
    out = cg.empty(4)
    np.mean(x, axis=0, out=out)
    np.testing.assert_allclose(np.asarray(out), ref.mean(axis=0))


def test_functions_that_write_into_their_arguments_write_the_device_array():
    """NumPy functions and methods that modify an argument in place do so to a device array
    too, with NumPy's answers: nan_to_num(copy=False) returns the array it changed,
    Generator.shuffle of a 1-D array gives the order NumPy gives for the same seed (a 2-D
    one raises: tests/ops/test_random.py); copy=True changes nothing."""
    a = np.array([1.0, np.nan, np.inf, -np.inf, -0.0], np.float32)
    x = cg.asarray(a)
    same = np.nan_to_num(x, copy=True)
    np.testing.assert_array_equal(np.asarray(x), a)          # untouched
    got = np.nan_to_num(x, copy=False, nan=-1.0, posinf=7.0)
    assert got is x
    ref = a.copy()
    np.nan_to_num(ref, copy=False, nan=-1.0, posinf=7.0)
    np.testing.assert_array_equal(np.asarray(x).view(np.uint32), ref.view(np.uint32))
    np.testing.assert_array_equal(np.asarray(same), np.nan_to_num(a))
    for shape, seed in (((31,), 3), ((1,), 5)):
        b = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        y = cg.asarray(b)
        with pytest.warns(UserWarning, match="not a subclass of 'Sequence'"):   # NumPy's
            np.random.default_rng(seed).shuffle(y)
        np.random.default_rng(seed).shuffle(b)
        np.testing.assert_array_equal(np.asarray(y), b)


def existing_numpy_code(features, weights, bias):
    """Ordinary NumPy code, written with no knowledge of device arrays."""
    centered = features - features.mean(axis=0)
    scaled = centered / (np.std(centered, axis=0) + 1e-6)
    logits = scaled @ weights + bias
    logits = logits - np.max(logits, axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    top = np.argmax(probs, axis=1)
    return np.dot(probs.T, scaled), top, float(np.linalg.norm(probs))


def test_existing_numpy_code_runs_unchanged():
    feats = random_array((257, 31), np.float32, 8)
    w = random_array((31, 7), np.float32, 9)
    b = random_array((7,), np.float32, 10)
    host = existing_numpy_code(feats.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    dev = existing_numpy_code(cg.asarray(feats), cg.asarray(w), b)
    assert_matches(dev[0], host[0], rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(dev[1]), host[1])
    assert abs(dev[2] - host[2]) < 1e-4 * host[2]


def test_devices_listing_and_choice(device):
    assert device in cg.devices()
    assert cg.default_device().usable
    with cg.use_device(device.index) as d:
        assert cg.current_device() == d == device
        assert cg.zeros(3).device == device
    with pytest.raises(ValueError):
        cg.get_device("no such device anywhere")
    # a string of digits is an index (a command line's "--devices 0 1"), never a name substring
    assert cg.get_device(str(device.index)) == device == cg.get_device(f"opencl:{device.index}")
    with pytest.raises(ValueError, match="out of range"):
        cg.get_device(str(len(cg.devices(all=True))))
    if cg.default_device().info.is_cpu:  # "cpu" is the CPU device the library uses by default
        assert cg.get_device("cpu") == cg.default_device()


def test_a_device_is_one_object_per_process_through_copies_and_pickles(device):
    """Plans are keyed on devices by identity: copies and unpickled devices are the same
    object, and an array's copy keeps its device object."""
    import copy
    import pickle

    assert copy.copy(device) is device and copy.deepcopy(device) is device
    assert pickle.loads(pickle.dumps(device)) is device
    x = cg.asarray(np.arange(5.0), device=device)
    assert copy.deepcopy(x).device is device


def test_synchronize_waits_for_queued_work(device):
    import pyopencl as cl
    x = cg.asarray(np.ones((300, 300), np.float32), device=device)
    y = x @ x                              # queued, not waited for
    marker = cl.enqueue_marker(device.queue)
    cg.synchronize(device)
    assert marker.command_execution_status == cl.command_execution_status.COMPLETE
    cg.synchronize()                       # every device this process used
    device.synchronize()
    np.testing.assert_array_equal(np.asarray(y), np.full((300, 300), 300.0, np.float32))


def test_pyopencl_ctx_is_honoured(device):
    platform_index = [p.int_ptr for p in __import__("pyopencl").get_platforms()].index(
        device.cl_device.platform.int_ptr)
    code = "import clarray_gemm as cg; print(cg.default_device().name)"
    env = dict(__import__("os").environ, PYOPENCL_CTX=f"{platform_index}:0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == device.cl_device.platform.get_devices()[0].name.strip()
