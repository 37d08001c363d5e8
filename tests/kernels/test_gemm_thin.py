"""The ``thin`` kernel (one side of the product a few dozen or less), forced with
``matmul(kernel="thin")``, against NumPy on the default device: both thin sides (M: the wide
operand's columns contiguous; N: its rows contiguous), transposed operands, batches, split-K
and its reduction, passes over the thin side, float64, integers (wrapping as NumPy's),
float16 and bfloat16 read as they are; outputs poisoned first.
"""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm, gemm_thin

from conftest import fake_device, random_array
from test_gemm_kernels import CPU, NVIDIA, check_every_element, problem, run_into_poison

KERNEL = "thin"
# (M, N, K): odd sizes, K = 1, K not a multiple of the staged chunk, several rows of groups.
SIZES = [(7, 300, 1), (300, 7, 1), (5, 129, 67), (129, 5, 67), (33, 257, 100), (257, 33, 100),
         (2, 2, 1), (40, 1000, 130), (1000, 40, 130), (1, 513, 31), (513, 1, 31)]
# FINISH_LAST 1/0: the last slice sums the slices (opencl/last_group.h) / a second kernel does
PARAMS = [{}, {"KSPLIT": 3, "KCH": 16}, {"RV": 1, "JB": 4, "WG": 64}, {"KSPLIT": 1, "KCH": 64},
          {"KSPLIT": 3, "KCH": 16, "FINISH_LAST": 1}, {"KSPLIT": 3, "FINISH_LAST": 0}]


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("M,N,K", SIZES)
def test_float32_sizes(M, N, K, params, device):
    a = random_array((M, K), np.float32, seed=M + K)
    b = random_array((K, N), np.float32, seed=N)
    check_every_element(run_into_poison(a, b, KERNEL, device, params=params), a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint32, np.int64])
@pytest.mark.parametrize("M,N,K", [(257, 9, 100), (9, 257, 100), (31, 3, 7)])
def test_dtypes(dtype, M, N, K, device):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64")
    a = random_array((M, K), dtype, seed=3)
    b = random_array((K, N), dtype, seed=4)
    if np.dtype(dtype).kind == "u":   # no -1 to poison with
        got = cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                        kernel=KERNEL, params={"KSPLIT": 3})
    else:
        got = run_into_poison(a, b, KERNEL, device, params={"KSPLIT": 3})
    check_every_element(got, a, b)


@pytest.mark.parametrize("M,N,K", [(300, 7, 200), (7, 300, 200), (65, 1, 33), (1, 65, 33)])
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
        for params in ({}, {"KSPLIT": 2, "KCH": 16}, {"KSPLIT": 2, "FINISH_LAST": 1}):
            got = np.asarray(cg.matmul(x, y, kernel=KERNEL, params=params))
            assert got.dtype == np.matmul(a, b).dtype
            exact = a.astype(np.float64) @ b.astype(np.float64)
            err = np.linalg.norm(got.astype(np.float64) - exact) / np.linalg.norm(exact)
            assert err < 2e-3, (dtype, params, err)


@pytest.mark.parametrize("params", [{}, {"KSPLIT": 4}, {"RV": 1},
                                    {"KSPLIT": 4, "FINISH_LAST": 1}])
@pytest.mark.parametrize("M,N,K", [(257, 6, 100), (6, 257, 100)])
def test_transposed_batched(M, N, K, params, device):
    a = random_array((3, M, K), np.float32, seed=13)
    b = random_array((3, K, N), np.float32, seed=14)
    x = cg.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), device=device).mT
    y = cg.asarray(np.ascontiguousarray(b.swapaxes(1, 2)), device=device).mT
    check_every_element(run_into_poison(x, y, KERNEL, device, params=params), a, b)
    check_every_element(run_into_poison(a, y, KERNEL, device, params=params), a, b)


def test_passes_over_a_wide_thin_side(device):
    """A thin side of 100 in passes of JB (forced small and by the accumulator budget), each
    pass reading the wide operand again."""
    a = random_array((100, 90), np.float32, seed=21)
    b = random_array((90, 700), np.float32, seed=22)
    for params in ({}, {"JB": 8}, {"JB": 12, "KSPLIT": 2},
                   {"JB": 12, "KSPLIT": 2, "FINISH_LAST": 1}):
        check_every_element(run_into_poison(a, b, KERNEL, device, params=params), a, b)
    info = fake_device(device, **NVIDIA).info
    d = gemm_thin.resolve(problem(100, 700, 90), info, {"JB": 8})
    assert d["PASSES"] == 13 and d["JB"] == 8


def test_refuses_thick_products_and_bad_params(device):
    x = cg.zeros((200, 200), np.float32, device=device)
    with pytest.raises(ValueError, match="neither M nor N is 128 or less"):
        cg.matmul(x, x, kernel=KERNEL)
    y = cg.zeros((200, 8), np.float32, device=device)
    with pytest.raises(ValueError, match="WG must be a power of two"):
        cg.matmul(x, y, kernel=KERNEL, params={"WG": 48})
    with pytest.raises(ValueError, match="JB must be a multiple of 4"):
        cg.matmul(x, y, kernel=KERNEL, params={"JB": 6})
    with pytest.raises(ValueError, match="RV must be 1"):
        cg.matmul(x, y, kernel=KERNEL, params={"RV": 2})   # A's rows are contiguous


def test_split_fills_the_gpu(device):
    """On 132 compute units a skinny product over a long K splits K until 4 x 128 work-items per
    unit run, within the cap on partial sums; a wide one runs unsplit."""
    info = fake_device(device, **NVIDIA).info
    d = gemm_thin.resolve(problem(10, 4097, 4097, np.float64), info, {})
    assert d["X_ROWS"] == 0 and d["RV"] == 2 and d["JB"] == 12 and d["PASSES"] == 1
    threads = -(-4097 // d["RV"]) * d["KSPLIT"]
    assert threads >= 4 * 128 * 132 or d["KSPLIT"] * 10 > 4097 // 8, d
    d = gemm_thin.resolve(problem(4097, 33, 4097, np.float64), info, {})
    assert d["X_ROWS"] == 1 and d["RV"] == 1 and d["JB"] == 36 and d["VW"] == 2
    assert 1 < d["KSPLIT"] and d["KSPLIT"] * 33 <= 4097 // 8
    assert gemm_thin.resolve(problem(1 << 20, 8, 64), info, {})["KSPLIT"] == 1


def test_ranked_for_skinny_products_on_gpus_only(device):
    """Where no measurement decides: on GPUs above gpu_blocked for skinny products, below
    gemv_split for matrix-vector ones; never on CPUs."""
    nvidia, cpu = fake_device(device, **NVIDIA), fake_device(device, **CPU)
    assert gemm.choose(nvidia, problem(10, 4097, 4097)).variant.name == KERNEL
    assert gemm.choose(nvidia, problem(4097, 7, 1024)).variant.name == KERNEL
    assert gemm.choose(nvidia, problem(4097, 1, 4097)).variant.name == "gemv_split"
    assert gemm.choose(cpu, problem(10, 4097, 4097)).variant.name != KERNEL
