"""Launches and copies made without an event object (``clarray_gemm/drivers/eventless.py``):
forced on for this device (``CLARRAY_GEMM_EVENTLESS=1``), the operators give NumPy's answers,
a refused launch raises pyopencl's error, and forced off every launch returns its event."""
from __future__ import annotations

import numpy as np
import pyopencl as cl
import pytest

import clarray_gemm as cg
from clarray_gemm import settings
from clarray_gemm.drivers import eventless
from clarray_gemm.kernels import programs

pytestmark = pytest.mark.skipif(eventless.library() is None,
                                reason="no ICD loader mapped into this process")


@pytest.fixture
def forced(monkeypatch, request):
    """``CLARRAY_GEMM_EVENTLESS`` set to the test's parameter while it runs."""
    monkeypatch.setenv("CLARRAY_GEMM_EVENTLESS", request.param)
    settings.reload()
    yield request.param == "1"
    monkeypatch.delenv("CLARRAY_GEMM_EVENTLESS")
    settings.reload()


def _touch(device, local_size=(64,)) -> programs.BoundLaunch:
    """A fresh bound launch of ``bench_noop`` on a 64-byte scratch buffer."""
    scratch = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64)
    return programs.get_kernel(device, "bench_noop.cl", "bench_noop").bind(
        device, (64,), local_size, (scratch,), per_call=())


@pytest.mark.parametrize("forced", ["1", "0"], indirect=True)
def test_a_launch_returns_its_event_only_when_it_makes_one(device, forced):
    result = _touch(device)()
    device.synchronize()
    assert (result is None) if forced else isinstance(result, cl.Event)
    # a caller that passes events to wait for gets one back either way
    event = _touch(device)(wait_for=[cl.enqueue_marker(device.queue)])
    assert isinstance(event, cl.Event)
    event.wait()


@pytest.mark.parametrize("forced", ["1", "0"], indirect=True)
def test_an_unbound_launch_makes_an_event_only_where_the_device_does(device, forced, launches):
    scratch = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64)
    launcher = programs.get_kernel(device, "bench_noop.cl", "bench_noop")
    for _ in range(2):  # the second call reuses the size arrays and the set argument
        result = launcher.launch(device, (64,), (64,), scratch)
        assert (result is None) if forced else isinstance(result, cl.Event)
    device.synchronize()
    assert [k.function_name for _, k in launches] == ["bench_noop"] * 2


@pytest.mark.parametrize("forced", ["1"], indirect=True)
def test_a_refused_launch_raises_pyopencls_error(device, forced):
    too_large = (device.info.max_work_group_size * 2,)
    launch = programs.get_kernel(device, "bench_noop.cl", "bench_noop").bind(
        device, too_large, too_large, (cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64),),
        per_call=())
    with pytest.raises(cl.Error):
        launch()
    unbound = programs.get_kernel(device, "bench_noop.cl", "bench_noop")
    with pytest.raises(cl.Error):
        unbound.launch(device, too_large, too_large,
                       cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64))
    device.synchronize()  # the queue is still usable


@pytest.mark.parametrize("forced", ["1"], indirect=True)
def test_operators_copies_and_products_without_events(forced):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((33, 31)).astype(np.float32)
    b = rng.standard_normal((33, 31)).astype(np.float32)
    x, y = cg.asarray(a), cg.asarray(b)
    np.testing.assert_array_equal(np.asarray(x + y), a + b)
    np.testing.assert_allclose(np.asarray(x.sum(axis=1)), a.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(x @ y.T), a.astype(np.float64) @ b.T.astype(np.float64),
                               rtol=1e-4, atol=1e-4)
    x[0, :] = x[1, :]  # a contiguous range: clEnqueueCopyBuffer without an event
    a[0, :] = a[1, :]
    x[1:-1, 1:-1] = y[1:-1, 1:-1]  # strided: the copy kernel
    a[1:-1, 1:-1] = b[1:-1, 1:-1]
    np.testing.assert_array_equal(np.asarray(x), a)
