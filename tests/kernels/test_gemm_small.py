"""The ``small`` GEMM kernel (opencl/gemm_small.cl): the whole of K staged in local memory.

* On the local CPU driver (forced: it ranks only on GPUs): every operand layout, odd sizes up
  to K = KMAX, batches, both tile settings, integer and float dtypes, C written everywhere and
  nowhere else.
* Its refusals (K past KMAX, local memory) and its rank for an H100-like GPU.
(Oclgrind runs it with every kernel in tests/kernels/test_kernels_oclgrind.py.)
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm, gemm_small
from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem

from conftest import device_operands, fake_device, rel_error

KERNEL = "small"


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 5, 3), (31, 33, 17), (33, 128, 31),
                                   (100, 100, 100), (16, 127, 16), (257, 7, 5)])
def test_layouts_and_odd_sizes(cpu, ta, tb, shape):
    M, K, N = shape
    rng = np.random.default_rng(sum(shape) + 2 * ta + tb)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    x, y = device_operands(cpu, a, b, ta, tb)
    got = np.asarray(cg.matmul(x, y, kernel=KERNEL))
    want = a.astype(np.float64) @ b
    assert got.shape == want.shape
    assert rel_error(got, want) < 1e-5


@pytest.mark.parametrize("params", [{}, {"TS": 32, "WPT": 2}, {"TS": 16, "KMAX": 64},
                                    {"TS": 8, "WPT": 2, "KMAX": 256}])
@pytest.mark.parametrize("batch", [(3,), (2, 5)])
def test_batches_and_tile_settings(cpu, params, batch):
    rng = np.random.default_rng(len(batch) + len(params))
    K = min(params.get("KMAX", 128), 61)
    a = rng.standard_normal(batch + (17, K)).astype(np.float32)
    b = rng.standard_normal(batch + (K, 19)).astype(np.float32)
    got = np.asarray(cg.matmul(cg.asarray(a, device=cpu), cg.asarray(b, device=cpu),
                               kernel=KERNEL, params=params))
    assert rel_error(got, np.matmul(a.astype(np.float64), b)) < 1e-5


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "float64"])
def test_integers_wrap_as_numpy_and_float64(cpu, dtype):
    rng = np.random.default_rng(4)
    dt = np.dtype(dtype)
    if dt.kind in "iu":  # full-range values: the sums wrap
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, (23, 40), dtype=dt, endpoint=True)
        b = rng.integers(info.min, info.max, (40, 9), dtype=dt, endpoint=True)
    else:
        a, b = rng.standard_normal((23, 40)), rng.standard_normal((40, 9))
    got = np.asarray(cg.matmul(cg.asarray(a, device=cpu), cg.asarray(b, device=cpu),
                               kernel=KERNEL, params={"KMAX": 64}))
    assert got.dtype == dt
    if dt.kind in "iu":
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(got, a @ b)
    else:
        assert rel_error(got, a @ b) < 1e-12


def test_writes_every_element_of_c_and_nothing_around_it(cpu):
    """C is a window of a poisoned matrix: every element inside it is the product, every one
    around it keeps its poison (two byte patterns, so that a kernel writing zeros or leaving
    stale values is caught either way)."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((37, 45)).astype(np.float32)
    b = rng.standard_normal((45, 29)).astype(np.float32)
    want = a.astype(np.float64) @ b
    for poison in (np.float32(np.nan), np.float32(-7.25)):
        big = cg.asarray(np.full((41, 35), poison, np.float32), device=cpu)
        window = big[2:39, 3:32]
        cg.matmul(cg.asarray(a, device=cpu), cg.asarray(b, device=cpu), kernel=KERNEL,
                  out=window)
        host = np.asarray(big)
        assert rel_error(host[2:39, 3:32], want) < 1e-5
        outside = np.ones(host.shape, bool)
        outside[2:39, 3:32] = False
        np.testing.assert_array_equal(host[outside].view(np.uint32),
                                      np.full(outside.sum(), poison).view(np.uint32))


def test_refusals_name_the_limit(cpu):
    x = cg.asarray(np.ones((8, 129), np.float32), device=cpu)
    y = cg.asarray(np.ones((129, 8), np.float32), device=cpu)
    with pytest.raises(ValueError, match="K = 129 is deeper than KMAX = 128"):
        cg.matmul(x, y, kernel=KERNEL)
    with pytest.raises(ValueError, match="multiple of WPT"):
        cg.matmul(x[:, :8], y[:8], kernel=KERNEL, params={"TS": 16, "WPT": 3})
    info = dataclasses.replace(cpu.info, local_mem_bytes=4096)
    p = _problem(8, 8, 64)
    assert "bytes of local memory" in gemm_small.SMALL.fits(p, info, gemm_small.SMALL.defaults)


def _problem(M, N, K, batch=1, dtype=np.float32):
    op = GemmOperand(None, 0, 1, 0)
    return GemmProblem(batch, M, N, K, np.dtype(dtype), op, op, op)


@pytest.mark.parametrize("batch,M,N,K,chosen", [
    (1, 64, 64, 64, True), (1, 100, 100, 100, True), (1, 128, 128, 128, True),
    (4000, 16, 16, 16, True),       # one tile per matrix
    (1, 256, 256, 256, False),      # K past KMAX
    (1, 256, 256, 64, False),       # more elements than one small product
    (256, 64, 64, 64, False),       # batches of several tiles: gpu_blocked
    (10000, 8, 8, 8, False),        # 512 multiply-adds each: naive's
    (1, 1, 4096, 64, False),        # a vector: gemv's
])
def test_rank_on_an_h100(cpu, batch, M, N, K, chosen):
    h100 = fake_device(cpu, type="GPU", compute_units=132, is_simulator=False,
                       vendor="NVIDIA Corporation", local_mem_bytes=49152)
    p = _problem(M, N, K, batch)
    assert (gemm_small.SMALL.rank(p, h100.info) > 100) == chosen
    assert gemm_small.SMALL.rank(p, cpu.info) == 0  # never on a CPU
    assert gemm_small.SMALL.rank(dataclasses.replace(p, dtype=np.dtype(np.int32)),
                                 h100.info) == 0
    if chosen:
        assert gemm.CATALOGUE.choose(p, h100).variant.name == KERNEL


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
@pytest.mark.parametrize("batch,M,N,K", [(1, 1, 1, 1), (1, 7, 33, 31), (3, 20, 17, 128),
                                         (2, 33, 70, 5)])
def test_sixteen_bit_operands_read_as_they_are(cpu, name, ta, tb, batch, M, N, K):
    """float16 and bfloat16 operands loaded as they are and summed in float32: a float16 C
    rounded once (the tensor-core kernels' rule), a float32 C for bfloat16 (NumPy's type)."""
    from clarray_gemm.dtypes import bfloat16_dtype
    dt = np.dtype(np.float16) if name == "float16" else bfloat16_dtype()
    if dt is None:
        pytest.skip("needs ml_dtypes (bfloat16)")
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((batch, M, K)).astype(np.float32).astype(dt)
    b = rng.standard_normal((batch, K, N)).astype(np.float32).astype(dt)
    x, y = device_operands(cpu, a, b, ta, tb)
    out_dtype = np.float16 if name == "float16" else np.float32
    out = cg.asarray(np.full((batch, M, N), np.nan, out_dtype), device=cpu)
    got = np.asarray(cg.matmul(x, y, out=out, kernel="small"))
    assert got.dtype == out_dtype
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = K * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    if name == "float16":
        bound = bound + np.abs(exact) * 2.0 ** -11
    assert (np.abs(got.astype(np.float64) - exact) <= bound + 1e-30).all()
