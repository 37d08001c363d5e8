"""Long 1-D scans run in blocks (one work-group per block, then the blocks' carries): NumPy's
answers at lengths around the block size, for cumsum, cumprod and boolean-mask selection."""
import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import reductions


@pytest.mark.parametrize("n", [reductions.LONG_SCAN, reductions.LONG_SCAN + 3, 100_003])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_, np.float32, np.uint8])
def test_long_cumsum_matches_numpy(device, n, dtype):
    rng = np.random.default_rng(n)
    h = rng.integers(-5, 6, n).astype(dtype)
    got = np.asarray(np.cumsum(cg.asarray(h, device=device)))
    want = np.cumsum(h)
    assert got.dtype == want.dtype
    if want.dtype.kind == "f":
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    else:
        np.testing.assert_array_equal(got, want)


def test_long_cumprod_matches_numpy(device):
    if not device.info.fp64:
        pytest.skip("needs fp64")
    h = np.random.default_rng(1).uniform(0.999, 1.001, reductions.LONG_SCAN + 4097)
    np.testing.assert_allclose(np.asarray(np.cumprod(cg.asarray(h, device=device))),
                               np.cumprod(h), rtol=1e-10)


def test_a_large_mask_selects_what_numpy_selects(device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((300, 400)).astype(np.float32)   # 120000 elements: blocked
    x = cg.asarray(a, device=device)
    np.testing.assert_array_equal(np.asarray(x[x > 0]), a[a > 0])
