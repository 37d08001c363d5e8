"""Requests above the device's largest allocation (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``).

A device array is one buffer, so an array, or a product whose result, is larger than the
limit is a ``MemoryError`` naming the size and the limit, and the process stays usable. A
product whose result fits but whose kernels compute in a wider dtype (int8 in int32, float16 in
float32) can need a larger buffer than the result: it runs in blocks of rows of C, each a
product of its own, and gives NumPy's result. The fast tests lower the limit the library reads
(``device.info``); the slow one uses PoCL's real limit."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import matmul as matmul_ops

LIMIT = 2 ** 20


@pytest.fixture
def small_limit(device, monkeypatch):
    """The device as if its largest allocation were 1 MiB; kernels, not the host path."""
    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, max_alloc_bytes=LIMIT))
    matmul_ops._PLANS.clear()
    with cg.host_path(False):
        yield device
    matmul_ops._PLANS.clear()


def _operands(rng, a_shape, b_shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return (rng.integers(-9, 10, a_shape).astype(dtype),
                rng.integers(-9, 10, b_shape).astype(dtype))
    return (rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype))


@pytest.mark.parametrize("a_shape,b_shape,dtype", [
    ((1000, 5), (5, 700), np.int8),          # C in int32: 2.8 MB; the int8 result 700 kB
    ((3, 400, 5), (5, 300), np.int8),        # batched A
    ((240, 7), (4, 7, 331), np.uint8),       # batched B: blocks of rows of every matrix
    ((300001, 3), (3,), np.int8),            # a vector B: C is (300001,)
    ((601, 7), (7, 499), np.float16),        # C in float32: 1.2 MB; the result 600 kB
])
def test_product_wider_than_the_limit_runs_in_row_blocks(a_shape, b_shape, dtype, small_limit):
    rng = np.random.default_rng(1)
    a, b = _operands(rng, a_shape, b_shape, dtype)
    expected = np.matmul(a, b)
    x = cg.asarray(a, device=small_limit)
    got = x @ b
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.kind == "f":
        exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
        assert np.allclose(np.asarray(got), exact, rtol=2e-3, atol=2e-2)
    else:
        np.testing.assert_array_equal(np.asarray(got), expected)
    plan = matmul_ops.plan_for(x, b, device=small_limit)
    # 8/16-bit integers compute in 32 bits (NARROW_INT_PRODUCTS), float16 in float32, except on
    # tensor cores, whose float16 products write float16 and fit in one launch
    kernel_itemsize = max(plan.compute.itemsize, plan.c_dtype.itemsize)
    wide = expected.size * kernel_itemsize > LIMIT
    assert LIMIT >= expected.nbytes
    assert wide or (dtype == np.float16 and small_limit.info.tensor_cores)
    if not wide:
        assert plan.kind == "kernel"
    elif len(a_shape) > 1 and a_shape[-2] > 8:
        assert plan.kind == "row_blocks" and "blocks of" in cg.explain_matmul(x, b)


@pytest.mark.parametrize("call", ["empty", "product", "device product"])
def test_results_above_the_limit_are_memory_errors_naming_both(call, small_limit):
    a = np.ones((2000, 1), np.float32)
    with pytest.raises(MemoryError) as info:
        if call == "empty":
            cg.empty((2000, 2000), np.float32, device=small_limit)
        elif call == "product":
            cg.asarray(a, device=small_limit) @ a.T
        else:
            np.matmul(cg.asarray(a, device=small_limit), cg.asarray(a.T, device=small_limit))
    message = str(info.value)
    assert "16000000 bytes" in message and "CL_DEVICE_MAX_MEM_ALLOC_SIZE" in message
    assert "1 MiB" in message or "1024 KiB" in message or "1.0 MiB" in message, message
    y = cg.asarray(np.ones((3, 3), np.float32), device=small_limit) @ np.ones((3, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(y), np.full((3, 3), 3.0))  # still usable


def test_a_160_gb_array_and_product_are_memory_errors(device):
    """``empty`` of 160 GB and ``(200000, 1) @ (1, 200000)`` float32 on the real device."""
    limit = device.info.max_alloc_bytes
    assert 160_000_000_000 > limit
    for call in (lambda: cg.empty((200000, 200000), np.float32, device=device),
                 lambda: cg.asarray(np.ones((200000, 1), np.float32), device=device)
                 @ np.ones((1, 200000), np.float32)):
        with pytest.raises(MemoryError, match=r"160000000000 bytes.*largest allocation"):
            call()
    y = cg.asarray(np.ones((3, 3), np.float32), device=device) @ np.ones((3, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(y), np.full((3, 3), 3.0))


@pytest.mark.slow
def test_int8_product_whose_int32_form_exceeds_the_real_limit(device):
    """Inputs and the int8 result fit, C computed in int32 (NARROW_INT_PRODUCTS) does not."""
    n = int(np.sqrt(device.info.max_alloc_bytes / 4)) + 64
    if n * n > 2 ** 31:
        pytest.skip("the device's largest allocation is too large for this machine's test")
    rng = np.random.default_rng(2)
    a, b = _operands(rng, (n, 3), (3, n), np.int8)
    with cg.host_path(False):
        got = cg.asarray(a, device=device) @ cg.asarray(b, device=device)
    np.testing.assert_array_equal(np.asarray(got), np.matmul(a, b))
