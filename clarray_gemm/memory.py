"""Host-mapped device memory: allocation, map/unmap, the coherence rule, and byte counters.

Every buffer is ``CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR`` and the host reaches it only by
``clEnqueueMapBuffer`` / unmap, as in Qualcomm's Adreno host code. On unified-memory devices
(PoCL, integrated GPUs) mapping copies nothing; on discrete GPUs the driver copies, and the
counters below say how many bytes moved.

The coherence rule (OpenCL forbids a kernel to use a buffer that is mapped for writing, and to
write one that is mapped at all):

1. Host *read* views (``np.asarray(x)``) map the buffer for reading. They are read-only NumPy
   arrays whose lifetime holds the mapping; while one lives, kernels may still *read* the buffer.
   All live read views of a buffer share one mapping, so two ``np.asarray`` calls give views of
   the same memory.
2. A kernel or host write to a buffer that has live read views never tears or changes them: the
   storage is first detached (copy-on-write on the device) so those views keep the snapshot they
   were taken of, while the array and its device views move to the new buffer.
3. Host *writes* happen inside ``Storage.map_for_write()`` (a ``with`` block). While it is open, any
   attempt to launch a kernel on that storage raises ``RuntimeError``; the block unmaps on exit,
   before any later kernel is enqueued.
4. Operations that produce results always write fresh buffers, so rule 2 only costs a copy for
   in-place writes (``out=``, ``x[...] = v``, ``+=``) to arrays the user is also viewing on the host.

Buffers come from a per-device pool (pyopencl's ``MemoryPool``), as CuPy's do: a freed buffer is
kept and handed out again, so steady-state code pays neither the driver's allocation nor, on
discrete GPUs, the pinning of the host side of an ``ALLOC_HOST_PTR`` buffer (measured on the H100:
tens of milliseconds for 64 MiB). A mapped buffer is never returned to the pool before its host
views are gone. ``free_cached_memory()`` gives the held buffers back to the driver.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

from .device import Device, register_fork_reset

__all__ = ["Storage", "TransferStats", "transfer_stats", "reset_transfer_stats", "new_buffer",
           "free_cached_memory"]

_FLAGS = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR


@dataclass
class TransferStats:
    """Bytes copied between host memory and device memory, and map calls made."""

    host_to_device: int = 0
    device_to_host: int = 0
    device_to_device: int = 0
    maps: int = 0

    def copy(self) -> "TransferStats":
        return TransferStats(self.host_to_device, self.device_to_host, self.device_to_device,
                             self.maps)

    def __sub__(self, other: "TransferStats") -> "TransferStats":
        return TransferStats(self.host_to_device - other.host_to_device,
                             self.device_to_host - other.device_to_host,
                             self.device_to_device - other.device_to_device,
                             self.maps - other.maps)


_stats = TransferStats()
_stats_lock = threading.Lock()


def transfer_stats() -> TransferStats:
    """A snapshot of the process-wide byte counters (subtract two snapshots for a delta)."""
    with _stats_lock:
        return _stats.copy()


def reset_transfer_stats() -> None:
    global _stats
    with _stats_lock:
        _stats = TransferStats()


def count_transfer(host_to_device: int = 0, device_to_host: int = 0,
                   device_to_device: int = 0, maps: int = 0) -> None:
    with _stats_lock:
        _stats.host_to_device += host_to_device
        _stats.device_to_host += device_to_host
        _stats.device_to_device += device_to_device
        _stats.maps += maps


_pools: dict[Device, cl_tools.MemoryPool] = {}
register_fork_reset(_pools)


def new_buffer(device: Device, nbytes: int) -> cl.MemoryObject:
    """A ``READ_WRITE | ALLOC_HOST_PTR`` buffer from the device's pool (OpenCL has no 0-byte
    buffers: 16 at least). Kernels' scratch space (packed operands, staging) uses it too."""
    pool = _pools.get(device)
    if pool is None:
        pool = _pools[device] = cl_tools.MemoryPool(
            cl_tools.ImmediateAllocator(device.queue, _FLAGS))
    return pool.allocate(max(int(nbytes), 16))


def free_cached_memory() -> None:
    """Release the buffers the pools hold for reuse (live arrays are not affected)."""
    for pool in _pools.values():
        pool.free_held()


def _keep_alive(_buffer: object) -> None:
    """A finalizer's no-op: holding its argument is the point."""


class Storage:
    """One ``ALLOC_HOST_PTR`` buffer, shared by an array and all of its device views."""

    def __init__(self, device: Device, nbytes: int):
        self.device = device
        self.nbytes = int(nbytes)
        # OpenCL has no zero-size buffers; a 0-byte array still owns a tiny one.
        self.buffer = new_buffer(device, self.nbytes)
        self._read_map: weakref.ref | None = None
        self._write_mapped = False

    # -- host side ---------------------------------------------------------------------------
    def _live_read_map(self) -> np.ndarray | None:
        return self._read_map() if self._read_map is not None else None

    def has_host_views(self) -> bool:
        return self._live_read_map() is not None

    def read_view(self) -> np.ndarray:
        """A read-only uint8 view of the whole buffer, mapped for reading (shared mapping)."""
        if self._write_mapped:
            raise RuntimeError("buffer is mapped for writing; leave the map_for_write block first")
        mapped = self._live_read_map()
        if mapped is None:
            mapped, _ = cl.enqueue_map_buffer(
                self.device.queue, self.buffer, cl.map_flags.READ, 0, (self.nbytes,), np.uint8,
                is_blocking=True)
            mapped.flags.writeable = False
            # The pool must not hand this buffer out again while the mapping lives.
            weakref.finalize(mapped, _keep_alive, self.buffer)
            self._read_map = weakref.ref(mapped)
            count_transfer(maps=1, device_to_host=0 if self.device.info.host_unified_memory
                           else self.nbytes)
        view = mapped.view()
        view.flags.writeable = False
        return view

    @contextlib.contextmanager
    def map_for_write(self, offset: int = 0, nbytes: int | None = None,
                      discard: bool = False) -> Iterator[np.ndarray]:
        """Map ``[offset, offset+nbytes)`` for host writes; unmapped when the block ends.

        ``discard=True`` maps with ``WRITE_INVALIDATE_REGION``: the old contents are not
        fetched (use it when every byte will be overwritten).
        """
        nbytes = self.nbytes - offset if nbytes is None else nbytes
        self.prepare_write()
        if self._write_mapped:
            raise RuntimeError("buffer is already mapped for writing")
        flags = (cl.map_flags.WRITE_INVALIDATE_REGION if discard
                 else cl.map_flags.READ | cl.map_flags.WRITE)
        mapped, _ = cl.enqueue_map_buffer(self.device.queue, self.buffer, flags, offset,
                                          (nbytes,), np.uint8, is_blocking=True)
        self._write_mapped = True
        unified = self.device.info.host_unified_memory
        count_transfer(maps=1, device_to_host=0 if unified or discard else nbytes)
        try:
            yield mapped
        finally:
            mapped.base.release(queue=self.device.queue)
            self._write_mapped = False
            count_transfer(host_to_device=0 if unified else nbytes)

    def write_from(self, host: np.ndarray) -> None:
        """Fill the buffer with ``host``'s elements in C order: one copy, into the mapping."""
        if host.size == 0:
            return
        with self.map_for_write(discard=True) as mapped:
            np.copyto(np.ndarray(host.shape, host.dtype, buffer=mapped), host, casting="no")
        count_transfer(host_to_device=host.nbytes if self.device.info.host_unified_memory else 0)

    # -- device side -------------------------------------------------------------------------
    def check_kernel_access(self) -> None:
        """Called before a kernel touches this buffer (rule 3)."""
        if self._write_mapped:
            raise RuntimeError("a kernel cannot use a buffer while it is mapped for writing")

    def prepare_write(self) -> None:
        """Called before a kernel or the host writes this buffer (rule 2: copy-on-write)."""
        if self._write_mapped:
            raise RuntimeError("a kernel cannot write a buffer while it is mapped for writing")
        if self.has_host_views():
            fresh = new_buffer(self.device, self.nbytes)
            if self.nbytes:
                cl.enqueue_copy(self.device.queue, fresh, self.buffer, byte_count=self.nbytes)
                count_transfer(device_to_device=self.nbytes)
            self.buffer = fresh
            self._read_map = None
