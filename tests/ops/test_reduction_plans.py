"""Repeated reductions run a cached call plan (ops/reductions.py, one dict hit): on the host
path and on the device, every call gives NumPy's answer, a fresh result, and sees the input as
it is now."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import reductions

from conftest import rel_error

CALLS = [("sum", {}), ("sum", {"axis": 0}), ("sum", {"axis": -1, "keepdims": True}),
         ("sum", {"axis": (0, 1), "dtype": np.float64}), ("prod", {"axis": 1}),
         ("max", {"axis": -1, "keepdims": True}), ("min", {}), ("mean", {"axis": 0}),
         ("argmax", {}), ("argmin", {"axis": 1, "keepdims": True}), ("any", {"axis": 0}),
         ("all", {})]


@pytest.mark.parametrize("host_path", [True, False])
@pytest.mark.parametrize("name,kwargs", CALLS)
def test_repeated_reductions(host_path, name, kwargs):
    rng = np.random.default_rng(len(name) + len(kwargs))
    a = rng.standard_normal((7, 33, 3)).astype(np.float32)
    a[1, 2, 0] = a.max() + 1
    func = getattr(np, name)
    with cg.host_path(host_path), np.errstate(all="ignore"):
        x = cg.asarray(a, device=cg.get_device())
        results, wants = [], []
        for step in range(3):
            got = func(x, **kwargs)
            want = func(a, **kwargs)
            assert isinstance(got, cg.DeviceArray)
            g = np.asarray(got)
            assert g.shape == np.shape(want) and g.dtype == np.asarray(want).dtype
            on_host = host_path and x.device.info.host_unified_memory  # else a kernel's sums
            if name in ("sum", "prod", "mean") and not on_host:  # a kernel's order of sums
                exact = func(a.astype(np.float64), **{k: v for k, v in kwargs.items()
                                                      if k != "dtype"})
                assert rel_error(g, exact) < 1e-5
            else:
                assert g.tobytes() == np.asarray(want).tobytes()
            results.append(got)
            wants.append(g.copy())
            a += 1  # the input changes between calls: the next call must see it
            x[...] = a
        for got, want in zip(results, wants):  # fresh results: later calls left each alone
            assert np.asarray(got).tobytes() == want.tobytes()


def test_plans_are_kept_and_unkeyable_axes_still_work():
    x = cg.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    np.sum(x, axis=1)
    builds = reductions._CALLS.builds
    for _ in range(3):
        np.sum(x, axis=1)
    assert reductions._CALLS.builds == builds  # one plan, found again
    assert np.asarray(np.sum(x, axis=[0, 1])).item() == 66.0  # a list: no plan, NumPy's answer
