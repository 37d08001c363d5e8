"""Users' own kernels (clarray_gemm.ElementwiseKernel, ReductionKernel, RawKernel: CuPy's
signatures) and the pyopencl bridge (clarray_gemm.asarray of a pyopencl array, to_pyopencl):
results against NumPy for each dtype, broadcast and strided operands, given outputs, scalars,
raw arguments; errors by type and message; buffers shared both ways."""
from __future__ import annotations

import gc

import numpy as np
import pyopencl.array as cl_array
import pytest

import clarray_gemm as cg


def _arr(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8,
                                   np.int16])
def test_elementwise_matches_numpy_for_each_dtype(device, dtype):
    if np.dtype(dtype) == np.float64 and not device.info.fp64:
        pytest.skip("needs doubles")
    k = cg.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", "mul_add")
    a, b = _arr((7, 33), dtype, 1), _arr((7, 33), dtype, 2)
    got = k(cg.asarray(a, device=device), cg.asarray(b, device=device))
    assert type(got) is cg.DeviceArray and got.dtype == dtype and got.shape == (7, 33)
    want = (a * b + a).astype(dtype)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
    else:
        assert np.array_equal(np.asarray(got), want)


def test_elementwise_broadcasts_strided_views_and_scalars(device):
    k = cg.ElementwiseKernel("T x, T y, float32 s", "T z", "z = (x - y) * s", "scaled_diff")
    a = _arr((31, 17), np.float32, 3)
    x = cg.asarray(a, device=device)
    row, col = _arr((17,), np.float32, 4), _arr((31, 1), np.float32, 5)
    for xin, yin, want_x, want_y in ((x, cg.asarray(row, device=device), a, row),
                                     (x.T, cg.asarray(col.T, device=device), a.T, col.T),
                                     (x[::2, 1::3], cg.asarray(col[::2], device=device),
                                      a[::2, 1::3], col[::2])):
        got = k(xin, yin, 0.5)
        np.testing.assert_allclose(np.asarray(got), (want_x - want_y) * np.float32(0.5),
                                   rtol=1e-6)
    # a 3-d broadcast (strided indexing through every dimension)
    c = _arr((4, 1, 5), np.float32, 6)
    got = k(cg.asarray(c, device=device), x[:3, :5], 2.0)
    np.testing.assert_allclose(np.asarray(got), (c - a[:3, :5]) * 2, rtol=1e-6)


def test_elementwise_given_outputs_raw_arguments_and_bool_outputs(device):
    a = _arr((9, 8), np.float32, 7)
    x = cg.asarray(a, device=device)
    out = cg.asarray(np.full((9, 8), -1.0, np.float32), device=device)
    acc = cg.ElementwiseKernel("T x", "T z", "z += x", "accumulate")   # outputs are references
    assert acc(x, out) is out
    np.testing.assert_allclose(np.asarray(out), a - 1, rtol=1e-6)
    table = np.array([0.25, -0.5, 1.0], np.float32)
    look = cg.ElementwiseKernel("T x, raw T t", "T y, bool m",
                                "y = x * t[i % 3]; m = x > t[0]", "lookup")
    y, m = look(x, table)
    assert m.dtype == np.bool_ and np.asarray(m).view(np.uint8).max() <= 1
    np.testing.assert_allclose(np.asarray(y), a * np.resize(table, a.size).reshape(a.shape),
                               rtol=1e-6)
    assert np.array_equal(np.asarray(m), a > table[0])
    index = cg.ElementwiseKernel("", "int64 z", "z = i * 2 + n", "iota")
    assert np.array_equal(np.asarray(index(size=5)), np.arange(5) * 2 + 5)
    assert cg.ElementwiseKernel("T x", "T y", "y = x", "copy_t", no_return=True)(
        x, cg.empty_like(x)) is None


def test_elementwise_errors_are_numpys_types_with_names(device):
    x = cg.asarray(_arr((4, 3), np.float32), device=device)
    k = cg.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add_t")
    with pytest.raises(ValueError, match="broadcast"):
        k(x, cg.asarray(np.ones(4, np.float32), device=device))
    with pytest.raises(TypeError, match="int32"):
        k(x, cg.asarray(np.ones((4, 3), np.int32), device=device))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        k(x)
    with pytest.raises(ValueError, match="output 'z' is int32"):
        k(x, x, cg.empty((4, 3), np.int32, device=device))
    with pytest.raises(TypeError, match="not bound"):
        cg.ElementwiseKernel("float32 x", "U z", "z = x", "unbound")(x)
    with pytest.raises(ValueError, match="cannot read parameter"):
        cg.ElementwiseKernel("T", "T z", "z = 1", "bad_params")
    with pytest.raises(ValueError, match="size="):
        cg.ElementwiseKernel("", "int32 z", "z = 1", "no_size")()
    with pytest.raises(cg.KernelBuildError, match="syntax_error"):
        cg.ElementwiseKernel("T x", "T z", "z = x +* 2", "syntax_error")(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_reduction_kernel_matches_numpy(device, dtype):
    if np.dtype(dtype) == np.float64 and not device.info.fp64:
        pytest.skip("needs doubles")
    squares = cg.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_squares")
    a = _arr((5, 31, 7), dtype, 11)
    x = cg.asarray(a, device=device)
    want_all = (a.astype(np.float64) ** 2).sum()
    for axis, keepdims in ((None, False), (1, False), ((0, 2), True), (-1, True), ((), False)):
        got = squares(x, axis=axis, keepdims=keepdims)
        want = (a.astype(np.float64) ** 2).sum(axis=axis, keepdims=keepdims)
        assert type(got) is cg.DeviceArray and got.shape == want.shape and got.dtype == dtype
        np.testing.assert_allclose(np.asarray(got), want.astype(dtype), rtol=1e-5)
    assert np.asarray(squares(x)).shape == () and abs(
        float(np.asarray(squares(x))) - want_all) <= 1e-5 * want_all


@pytest.mark.parametrize("shape, axis", [((1 << 18,), None), ((3, 70001), 1),
                                         ((70001, 3), 0), ((2, 5, 9001), (0, 2))])
def test_reduction_kernel_splits_long_rows(device, shape, axis):
    """Few long rows: several work-groups a row, their partials combined by a second launch."""
    l2 = cg.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_split")
    a = _arr(shape, np.float32, 14)
    got = l2(cg.asarray(a, device=device), axis=axis)
    want = np.linalg.norm(a.astype(np.float64).reshape(a.shape), axis=axis) if not isinstance(
        axis, tuple) else np.sqrt((a.astype(np.float64) ** 2).sum(axis=axis))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    mean = cg.ReductionKernel("T x", "T y", "x", "a + b", "y = a / n", "0", "mean_split",
                              reduce_type="float64" if device.info.fp64 else None)
    np.testing.assert_allclose(np.asarray(mean(cg.asarray(a, device=device), axis=axis)),
                               a.astype(np.float64).mean(axis=axis), rtol=1e-4, atol=1e-6)


def test_reduction_kernel_broadcasts_views_scalars_and_accumulates_wider(device):
    a = _arr((9, 40), np.float32, 12)
    x = cg.asarray(a, device=device)
    maxdiff = cg.ReductionKernel("T x, T y", "T m", "x - y", "max(a, b)", "m = a",
                                 "-INFINITY", "max_diff")
    row = _arr((40,), np.float32, 13)
    np.testing.assert_array_equal(np.asarray(maxdiff(x, cg.asarray(row, device=device),
                                                     axis=0)), (a - row).max(axis=0))
    np.testing.assert_array_equal(np.asarray(maxdiff(x.T[::3], 2.0, axis=1)),
                                  (a.T[::3] - 2).max(axis=1))
    count = cg.ReductionKernel("T x", "int64 c", "x > 0", "a + b", "c = a", "0", "positives")
    assert int(np.asarray(count(x))) == int((a > 0).sum())
    mean = cg.ReductionKernel("float32 x", "float32 m", "x", "a + b", "m = a / 40", "0",
                              "row_mean", reduce_type="float64")
    np.testing.assert_allclose(np.asarray(mean(x, axis=1)), a.astype(np.float64).mean(axis=1),
                               rtol=1e-6, atol=1e-7)   # float64 sums: float32 rounding once
    with pytest.raises(ValueError, match="one output"):
        cg.ReductionKernel("T x", "T y, T z", "x", "a + b", "y = a", "0", "two_outputs")
    with pytest.raises(ValueError, match="duplicate"):
        count(x, axis=(0, 0))
    with pytest.raises(np.exceptions.AxisError):
        count(x, axis=2)


def test_raw_kernel(device):
    code = """
    __kernel void affine(__global float* y, __global const float* x, const float a,
                         const int n)
    {
        const int i = get_global_id(0);
        if (i < n) y[i] = a * x[i] + 1.0f;
    }"""
    k = cg.RawKernel(code, "affine")
    a = _arr((100,), np.float32, 8)
    y = cg.empty((100,), np.float32, device=device)
    assert k((128,), (64,), (y, a, np.float32(3.0), 100)) is None   # a NumPy array uploaded
    np.testing.assert_allclose(np.asarray(y), 3 * a + 1, rtol=1e-6)
    k((100,), None, (y, cg.asarray(a, device=device), 2.0, 100))      # Python numbers
    np.testing.assert_allclose(np.asarray(y), 2 * a + 1, rtol=1e-6)
    with pytest.raises(ValueError, match="starts 4 bytes into its buffer"):
        k((99,), None, (y[1:], a, 2.0, 99))
    with pytest.raises(TypeError, match="argument 3"):
        k((100,), None, (y, a, 2.0, "100"))
    with pytest.raises(TypeError, match="refused the arguments"):
        k((100,), None, (y, a, np.float64(2.0), 100))   # a double where the kernel takes float
    with pytest.raises(cg.KernelBuildError, match="broken"):
        cg.RawKernel("__kernel void broken(__global float* y) { y[0] = ; }", "broken")(
            (1,), None, (y,))


def test_pyopencl_arrays_share_buffers_both_ways(device):
    a = _arr((6, 5), np.float32, 9)
    x = cg.asarray(a, device=device)
    p = x.to_pyopencl()
    assert isinstance(p, cl_array.Array) and p.shape == (6, 5) and p.dtype == np.float32
    p *= 2                                   # pyopencl's kernel, on the same queue
    np.testing.assert_allclose(np.asarray(x), a * 2, rtol=1e-6)
    rows = x[1:].to_pyopencl()               # an offset into the buffer
    np.testing.assert_array_equal(rows.get(), (a * 2)[1:])
    assert x[:, ::2].to_pyopencl().strides == (20, 8)
    with pytest.raises(ValueError, match="negative strides"):
        x[::-1].to_pyopencl()

    q = cl_array.to_device(device.queue, a.astype(np.float32))
    y = cg.asarray(q)
    assert type(y) is cg.DeviceArray and y.device == device
    np.add(y, 1, out=y)                      # our kernel writes the pyopencl buffer
    np.testing.assert_allclose(q.get(), a + 1, rtol=1e-6)
    q.fill(5.0)
    assert (np.asarray(y) == 5).all()
    sub = cg.asarray(q[2:])                  # a pyopencl view with an offset
    assert np.asarray(sub).shape == (4, 5) and (np.asarray(sub) == 5).all()


def test_a_shared_buffer_never_serves_another_array(device):
    """The mapping of a pyopencl array's buffer is unmapped when let go, not parked for the
    next storage of its size."""
    q = cl_array.to_device(device.queue, np.zeros(1000, np.float32))
    y = cg.asarray(q)
    np.asarray(y).sum()                      # a host view (maps it on unified memory)
    del y
    gc.collect()
    nine = cg.asarray(np.full(1000, 9.0, np.float32), device=device)
    with cg.host_path(False):   # kernel results: fresh storages of the same size
        others = [nine + k for k in range(4)]
    device.synchronize()
    assert (q.get() == 0).all()
    assert [float(np.asarray(o)[0]) for o in others] == [9.0, 10.0, 11.0, 12.0]


def test_pyopencl_arrays_of_another_context_are_refused(device):
    import pyopencl as cl
    context = cl.Context([device.cl_device])
    other = cl_array.zeros(cl.CommandQueue(context), 3, np.float32)
    with pytest.raises(ValueError, match="context no clarray_gemm device uses"):
        cg.asarray(other)
