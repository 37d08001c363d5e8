"""One thread at a time in the driver where the driver needs it (NVIDIA's crashed or hung with
Python threads inside it at once): the calls the library makes hold the lock, the threaded
workload still gets NumPy's answers with the lock on, and a read mapping is unmapped through the
driver-call layer when its last host view dies. CI has no NVIDIA device: serialization is
turned on by hand here, on a device told it is discrete (the path a GPU takes)."""
from __future__ import annotations

import dataclasses
import gc
import threading

import numpy as np
import pyopencl as cl
import pytest

import clarray_gemm as cg
from clarray_gemm.drivers import calls
from clarray_gemm.kernels.plans import clear_all
from test_threads import run_threads


@pytest.fixture
def serialized_discrete(device, monkeypatch):
    """The device as a discrete GPU, with driver calls serialized."""
    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, host_unified_memory=False))
    monkeypatch.setattr(calls, "_serialized", True)
    clear_all()
    yield device
    monkeypatch.undo()
    clear_all()


def test_nvidia_devices_serialize_driver_calls(device):
    nvidia = dataclasses.replace(device.info, vendor="NVIDIA Corporation")
    assert nvidia.serializes_driver_calls
    assert not dataclasses.replace(device.info, vendor="The pocl project").serializes_driver_calls


def test_every_driver_call_of_a_threaded_workload_holds_the_lock(serialized_discrete, monkeypatch):
    unlocked: list[str] = []

    def checked(name, fn):
        def call(*args, **kwargs):
            if not calls._lock._is_owned():
                unlocked.append(f"{name} in {threading.current_thread().name}")
            return fn(*args, **kwargs)
        return call

    for name in ("enqueue_copy", "enqueue_map_buffer", "enqueue_nd_range_kernel",
                 "enqueue_fill_buffer"):
        monkeypatch.setattr(cl, name, checked(name, getattr(cl, name)))
    failures = run_threads(serialized_discrete, 24, seed=5)
    assert not failures, failures[:20]
    assert not unlocked, unlocked[:10]


def test_a_read_mapping_is_unmapped_through_the_call_layer(serialized_discrete, monkeypatch):
    n = (serialized_discrete.info.read_copy_max_bytes // 4) * 2  # large enough to be mapped
    x = cg.asarray(np.arange(n, dtype=np.float32), device=serialized_discrete)
    unmapped = []
    plain_unmap = calls.unmap
    monkeypatch.setattr(calls, "unmap", lambda q, m: (unmapped.append(m.nbytes), plain_unmap(q, m)))
    view = np.asarray(x)[5:9]
    before = cg.transfer_stats()
    np.testing.assert_array_equal(view, [5, 6, 7, 8])
    assert (cg.transfer_stats() - before).maps == 0
    del x
    gc.collect()
    assert unmapped == []                     # the view still holds the mapping
    del view
    gc.collect()
    assert unmapped == [n * 4]
