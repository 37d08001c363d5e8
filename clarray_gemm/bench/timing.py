"""The one timing helper of the benchmarks and the tuner.

Three kinds of time, never mixed:

* **device time** (:func:`device_seconds`): the span on the device's clock between two tiny
  fence kernels enqueued just before and just after an operation's commands, read from OpenCL
  profiling events. The queue is held by a user event while the operation enqueues, so host-side
  Python between its commands does not count; packing, padding or split-K reduction kernels a
  variant enqueues around its main kernel do.
* **end-to-end time** (:func:`host_seconds`): wall-clock time of a host call (NumPy arrays in,
  NumPy arrays out), with the bytes it copied between host and device (``transfer_stats``);
  :func:`synced_seconds` for device work that is waited for but not read back.
* **per-call wall time** (:func:`wall_seconds`): the latency benches' clock: as many calls as
  fill a time budget (at least a minimum count), each timed alone, with an untimed ``setup``
  before each call when the call needs a fresh input.
* **pipelined wall time** (:func:`pipelined_seconds`): rounds of calls queued back to back, each
  round ended by one synchronisation, divided by the calls: what a program that never waits
  between calls pays per call.

CUDA peers are timed with CUDA events (:func:`cuda_event_seconds`), their device time.

All run a warm-up first (compilation and first use never count) and report the median of the
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

from ..device import Device
from ..memo import Memo
from ..memory import TransferStats, transfer_stats

__all__ = ["Timing", "device_seconds", "host_seconds", "synced_seconds", "cuda_event_seconds",
           "wall_seconds", "pipelined_seconds", "repetitions", "per_call_seconds",
           "microseconds"]

# If an operation blocks on the queue while it is held (a blocking map or copy), the watchdog
# releases the queue after this long and the measurement is repeated without holding it.
_WATCHDOG_S = 5.0


@dataclass(frozen=True)
class Timing:
    """Median seconds of ``reps`` repetitions, the fastest, and the bytes copied per call."""

    seconds: float
    best: float
    reps: int
    kind: str  # "device", "end-to-end", "wall" or "pipelined"
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


# A one-work-item kernel (opencl/bench_noop.cl) marks a point on the device's clock. Kernel events
# carry the device's own timestamps; marker events do not on every driver (NVIDIA's are on
# another clock and held user-event waits show up in them as ~4 ms steps).
_fences: Memo[tuple[cl.Kernel, cl.Buffer]] = Memo("timing fences")


def _fence_kernel(device: Device) -> tuple[cl.Kernel, cl.Buffer]:
    from ..sources import source_text

    def build() -> tuple[cl.Kernel, cl.Buffer]:
        prog = cl.Program(device.context, source_text("bench_noop.cl")).build()
        scratch = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 64)
        cl.enqueue_fill_buffer(device.queue, scratch, np.float32(0), 0, 64)
        return prog.bench_noop, scratch
    return _fences.get(device.cl_device.int_ptr, build)


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
    untimed calls, then ``reps`` timed ones (``None``: as many as fit ``budget_s``, 3 to 20).
    Runs on a profiling queue (:meth:`Device.enable_profiling`) and leaves the device's queue
    as it found it, so that wall-clock measurements after it do not pay the driver's
    profiling cost (~7 us a launch on an H100): ``op`` must read ``device.queue`` when it
    runs, not before this call."""
    was_profiling = device.profiling
    device.enable_profiling()
    try:
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
    finally:
        if not was_profiling:
            device.disable_profiling()
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


def synced_seconds(op: Callable[[], Any], sync: Callable[[], Any], reps: int | None = None,
                   budget_s: float = 0.5, warmup: int = 1) -> Timing:
    """Wall-clock time of ``op`` followed by ``sync`` (e.g. ``device.queue.finish``): work
    launched on a device and waited for, without reading its result back."""
    return host_seconds(lambda: (op(), sync()), reps=reps, budget_s=budget_s, warmup=warmup)


def pipelined_seconds(op: Callable[[], Any], sync: Callable[[], Any], reps: int,
                      rounds: int = 5) -> Timing:
    """Wall-clock seconds per call of ``op``: after one warm-up call, ``rounds`` rounds of
    ``reps`` calls, each round ended by ``sync`` (e.g. ``queue.finish``); the median and the
    fastest round, divided by ``reps``."""
    op()
    sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            op()
        sync()
        times.append((time.perf_counter() - t0) / reps)
    return Timing(statistics.median(times), min(times), rounds, "pipelined")


def cuda_event_seconds(new_event: Callable[[], Any], op: Callable[[], Any],
                       sync: Callable[[], Any], budget_s: float = 0.5,
                       reps: int | None = None) -> Timing:
    """Device time of a CUDA operation (CuPy or PyTorch) between two CUDA events: one warm-up,
    then ``reps`` timed calls (``None``: as many as fit ``budget_s``, 3 to 20)."""
    op()
    sync()

    def once() -> float:
        start, end = new_event(), new_event()
        start.record()
        op()
        end.record()
        end.synchronize()
        return _cuda_elapsed(start, end)
    first = once()
    n = reps if reps is not None else repetitions(first, budget_s)
    times = sorted([first] + [once() for _ in range(n - 1)])
    return Timing(statistics.median(times), times[0], len(times), "device")


def _cuda_elapsed(start: Any, end: Any) -> float:
    if hasattr(start, "elapsed_time"):  # torch
        return start.elapsed_time(end) * 1e-3
    import cupy
    return cupy.cuda.get_elapsed_time(start, end) * 1e-3


def wall_seconds(op: Callable[..., Any], budget_s: float = 0.2, min_reps: int = 20,
                 warmup: int = 2, setup: Callable[[], Any] | None = None,
                 max_reps: int = 100_000, cap_s: float | None = None,
                 capped_min_reps: int = 5) -> Timing:
    """Per-call wall-clock time of ``op`` (which must return only when its work is done).

    After ``warmup`` untimed calls, calls are timed one by one until ``budget_s`` seconds have
    passed (``setup`` included) and there were at least ``min_reps`` of them (at most
    ``max_reps``). With ``cap_s``, a slow call stops earlier: once ``cap_s`` seconds have passed
    and ``capped_min_reps`` calls were timed. With ``setup``, its result is passed to each call
    (``op(setup())``) and only the call is timed; a call's result is freed after its clock stops.
    Reports the median, the fastest and the bytes one call copied between host and device."""
    def call() -> float:
        arg = setup() if setup is not None else None
        t0 = time.perf_counter()
        result = op(arg) if setup is not None else op()
        elapsed = time.perf_counter() - t0
        del result  # freed outside the clock: the call is timed, not the result's lifetime
        return elapsed

    def done(spent: float) -> bool:
        n = len(times)
        if n >= max_reps:
            return True
        if cap_s is not None and spent >= cap_s and n >= capped_min_reps:
            return True
        return n >= min_reps and spent >= budget_s
    for _ in range(warmup):
        call()
    before = transfer_stats()
    start = time.perf_counter()
    times = [call()]
    copied = transfer_stats() - before
    while not done(time.perf_counter() - start):
        times.append(call())
    return Timing(statistics.median(times), min(times), len(times), "wall", copied)


def per_call_seconds(op: Callable[[], Any], budget_s: float) -> float:
    """Median wall-clock seconds per call of ``op`` (which waits for its work) after one warm-up
    call: at least 3 calls, more while ``budget_s`` lasts, at most 30 (the grids of ``bench
    shapes`` and ``bench patterns``)."""
    return wall_seconds(op, budget_s=budget_s, min_reps=3, warmup=1, max_reps=30).seconds


def microseconds(seconds: float | None) -> str:
    """``seconds`` as microseconds with one decimal for a results table ("-": not measured)."""
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"
