"""Enqueues that make no event object: ``clEnqueueNDRangeKernel`` and ``clEnqueueCopyBuffer``
called through the process's ICD loader by ctypes, with a null event pointer.

pyopencl asks the driver for an event on every enqueue and wraps it in a Python object. Where
the driver's event is costly on the host (NVIDIA's), an operator that no one waits on pays for
it on every call; the package's queues are in order and its waits are ``clFinish`` or a
blocking map, so the hot paths need no event. Which drivers take this path is tuning data
(``enqueue.eventless_vendors`` in ``kernels/tuned_constants.json``).

A call that the driver refuses is made again through pyopencl, which raises its error in
pyopencl's words (or succeeds, and returns its event). Found only where the loader is mapped
into the process (Linux ``/proc/self/maps``); elsewhere :func:`library` is None and every
enqueue goes through pyopencl.
"""
from __future__ import annotations

import ctypes
from functools import lru_cache

__all__ = ["library", "kernel_enqueue", "copy_enqueue", "sizes"]

_P = ctypes.c_void_p


@lru_cache(maxsize=None)
def library() -> ctypes.CDLL | None:
    """The ICD loader pyopencl linked (the ``libOpenCL`` mapped into this process), or None."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = [line.split()[-1] for line in maps if "libOpenCL" in line]
    except OSError:
        return None
    if not paths:
        return None
    try:
        return ctypes.CDLL(paths[0])
    except OSError:
        return None


@lru_cache(maxsize=None)
def kernel_enqueue():
    """``clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local, 0, NULL,
    NULL)`` as a ctypes function returning the error code, or None without a loader."""
    lib = library()
    if lib is None:
        return None
    fn = lib.clEnqueueNDRangeKernel
    fn.restype = ctypes.c_int32
    fn.argtypes = [_P, _P, ctypes.c_uint32, _P, _P, _P, ctypes.c_uint32, _P, _P]
    return fn


@lru_cache(maxsize=None)
def copy_enqueue():
    """``clEnqueueCopyBuffer(queue, src, dst, src_offset, dst_offset, nbytes, 0, NULL,
    NULL)`` as a ctypes function returning the error code, or None without a loader."""
    lib = library()
    if lib is None:
        return None
    fn = lib.clEnqueueCopyBuffer
    fn.restype = ctypes.c_int32
    fn.argtypes = [_P, _P, _P, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t,
                   ctypes.c_uint32, _P, _P]
    return fn


def sizes(values) -> ctypes.Array | None:
    """A work size as the ``size_t`` array the enqueue reads (None stays None)."""
    if values is None:
        return None
    return (ctypes.c_size_t * len(values))(*values)
