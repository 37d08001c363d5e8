"""The device's queue records no timestamps until a device-time measurement asks for them (a
profiling queue costs NVIDIA's driver ~7 us per launch); the switch keeps work in order and
host views valid."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl

import clarray_gemm as cg
from clarray_gemm.bench.timing import device_seconds
from conftest import assert_matches, random_array

ROOT = Path(__file__).resolve().parents[2]
FRESH = """
import numpy as np, pyopencl as cl, clarray_gemm as cg
x = cg.asarray(np.arange(10.0, dtype=np.float32))
assert (np.asarray(x @ x.reshape(10, 1)) == 285).all() and (np.asarray(x + x)[3] == 6)
device = x.device
flags = device.queue.properties & cl.command_queue_properties.PROFILING_ENABLE
print(device.profiling, bool(flags))
"""


def _has_profiling(queue: cl.CommandQueue) -> bool:
    return bool(queue.properties & cl.command_queue_properties.PROFILING_ENABLE)


def test_a_process_that_only_computes_records_no_timestamps():
    proc = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", FRESH],
                          cwd=ROOT / "tests", capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["False", "False"]


def test_device_time_switches_to_a_profiling_queue_in_order(device, launches):
    a, b = random_array((33, 31), np.float32, 1), random_array((31, 7), np.float32, 2)
    x, y = cg.asarray(a, device=device), cg.asarray(b, device=device)
    before = x @ y            # enqueued on the current queue, maybe not finished
    v = cg.asarray(b[:, 0].copy(), device=device)
    prepared = {  # plans whose launches are prepared closures, made before the switch
        "gpu_blocked": lambda: cg.matmul(x, y, kernel="gpu_blocked"),
        "gemv_split": lambda: cg.matmul(x, v, kernel="gemv_split")}
    for run in prepared.values():
        run()
    view = np.asarray(x)      # a host view taken before the switch
    device.enable_profiling()
    timing = device_seconds(device, lambda: x @ y, reps=3)
    assert device.profiling and _has_profiling(device.queue)
    assert timing.seconds > 0
    assert_matches(before, a.astype(np.float64) @ b)
    np.testing.assert_array_equal(view, a)
    x *= 2                    # a write after the switch: the old view keeps its snapshot
    np.testing.assert_array_equal(view, a)
    assert_matches(x @ y, (2 * a.astype(np.float64)) @ b)
    queue = device.queue
    device.enable_profiling()  # idempotent
    assert device.queue is queue
    # plans made before the switch (prepared launches included) enqueue on the new queue
    launches.clear()
    a64 = 2 * a.astype(np.float64)
    assert_matches(x @ y + 1, a64 @ b + 1)
    assert_matches(prepared["gpu_blocked"](), a64 @ b)
    assert_matches(prepared["gemv_split"](), a64 @ b[:, 0])
    queues = [q for q, _ in launches]
    assert queues and all(q is queue for q in queues), queues


def test_device_time_leaves_the_queue_as_it_found_it(device):
    """Wall-clock measurements after a device-time one do not pay for timestamps; a device
    switched to profiling on purpose stays so."""
    x = cg.asarray(random_array((17, 19), np.float32, 3), device=device)
    try:
        device.disable_profiling()
        assert not device.profiling and not _has_profiling(device.queue)
        assert device_seconds(device, lambda: x + x, reps=3).seconds > 0
        assert not device.profiling and not _has_profiling(device.queue)
        device.enable_profiling()
        device_seconds(device, lambda: x + x, reps=3)
        assert device.profiling and _has_profiling(device.queue)
        assert_matches(x + x, 2 * np.asarray(x).astype(np.float64))
    finally:
        device.disable_profiling()
    assert not _has_profiling(device.queue)
