"""The ``gemv_split`` matrix-vector kernel, forced with ``matmul(kernel="gemv_split")``, against
NumPy on the default device: both orientations (rows of the matrix contiguous: ``A @ x``;
columns contiguous: ``x @ B``), transposed and strided operands, batches and broadcast vectors,
split-K and its reduction, every integer width (wrapping as NumPy does), outputs poisoned first.
"""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm

from conftest import random_array
from conftest import fake_device
from test_gemm_kernels import NVIDIA, CPU, check_every_element, problem, run_into_poison

KERNEL = "gemv_split"
# (M, N, K): N == 1 runs gemv_rows, M == 1 gemv_cols; odd sizes, K = 1, rows past any tile.
SIZES = [(1000, 1, 257), (1, 1000, 257), (1, 1, 33), (7, 1, 1), (1, 31, 7), (257, 1, 1000),
         (1, 257, 1000), (33, 1, 5000), (1, 33, 5000)]
# FINISH_LAST 1/0: the last slice sums the slices (opencl/last_group.h) / a second kernel does
PARAMS = [{}, {"KSPLIT": 1}, {"KSPLIT": 7}, {"VW": 1, "KSPLIT": 2},
          {"WG": 64, "LANES": 8, "RT": 4, "KSPLIT": 3}, {"WG": 32, "LANES": 32, "RT": 32},
          {"KSPLIT": 7, "FINISH_LAST": 1}, {"KSPLIT": 7, "FINISH_LAST": 0},
          {"WG": 64, "LANES": 8, "RT": 4, "KSPLIT": 3, "FINISH_LAST": 1}]


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("M,N,K", SIZES)
def test_float32_sizes(M, N, K, params, device):
    a = random_array((M, K), np.float32, seed=M + K)
    b = random_array((K, N), np.float32, seed=N)
    check_every_element(run_into_poison(a, b, KERNEL, device, params=params), a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.uint8, np.int16, np.int32,
                                   np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("M,N,K", [(257, 1, 100), (1, 257, 100), (31, 1, 7)])
def test_dtypes(dtype, M, N, K, device):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64")
    a = random_array((M, K), dtype, seed=3)
    b = random_array((K, N), dtype, seed=4)
    got = cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device), kernel=KERNEL,
                    params={"KSPLIT": 3})
    check_every_element(got, a, b)


@pytest.mark.parametrize("params", [{}, {"KSPLIT": 4}, {"VW": 1},
                                    {"KSPLIT": 4, "FINISH_LAST": 1}])
@pytest.mark.parametrize("M,N,K", [(257, 1, 100), (1, 257, 100)])
def test_transposed_batched(M, N, K, params, device):
    a = random_array((3, M, K), np.float32, seed=13)
    b = random_array((3, K, N), np.float32, seed=14)
    x = cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=device).mT
    y = cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=device).mT
    check_every_element(run_into_poison(x, y, KERNEL, device, params=params), a, b)


@pytest.mark.parametrize("n,k", [(257, 100), (33, 1000)])
def test_strided_and_broadcast_vectors(n, k, device):
    mat = random_array((n, k), np.float32, seed=5)
    vec2 = random_array((2 * k,), np.float32, seed=6)
    m = cg.asarray(mat, device=device)
    v = cg.asarray(vec2, device=device)[::2]
    want = mat.astype(np.float64) @ vec2[::2].astype(np.float64)
    np.testing.assert_allclose(np.asarray(cg.matmul(m, v, kernel=KERNEL)), want, rtol=1e-4, atol=1e-3)
    vecs = random_array((4, 1, n), np.float32, seed=7)   # four vectors, one shared matrix
    got = cg.matmul(cg.asarray(vecs, device=device), m, kernel=KERNEL, params={"KSPLIT": 2})
    check_every_element(got, vecs, np.broadcast_to(mat, (4, n, k)))
    offset = cg.asarray(random_array((k + 3,), np.float32, seed=8), device=device)[3:]
    got = cg.matmul(m, offset, kernel=KERNEL)                 # a vector at an odd offset
    np.testing.assert_allclose(np.asarray(got), mat.astype(np.float64) @ np.asarray(offset),
                               rtol=1e-4, atol=1e-3)


def _bf16():
    from clarray_gemm.dtypes import bfloat16_dtype
    return bfloat16_dtype()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("params", [{}, {"KSPLIT": 5}, {"VW": 1, "KSPLIT": 2},
                                    {"WG": 64, "LANES": 8, "RT": 4, "KSPLIT": 3},
                                    {"KSPLIT": 5, "FINISH_LAST": 1}])
@pytest.mark.parametrize("M,N,K", [(257, 1, 1000), (1, 257, 1000), (1, 31, 7), (33, 1, 5),
                                   (1, 1, 33)])
def test_sixteen_bit_read_as_they_are(dtype, params, M, N, K, device):
    """float16 and bfloat16 elements loaded as they lie (vector loads along either axis),
    summed in float32: float16 rounded once into C, bfloat16 products giving float32 (as
    NumPy's). Against the float64 product: the float32 sum's bound plus one rounding."""
    dt = np.dtype(np.float16) if dtype == "float16" else _bf16()
    if dt is None:
        pytest.skip("needs ml_dtypes (bfloat16)")
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float32).astype(dt)
    b = rng.standard_normal((K, N)).astype(np.float32).astype(dt)
    out_dt = np.float16 if dtype == "float16" else np.float32
    out = cg.asarray(np.full((M, N), np.nan, out_dt), device=device)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    got = np.asarray(cg.matmul(x, y, out=out, kernel=KERNEL, params=params))
    assert got.dtype == out_dt
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    bound = K * 2.0 ** -23 * (np.abs(a64) @ np.abs(b64)) + np.abs(exact) * (
        2.0 ** -11 if dtype == "float16" else 0.0) + 1e-30
    assert (np.abs(got.astype(np.float64) - exact) <= bound).all()


@pytest.mark.parametrize("trans", [False, True])
def test_float16_batched_strided(trans, device):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 1, 300)).astype(np.float16)
    b = rng.standard_normal((3, 300, 77)).astype(np.float16)
    y = (cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=device).mT if trans
         else cg.asarray(b, device=device))
    got = np.asarray(cg.matmul(cg.asarray(a, device=device), y, kernel=KERNEL,
                               params={"KSPLIT": 2}))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 300 * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert (np.abs(got - exact) <= bound + np.abs(exact) * 2.0 ** -11).all()


@pytest.mark.parametrize("M,N,K", [(257, 1, 1000), (1, 257, 1000)])
def test_last_slice_sums_in_one_launch(M, N, K, device, launches):
    """FINISH_LAST: one launch whose last slice of each group of rows sums the slices, called
    again and again (the group counters return to zero) and beside the two-launch form."""
    a = random_array((2, M, K), np.float32, seed=21)
    b = random_array((2, K, N), np.float32, seed=22)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    launches.clear()
    one = cg.matmul(x, y, kernel=KERNEL, params={"KSPLIT": 6, "FINISH_LAST": 1})
    assert len(launches) == 1, [k.function_name for _, k in launches]
    for _ in range(3):
        check_every_element(cg.matmul(x, y, kernel=KERNEL, params={"KSPLIT": 6,
                                                                   "FINISH_LAST": 1}), a, b)
    two = cg.matmul(x, y, kernel=KERNEL, params={"KSPLIT": 6, "FINISH_LAST": 0})
    np.testing.assert_array_equal(np.asarray(one), np.asarray(two))   # the same sums in order
    with pytest.raises(ValueError, match="FINISH_LAST must be"):
        cg.matmul(x, y, kernel=KERNEL, params={"FINISH_LAST": 2})


def test_refuses_non_gemv_and_bad_params(device):
    x = cg.zeros((8, 8), np.float32, device=device)
    with pytest.raises(ValueError, match="neither M nor N is 1"):
        cg.matmul(x, x, kernel=KERNEL)
    v = cg.zeros((8,), np.float32, device=device)
    with pytest.raises(ValueError, match="WG must be a power of two"):
        cg.matmul(x, v, kernel=KERNEL, params={"WG": 48})
    with pytest.raises(ValueError, match="LANES must be"):
        cg.matmul(x, v, kernel=KERNEL, params={"WG": 64, "LANES": 3})


@pytest.mark.parametrize("shape", [(4096, 1, 4096), (1, 4096, 4096), (1, 1, 1 << 20)])
def test_chosen_on_gpus_not_cpus(shape, device):
    assert gemm.choose(fake_device(device, **NVIDIA), problem(*shape)).variant.name == KERNEL
    assert gemm.choose(fake_device(device, **CPU), problem(*shape)).variant.name == "gemv"


def in_flight(d: dict) -> int:
    return d["GROUPS"] * d["KSPLIT"] * d["WG"]


def test_split_fills_the_gpu(device):
    """On 132 compute units a large or skinny GEMV launch has at least 4 x 128 work-items per
    unit in flight, splitting K where the rows alone give under an eighth of that; square
    products up to 2048^2 run unsplit (H100 sweep: a split's second launch costs more than it
    saves there). The explanation names the kernel."""
    from clarray_gemm.kernels import gemv_split
    info = fake_device(device, **NVIDIA).info
    for shape in [(1, 4096, 4096), (4096, 1, 4096), (1, 8192, 8192), (8192, 1, 8192),
                  (64, 1, 1 << 20), (1, 64, 1 << 20), (2, 1, 1 << 22)]:
        d = gemv_split.resolve(problem(*shape), info, {})
        assert d["ROWS"] == int(shape[1] == 1)
        assert in_flight(d) >= 4 * 128 * 132, (shape, d)
    for shape in [(64, 1, 1 << 20), (1, 64, 1 << 20)]:
        assert gemv_split.resolve(problem(*shape), info, {})["KSPLIT"] > 1, shape
    for shape in [(1, 1024, 1024), (1024, 1, 1024), (1, 2048, 2048), (2048, 1, 2048)]:
        d = gemv_split.resolve(problem(*shape), info, {})
        assert d["KSPLIT"] == 1 and (d["ROWS"] or d["RT"] == 4), (shape, d)
    x = cg.zeros((300, 4096), np.float32, device=device)
    text = cg.explain_matmul(x, cg.zeros((4096,), np.float32, device=device), kernel=KERNEL)
    assert "kernel: gemv_split" in text


def test_large_gemv_is_unsplit_in_large_groups(device):
    """8192^2 (H100 sweep, benches/probes/gemv_sweep.py): both orientations run unsplit in
    work-groups of 512, the fastest measured (81% / 83% of the copy bandwidth)."""
    from clarray_gemm.kernels import gemv_split
    info = fake_device(device, **NVIDIA).info
    for shape, rows in [((8192, 1, 8192), 1), ((1, 8192, 8192), 0)]:
        d = gemv_split.resolve(problem(*shape), info, {})
        assert (d["ROWS"], d["WG"], d["KSPLIT"]) == (rows, 512, 1)


def test_default_work_group_fits_the_device(device):
    from clarray_gemm.kernels import gemv_split
    info = fake_device(device, **dict(NVIDIA, max_work_group_size=256)).info
    d = gemv_split.resolve(problem(1, 8192, 8192), info, {})
    assert d["WG"] == 256 and gemv_split._fits(problem(1, 8192, 8192), info, {}) is None
