"""Pickling device arrays: under protocol 5 the elements leave out of band as the buffer's host
mapping (no host copy on the sending side) and arrive with exactly one copy into a new buffer of
the current device."""
from __future__ import annotations

import pickle
import tracemalloc

import numpy as np
import pytest

import clarray_gemm as cg


def _round_trip_counted(x):
    """Pickle ``x`` with protocol 5 and out-of-band buffers, then unpickle it; per side: the
    host<->device byte counters and the peak of host memory NumPy and Python allocated."""
    buffers: list = []
    tracemalloc.start()
    try:
        before, base = cg.transfer_stats(), tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
        sent = (cg.transfer_stats() - before, tracemalloc.get_traced_memory()[1] - base)
        before, base = cg.transfer_stats(), tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        back = pickle.loads(data, buffers=buffers)
        received = (cg.transfer_stats() - before, tracemalloc.get_traced_memory()[1] - base)
    finally:
        tracemalloc.stop()
    return data, buffers, back, sent, received


def test_large_array_round_trip_copies_once_into_the_device():
    host = np.random.default_rng(0).standard_normal((1031, 4099)).astype(np.float32)
    x = cg.asarray(host)
    unified = x.device.info.host_unified_memory
    np.asarray(x)  # the mapping exists before the count, as it does for a worker's results
    data, buffers, back, (sent, sent_host), (received, received_host) = _round_trip_counted(x)
    # sending: one out-of-band frame that is the mapping itself; no host copy of the elements
    assert len(buffers) == 1 and len(data) < 1024
    frame = np.frombuffer(buffers[0].raw(), np.float32)
    assert frame.nbytes == host.nbytes
    assert np.shares_memory(frame, np.asarray(x))
    assert sent.host_to_device == 0 and sent.device_to_device == 0
    assert sent.device_to_host == (0 if unified else host.nbytes)  # discrete: the map's read
    assert sent_host < host.nbytes // 16
    # receiving: exactly one copy, host frame -> new device buffer, and no host staging copy
    assert received.host_to_device == host.nbytes
    assert received.device_to_host == 0 and received.device_to_device == 0
    assert received_host < host.nbytes // 16
    assert isinstance(back, cg.DeviceArray) and back.device == cg.default_device()
    assert back.shape == host.shape and back.dtype == host.dtype
    assert not np.shares_memory(np.asarray(back), frame)
    np.testing.assert_array_equal(back.get(), host)


@pytest.mark.parametrize("host", [
    np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.5], np.float32),
    np.arange(-7, 26, dtype=np.int32).reshape(3, 11),
    np.zeros((0, 7), np.float64),
    np.array(True),
])
def test_round_trip_keeps_every_bit(host):
    x = cg.asarray(host)
    buffers: list = []
    back = pickle.loads(pickle.dumps(x, protocol=5, buffer_callback=buffers.append),
                        buffers=buffers)
    assert isinstance(back, cg.DeviceArray)
    got = back.get()
    assert got.shape == host.shape and got.dtype == host.dtype
    assert got.tobytes() == host.tobytes()


def test_strided_view_and_default_protocol():
    host = np.arange(257 * 33, dtype=np.float32).reshape(257, 33)
    view = cg.asarray(host)[1::2, ::3]
    for protocol in (pickle.DEFAULT_PROTOCOL, 5):
        back = pickle.loads(pickle.dumps(view, protocol=protocol))
        assert isinstance(back, cg.DeviceArray)
        np.testing.assert_array_equal(back.get(), host[1::2, ::3])
