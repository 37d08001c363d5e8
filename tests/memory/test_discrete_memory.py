"""The buffer states of discrete GPUs (no host-resident state: a shared READ mapping while
kernels may still read, copy-on-write for kernel writes), exercised on this machine's driver
by telling the library its device is discrete. CI has no GPU: this is how that path is tested."""
from __future__ import annotations

import dataclasses
import gc

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.kernels.plans import clear_all
from conftest import assert_matches, random_array


@pytest.fixture
def discrete(device, monkeypatch):
    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, host_unified_memory=False))
    clear_all()
    yield device
    monkeypatch.undo()
    clear_all()


@pytest.mark.parametrize("n", [64, 1 << 16], ids=["read-copy", "read-map"])
def test_views_are_snapshots_and_outlive_their_array(discrete, n):
    x = cg.asarray(np.arange(n, dtype=np.float32), device=discrete)
    assert not x.storage.host_resident
    mapped = x.nbytes > discrete.info.read_copy_max_bytes
    before = cg.transfer_stats()
    view = np.asarray(x)
    assert np.asarray(x).base is view.base   # one copy or mapping, shared by the views
    assert (cg.transfer_stats() - before).maps == int(mapped)
    assert x.storage.has_host_views() == mapped  # a copy's views need no detach
    x += 1                                   # a kernel write while the view lives
    np.testing.assert_array_equal(view, np.arange(n))
    np.testing.assert_array_equal(np.asarray(x), np.arange(n) + 1)
    x[:3] = -5                               # a host write drops the copy too
    np.testing.assert_array_equal(np.asarray(x)[:4], [-5, -5, -5, 4])
    del x
    gc.collect()
    others = [cg.asarray(np.full(n, -1.0, np.float32), device=discrete) for _ in range(4)]
    np.testing.assert_array_equal(view, np.arange(n))
    assert all((np.asarray(o) == -1).all() for o in others)


def test_products_with_numpy_operands_and_reads(discrete):
    a, b = random_array((33, 17), np.float32, 1), random_array((17, 9), np.float32, 2)
    x = cg.asarray(a, device=discrete)
    assert "host NumPy" not in cg.explain_matmul(x, b)
    for _ in range(3):  # the cached plan, again
        assert_matches(x @ b, a.astype(np.float64) @ b)
        assert_matches(np.asarray(b.T @ x.T), b.T.astype(np.float64) @ a.T)
    y = x * 2
    h = np.asarray(y)
    z = y @ b                                # kernels may read a buffer mapped for reading
    assert_matches(z, (a * 2).astype(np.float64) @ b)
    np.testing.assert_array_equal(h, a * 2)


def test_host_writes_through_map_for_write(discrete):
    x = cg.zeros((4, 4), np.float32, device=discrete)
    x[1:3, 1:3] = 5
    with x.storage.map_for_write() as host:
        host.view(np.float32)[0] = 7
        with pytest.raises(RuntimeError, match="mapped for writing"):
            x + 1
    expected = np.zeros((4, 4), np.float32)
    expected[1:3, 1:3] = 5
    expected[0, 0] = 7
    np.testing.assert_array_equal(np.asarray(x), expected)
