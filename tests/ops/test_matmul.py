"""`@`, np.matmul and np.dot on device arrays against NumPy: shapes, batches, dtypes, errors."""
import numpy as np
import pytest

import clarray_gemm as cg
from conftest import assert_matches, random_array

ODD = [(1, 1, 1), (7, 31, 33), (33, 7, 31), (257, 1, 7), (1, 257, 33), (31, 33, 257), (64, 100, 7)]


@pytest.mark.parametrize("m,n,k", ODD)
def test_float32_odd_shapes(m, n, k):
    a, b = random_array((m, k), np.float32, 1), random_array((k, n), np.float32, 2)
    y = cg.asarray(a) @ b
    assert isinstance(y, cg.DeviceArray) and y.dtype == np.float32
    assert_matches(y, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.float64])
def test_exact_and_double_dtypes(dtype, device):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64")
    a, b = random_array((31, 17), dtype, 3), random_array((17, 9), dtype, 4)
    y = cg.asarray(a) @ cg.asarray(b)
    assert y.dtype == np.dtype(dtype)
    assert_matches(y, a @ b)


@pytest.mark.parametrize("da,db", [(np.int8, np.int8), (np.int8, np.uint8), (np.bool_, np.bool_),
                                   (np.int16, np.float32), (np.int32, np.float64),
                                   (np.float16, np.float16), (np.uint16, np.int64)])
def test_dtype_promotion_matches_numpy(da, db):
    a, b = random_array((7, 5), da, 5), random_array((5, 3), db, 6)
    if np.dtype(da) == np.int8:
        a = (a * 3).astype(da)  # products overflow int8: NumPy wraps, so must we
    expected = a @ b
    y = cg.asarray(a) @ b
    assert y.dtype == expected.dtype
    if expected.dtype == np.float16:
        np.testing.assert_allclose(np.asarray(y), expected, rtol=2e-3, atol=1e-2)
    else:
        assert_matches(y, expected)


def test_complex_runs_through_host():
    a, b = random_array((4, 3), np.complex64, 1), random_array((3, 2), np.complex64, 2)
    y = cg.asarray(a) @ b
    assert isinstance(y, cg.DeviceArray) and y.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(y), a @ b, rtol=1e-5)


@pytest.mark.parametrize("sa,sb", [((5,), (5,)), ((5,), (5, 3)), ((4, 5), (5,)),
                                   ((2, 3, 4, 5), (5,)), ((5,), (2, 5, 3)),
                                   ((3, 1, 4, 5), (2, 5, 6)), ((2, 4, 5), (5, 6)),
                                   ((4, 5), (3, 5, 2)), ((0, 5), (5, 3)), ((4, 0), (0, 3)),
                                   ((2, 0, 4, 5), (5, 1)), ((1, 7), (7, 1))])
def test_numpy_shape_rules(sa, sb):
    a, b = random_array(sa, np.float32, 7), random_array(sb, np.float32, 8)
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    for y in (cg.asarray(a) @ b, a @ cg.asarray(b), np.matmul(cg.asarray(a), cg.asarray(b))):
        assert np.shape(y) == expected.shape
        if expected.size:
            assert_matches(y, expected)


def test_transposed_fortran_strided_and_broadcast_operands():
    base = random_array((40, 30), np.float32, 9)
    x = cg.asarray(base)
    f = np.asfortranarray(random_array((30, 20), np.float32, 10))
    cases = [(x.T, random_array((40, 6), np.float32, 14)), (x[::2, ::3], random_array((10, 11), np.float32, 11)),
             (x[5:25, 1:].T, random_array((20, 4), np.float32, 12)), (x[::-1], random_array((30, 2), np.float32, 1))]
    for lhs, rhs in cases:
        host_lhs = np.asarray(lhs)
        assert_matches(lhs @ rhs, host_lhs.astype(np.float64) @ rhs)
    assert_matches(x @ cg.asarray(f), base.astype(np.float64) @ f)
    batch_b = cg.asarray(random_array((3, 20, 40), np.float32, 13))
    assert_matches(x.T[None].T.T @ batch_b.mT, np.asarray(x).T[None] @ np.swapaxes(np.asarray(batch_b), -1, -2))


def test_errors_match_numpy():
    x = cg.asarray(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        x @ np.ones((5, 2), np.float32)
    with pytest.raises(ValueError, match="enough dimensions"):
        np.matmul(x, np.float32(2))
    with pytest.raises(ValueError, match="could not be broadcast|mismatch"):
        cg.asarray(np.ones((2, 3, 4))) @ np.ones((3, 4, 2))
    with pytest.raises(TypeError):
        cg.asarray(np.array(["a"])) @ np.array(["b"])


def test_out_dtype_and_casting():
    a, b = random_array((7, 5), np.float32, 1), random_array((5, 3), np.float32, 2)
    out = cg.full((7, 3), np.nan, dtype=np.float64)
    r = np.matmul(cg.asarray(a), b, out=out)
    assert r is out
    assert_matches(out, a.astype(np.float64) @ b)
    host_out = np.full((7, 3), np.nan, np.float32)
    np.matmul(cg.asarray(a), b, out=host_out)
    assert_matches(host_out, a.astype(np.float64) @ b)
    with pytest.raises(TypeError):  # same_kind forbids float -> int
        np.matmul(cg.asarray(a), b, out=cg.zeros((7, 3), np.int32))
    with pytest.raises(ValueError):
        np.matmul(cg.asarray(a), b, out=cg.zeros((3, 7), np.float32))
    y = np.matmul(cg.asarray(a), b, dtype=np.float64)
    assert y.dtype == np.float64


def test_axes_argument():
    a = random_array((3, 5, 7), np.float32, 3)
    b = random_array((7, 2, 3), np.float32, 4)
    axes = [(1, 2), (0, 1), (1, 2)]
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64), axes=axes)
    assert_matches(np.matmul(cg.asarray(a), b, axes=axes), expected)


def test_dot_semantics():
    a, b = random_array((4, 5), np.float32, 1), random_array((5, 3), np.float32, 2)
    assert_matches(np.dot(cg.asarray(a), b), a.astype(np.float64) @ b)
    a3, b3 = random_array((2, 4, 5), np.float32, 3), random_array((3, 5, 6), np.float32, 4)
    assert_matches(np.dot(cg.asarray(a3), cg.asarray(b3)), np.dot(a3.astype(np.float64), b3))
    v = random_array((5,), np.float32, 5)
    assert_matches(cg.asarray(v).dot(v), np.dot(v.astype(np.float64), v))
    assert_matches(np.dot(cg.asarray(a), 3.0), a * 3.0)
    with pytest.raises(ValueError, match="not aligned"):
        np.dot(cg.asarray(a), a)
    out = cg.empty((4, 3), np.float32)
    assert np.dot(cg.asarray(a), b, out=out) is out
    with pytest.raises(ValueError, match="output array is not acceptable"):
        np.dot(cg.asarray(a), b, out=cg.empty((4, 3), np.float64))


def test_inputs_never_modified():
    a = random_array((9, 8), np.float32, 1)
    a.flags.writeable = False
    b = random_array((8, 7), np.float32, 2)
    b_copy = b.copy()
    x = cg.asarray(a)
    before = x.get()
    _ = x @ b
    _ = b.T @ x.T
    np.testing.assert_array_equal(b, b_copy)
    np.testing.assert_array_equal(x.get(), before)


def test_poisoned_output_fully_written():
    a, b = random_array((33, 31), np.float32, 1), random_array((31, 257), np.float32, 2)
    out = cg.full((33, 257), np.nan, dtype=np.float32)
    np.matmul(cg.asarray(a), b, out=out)
    assert np.isfinite(np.asarray(out)).all()
    assert_matches(out, a.astype(np.float64) @ b)


def test_byteswapped_and_readonly_inputs():
    a = random_array((6, 5), np.float32, 1).astype(">f4")
    b = random_array((5, 4), np.float64, 2).astype(">f8")
    b.flags.writeable = False
    y = cg.asarray(a) @ b
    assert y.dtype == np.float64
    assert_matches(y, a.astype(np.float64) @ b)


def test_explain_names_kernel():
    text = cg.explain_matmul(cg.asarray(np.ones((8, 8), np.float32)), np.ones((8, 8), np.float32))
    assert "kernel:" in text and "why:" in text


def test_float64_without_fp64_runs_on_host(device, monkeypatch):
    import dataclasses

    from clarray_gemm.kernels import gemm

    from clarray_gemm.kernels.plans import clear_all

    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, fp64=False))
    clear_all()  # plans depend on the device's capabilities
    launched = []
    monkeypatch.setattr(gemm, "launch_log", launched)
    a, b = random_array((5, 4), np.float64, 1), random_array((4, 3), np.float64, 2)
    y = cg.asarray(a, device=device) @ b
    assert launched == [] and y.dtype == np.float64
    assert_matches(y, a @ b)
    assert "host" in cg.explain_matmul(cg.asarray(a, device=device), b)
    f = random_array((5, 4), np.float32, 3)
    cg.asarray(f, device=device) @ f.T  # float32 still runs a kernel
    assert len(launched) == 1
    monkeypatch.undo()
    clear_all()


@pytest.mark.parametrize("sx,sb", [((3,), (3, 3)), ((7,), (7, 7)), ((2, 3), (3, 3)),
                                   ((4, 2, 5), (5, 5)), ((3,), (3, 2)), ((3,), (3,)),
                                   ((2, 2), (2,)), ((), (2, 2))])
def test_inplace_matmul_matches_numpy(sx, sb):
    """``x @= b`` as NumPy's in-place matmul: a 1-D ``x`` times a square matrix keeps its
    shape; shapes NumPy refuses raise NumPy's ValueError (and message where it names the
    operands' dimensions)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(sx)
    b = rng.standard_normal(sb)
    want_x, err = x.copy(), None
    try:
        want_x @= b
    except ValueError as exc:
        err = exc
    got_x = cg.asarray(x)
    if err is None:
        got_x @= cg.asarray(b)
        assert_matches(np.asarray(got_x), want_x)
        return
    with pytest.raises(ValueError) as caught:
        got_x @= cg.asarray(b)
    if "inplace matrix multiplication" in str(err):
        assert str(caught.value) == str(err)
    np.testing.assert_array_equal(np.asarray(got_x), x)  # untouched


def test_the_operators_short_keys_reach_plan_fors_plan(device, monkeypatch):
    """``a @ b``'s short keys (device arrays by layout and offset & 255, NumPy operands by dtype
    and shape) lead to the very plan object ``plan_for`` caches for the same operands: the two
    keys never choose differently (offsets that differ in alignment, transposes, batches, a NumPy
    operand on either side)."""
    from clarray_gemm.ops import matmul as matmul_ops
    rng = np.random.default_rng(3)
    base = cg.asarray(rng.standard_normal((4, 48, 48)).astype(np.float32), device=device)
    host = rng.standard_normal((48, 24)).astype(np.float32)
    cases = [(base[0], base[1].T), (base[0, 1:], base[1]), (base[:, :7], base[0].T),
             (base[0, :, 1:], base[1, 1:, 2:]), (base[2], host), (host.T, base[3])]
    for a, b in cases:
        plans = type(matmul_ops._PLANS)("t")
        monkeypatch.setattr(matmul_ops, "_PLANS", plans)
        monkeypatch.setattr(matmul_ops, "_find_plan", plans.find)
        got = a @ b
        entries = [plan for _, plan in plans.items()]  # the short key's and plan_for's
        assert len(entries) == 2 and entries[0] is entries[1], (a.shape, b.shape)
        assert entries[0] is matmul_ops.plan_for(a, b), (a.shape, b.shape)
        assert len(plans) == 2
        want = np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64)
        assert np.allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
