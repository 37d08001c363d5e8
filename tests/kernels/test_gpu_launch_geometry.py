"""Launch geometries chosen for GPUs, run on the local CPU driver behind a device that reports
a 132-unit GPU:

* the elementwise kernels with several elements per work-item (opencl/elementwise.cl,
  PER_ITEM, all loaded before any is stored): NumPy's bits for every operand count, odd lengths
  around the work-group multiple, offsets, scalars, broadcast, transposed and masked operands,
  in-place updates, every element written; operands transposed against the outputs staged
  through local memory (elementwise_tiled);
* reductions split over four work-groups per compute unit, rows shared by lanes of 16
  elements or more (ops/reduce_plan.py): NumPy's answers for full reductions and rows, short
  and odd lengths, NaN and ties for argmax."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import copy as copy_kernels
from clarray_gemm.ops import elementwise, reduce_plan, ufuncs


@pytest.fixture(scope="module")
def gpu() -> cg.Device:
    cpu = next((d for d in cg.devices() if d.info.is_cpu and not d.info.is_simulator
                and d.usable), None)
    if cpu is None:
        pytest.skip("no usable OpenCL CPU driver")
    fake = object.__new__(cg.Device)
    fake.__dict__.update(cpu.__dict__)
    fake.info = dataclasses.replace(cpu.info, type="GPU", compute_units=132)
    return fake


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("n", [1, 7, 255, 256, 257, 1023, 1024, 1025, 4099, 65537])
def test_flat_kernel_per_item(gpu, n):
    assert elementwise._PER_ITEM_GPU > 1
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n + 3).astype(np.float32)
    a[:3] = [np.nan, -np.inf, -0.0]
    b = rng.standard_normal(n + 3).astype(np.float32)
    i = rng.integers(-50, 50, n + 3).astype(np.int32)
    with cg.host_path(False), np.errstate(all="ignore"):
        x, y, xi = (cg.asarray(v, device=gpu) for v in (a, b, i))
        _same(x + y, a + b)
        _same(x[3:] * 2.5, a[3:] * np.float32(2.5))               # offset, stride-0 scalar
        _same(np.negative(x[1:]), np.negative(a[1:]))             # one input
        _same(np.where(x > 0, x, y), np.where(a > 0, a, b))       # three inputs
        q, r = np.divmod(xi, 7)                                   # two outputs
        _same(q, np.divmod(i, 7)[0])
        _same(r, np.divmod(i, 7)[1])
        _same(np.maximum(xi, 3), np.maximum(i, 3))
        exp = np.asarray(np.exp(x))                               # within the ulp tests' bound
        assert np.allclose(exp, np.exp(a), rtol=3e-7, atol=0, equal_nan=True)
        z = cg.asarray(np.full(n + 3, np.nan, np.float32), device=gpu)   # poisoned, in place
        np.add(x, y, out=z)
        _same(z, a + b)
        z += y
        _same(z, a + b + b)



@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 7), (31, 33), (257, 5), (64, 1025)])
def test_strided_kernel_per_item(gpu, rows, cols):
    """The general kernel (broadcast, transposed and masked operands) with PER_ITEM."""
    rng = np.random.default_rng(rows * cols)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    a[0, 0] = np.nan
    b = rng.standard_normal((cols, rows)).astype(np.float32)
    m = rng.standard_normal((rows, 1)).astype(np.float32)
    c = rng.standard_normal((5, 1, cols)).astype(np.float32)
    with cg.host_path(False), np.errstate(all="ignore"):
        x, y, xm, xc = (cg.asarray(v, device=gpu) for v in (a, b, m, c))
        _same(x - xm, a - m)                                     # rows broadcast
        _same(x + x[0], a + a[0])                                # a bias row
        _same(x * y.T, a * b.T)                                  # a transposed operand
        _same(x[None, :, :] - xc, a[None, :, :] - c)             # 3-D broadcast
        _same(x[:, None, :1] == xm[None, :, :], a[:, None, :1] == m[None, :, :])
        z = cg.asarray(np.full((rows, cols), 7.0, np.float32), device=gpu)  # masked, in place
        np.negative(x, out=z, where=x > 0)
        _same(z, np.where(a > 0, -a, np.float32(7.0)))


@pytest.mark.parametrize("shape", [(5, 7, 33), (3, 300, 2), (2, 3, 5, 7), (1000, 3, 1),
                                   (2, 129, 257), (4, 2, 3, 2, 5, 3)])
def test_strided_kernel_steps_through_multi_indices(gpu, shape):
    """The general kernel with several elements per work-item in 2 to 6 dimensions: a work-
    item's elements a local size apart cross several dimensions at once, and the last
    work-items reach past the end; broadcast and strided operands."""
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(np.float32)
    row = rng.standard_normal(shape[-1]).astype(np.float32)
    col = rng.standard_normal(shape[:-1] + (1,)).astype(np.float32)
    big = rng.standard_normal(tuple(2 * n for n in shape)).astype(np.float32)
    with cg.host_path(False):
        x, r, c, b = (cg.asarray(v, device=gpu) for v in (a, row, col, big))
        strided = b[(slice(None, None, 2),) * len(shape)]
        _same(x - r, a - row)
        _same(x * c + r, a * col + row)
        _same(strided + x, big[(slice(None, None, 2),) * len(shape)] + a)
        _same(np.where(x > 0, c, r), np.where(a > 0, col, row))


@pytest.mark.parametrize("rows,cols", [(2, 2), (3, 7), (31, 33), (32, 32), (33, 65), (257, 5),
                                       (64, 1025)])
def test_tiled_kernel_for_transposed_operands(gpu, rows, cols):
    """elementwise_tiled: operands running along the rows against the outputs' order, staged
    through local memory; the outputs' order taken from out= (a transposed out included)."""
    rng = np.random.default_rng(rows + 1000 * cols)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    a[0, :2] = [np.nan, -0.0]
    b = rng.standard_normal((cols, rows)).astype(np.float32)
    i = rng.integers(-50, 50, (cols, rows)).astype(np.int32)
    batch = rng.standard_normal((3, cols, rows)).astype(np.float32)
    with cg.host_path(False), np.errstate(all="ignore"):
        x, y, xi, xb = (cg.asarray(v, device=gpu) for v in (a, b, i, batch))
        plan = elementwise.binary_plan(ufuncs.SPECS[np.add], x, y.T, gpu)
        assert "elementwise_tiled" in plan.describe()
        _same(x + y.T, a + b.T)
        _same(y.T * 2.5, b.T * np.float32(2.5))                   # one input and a scalar
        _same(np.where(x > 0, y.T, x), np.where(a > 0, b.T, a))   # three inputs, two staged
        q, r = np.divmod(xi.T, 7)                                 # two outputs, int32
        _same(q, np.divmod(i.T, 7)[0])
        _same(r, np.divmod(i.T, 7)[1])
        _same(xb.transpose(0, 2, 1) - x, batch.transpose(0, 2, 1) - a)  # a batch dimension
        _same(x[::-1] + y.T[::-1], a[::-1] + b.T[::-1])           # negative row strides
        z = cg.asarray(np.full((cols, rows), np.nan, np.float32), device=gpu)  # poisoned
        np.add(x.T, y, out=z)
        _same(z, a.T + b)
        zt = cg.asarray(np.full((cols, rows), np.nan, np.float32), device=gpu).T
        np.multiply(x, y.T, out=zt)                               # the outputs transposed
        _same(zt, a * b.T)


@pytest.mark.parametrize("rows,cols", [(2, 2), (3, 7), (31, 33), (33, 65), (257, 5), (64, 1025)])
def test_tiled_copy_for_transposed_layouts(gpu, rows, cols):
    """transposed_copy (opencl/copy.cl): copies, casts and writes between transposed layouts."""
    rng = np.random.default_rng(rows + 7 * cols)
    a = rng.standard_normal((rows, cols)).astype(np.float32) * 100
    a[0, :2] = [np.nan, -0.0]
    batch = rng.standard_normal((3, rows, cols)).astype(np.float32)
    with cg.host_path(False), np.errstate(all="ignore"):
        x, xb = cg.asarray(a, device=gpu), cg.asarray(batch, device=gpu)
        _same(x.T.copy(), a.T.copy())
        _same(x.T.astype(np.int32, order="C"), a.T.astype(np.int32, order="C"))
        _same(np.ascontiguousarray(x[::-1].T), np.ascontiguousarray(a[::-1].T))
        _same(x.T.astype(np.int32), a.T.astype(np.int32))         # NumPy's cast, NaN included
        _same(x.T.astype(np.bool_, order="C"), a.T.astype(np.bool_, order="C"))
        _same(xb.transpose(0, 2, 1).copy(), batch.transpose(0, 2, 1).copy())
        z = cg.asarray(np.full((cols, rows), np.nan, np.float32), device=gpu)  # poisoned
        z[...] = x.T                                              # a write into a view
        _same(z, a.T.copy())
        _same(x[1:, ::3].copy(), a[1:, ::3].copy())               # strided_copy: 2 dims
        _same(np.broadcast_to(x[:, None, :5], (rows, 3, min(cols, 5))).copy(),
              np.broadcast_to(a[:, None, :5], (rows, 3, min(cols, 5))).copy())  # 3 dims
        _same(x[::-2, 1:].astype(np.float64), a[::-2, 1:].astype(np.float64))
        assert copy_kernels.tile_layout(gpu, [rows, cols], [[1, rows]], [[cols, 1]]) is not None


@pytest.mark.parametrize("m", [1, 3, 7, 31, 63, 64, 65, 200])
def test_convolution_reads_the_mask_reversed_in_place(gpu, m):
    """conv_gpu with FLIP_W (a convolution's contiguous mask read backwards, no reversed copy)
    and FIXED_M (masks of up to 64 taps compiled in), through the call plan a repeated
    np.convolve on device arrays runs; a mask at an offset still takes the reversed copy.
    NumPy's values and its NaN pattern, each mode, either operand the longer."""
    conv_gpu = object.__new__(cg.Device)  # a GPU whose local memory is its own: `gpu` ranks first
    conv_gpu.__dict__.update(gpu.__dict__)
    conv_gpu.info = dataclasses.replace(gpu.info, local_mem_is_global=False)
    rng = np.random.default_rng(m)
    a = rng.standard_normal(1000 + m).astype(np.float32)
    a[500] = np.nan
    v = rng.standard_normal(m).astype(np.float32)
    if m > 3:
        v[1] = np.inf  # edge tiles computed exactly, the mask still read backwards
    padded = np.concatenate([np.ones(3, np.float32), v])
    with cg.host_path(False), np.errstate(all="ignore"):
        x, w, wp = (cg.asarray(t, device=conv_gpu) for t in (a, v, padded))
        assert "gpu" in cg.explain_convolve(x, w).splitlines()[1]
        for mode in ("full", "same", "valid"):
            for first, second, fa, fb in ((x, w, a, v), (w, x, v, a), (x, wp[3:], a, v)):
                want = np.convolve(fa.astype(np.float64), fb.astype(np.float64), mode)
                for _ in range(2):  # the second call runs the cached plan
                    got = np.asarray(np.convolve(first, second, mode))
                    assert got.shape == want.shape and got.dtype == np.float32
                    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
                    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
                    finite = np.isfinite(want)
                    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(1,), (7,), (4099,), (1 << 20,), (3, 100003), (64, 1025),
                                   (600, 257), (1000, 32), (50, 7, 33), (129, 15)])
def test_reductions_over_gpu_work_groups(gpu, shape):
    assert reduce_plan._GROUPS_PER_UNIT_GPU * gpu.info.compute_units > 1
    assert reduce_plan._ROW_ELEMENTS_PER_LANE_GPU > 1
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(np.float32)
    a.flat[len(a.flat) // 2] = a.max() + 1  # one clear maximum
    i = rng.integers(-5, 5, shape).astype(np.int32)  # ties: the first index wins
    with cg.host_path(False):
        x, xi = cg.asarray(a, device=gpu), cg.asarray(i, device=gpu)
        for axis in (None, -1):
            np.testing.assert_allclose(np.asarray(np.sum(x, axis=axis)),
                                       np.sum(a.astype(np.float64), axis=axis), rtol=1e-5,
                                       atol=1e-5 * np.sqrt(a.size))
            np.testing.assert_array_equal(np.asarray(np.max(x, axis=axis)), np.max(a, axis=axis))
            np.testing.assert_array_equal(np.asarray(np.argmax(x, axis=axis)),
                                          np.argmax(a, axis=axis))
            np.testing.assert_array_equal(np.asarray(np.argmin(xi, axis=axis)),
                                          np.argmin(i, axis=axis))
            np.testing.assert_array_equal(np.asarray(np.sum(xi, axis=axis)), np.sum(i, axis=axis))
        b = a.copy()
        b.flat[len(b.flat) // 3] = np.nan  # NaN wins max and argmax, as in NumPy
        y = cg.asarray(b, device=gpu)
        assert np.isnan(np.asarray(np.max(y)))
        assert int(np.asarray(np.argmax(y))) == np.argmax(b)
        # split reductions finish in the last work-group (one launch): mean, var and std, the
        # norm's square root, float16 in and out, twice (the group counters return to zero)
        wide = a.astype(np.float64)
        h = a.astype(np.float16)
        xh = cg.asarray(h, device=gpu)
        for _ in range(2):
            for func in (np.mean, np.var, np.std):
                np.testing.assert_allclose(np.asarray(func(x, axis=None)), func(wide),
                                           rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(np.asarray(np.linalg.norm(x)), np.linalg.norm(wide),
                                       rtol=1e-5)
            got = np.sum(xh)
            assert got.dtype == np.float16
            np.testing.assert_allclose(float(np.asarray(got)), h.astype(np.float64).sum(),
                                       rtol=2e-3, atol=0.05 * np.sqrt(a.size))
            assert int(np.asarray(np.argmin(xh))) == np.argmin(h)


def test_gpu_split_reductions_take_one_launch(gpu):
    """A full reduction of 2^20 elements splits over work-groups and finishes in the last one:
    one launch (the simulator keeps two, and a forced plan can too)."""
    a = np.arange(1 << 20, dtype=np.float32)
    with cg.host_path(False):
        x = cg.asarray(a, device=gpu)
        f32 = np.dtype(np.float32)
        plan = reduce_plan.reduce_plan("sum", x, (0,), f32, f32)
        assert plan.groups > 1 and plan.finish_last and len(plan.stages) == 1
        two = reduce_plan.ReducePlan("sum", x, (0,), f32, f32, False, gpu, finish_last=False)
        assert two.groups > 1 and not two.finish_last and len(two.stages) == 2
        want = a.astype(np.float64).sum()
        for p in (plan, two, plan):
            np.testing.assert_allclose(float(np.asarray(p.run(x))), want, rtol=1e-6)
