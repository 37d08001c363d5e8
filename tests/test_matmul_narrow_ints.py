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
