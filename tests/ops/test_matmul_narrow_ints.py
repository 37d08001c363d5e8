"""8- and 16-bit integer products run in 32-bit kernels (dtypes.NARROW_INT_PRODUCTS): exact and
wrapping as NumPy's, the result in NumPy's dtype."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg

SHAPES = [(1, 1, 1), (7, 31, 33), (33, 257, 65), (31, 1, 40), (1, 17, 40)]


@pytest.mark.parametrize("kernel", [None, "naive", "regtile", "vec"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16])
def test_narrow_integers_exact(device, dtype, kernel):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    for M, N, K in SHAPES:
        a = rng.integers(info.min, info.max, (M, K), dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, (K, N), dtype=dtype, endpoint=True)
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        try:
            got = np.asarray(cg.matmul(x, y, kernel=kernel))
        except ValueError as err:   # a forced kernel that does not take this shape
            assert "does not fit" in str(err)
            continue
        assert got.dtype == (a @ b).dtype
        np.testing.assert_array_equal(got, a @ b)


def test_narrow_integers_compute_in_32_bits(device):
    x = cg.asarray(np.ones((8, 8), np.uint8), device=device)
    assert "computed in uint32" in cg.explain_matmul(x, x, kernel="naive")
    s = cg.asarray(np.ones((8, 8), np.int16), device=device)
    assert "computed in int32" in cg.explain_matmul(s, s, kernel="naive")
    a, b = np.full((3, 4), 200, np.uint8), np.full((4, 2), -100, np.int8)
    mixed = cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device), kernel="naive")
    assert mixed.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(mixed), a @ b)   # -80000 wraps in int16


NARROW = [np.uint8, np.int8, np.uint16, np.int16]


def _full_range(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("params", [None, {"KSPLIT": 3}, {"PRESET": 1}],
                         ids=["default", "split-K", "preset-1"])
def test_gpu_blocked_reads_and_writes_narrow_integers_in_place(device, dtype, params):
    """gpu_blocked takes 8- and 16-bit operands as they are (GemmProblem.storage): no widened
    copies, C written in NumPy's dtype, wrapping as NumPy's; odd and aligned sizes, vector and
    element loads, split-K's narrowing reduction."""
    rng = np.random.default_rng(7)
    for M, K, N in [(1, 1, 1), (7, 31, 33), (64, 64, 64), (33, 257, 65), (1, 40, 17),
                    (130, 12, 1)]:
        a, b = _full_range(rng, dtype, (M, K)), _full_range(rng, dtype, (K, N))
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        wide = "uint32" if np.dtype(dtype).kind == "u" else "int32"
        text = cg.explain_matmul(x, y, kernel="gpu_blocked", params=params)
        assert f"C written as {np.dtype(dtype)} (no {wide} copies)" in text
        got = cg.matmul(x, y, kernel="gpu_blocked", params=params)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(got), a @ b)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16])
@pytest.mark.parametrize("params", [{}, {"KSPLIT": 2}], ids=["default", "split-K"])
def test_narrow_kernel_writes_every_element_of_c(device, dtype, params):
    """The narrow kernel launched on a C poisoned twice (two different byte patterns): every
    element ends as NumPy's, so none was left unwritten."""
    from clarray_gemm.kernels import gemm
    from clarray_gemm.kernels.gemm import GemmOperand, GemmProblem
    rng = np.random.default_rng(9)
    wide = np.dtype(np.uint32 if np.dtype(dtype).kind == "u" else np.int32)
    for M, K, N in [(7, 31, 33), (65, 9, 66)]:
        a, b = _full_range(rng, dtype, (M, K)), _full_range(rng, dtype, (K, N))
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        for byte in (0x5A, 0xA5):
            poison = np.full((M, N * np.dtype(dtype).itemsize), byte, np.uint8).view(dtype)
            c = cg.asarray(poison, device=device)
            problem = GemmProblem(1, M, N, K, wide, GemmOperand(x.storage.kernel_buffer(), 0, K,
                                                                M * K),
                                  GemmOperand(y.storage.kernel_buffer(), 0, N, K * N),
                                  GemmOperand(c.storage.kernel_buffer(write=True), 0, N, M * N),
                                  storage=np.dtype(dtype))
            gemm.run(device, problem, "gpu_blocked", params)
            np.testing.assert_array_equal(np.asarray(c), a @ b)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16])
def test_narrow_integers_in_place_through_views(device, dtype):
    """Transposed, offset and strided views of narrow operands are read where they lie (their
    element offsets and leading dimensions in narrow elements), batches included."""
    rng = np.random.default_rng(8)
    base_a, base_b = _full_range(rng, dtype, (3, 40, 37)), _full_range(rng, dtype, (3, 37, 29))
    xa, xb = cg.asarray(base_a, device=device), cg.asarray(base_b, device=device)
    cases = [(xa[1, 3:, 1:], xb[2, 1:, 2:], base_a[1, 3:, 1:], base_b[2, 1:, 2:]),
             (xa[0].T, xb[0, :, :29].T[:, :37], base_a[0].T, base_b[0, :, :29].T[:, :37]),
             (xa[:, ::2, :], xb, base_a[:, ::2, :], base_b)]
    for x, y, a, b in cases:
        if a.shape[-1] != b.shape[-2]:
            continue
        got = cg.matmul(x, y, kernel="gpu_blocked")
        np.testing.assert_array_equal(np.asarray(got), a @ b)


def test_narrow_integers_widen_where_the_kernel_reads_32_bits(device):
    """Kernels other than gpu_blocked still get widened copies (and the plan says nothing of
    narrow operands); mixed dtypes (uint8 @ int8 -> int16) are widened too."""
    x = cg.asarray(np.ones((8, 8), np.uint8), device=device)
    assert "read as they are" not in cg.explain_matmul(x, x, kernel="naive")
    a, b = np.full((3, 4), 200, np.uint8), np.full((4, 2), -100, np.int8)
    text = cg.explain_matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                             kernel="gpu_blocked")
    assert "read as they are" not in text
    got = cg.matmul(cg.asarray(a, device=device), cg.asarray(b, device=device),
                    kernel="gpu_blocked")
    np.testing.assert_array_equal(np.asarray(got), a @ b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint32])
def test_wide_dtypes_never_take_the_narrow_path(device, dtype):
    """Only 8- and 16-bit integers are read narrow: a float64 product once was, because NumPy
    reads a None dtype as float64 (``np.dtype('float64') != None`` is False)."""
    rng = np.random.default_rng(10)
    a, b = (rng.standard_normal((31, 17)) * 5).astype(dtype), (rng.standard_normal((17, 9))
                                                                * 5).astype(dtype)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    assert "read as they are" not in cg.explain_matmul(x, y, kernel="gpu_blocked")
    got = np.asarray(cg.matmul(x, y, kernel="gpu_blocked"))
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(got, a @ b)
