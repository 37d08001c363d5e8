"""The OpenCL calls that may meet another Python thread's call inside the driver.

pyopencl lets go of the GIL inside every blocking call (a blocking map or copy, a finish, a
build), so a second thread can enter the driver meanwhile. OpenCL allows that, and PoCL, Intel's
CPU runtime and Oclgrind take it. NVIDIA's driver (H100, driver 580.159) does not, as this library
drives it: eight threads of mixed operations crashed it (SIGSEGV in a driver thread) or hung it
in every run, and ran clean with these calls behind one lock
(``benches/probes/thread_crash.py``). A device whose ``DeviceInfo.serializes_driver_calls`` is
true turns the lock on for the whole process when its context is made (:func:`serialize`);
until then each function here is one flag test more than the pyopencl call it makes.

Kernel launches hold :func:`guard` around their ``set_arg`` calls and the enqueue
(``kernels/programs.py``). Buffers that Python frees are not covered (their release runs where
the garbage is collected); mappings are unmapped explicitly through :func:`unmap`, a read
mapping when its last host view dies.

At interpreter exit nothing is unmapped any more (:func:`stop_unmapping`): an unmap enqueued
while Python tears its objects down completes on a driver thread after the queues were drained,
and Intel's CPU runtime then aborts the process (``Pure virtual function called!``, a crash in
``UnmapMemObjectCommand::CommandDone`` on a TBB thread while ``exit`` runs; about 1 run in 7 of
a script that held host views at its end). The mappings are left to the operating system.
"""
from __future__ import annotations

import contextlib
import ctypes
import threading
from typing import Any

import numpy as np
import pyopencl as cl

__all__ = ["serialize", "serialized", "guard", "copy", "copy_buffer", "read_buffer", "fill", "map_buffer",
           "map_image", "unmap", "finish", "allocate", "free_held", "stop_unmapping",
           "unmapping_stopped"]

_lock = threading.RLock()
_serialized = False
_unlocked = contextlib.nullcontext()
_unmapping_stopped = False


def serialize() -> None:
    """From now on, one thread at a time in the driver (every function of this module)."""
    global _serialized
    _serialized = True


def serialized() -> bool:
    """True once a device that needs it has turned serialization on."""
    return _serialized


def guard() -> contextlib.AbstractContextManager:
    """The lock while calls are serialized, else a context that does nothing: for a sequence of
    calls that must not interleave with another thread's (a kernel's ``set_arg``\\ s and its
    enqueue)."""
    return _lock if _serialized else _unlocked


def copy(queue: cl.CommandQueue, dest, src, **kwargs: Any) -> cl.Event:
    """``cl.enqueue_copy`` (buffer, host or image, blocking or not)."""
    if not _serialized:
        return cl.enqueue_copy(queue, dest, src, **kwargs)
    with _lock:
        return cl.enqueue_copy(queue, dest, src, **kwargs)


_COPY_BUFFER = getattr(cl._cl, "_enqueue_copy_buffer", None)


def copy_buffer(queue: cl.CommandQueue, src: cl.Buffer, dst: cl.Buffer, nbytes: int,
                src_offset: int, dst_offset: int, wait_for=None) -> cl.Event:
    """``clEnqueueCopyBuffer`` of ``nbytes`` (byte offsets), without ``cl.enqueue_copy``'s
    dispatch on argument types where this pyopencl exposes the direct call."""
    if _COPY_BUFFER is None:
        return copy(queue, dst, src, byte_count=nbytes, src_offset=src_offset,
                    dst_offset=dst_offset, wait_for=wait_for)
    if not _serialized:
        return _COPY_BUFFER(queue, src, dst, nbytes, src_offset, dst_offset, wait_for)
    with _lock:
        return _COPY_BUFFER(queue, src, dst, nbytes, src_offset, dst_offset, wait_for)


_READ_BUFFER = getattr(cl._cl, "_enqueue_read_buffer", None)


def read_buffer(queue: cl.CommandQueue, buffer: cl.Buffer, host: np.ndarray) -> None:
    """A blocking ``clEnqueueReadBuffer`` of ``host.nbytes`` from the start of ``buffer``
    (the direct call where this pyopencl exposes it, else ``cl.enqueue_copy``)."""
    if _READ_BUFFER is None:
        copy(queue, host, buffer)
        return
    if not _serialized:
        _READ_BUFFER(queue, buffer, host)
        return
    with _lock:
        _READ_BUFFER(queue, buffer, host)


def fill(queue: cl.CommandQueue, buffer: cl.Buffer, pattern, offset: int, size: int) -> cl.Event:
    """``clEnqueueFillBuffer``."""
    with guard():
        return cl.enqueue_fill_buffer(queue, buffer, pattern, offset, size)


def map_buffer(queue: cl.CommandQueue, buffer: cl.Buffer, flags: int, offset: int,
               nbytes: int) -> np.ndarray:
    """A blocking map of ``nbytes`` bytes at ``offset``, as a uint8 array; give it back with
    :func:`unmap`."""
    if not _serialized:
        return cl.enqueue_map_buffer(queue, buffer, flags, offset, (nbytes,), np.uint8,
                                     is_blocking=True)[0]
    with _lock:
        return cl.enqueue_map_buffer(queue, buffer, flags, offset, (nbytes,), np.uint8,
                                     is_blocking=True)[0]


def map_image(queue: cl.CommandQueue, image: cl.Image, flags: int, origin, region, shape,
              dtype) -> tuple[np.ndarray, int]:
    """A blocking map of an image region: (the mapping, its row pitch in bytes)."""
    with guard():
        mapped, _, row_pitch, _ = cl.enqueue_map_image(queue, image, flags, origin, region,
                                                       shape, dtype, is_blocking=True)
    return mapped, row_pitch


def unmap(queue: cl.CommandQueue, mapped: np.ndarray) -> None:
    """Enqueue the unmap of an array returned by :func:`map_buffer` or :func:`map_image` (no
    wait: the in-order queue orders it before later commands). After :func:`stop_unmapping`
    the mapping is kept, mapped, until the process ends."""
    if _unmapping_stopped:
        # One reference that is never given back: the mapping object's destructor would
        # enqueue the unmap itself.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(mapped))
        return
    with guard():
        mapped.base.release(queue=queue)


def finish(queue: cl.CommandQueue) -> None:
    """``clFinish``."""
    with guard():
        queue.finish()


def allocate(pool, nbytes: int):
    """A buffer from a pyopencl memory pool (a driver allocation when the pool has none)."""
    if not _serialized:
        return pool.allocate(nbytes)
    with _lock:
        return pool.allocate(nbytes)


def free_held(pool) -> None:
    """Give the buffers a pyopencl memory pool holds for reuse back to the driver."""
    with guard():
        pool.free_held()


def stop_unmapping() -> None:
    """At interpreter exit, after the queues are drained: from now on :func:`unmap` leaves
    mappings to the operating system instead of enqueueing work no one will wait for."""
    global _unmapping_stopped
    _unmapping_stopped = True


def unmapping_stopped() -> bool:
    """True once :func:`stop_unmapping` ran (the interpreter is exiting)."""
    return _unmapping_stopped
