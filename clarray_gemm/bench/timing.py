"""The one timing helper of the benchmarks and the tuner.

Two kinds of time, never mixed:

* **device time** (:func:`device_seconds`): the span on the device's clock between two tiny
  fence kernels enqueued just before and just after an operation's commands, read from OpenCL
  profiling events. The queue is held by a user event while the operation enqueues, so host-side
  Python between its commands does not count; packing, padding or split-K reduction kernels a
  variant enqueues around its main kernel do.
* **end-to-end time** (:func:`host_seconds`): wall-clock time of a host call (NumPy arrays in,
  NumPy arrays out), with the bytes it copied between host and device (``transfer_stats``).

Both run a warm-up first (compilation and first use never count) and report the median of the
repetitions.
"""
from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyopencl as cl

from ..device import Device, register_fork_reset
from ..memory import TransferStats, transfer_stats

__all__ = ["Timing", "device_seconds", "host_seconds", "repetitions"]

# If an operation blocks on the queue while it is held (a blocking map or copy), the watchdog
# releases the queue after this long and the measurement is repeated without holding it.
_WATCHDOG_S = 5.0


@dataclass(frozen=True)
class Timing:
    """Median seconds of ``reps`` repetitions, the fastest, and the bytes copied per call."""

    seconds: float
    best: float
    reps: int
    kind: str  # "device" or "end-to-end"
    copied: TransferStats | None = None

    @property
    def bytes_copied(self) -> int:
        c = self.copied
        return 0 if c is None else c.host_to_device + c.device_to_host + c.device_to_device


def repetitions(first: float, budget_s: float, lo: int = 3, hi: int = 20) -> int:
    """How many repetitions fit ``budget_s`` given one run took ``first`` seconds."""
    if first <= 0:
        return hi
    return max(lo, min(hi, int(budget_s / first)))


# A one-work-item kernel that marks a point on the device's clock. Kernel events carry the
# device's own timestamps; marker events do not on every driver (NVIDIA's are on another clock
# and held user-event waits show up in them as ~4 ms steps).
_FENCE_SOURCE = """
__kernel void clarray_fence(__global float* x) { if (get_global_id(0) == 0) x[1] = x[0]; }
"""
_fences: dict[int, tuple[cl.Kernel, cl.Buffer]] = {}
register_fork_reset(_fences)


def _fence_kernel(device: Device) -> tuple[cl.Kernel, cl.Buffer]:
    key = device.cl_device.int_ptr
    if key not in _fences:
        prog = cl.Program(device.context, _FENCE_SOURCE).build()
        scratch = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64)
        cl.enqueue_fill_buffer(device.queue, scratch, np.float32(0), 0, 64)
        _fences[key] = (prog.clarray_fence, scratch)
    return _fences[key]


def _fence(device: Device, wait_for: list[cl.Event] | None = None) -> cl.Event:
    fence, scratch = _fence_kernel(device)
    return fence(device.queue, (1,), (1,), scratch, wait_for=wait_for)


def _span(start: cl.Event, end: cl.Event) -> float:
    return max(end.profile.start - start.profile.end, 0) * 1e-9


def _held_span(device: Device, op: Callable[[], Any]) -> float | None:
    """Device seconds between two fence kernels around ``op``'s commands, all enqueued behind
    a user event that holds the queue (so host time between them does not count), or None if
    ``op`` blocked on the queue (then the watchdog had to release it)."""
    gate = cl.UserEvent(device.context)
    start = _fence(device, wait_for=[gate])
    released = threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            gate.set_status(cl.command_execution_status.COMPLETE)

    watchdog = threading.Timer(_WATCHDOG_S, release)
    watchdog.start()
    try:
        op()
        blocked = released.is_set()
        end = _fence(device)
    finally:
        watchdog.cancel()
        release()
    end.wait()
    return None if blocked else _span(start, end)


def _open_span(device: Device, op: Callable[[], Any]) -> float:
    start = _fence(device)
    op()
    end = _fence(device)
    end.wait()
    return _span(start, end)


def device_seconds(device: Device, op: Callable[[], Any], reps: int | None = None,
                   budget_s: float = 0.5, warmup: int = 1) -> Timing:
    """Device time of ``op`` (a callable that enqueues work on ``device.queue``): ``warmup``
    untimed calls, then ``reps`` timed ones (``None``: as many as fit ``budget_s``, 3 to 20)."""
    for _ in range(warmup):
        op()
    device.queue.finish()
    span = _held_span
    first = span(device, op)
    if first is None:  # op blocks on its queue: time it unheld (host gaps included)
        span = _open_span
        first = span(device, op)
    n = reps if reps is not None else repetitions(first, budget_s)
    times = [first]
    for _ in range(n - 1):
        t = span(device, op)
        times.append(t if t is not None else _open_span(device, op))
    return Timing(statistics.median(times), min(times), len(times), "device")


def host_seconds(op: Callable[[], Any], reps: int | None = None, budget_s: float = 0.5,
                 warmup: int = 1) -> Timing:
    """End-to-end wall-clock time of ``op`` (which must return only when its result is on the
    host), with the bytes one call copied between host and device."""
    for _ in range(warmup):
        op()
    before = transfer_stats()
    t0 = time.perf_counter()
    op()
    first = time.perf_counter() - t0
    copied = transfer_stats() - before
    n = reps if reps is not None else repetitions(first, budget_s)
    times = [first]
    for _ in range(n - 1):
        t0 = time.perf_counter()
        op()
        times.append(time.perf_counter() - t0)
    return Timing(statistics.median(times), min(times), len(times), "end-to-end", copied)
