"""The convolution's repeated-call plans (``ops/convolve.py``): a call on device arrays keeps its
kernel choice, prepared launch and prepared reversed copy of the mask; every later call with the
same layouts runs them on its own buffers, offsets and mask values, with NumPy's answers."""
import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels import conv
from clarray_gemm.ops import convolve as convolve_ops


def _reference(op, a, v, mode):
    return getattr(np, op)(a.astype(np.float64), v.astype(np.float64), mode)


def _check(got, a, v, op, mode):
    ref = _reference(op, a, v, mode)
    got = np.asarray(got)
    assert got.shape == ref.shape and got.dtype == np.result_type(a, v)
    assert np.all(np.isfinite(got)), "an output element was not written"
    scale = max(np.linalg.norm(ref), 1e-30)
    assert np.linalg.norm(got.astype(np.float64) - ref) / scale < 1e-5


def _poison_pool(length, dtype):
    """Leave a NaN-filled buffer of the output's size in the pool for the next allocation."""
    p = cg.full(length, np.nan, dtype=dtype)
    np.asarray(p)
    del p


def _plan_of(op, a, v, mode):
    key = (op, mode, convolve_ops._operand_key(a), convolve_ops._operand_key(v), a.device)
    return convolve_ops._CALL_PLANS.find(key)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(1, 1), (7, 2), (33, 7), (257, 31), (31, 33)])
@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_repeated_calls_on_views_and_new_values(op, n, m, mode):
    """Two calls make the plan, later calls run it: the signal a contiguous view at another
    offset, the mask a strided view, new values each time; outputs poisoned first."""
    rng = np.random.default_rng(n * 100 + m)
    base_x = rng.standard_normal(n + 9).astype(np.float32)
    base_v = rng.standard_normal(2 * m + 6).astype(np.float32)
    x_dev, v_dev = cg.asarray(base_x), cg.asarray(base_v)
    for shift in (0, 3, 5, 2):
        a, v = x_dev[shift:shift + n], v_dev[shift:shift + 2 * m:2]
        length = len(getattr(np, op)(np.empty(n), np.empty(m), mode))
        _poison_pool(length, np.float32)
        _check(getattr(np, op)(a, v, mode), base_x[shift:shift + n],
               base_v[shift:shift + 2 * m:2], op, mode)
    plan = _plan_of(op, a, v, mode)
    assert plan is not None
    if op == "convolve" and m > 1 and not (n < m):
        assert isinstance(plan, convolve_ops._DevicePlan)


def test_the_mask_is_read_on_every_call():
    """Nothing of the mask is kept between calls: writing it changes the next result."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(1000).astype(np.float32)
    v = rng.standard_normal(31).astype(np.float32)
    x, w = cg.asarray(a), cg.asarray(v)
    _check(np.convolve(x, w), a, v, "convolve", "full")
    _check(np.convolve(x, w), a, v, "convolve", "full")
    assert isinstance(_plan_of("convolve", x, w, "full"), convolve_ops._DevicePlan)
    w[:] = v[::-1].copy()
    before = sum(conv.launch_counts.values())
    _check(np.convolve(x, w), a, v[::-1], "convolve", "full")
    assert sum(conv.launch_counts.values()) == before + 1  # ran the kernel, once


def test_longer_mask_swaps_and_float64():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(29)
    v = rng.standard_normal(301)
    x, w = cg.asarray(a), cg.asarray(v)
    for _ in range(3):
        _check(np.convolve(x, w, "same"), a, v, "convolve", "same")
    plan = _plan_of("convolve", x, w, "same")
    assert isinstance(plan, convolve_ops._DevicePlan) and plan.swap
    for _ in range(2):  # correlate with the longer second operand reverses its output: general
        _check(np.correlate(x, w, "full"), a, v, "correlate", "full")
    assert _plan_of("correlate", x, w, "full") is convolve_ops._GENERAL


def test_a_numpy_mask_takes_the_general_path():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(500).astype(np.float32)
    v = rng.standard_normal(9).astype(np.float32)
    x = cg.asarray(a)
    for _ in range(2):
        _check(np.convolve(x, v), a, v, "convolve", "full")
    assert _plan_of("convolve", x, v, "full") is convolve_ops._GENERAL


def test_correlate_reads_a_contiguous_mask_in_place():
    """np.correlate's mask needs no reversal: a contiguous one at offset 0 is read in place (one
    launch a call); the same layout at another offset takes the general path, same answers."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal(1000).astype(np.float32)
    v = rng.standard_normal(40).astype(np.float32)
    x, w, wide = cg.asarray(a), cg.asarray(v[:31]), cg.asarray(v)
    for mode in ("full", "same", "valid"):
        for _ in range(2):
            _check(np.correlate(x, w, mode), a, v[:31], "correlate", mode)
        plan = _plan_of("correlate", x, w, mode)
        assert isinstance(plan, convolve_ops._DevicePlan) and plan.copy_mask is None
        before = sum(conv.launch_counts.values())
        _check(np.correlate(x, w, mode), a, v[:31], "correlate", mode)
        assert sum(conv.launch_counts.values()) == before + 1  # the kernel alone
        _check(np.correlate(x, wide[5:36], mode), a, v[5:36], "correlate", mode)  # at an offset
        w[:] = v[3:34]  # the mask's new values are read by the next call
        _check(np.correlate(x, w, mode), a, v[3:34], "correlate", mode)
        w[:] = v[:31]
