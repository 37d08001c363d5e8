"""np.linalg.solve, inv, det, slogdet and cholesky of matrix stacks on the device (the host
path off; small matrices in local memory, opencl/linalg_small.cl, larger ones blocked,
opencl/linalg_blocked.cl) against NumPy's LAPACK: dtypes and shapes (NumPy 2's vector rule,
broadcast batches), residuals within 4x NumPy's on the same inputs, determinants within 4x
NumPy's error against a float64 reference, NumPy's LinAlgError."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels.crossover import has_host_path


def _matrices(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-9, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _residual(a, x, b):
    a, x, b = (np.asarray(v, dtype=np.float64) for v in (a, x, b))
    if x.ndim == a.ndim - 1:
        x, b = x[..., None], b[..., None]
    return np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x) + 1e-300)


def _fp64_or_skip(device, dtype):
    if not device.info.fp64 and np.dtype(dtype) != np.float32:
        pytest.skip("needs doubles")


@pytest.mark.parametrize("n", [1, 2, 7, 31, 33, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_solve_matches_numpy(on_device, dtype, n):
    _fp64_or_skip(on_device, dtype)
    cases = [((n, n), (n,)), ((5, n, n), (5, n, 3)), ((2, 3, n, n), (n, 1)),
             ((4, n, n), (1, n, 2))]
    cg.reset_host_calls()
    for k, (sa, sb) in enumerate(cases):
        a, b = _matrices(sa, dtype, 10 * n + k), _matrices(sb, dtype, 10 * n + k + 5)
        if np.dtype(dtype).kind == "i":
            a = a + 40 * np.eye(n, dtype=dtype)   # well away from singular in integers
        got = np.linalg.solve(cg.asarray(a, device=on_device), cg.asarray(b, device=on_device))
        want = np.linalg.solve(a, b)
        assert type(got) is cg.DeviceArray
        assert np.asarray(got).dtype == want.dtype and got.shape == want.shape
        eps = np.finfo(want.dtype).eps
        assert _residual(a, got, b) <= 4 * max(_residual(a, want, b), eps), (sa, sb)
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("n", [1, 3, 16, 33])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inv_det_slogdet_match_numpy(on_device, dtype, n):
    _fp64_or_skip(on_device, dtype)
    a = _matrices((3, n, n), dtype, n)
    x = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    got = np.linalg.inv(x)
    want = np.linalg.inv(a)
    assert np.asarray(got).dtype == want.dtype and got.shape == want.shape
    eye = np.broadcast_to(np.eye(n), a.shape)
    assert _residual(a, got, eye) <= 4 * max(_residual(a, want, eye), np.finfo(dtype).eps)
    for ours, theirs in ((np.linalg.det(x), np.linalg.det(a)),
                         (np.linalg.det(x[1]), np.linalg.det(a[1]))):
        ours = np.asarray(ours)
        assert ours.dtype == np.asarray(theirs).dtype and ours.shape == np.shape(theirs)
    d_ours = np.asarray(np.linalg.det(x)).astype(np.float64)
    d_numpy = np.linalg.det(a).astype(np.float64)
    # the reference: float64 for float32 matrices; NumPy's own for float64 ones (LAPACK has no
    # wider type), within an LU's rounding bound
    ref = np.linalg.det(a.astype(np.float64)) if dtype == np.float32 else d_numpy
    err = np.abs(d_ours - ref) / np.abs(ref)
    assert (err <= 4 * np.abs(d_numpy - ref) / np.abs(ref)
            + 8 * n * np.finfo(dtype).eps).all()
    sign, logdet = np.linalg.slogdet(x)
    want_sign, want_log = np.linalg.slogdet(a)
    assert type(np.linalg.slogdet(x)) is type(np.linalg.slogdet(a))
    assert np.array_equal(np.asarray(sign), want_sign)
    np.testing.assert_allclose(np.asarray(logdet), want_log, rtol=0,
                               atol=16 * n * np.finfo(dtype).eps)
    assert cg.on_host_calls() == {}


def test_singular_matrices_are_numpys(on_device):
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]], np.float32)
    x = cg.asarray(a, device=on_device)
    b = cg.asarray(np.ones(3, np.float32), device=on_device)
    for call in (lambda m: np.linalg.solve(m, b), np.linalg.inv):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            call(x)
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            call(a) if call is np.linalg.inv else np.linalg.solve(a, np.ones(3, np.float32))
    zero = cg.asarray(np.zeros((2, 2), np.float32), device=on_device)
    assert float(np.asarray(np.linalg.det(zero))) == 0.0
    sign, logdet = np.linalg.slogdet(zero)
    assert float(np.asarray(sign)) == 0.0 and np.asarray(logdet) == -np.inf


def test_what_stays_with_numpy(on_device):
    """Non-square input (NumPy's error) and complex matrices go to NumPy's LAPACK through the
    host fallback; matrices past the local memory stay on the device (blocked)."""
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(cg.asarray(np.ones((2, 3), np.float32), device=on_device))
    big = _matrices((300, 300), np.float32, 1) + 300 * np.eye(300, dtype=np.float32)
    cg.reset_host_calls()
    got = np.linalg.inv(cg.asarray(big, device=on_device))
    assert type(got) is cg.DeviceArray
    np.testing.assert_allclose(np.asarray(got), np.linalg.inv(big), rtol=1e-4, atol=1e-7)
    assert cg.on_host_calls() == {}
    np.linalg.inv(cg.asarray(big.astype(np.complex64), device=on_device))
    assert cg.on_host_calls() == {"inv": 1}


@pytest.fixture
def blocked(on_device, monkeypatch):
    """The device with every matrix taking the blocked factorisations (none fits)."""
    from clarray_gemm.ops import linalg
    monkeypatch.setattr(linalg, "_fits", lambda *args: False)
    return on_device


@pytest.mark.parametrize("n", [1, 7, 31, 33, 64, 97])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_solve_inv_det_match_numpy(blocked, dtype, n):
    """Blocks of 32 columns: one partial block, one whole, several with a remainder; up to 8
    right-hand sides solved a work-group each, more by the blocked triangular solves."""
    _fp64_or_skip(blocked, dtype)
    cg.reset_host_calls()
    for k, (sa, sb) in enumerate((((n, n), (n,)), ((3, n, n), (3, n, 2)),
                                  ((2, n, n), (1, n, 5)), ((2, n, n), (2, n, 9)))):
        a, b = _matrices(sa, dtype, 3 * n + k), _matrices(sb, dtype, 3 * n + k + 7)
        got = np.linalg.solve(cg.asarray(a, device=blocked), cg.asarray(b, device=blocked))
        want = np.linalg.solve(a, b)
        assert type(got) is cg.DeviceArray and got.shape == want.shape
        assert np.asarray(got).dtype == want.dtype
        assert _residual(a, got, b) <= 4 * max(_residual(a, want, b), np.finfo(dtype).eps)
    a = _matrices((2, n, n), dtype, n + 1)
    x = cg.asarray(a, device=blocked)
    eye = np.broadcast_to(np.eye(n), a.shape)
    got = np.linalg.inv(x)
    assert _residual(a, got, eye) <= 4 * max(_residual(a, np.linalg.inv(a), eye),
                                             np.finfo(dtype).eps)
    ref = np.linalg.det(a.astype(np.float64))
    d_numpy = np.linalg.det(a).astype(np.float64)
    err = np.abs(np.asarray(np.linalg.det(x)).astype(np.float64) - ref) / np.abs(ref)
    # an LU's rounding bound: the condition number times n eps (a small last pivot cancels)
    bound = 8 * n * np.finfo(dtype).eps * np.linalg.cond(a.astype(np.float64))
    assert (err <= 4 * np.abs(d_numpy - ref) / np.abs(ref) + bound).all()
    sign, logdet = np.linalg.slogdet(x)
    want_sign, want_log = np.linalg.slogdet(a)
    assert np.array_equal(np.asarray(sign), want_sign)
    np.testing.assert_allclose(np.asarray(logdet), want_log, rtol=0,
                               atol=16 * n * np.finfo(dtype).eps + 2 * bound.max())
    assert np.array_equal(np.asarray(x), a)   # the factorisations overwrite copies only
    assert cg.on_host_calls() == {}


def test_blocked_singular_and_not_positive_definite(blocked):
    """A zero pivot in a later block: LinAlgError from solve and inv, det 0 and slogdet's
    (0, -inf); a negative pivot past the first block: cholesky's LinAlgError."""
    n = 70
    a = _matrices((n, n), np.float32, 5)
    a[:, 50] = 0   # a zero column stays exactly zero through the elimination: pivot 0
    x = cg.asarray(a, device=blocked)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.solve(x, cg.asarray(np.ones(n, np.float32), device=blocked))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.inv(x)
    z = np.zeros((n, n), np.float32)
    z[:40, :40] = np.eye(40)
    assert float(np.asarray(np.linalg.det(cg.asarray(z, device=blocked)))) == 0.0
    sign, logdet = np.linalg.slogdet(cg.asarray(z, device=blocked))
    assert float(np.asarray(sign)) == 0.0 and np.asarray(logdet) == -np.inf
    spd = np.eye(n, dtype=np.float32)
    spd[45, 45] = -1.0
    with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
        np.linalg.cholesky(cg.asarray(spd, device=blocked))


@pytest.mark.parametrize("n", [1, 33, 64, 97])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_cholesky_matches_numpy(blocked, dtype, n):
    _fp64_or_skip(blocked, dtype)
    m = _matrices((2, n, n), dtype, n)
    a = (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)
    junk = a + np.triu(np.full((n, n), 7.0, dtype), 1)   # an upper triangle NumPy never reads
    cg.reset_host_calls()
    got = np.asarray(np.linalg.cholesky(cg.asarray(junk, device=blocked)))
    want = np.linalg.cholesky(junk)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (np.triu(got, 1) == 0).all()

    def residual(low):
        low = low.astype(np.float64)
        return np.linalg.norm(low @ np.swapaxes(low, -1, -2) - a) / np.linalg.norm(a)
    assert residual(got) <= 4 * max(residual(want), np.finfo(dtype).eps)
    upper = np.asarray(np.linalg.cholesky(cg.asarray(junk, device=blocked), upper=True))
    assert np.array_equal(upper, np.swapaxes(got, -1, -2))
    assert cg.on_host_calls() == {}


def test_host_path_is_numpys(device):
    """Devices with a host path run NumPy's LAPACK on the mapping: its bits, device arrays."""
    a = _matrices((4, 5, 5), np.float32, 3)
    got = np.linalg.inv(cg.asarray(a, device=device))
    assert type(got) is cg.DeviceArray
    if has_host_path(device):
        assert np.asarray(got).tobytes() == np.linalg.inv(a).tobytes()


def test_host_path_every_function(device, host_path):
    """solve (vector and matrix), det, slogdet and cholesky on a host-path device: NumPy's
    bits, device arrays (a single determinant NumPy's scalar), NumPy's errors."""
    if not has_host_path(device):
        pytest.skip("no host path on this device")
    a = _matrices((3, 7, 7), np.float32, 5) + 6 * np.eye(7, dtype=np.float32)
    b = _matrices((7,), np.float32, 6)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    spd = a @ np.swapaxes(a, -1, -2)

    def same(got, want):
        assert type(got) is cg.DeviceArray
        assert np.asarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
    same(np.linalg.solve(x[0], y), np.linalg.solve(a[0], b))
    same(np.linalg.solve(x, x[..., :2]), np.linalg.solve(a, a[..., :2]))
    same(np.linalg.det(x), np.linalg.det(a))
    single = np.linalg.det(x[1])
    assert type(single) is type(np.linalg.det(a[1])) and single == np.linalg.det(a[1])
    sign, logdet = np.linalg.slogdet(x)
    same(sign, np.linalg.slogdet(a).sign)
    same(logdet, np.linalg.slogdet(a).logabsdet)
    same(np.linalg.cholesky(cg.asarray(spd, device=device)), np.linalg.cholesky(spd))
    same(np.linalg.cholesky(cg.asarray(spd, device=device), upper=True),
         np.linalg.cholesky(spd, upper=True))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(cg.asarray(np.zeros((3, 3), np.float32), device=device))


@pytest.mark.parametrize("n", [1, 3, 16, 33])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_matches_numpy(on_device, dtype, n):
    """L @ L.T - a within 4x NumPy's own residual (only a's lower triangle read), L lower
    with zeros above, ``upper`` its transpose; NumPy's error for a matrix that is not positive
    definite."""
    _fp64_or_skip(on_device, dtype)
    m = _matrices((4, n, n), dtype, n)
    a = (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)
    junk = a + np.triu(np.full((n, n), 7.0, dtype), 1)   # an upper triangle NumPy never reads
    x = cg.asarray(junk, device=on_device)
    cg.reset_host_calls()
    got = np.asarray(np.linalg.cholesky(x))
    want = np.linalg.cholesky(junk)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (np.triu(got, 1) == 0).all()

    def residual(low):
        low = low.astype(np.float64)
        return np.linalg.norm(low @ np.swapaxes(low, -1, -2) - a) / np.linalg.norm(a)
    assert residual(got) <= 4 * max(residual(want), np.finfo(dtype).eps)
    upper = np.asarray(np.linalg.cholesky(x, upper=True))
    assert np.array_equal(upper, np.swapaxes(got, -1, -2))
    assert cg.on_host_calls() == {}
    bad = a.copy()
    bad[1, 0, 0] = -1.0
    with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
        np.linalg.cholesky(cg.asarray(bad, device=on_device))


@pytest.mark.parametrize("wg_max, rows_per_item", [(32, 4), (8, 2)])
def test_private_panel_is_lu_panels_bits(on_device, monkeypatch, wg_max, rows_per_item):
    """lu_panel_private (rows held a work-item several each) gives lu_panel's factor and
    pivots bit for bit, ties and a zero column included; panels taller than a work-group's
    private rows take lu_panel within the same factorisation."""
    from clarray_gemm.ops import linalg_blocked
    n = 131
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (2, n, n)).astype(np.float32)   # many equal magnitudes: ties
    a[1, :, 40] = 0   # a zero pivot: status, and the multipliers left alone
    a[0] += np.float32(0.25) * rng.standard_normal((n, n)).astype(np.float32)

    def factor(wg, rpt):
        monkeypatch.setattr(linalg_blocked, "PANEL_WG_MAX", wg)
        monkeypatch.setattr(linalg_blocked, "PANEL_ROWS_PER_ITEM", rpt)
        lu = cg.asarray(a, device=on_device)
        piv, status = linalg_blocked.lu_factor(lu)
        return np.asarray(lu), np.asarray(piv), np.asarray(status)
    old = factor(1024, 0)   # lu_panel throughout
    new = factor(wg_max, rows_per_item)
    for want, got in zip(old, new):
        assert want.tobytes() == got.tobytes()
    assert list(old[2]) == [0, 41]
    # P A = L U with the pivots replayed as getrf's row swaps
    lu, piv = old[0][0].astype(np.float64), old[1][0]
    low, up = np.tril(lu, -1) + np.eye(n), np.triu(lu)
    pa = a[0].astype(np.float64).copy()
    for j, p in enumerate(piv):
        pa[[j, p]] = pa[[p, j]]
    assert np.linalg.norm(low @ up - pa) <= 1e-5 * np.linalg.norm(pa)


@pytest.mark.parametrize("n", [65, 130])
def test_blocked_wide_blocks(blocked, monkeypatch, n):
    """Cholesky steps and blocked triangular solves of 64 rows and columns (CHOLESKY_BLOCKS,
    SOLVE_BLOCKS) against NumPy's."""
    from clarray_gemm.ops import linalg_blocked
    monkeypatch.setattr(linalg_blocked, "CHOLESKY_BLOCKS", ((0, 64),))
    monkeypatch.setattr(linalg_blocked, "SOLVE_BLOCKS", ((0, 64),))
    a = _matrices((2, n, n), np.float32, n + 3)
    b = _matrices((2, n, 11), np.float32, n + 4)
    got = np.linalg.solve(cg.asarray(a, device=blocked), cg.asarray(b, device=blocked))
    want = np.linalg.solve(a, b)
    assert _residual(a, got, b) <= 4 * max(_residual(a, want, b), np.finfo(np.float32).eps)
    m = _matrices((n, n), np.float32, n)
    a = (m @ m.T + n * np.eye(n)).astype(np.float32)
    got = np.asarray(np.linalg.cholesky(cg.asarray(a, device=blocked)))
    want = np.linalg.cholesky(a.astype(np.float64))
    assert np.linalg.norm(got - want) <= 1e-5 * np.linalg.norm(want)
    assert (np.triu(got, 1) == 0).all()
