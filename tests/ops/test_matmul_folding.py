"""A batch of vector-matrix products sharing one B runs as one matrix product of batch rows
(ops/matmul.py's ``_folded``), and so do batches of larger matrices where the tuned constant
``matmul.fold_shared_b`` says: one launch, NumPy's answers."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import gemm
from clarray_gemm.kernels.constants import constant
from conftest import assert_matches, random_array


@pytest.fixture
def kernels_only():
    with cg.host_path(False):
        yield


@pytest.mark.parametrize("a_shape,b_shape", [
    ((64, 1, 33), (33, 7)),         # a batch of vector products sharing a matrix
    ((3, 5, 1, 9), (9, 4)),         # two batch dimensions
    ((4, 1, 257), (257,)),          # a 1-D B
    ((6, 1, 5), (1, 5, 3)),         # B's batch dimension broadcast
    ((31, 1, 1), (1, 1)),
])
def test_shared_b_batches_fold_into_one_product(device, kernels_only, a_shape, b_shape):
    a, b = random_array(a_shape, np.float32, 1), random_array(b_shape, np.float32, 2)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    batch, M = int(np.prod(a_shape[:-2])), a_shape[-2]
    assert f"one product of {batch * M} rows" in cg.explain_matmul(x, y)
    gemm.launch_log = []
    try:
        got = x @ y
    finally:
        log, gemm.launch_log = gemm.launch_log, None
    assert log and all(entry[:2] == (1, batch * M) for entry in log)
    assert got.shape == (a @ b).shape
    assert_matches(got, a.astype(np.float64) @ b.astype(np.float64))


def test_products_that_cannot_fold_stay_batched(device, kernels_only):
    """Not folded: a batched B, batches of several rows, a vector batch read with a step, a
    transposed A, and a forced kernel that takes no product of batch rows; each still NumPy's
    answer."""
    a, b = random_array((5, 9, 6), np.float32, 3), random_array((5, 6, 4), np.float32, 4)
    c = random_array((9, 4), np.float32, 7)
    x, y, z = (cg.asarray(t, device=device) for t in (a, b, c))
    cases = [(x, y, a, b),                                       # B batched
             (x, y[0], a, b[0]),                                 # 9 rows a batch, not 1
             (x[:, :1, ::2], y[0, ::2], a[:, :1, ::2], b[0, ::2]),  # one row, strided
             (x.mT[:, :1], z, a.mT[:, :1], c)]                   # A transposed
    for xx, yy, aa, bb in cases:
        assert "one product of" not in cg.explain_matmul(xx, yy)
        assert_matches(xx @ yy, aa.astype(np.float64) @ bb.astype(np.float64))
    v = cg.asarray(random_array((8, 1, 17), np.float32, 5), device=device)
    m = cg.asarray(random_array((17, 9), np.float32, 6), device=device)
    forced = cg.explain_matmul(v, m, kernel="gemv")
    assert "one product of" not in forced
    assert_matches(cg.matmul(v, m, kernel="gemv"),
                   np.asarray(v).astype(np.float64) @ np.asarray(m).astype(np.float64))


def test_folded_narrow_integers(device, kernels_only):
    """Folding and narrow storage together: uint8 vectors against a shared uint8 matrix."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 256, (16, 1, 40), dtype=np.uint8)
    b = rng.integers(0, 256, (40, 12), dtype=np.uint8)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    got = cg.matmul(x, y, kernel="gpu_blocked")
    assert "one product of 16 rows" in cg.explain_matmul(x, y, kernel="gpu_blocked")
    np.testing.assert_array_equal(np.asarray(got), a @ b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_matrix_batches_fold_where_the_tuned_rule_says(device, kernels_only, dtype):
    """A contiguous (batch, M, K) @ (K, N) with M > 1 folds on GPUs in the rule's dtypes from
    its number of rows, and stays batched below it, in other dtypes and on CPU devices; the
    answer is NumPy's either way (odd sizes)."""
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no float64 on this device")
    rule = constant("matmul.fold_shared_b")
    K, N = 7, 5
    for batch, M in ((3, 5), (-(-rule["min_rows"] // 33), 33)):
        a = random_array((batch, M, K), dtype, 8)
        b = random_array((K, N), dtype, 9)
        x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
        folds = (device.info.is_gpu and np.dtype(dtype).name in rule["dtypes"]
                 and batch * M >= rule["min_rows"])
        text = cg.explain_matmul(x, y)
        assert (f"one product of {batch * M} rows (a batch of {M}-row matrices" in text) == folds
        assert_matches(x @ y, a.astype(np.float64) @ b.astype(np.float64),
                       rtol=1e-3 if dtype == np.float16 else 1e-5)
