"""The ``shallow`` kernel (wide products of a K up to KMAX), forced with
``matmul(kernel="shallow")``, against NumPy on the default device: odd sizes, K of 0 and 1,
transposed operands, batches, forced rows per work-item and work-group widths, float64 and
integers (wrapping as NumPy's), 8- and 16-bit integers read and written narrow, float16 and
bfloat16 read as they are; outputs poisoned first.
"""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm, gemm_shallow

from conftest import fake_device, random_array
from test_gemm_kernels import CPU, NVIDIA, check_every_element, problem, run_into_poison

KERNEL = "shallow"
SIZES = [(1, 1, 1), (7, 300, 1), (300, 7, 3), (33, 257, 16), (257, 33, 9), (2, 2, 0),
         (129, 1000, 5), (1, 513, 2), (513, 1, 7)]
PARAMS = [{}, {"RPT": 1}, {"RPT": 4, "WG": 32}, {"KMAX": 32, "RPT": 8, "WG": 64},
          {"RPT": 16, "WG": 256}]


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("M,N,K", SIZES)
def test_float32_sizes(M, N, K, params, device):
    a = random_array((M, K), np.float32, seed=M + K)
    b = random_array((K, N), np.float32, seed=N)
    got = run_into_poison(a, b, KERNEL, device, params=params)
    if K == 0:
        np.testing.assert_array_equal(np.asarray(got), np.zeros((M, N), np.float32))
    else:
        check_every_element(got, a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint32, np.int64])
@pytest.mark.parametrize("M,N,K", [(257, 9, 16), (9, 257, 1), (31, 3, 7)])
def test_dtypes(dtype, M, N, K, device):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64")
    a = random_array((M, K), dtype, seed=3)
    b = random_array((K, N), dtype, seed=4)
    if np.dtype(dtype).kind == "u":   # no -1 to poison with
        got = cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                        kernel=KERNEL, params={"RPT": 2})
    else:
        got = run_into_poison(a, b, KERNEL, device, params={"RPT": 2})
    check_every_element(got, a, b)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16])
def test_narrow_integers_read_and_written_as_they_are(dtype, device):
    """8- and 16-bit operands in place (no widened copies), C in NumPy's dtype, each sum's low
    bits as NumPy's wrapping gives them."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(11)
    for M, K, N in [(1, 1, 1), (33, 16, 65), (70, 3, 1)]:
        a = rng.integers(info.min, info.max, (M, K), dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, (K, N), dtype=dtype, endpoint=True)
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        wide = "uint32" if np.dtype(dtype).kind == "u" else "int32"
        assert f"(no {wide} copies)" in cg.explain_matmul(x, y, kernel=KERNEL)
        got = cg.matmul(x, y, kernel=KERNEL)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(got), a @ b)


@pytest.mark.parametrize("M,N,K", [(300, 7, 16), (7, 300, 1), (65, 129, 9)])
@pytest.mark.parametrize("transposed", [False, True])
def test_sixteen_bit_operands_as_they_are(M, N, K, transposed, device):
    """float16 products stay float16 (rounded once from float32 sums), bfloat16 ones give
    float32 as NumPy's do; both read without widened copies."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (np.float16, ml_dtypes.bfloat16):
        a = random_array((M, K), np.float32, seed=5).astype(dtype)
        b = random_array((K, N), np.float32, seed=6).astype(dtype)
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        if transposed:
            x = cg.asarray(np.ascontiguousarray(a.T), device=device).T
            y = cg.asarray(np.ascontiguousarray(b.T), device=device).T
        got = np.asarray(cg.matmul(x, y, kernel=KERNEL))
        assert got.dtype == np.matmul(a, b).dtype
        exact = a.astype(np.float64) @ b.astype(np.float64)
        err = np.linalg.norm(got.astype(np.float64) - exact) / np.linalg.norm(exact)
        assert err < 2e-3, (dtype, err)


@pytest.mark.parametrize("params", [{}, {"RPT": 1}])
@pytest.mark.parametrize("M,N,K", [(257, 6, 10), (6, 257, 3)])
def test_transposed_batched(M, N, K, params, device):
    a = random_array((3, M, K), np.float32, seed=13)
    b = random_array((3, K, N), np.float32, seed=14)
    x = cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=device).mT
    y = cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=device).mT
    check_every_element(run_into_poison(x, y, KERNEL, device, params=params), a, b)
    check_every_element(run_into_poison(a, y, KERNEL, device, params=params), a, b)
    shared = random_array((K, N), np.float32, seed=15)   # one B for the whole batch
    check_every_element(run_into_poison(x, shared, KERNEL, device, params=params), a, shared)


def test_refuses_deep_products_and_bad_params(device):
    x = cg.zeros((20, 17), np.float32, device=device)
    with pytest.raises(ValueError, match="K = 17 is deeper than 16, the deepest it takes"):
        cg.matmul(x, x.T, kernel=KERNEL)
    assert np.asarray(cg.matmul(x, x.T, kernel=KERNEL, params={"KMAX": 32})).shape == (20, 20)
    with pytest.raises(ValueError, match="K = 17 is deeper than KMAX = 8"):
        cg.matmul(x, x.T, kernel=KERNEL, params={"KMAX": 8})
    y = cg.zeros((4, 20), np.float32, device=device)
    with pytest.raises(ValueError, match="must be positive"):
        cg.matmul(y.T, y, kernel=KERNEL, params={"RPT": -1})


def test_rows_per_work_item_follow_the_device(device):
    """On 132 compute units: 16 rows per work-item where C leaves a few work-groups per unit,
    fewer where it is small; work-groups as wide as the columns (32 to 256); sums as deep as K
    rounded up to a power of two."""
    info = fake_device(device, **NVIDIA).info
    assert gemm_shallow.resolve(problem(4097, 4097, 1), info, gemm_shallow.DEFAULTS) == {
        "KMAX": 1, "RPT": 16, "WG": 256}
    small = gemm_shallow.resolve(problem(64, 300, 5), info, gemm_shallow.DEFAULTS)
    assert small == {"KMAX": 8, "RPT": 1, "WG": 256}
    assert gemm_shallow.resolve(problem(1000, 5, 16), info, gemm_shallow.DEFAULTS) == {
        "KMAX": 16, "RPT": 1, "WG": 32}
    assert gemm_shallow.resolve(problem(5000, 5, 16), info, gemm_shallow.DEFAULTS)["RPT"] == 8


def test_ranked_for_wide_shallow_products_on_gpus_only(device):
    """Where no measurement decides: on GPUs first for a C of a million elements or more with K
    up to 8; not for deeper or smaller products, never on CPUs."""
    nvidia, cpu = fake_device(device, **NVIDIA), fake_device(device, **CPU)
    assert gemm.choose(nvidia, problem(4097, 4097, 1)).variant.name == KERNEL
    assert gemm.choose(nvidia, problem(2048, 1024, 8)).variant.name == KERNEL
    assert gemm.choose(nvidia, problem(4097, 4097, 33)).variant.name != KERNEL
    assert gemm.choose(nvidia, problem(256, 256, 4)).variant.name != KERNEL
    assert gemm.choose(cpu, problem(4097, 4097, 1)).variant.name != KERNEL
