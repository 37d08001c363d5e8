"""OpenCL buffers: ``READ_WRITE | ALLOC_HOST_PTR`` allocations from a per-device pool, freed
host-resident buffers parked still mapped for the next storage of their size, the mapping object
that owns a persistent map, and the drain at interpreter exit."""
from __future__ import annotations

import atexit
import threading
from typing import Callable

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

from ..device import Device, register_fork_reset
from ..drivers import calls
from .transfers import format_bytes

__all__ = ["new_buffer", "buffer_holding", "free_cached_memory", "take_parked", "unmap", "Mapping", "HostExport",
           "MAP_RW"]

_FLAGS = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
MAP_RW = cl.map_flags.READ | cl.map_flags.WRITE
_PARKED_BYTES_MAX = 256 << 20


_pools: dict[Device, cl_tools.MemoryPool] = {}
_pools_lock = threading.Lock()


def _pool(device: Device) -> cl_tools.MemoryPool:
    pool = _pools.get(device)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(device)
            if pool is None:
                pool = _pools[device] = cl_tools.MemoryPool(
                    cl_tools.ImmediateAllocator(device.queue, _FLAGS))
    return pool


def new_buffer(device: Device, nbytes: int) -> cl.MemoryObject:
    """A ``READ_WRITE | ALLOC_HOST_PTR`` buffer from the device's pool (OpenCL has no 0-byte
    buffers: 16 at least). Kernels' scratch space (packed operands, staging) uses it too.

    Raises ``MemoryError`` naming the size and the device's limit when the request is larger
    than the device allows or the driver cannot satisfy it."""
    nbytes = max(int(nbytes), 16)
    limit = device.info.max_alloc_bytes
    if nbytes > limit:
        raise MemoryError(
            f"cannot allocate {format_bytes(nbytes)} ({nbytes} bytes) on {device}: the device's "
            f"largest allocation is {format_bytes(limit)} (CL_DEVICE_MAX_MEM_ALLOC_SIZE)")
    pool = _pool(device)
    try:
        return calls.allocate(pool, nbytes)
    except (cl.MemoryError, cl.LogicError, cl.RuntimeError):
        _release_parked(device)
        calls.free_held(pool)
        try:
            return calls.allocate(pool, nbytes)
        except (cl.MemoryError, cl.LogicError, cl.RuntimeError) as exc:
            raise MemoryError(
                f"cannot allocate {format_bytes(nbytes)} ({nbytes} bytes) on {device} "
                f"(device memory {format_bytes(device.info.global_mem_bytes)}): {exc}") from None


def buffer_holding(device: Device, host: np.ndarray) -> cl.MemoryObject:
    """A new ``READ_WRITE | ALLOC_HOST_PTR`` buffer created holding the bytes of ``host`` (1-D
    uint8, at least one byte): ``COPY_HOST_PTR``, so the copy is part of the allocation, not a
    command on the queue. A CPU driver runs each queue command from its own thread, and waiting
    for one costs ~80 us on PoCL. Not from the pool: for small host-born storages
    (``DeviceInfo.host_born_max_bytes``). Raises ``MemoryError`` as :func:`new_buffer` does."""
    try:
        with calls.guard():
            return cl.Buffer(device.context, _FLAGS | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    except (cl.MemoryError, cl.LogicError, cl.RuntimeError) as exc:
        raise MemoryError(f"cannot allocate {format_bytes(host.nbytes)} on {device}: {exc}") \
            from None


# Freed host-resident buffers of unified-memory devices, still mapped: (device, nbytes) -> list of
# (buffer, mapping, its read-only export). Bounded in bytes: past the bound a freed buffer is
# unmapped instead.
_ParkedEntry = tuple[cl.MemoryObject, np.ndarray, "np.ndarray | None"]
_parked: dict[tuple[Device, int], list[_ParkedEntry]] = {}
_parked_bytes = 0
_parked_lock = threading.Lock()
register_fork_reset(_pools)
register_fork_reset(_parked)


def _park(device: Device, nbytes: int, entry: _ParkedEntry) -> None:
    """Keep a freed host-resident buffer mapped for the next storage of its size: ``entry`` is
    (buffer, mapping, the mapping's read-only export or None)."""
    global _parked_bytes
    if not calls.unmapping_stopped():  # exiting: parked now, the mapping would unmap itself
        with _parked_lock:
            if _parked_bytes + nbytes <= _PARKED_BYTES_MAX:
                entries = _parked.get((device, nbytes))
                if entries is None:
                    _parked[(device, nbytes)] = [entry]
                else:
                    entries.append(entry)
                _parked_bytes += nbytes
                return
    unmap(device, entry[1])


def take_parked(device: Device, nbytes: int) -> _ParkedEntry | None:
    global _parked_bytes
    if _parked.get((device, nbytes)):  # a look without the lock first: most calls find none
        with _parked_lock:  # again under it: another thread may have taken or released them
            entries = _parked.get((device, nbytes))
            if entries:
                _parked_bytes -= nbytes
                return entries.pop()
    return None


def _release_parked(device: Device | None = None) -> None:
    global _parked_bytes
    with _parked_lock:
        keys = [k for k in _parked if device is None or k[0] == device]
        entries = [(k[0], e) for k in keys for e in _parked.pop(k)]
        _parked_bytes = sum(n * len(v) for (_, n), v in _parked.items())
    for dev, (_, mapping, _) in entries:
        unmap(dev, mapping)


def unmap(device: Device, mapping: np.ndarray) -> None:
    """Enqueue the unmap of a whole-buffer mapping (no wait: the in-order queue orders it)."""
    calls.unmap(device.queue, mapping)


_scratch_releasers: list[Callable[[], None]] = []


def register_scratch(release: Callable[[], None]) -> None:
    """Have :func:`free_cached_memory` call ``release()``: how a layer above (the kernels'
    per-thread scratch buffers) gives back memory it keeps between calls. Dropping a buffer that
    enqueued kernels still use is safe: OpenCL frees it once they are done."""
    _scratch_releasers.append(release)


def free_cached_memory() -> None:
    """Release the buffers the pools hold for reuse and the kernels' scratch buffers (packed
    operands, split-K partial sums); live arrays are not affected."""
    _release_parked()
    for release in list(_scratch_releasers):
        release()
    for pool in list(_pools.values()):
        calls.free_held(pool)


def _drain_at_exit() -> None:
    """Before the interpreter tears objects down in no particular order: finish the queues this
    process used, give back the buffers held for reuse, and stop unmapping (a driver may abort
    the process when a queue dies with work in flight: Intel's CPU runtime did, as ``libc++abi:
    Pure virtual function called!``, when host views alive at exit were unmapped during the
    teardown; see ``drivers/calls.py``)."""
    try:
        devices = list(_pools)
        free_cached_memory()
        for device in devices:
            calls.finish(device.queue)
    except Exception:  # nothing to save at exit
        pass
    calls.stop_unmapping()


atexit.register(_drain_at_exit)


class Mapping:
    """One buffer mapped read-write for the host (a host-resident storage's state). It is held
    by the storage and by the host views handed out of it; when the last holder lets go it is
    parked for reuse, still mapped, unless it was unmapped for a kernel first."""

    __slots__ = ("device", "nbytes", "buffer", "host", "released", "_exportable", "parkable")

    def __init__(self, device: Device, nbytes: int, buffer: cl.MemoryObject, host: np.ndarray,
                 exportable: np.ndarray | None = None, parkable: bool = True):
        self.device, self.nbytes, self.buffer, self.host = device, nbytes, buffer, host
        self.released = False
        self._exportable = exportable
        # False for a buffer someone else owns (a pyopencl array's): never handed to another
        # storage, unmapped when let go
        self.parkable = parkable

    def exportable(self) -> np.ndarray:
        """The mapping's bytes as a read-only ``HostExport``: the base from which each
        generation of host views gets its parent (see ``HostExport``)."""
        if self._exportable is None:
            view = self.host[: self.nbytes].view(HostExport)
            view.flags.writeable = False
            self._exportable = view
        return self._exportable

    def release(self) -> None:
        """Unmap now (a kernel is about to use the buffer)."""
        if not self.released:
            self.released = True
            unmap(self.device, self.host)

    def __del__(self) -> None:
        if not self.released:
            try:
                if self.parkable:
                    _park(self.device, self.nbytes, (self.buffer, self.host, self._exportable))
                else:
                    unmap(self.device, self.host)
            except Exception:  # interpreter shutdown: nothing left to give back
                pass


class HostExport(np.ndarray):
    """The parent of the host views of one mapping: every view handed out keeps it alive, so a
    weak reference to it says whether any view is. NumPy collapses a new view's ``base`` chain
    while the next base has the view's type; a view of a view of this subclass is where the
    collapse of a plain ndarray view stops."""
