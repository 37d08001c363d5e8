"""The host path (NumPy on the buffers' mapping, for work where no kernel wins on a device whose
memory is the host's), the plan cache it shares with the kernels, coherence between the two, and
calls from many threads."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm
from conftest import assert_matches, random_array

SIZES = [(1, 1, 1), (7, 5, 3), (31, 33, 17), (2, 257, 3)]


@pytest.mark.parametrize("M, K, N", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_matmul_on_the_host_path_is_numpys(device, host_path, M, K, N, dtype):
    a, b = random_array((M, K), dtype, 1), random_array((K, N), dtype, 2)
    x = cg.asarray(a, device=device)
    launched = []
    gemm.launch_log = launched
    try:
        for y in (x @ b, x @ cg.asarray(b, device=device), np.matmul(x, b), x.T.T @ b):
            assert isinstance(y, cg.DeviceArray)
            np.testing.assert_array_equal(np.asarray(y), a @ b)
    finally:
        gemm.launch_log = None
    assert launched == []
    assert "host NumPy on the mapped buffers" in cg.explain_matmul(x, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_vector_products_on_the_host_path_are_numpys_bits(device, host_path, dtype):
    """Contiguous device operands (where the plan calls ndarray.dot, np.matmul's BLAS call) and
    strided ones (np.matmul itself): np.matmul's bits, on every repeated call."""
    a, v = random_array((257, 513), dtype, 3), random_array((513,), dtype, 4)
    b = random_array((513, 5), dtype, 5)
    x, xv, xb = (cg.asarray(t, device=device) for t in (a, v, b))
    for _ in range(2):
        for got, want in ((x @ xv, a @ v), (x @ xb, a @ b), (x[3] @ xb, a[3] @ b),
                          (x[:, ::2] @ xv[::2], a[:, ::2] @ v[::2]),
                          (x.T[:5] @ x[:, :7], a.T[:5] @ a[:, :7])):
            assert isinstance(got, cg.DeviceArray)
            assert np.asarray(got).tobytes() == want.tobytes()


@pytest.mark.parametrize("M,N,K", [(300, 200, 1), (1024, 64, 7), (200, 300, 40), (70, 90, 33),
                                   (160, 150, 128)])
def test_every_host_product_call_gives_numpys_bits(device, host_path, M, N, K):
    """The host path's two NumPy calls (ndarray.dot for K = 1 and small products, np.matmul for
    a shallow K over a large C and for larger products) both give np.matmul's bits."""
    a, b = random_array((M, K), np.float32, 6), random_array((K, N), np.float32, 7)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    for _ in range(2):
        assert np.asarray(x @ y).tobytes() == (a @ b).tobytes()


def test_host_path_shapes_dtypes_and_out(device, host_path):
    a = random_array((3, 4, 5), np.float32, 3)
    v = random_array((5,), np.float32, 4)
    x = cg.asarray(a, device=device)
    np.testing.assert_array_equal(np.asarray(x @ v), a @ v)
    np.testing.assert_array_equal(np.asarray(v @ x.mT), v @ a.transpose(0, 2, 1))
    np.testing.assert_array_equal(np.asarray(np.matmul(x, v, dtype=np.float64)),
                                  np.matmul(a, v, dtype=np.float64))
    out = cg.empty((3, 4), np.float32, device=device)
    assert np.matmul(x, v, out=out) is out
    np.testing.assert_array_equal(np.asarray(out), a @ v)


def test_forced_kernel_still_runs_a_kernel(device, host_path):
    a, b = random_array((9, 7), np.float32, 5), random_array((7, 6), np.float32, 6)
    text = cg.explain_matmul(cg.asarray(a, device=device), b, kernel="naive")
    assert "kernel: naive" in text
    assert_matches(cg.matmul(cg.asarray(a, device=device), b, kernel="naive"), a @ b)


@pytest.mark.parametrize("op", [np.add, np.subtract, np.multiply, np.true_divide, np.maximum,
                                np.minimum])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint64])
def test_elementwise_on_the_host_path_is_numpys(device, host_path, op, dtype):
    a, b = random_array((7, 33), dtype, 7), random_array((33,), dtype, 8)
    if op is np.true_divide:
        b = np.where(b == 0, 1, b).astype(dtype)
    x = cg.asarray(a, device=device)
    for got, want in ((op(x, b), op(a, b)), (op(b, x), op(b, a)), (op(x, 3), op(a, 3)),
                      (op(x.T[::2], 2.5), op(a.T[::2], 2.5))):
        assert isinstance(got, cg.DeviceArray)
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == want.dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8])
def test_operator_fast_paths_on_the_host_path_are_numpys_bit_for_bit(device, host_path, dtype):
    """Two device arrays (broadcast, a 0-d one, a view) and a device array with a Python float
    or bool, in either order: NumPy's values, dtypes and special values (NaN, +-0.0, inf)."""
    a, b = random_array((5, 33), dtype, 9), random_array((33,), dtype, 10)
    if np.dtype(dtype).kind == "f":
        a[0, :4] = [np.nan, -0.0, np.inf, 0.0]
        b[:4] = [0.0, -0.0, -np.inf, np.nan]
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    s = cg.asarray(b[5], device=device)  # 0-d
    cases = [(x + y, a + b), (y * x, b * a), (x - s, a - b[5]), (x.T[::2] * 2.5, a.T[::2] * 2.5),
             (0.5 - x, 0.5 - a), (x * True, a * True), (np.maximum(x, y), np.maximum(a, b)),
             (x == y, a == b), (x < 1.5, a < 1.5)]
    with np.errstate(all="ignore"):
        cases.append((x / y, a / b))
    for got, want in cases:
        assert isinstance(got, cg.DeviceArray)
        host = np.asarray(got)
        assert host.dtype == want.dtype and host.shape == want.shape
        assert host.tobytes() == np.ascontiguousarray(want).tobytes()


def test_numpy_scalars_take_the_short_path_with_numpys_types(device, host_path, monkeypatch):
    """NumPy scalars are typed (NEP 50): keyed by their type (the short path, not run_op), each
    gives NumPy's result dtype and bits in either order, and a float32 scalar's plan is not
    reused for a float64 one."""
    from clarray_gemm.ops import ufuncs

    def general_path(*args, **kwargs):
        raise AssertionError("a NumPy scalar operand took the general path")
    monkeypatch.setattr(ufuncs, "run_op", general_path)
    a = random_array((7, 33), np.float32, 11)
    a[0, :3] = [np.nan, -0.0, np.inf]
    i = np.arange(-3, 4, dtype=np.int8)
    x, xi = cg.asarray(a, device=device), cg.asarray(i, device=device)
    cases = [(x / np.float32(3.0), a / np.float32(3.0)), (x / np.float64(3.0), a / np.float64(3.0)),
             (np.float32(-0.0) * x, np.float32(-0.0) * a), (x - np.float16(2.5), a - np.float16(2.5)),
             (xi + np.uint8(200), i + np.uint8(200)), (xi * np.int64(3), i * np.int64(3)),
             (np.int8(100) + xi, np.int8(100) + i), (xi < np.float32(0.5), i < np.float32(0.5)),
             (x > np.bool_(True), a > np.bool_(True))]
    with np.errstate(all="ignore"):
        for got, want in cases:
            assert isinstance(got, cg.DeviceArray)
            host = np.asarray(got)
            assert host.dtype == want.dtype and host.shape == want.shape
            assert host.tobytes() == np.ascontiguousarray(want).tobytes()


def test_in_place_operators_on_the_host_path(device, host_path):
    a = random_array((5, 6), np.float32, 9)
    x = cg.asarray(a, device=device)
    view = np.asarray(x)
    x += 1
    x *= 2
    np.testing.assert_array_equal(np.asarray(x), (a + 1) * 2)
    np.testing.assert_array_equal(view, a)  # the snapshot a user holds is untouched
    np.testing.assert_array_equal(np.asarray(-x), -((a + 1) * 2))


def test_other_ufuncs_write_straight_into_device_buffers(device, host_path):
    a = random_array((4, 9), np.float32, 10)
    x = cg.asarray(a, device=device)
    for got, want in ((np.exp(x), np.exp(a)), (np.tanh(x), np.tanh(a)), (x > 0, a > 0)):
        assert isinstance(got, cg.DeviceArray)
        np.testing.assert_array_equal(np.asarray(got), want)
    q, r = np.divmod(x, 0.5)
    np.testing.assert_array_equal(np.asarray(q), np.divmod(a, 0.5)[0])
    np.testing.assert_array_equal(np.asarray(r), np.divmod(a, 0.5)[1])


def test_convolve_on_the_host_path_is_numpys(device, host_path):
    s, v = random_array(257, np.float32, 11), random_array(7, np.float32, 12)
    x = cg.asarray(s, device=device)
    for mode in ("full", "same", "valid"):
        got = np.convolve(x, v, mode)
        np.testing.assert_array_equal(np.asarray(got), np.convolve(s, v, mode))
    assert "host NumPy" in cg.explain_convolve(x, v)


def test_host_path_result_feeds_a_kernel_and_back(device, host_path):
    """A host-resident result used by a kernel right after (and a kernel's result used by the
    host path right after) is coherent: each side sees the other's writes."""
    a, b = random_array((33, 17), np.float32, 13), random_array((17, 9), np.float32, 14)
    x = cg.asarray(a, device=device)
    h = x * 2                                   # host path
    k = cg.matmul(h, b, kernel="naive")         # kernel reads it
    assert_matches(k, (a * 2) @ b)
    h2 = k + 1                                  # host path reads the kernel's result
    np.testing.assert_array_equal(np.asarray(h2), np.asarray(k) + 1)
    view = np.asarray(h2)                       # a live user view, then a kernel on the buffer
    k2 = cg.matmul(h2, np.eye(9, dtype=np.float32), kernel="naive")
    assert_matches(k2, np.asarray(k) + 1)
    h2 += 5                                     # host write while the view lives: detached
    np.testing.assert_array_equal(view, np.asarray(k) + 1)
    np.testing.assert_array_equal(np.asarray(h2), (np.asarray(k) + 1) + 5)


@pytest.mark.parametrize("host", [False, True], ids=["kernels", "host-path"])
def test_device_and_numpy_operands_share_a_plan_whatever_the_strides(device, host):
    """``x @ b`` and ``b @ x`` with an ndarray: one plan per (layout, dtype, shape), right for
    C-ordered, Fortran-ordered and strided ndarrays of that shape."""
    from clarray_gemm.ops.matmul import _PLANS

    if host and not device.info.host_unified_memory:
        pytest.skip("no host path on this device")
    a = random_array((7, 9), np.float32, 21)
    x = cg.asarray(a, device=device)
    base = random_array((18, 14), np.float32, 22)
    variants = [np.ascontiguousarray(base[:9, :7]), np.asfortranarray(base[:9, :7]),
                base[::2, ::2]]
    with cg.host_path(host):
        for b in variants:
            assert_matches(x @ b, a @ b)
            assert_matches(b.T @ x.T, b.T @ a.T)
        builds = _PLANS.builds
        for b in variants:
            x @ b, b.T @ x.T
        assert _PLANS.builds == builds


@pytest.mark.parametrize("host", [False, True], ids=["kernels", "host-path"])
def test_operators_take_their_short_paths_and_fall_back_to_the_ufunc_route(device, host,
                                                                             monkeypatch):
    """``x @ y`` goes through ``_dispatch.OPERATORS``, a repeated ``x + y`` or ``x * 2.0``
    through its cached elementwise plan's ``short``; where either declines (NotImplemented, a
    dtype only NumPy computes with, no plan yet) the ufunc route answers, with NumPy's result
    every time."""
    from clarray_gemm import _dispatch
    from clarray_gemm.ops.elementwise import find_plan

    if host and not device.info.host_unified_memory:
        pytest.skip("no host path on this device")
    a, b = random_array((5, 7), np.float32, 31), random_array((5, 7), np.float32, 32)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    used = []
    real = _dispatch.OPERATORS[np.matmul]
    monkeypatch.setitem(_dispatch.OPERATORS, np.matmul,
                        lambda p, q: used.append(np.matmul) or real(p, q))
    with cg.host_path(host):
        np.testing.assert_array_equal(np.asarray(x + y), a + b)   # builds the plans
        np.testing.assert_array_equal(np.asarray(x * 2.0), a * 2.0)
        assert_matches(x @ y.T, a @ b.T)
        assert used == [np.matmul]
        for key, call, want in (((np.add, device, x.layout_key, y.layout_key),
                                 lambda: x + y, a + b),
                                ((np.multiply, device, x.layout_key, float),
                                 lambda: x * 2.0, a * 2.0)):
            plan = find_plan(key)
            assert plan is not None and plan.short is not None
            real_short = plan.short
            monkeypatch.setattr(plan, "short", lambda p, q, s=real_short: used.append(key) or
                                s(p, q))
            np.testing.assert_array_equal(np.asarray(call()), want)
            assert used[-1] == key
            monkeypatch.setattr(plan, "short", lambda p, q: NotImplemented)
            np.testing.assert_array_equal(np.asarray(call()), want)
            monkeypatch.setattr(plan, "short", real_short)
        monkeypatch.setitem(_dispatch.OPERATORS, np.matmul, lambda p, q: NotImplemented)
        assert_matches(x @ y.T, a @ b.T)


def test_repeated_calls_reuse_one_plan(device):
    from clarray_gemm.ops.matmul import _PLANS

    x = cg.asarray(random_array((6, 6), np.float32, 15), device=device)
    x @ x
    builds = _PLANS.builds
    for _ in range(5):
        x @ x
    assert _PLANS.builds == builds


def _mixed_ops(device, seed: int, count: int) -> int:
    """``count`` mixed operations on this thread's arrays and on shared ones; wrong results."""
    rng = np.random.default_rng(seed)
    wrong = 0
    for i in range(count):
        kind = i % 4
        shape = (int(rng.integers(1, 24)), int(rng.integers(1, 24)))
        if kind == 0:
            a = rng.integers(-100, 100, shape).astype(np.int32)
            b = rng.integers(-100, 100, shape[1]).astype(np.int32)
            got, want = cg.asarray(a, device=device) * b, a * b
        elif kind == 1:
            a = rng.standard_normal(shape).astype(np.float32)
            b = rng.standard_normal((shape[1], 5)).astype(np.float32)
            got, want = cg.asarray(a, device=device) @ b, a @ b
        elif kind == 2:
            a = rng.integers(-9, 9, shape).astype(np.int64)
            got, want = cg.asarray(a, device=device) - cg.asarray(a.T.copy(), device=device).T, a - a
        else:
            a = rng.standard_normal(shape).astype(np.float64)
            got, want = np.maximum(cg.asarray(a, device=device), 0.0) + 1, np.maximum(a, 0.0) + 1
        host = np.asarray(got)
        if want.dtype.kind == "f" and kind == 1:
            ok = np.allclose(host, want, rtol=1e-5, atol=1e-5)
        else:
            ok = np.array_equal(host, want)
        wrong += not ok
    return wrong


@pytest.mark.parametrize("host", [False, True], ids=["kernels", "host-path"])
def test_eight_threads_share_plans_and_get_numpys_answers(device, host):
    if host and not device.info.host_unified_memory:
        pytest.skip("no host path on this device")
    with cg.host_path(host):
        results = [0] * 8
        errors = []

        def work(t):
            try:
                results[t] = _mixed_ops(device, t, 120)
            except Exception as exc:  # surfaced below
                errors.append(exc)
        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert not errors, errors
    assert results == [0] * 8


@pytest.mark.parametrize("layout", ["C", "F", "row broadcast", "column broadcast", "strided",
                                    "0-d"])
def test_host_path_ufuncs_take_numpys_own_result_or_fill_one(device, host_path, layout):
    """A small ufunc on the host path returns NumPy's own fresh result (no result allocated
    first) where it is C-ordered with the planned dtype, else fills a fresh C-ordered one
    (NumPy orders its result like F-ordered operands): NumPy's values and dtype either way, a
    C-contiguous device array, on the first call and on repeated calls of the cached plan,
    the operands unchanged."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((33, 7)).astype(np.float32)
    b = rng.standard_normal((33, 7)).astype(np.float32)
    if layout == "F":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    elif layout == "row broadcast":
        b = b[:1]
    elif layout == "column broadcast":
        b = np.ascontiguousarray(b[:, :1])
    elif layout == "strided":
        a, b = a[::2, ::3], b[::2, ::3]
    elif layout == "0-d":
        a, b = a[0, 0].reshape(()), b[0, 0].reshape(())
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    before = (a.copy(), b.copy())
    for _ in range(3):
        for got, want in ((x + y, a + b), (x * 2.5, a * 2.5), (np.exp(x), np.exp(a)),
                          (-x, -a), (x < y, a < b), (np.maximum(x, y), np.maximum(a, b))):
            assert isinstance(got, cg.DeviceArray)
            host = np.asarray(got)
            assert host.dtype == want.dtype and host.shape == want.shape
            np.testing.assert_array_equal(host, want)
            assert host.flags.c_contiguous
    np.testing.assert_array_equal(np.asarray(x), before[0])
    np.testing.assert_array_equal(np.asarray(y), before[1])
