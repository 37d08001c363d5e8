"""Host-mapped device memory: allocation, buffer states, map/unmap, the coherence rule, counters.

Every buffer is ``CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR`` and the host reaches it only by
``clEnqueueMapBuffer`` / unmap, as in Qualcomm's Adreno host code. On unified-memory devices
(CPU drivers, integrated GPUs) mapping copies nothing; on discrete GPUs the driver copies, and the
counters below say how many bytes moved.

Buffer states. A :class:`Storage` is in one of three states, and moving between them is the only
place a map or unmap is enqueued:

* **device-resident** (unmapped): kernels read and write it;
* **host-resident** (unified-memory devices only): mapped for reading and writing, and it stays
  mapped, so a chain of host-path operations (NumPy running on the mapping) pays no map, no unmap
  and no queue round trip. A kernel that needs the buffer unmaps it once (without waiting);
* **shared-read** (discrete devices): mapped for reading while kernels may still read it; small
  buffers (``DeviceInfo.read_copy_max_bytes``) are read into a host copy instead, whose views
  are a snapshot: a later write only drops the copy, it never has to detach;
* **host-born** (unified-memory devices, host-resident storages up to ``HOST_BORN_MAX_BYTES``):
  host memory from NumPy's allocator and no OpenCL buffer yet. It behaves as host-resident; the
  first kernel that needs it gets a fresh buffer with one copy of the bytes (and reading
  ``Storage.buffer`` maps a fresh one). A small host-path result so costs an ``np.empty``
  instead of a buffer and its mapping from the park (~0.3 against ~1.3 us on Zen 5).

The coherence rule (OpenCL forbids a kernel to use a buffer that is mapped for writing, and to
write one that is mapped at all):

1. Host *read* views (``np.asarray(x)``) are read-only NumPy arrays over the mapping; all live
   views of a storage share one mapping, so two ``np.asarray`` calls give views of the same memory.
2. A kernel or host write to a storage whose host views are alive never tears or changes them:
   the storage first *detaches* (copy-on-write) so those views keep the snapshot they were taken
   of, while the array and its device views move to a new buffer. On unified memory a kernel that
   merely reads a host-resident storage with live views detaches it too (the mapping is
   read-write, and OpenCL allows no kernel on such a buffer).
3. ``Storage.map_for_write()`` (a ``with`` block) is the explicit host-write window; while it is
   open, launching a kernel on the storage, or taking a read view of it, raises ``RuntimeError``.
4. Operations that produce results always write fresh buffers, so rule 2 only costs a copy for
   in-place writes (``out=``, ``x[...] = v``, ``+=``) to arrays the user is also viewing on the host.

Buffers come from a per-device pool (pyopencl's ``MemoryPool``), as CuPy's do. On unified-memory
devices a freed host-resident buffer is parked still mapped (bounded by ``_PARKED_BYTES_MAX``), so
the next host-path result of that size costs neither an allocation nor a map. A buffer is never
reused while host views of it are alive. ``free_cached_memory()`` gives the held buffers back.
A request above the device's largest allocation (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``), or one the
driver cannot satisfy after the pool is emptied, raises ``MemoryError``.
"""
from __future__ import annotations

import atexit
import contextlib
import threading
import weakref
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

from .device import Device, register_fork_reset
from .drivers import calls

__all__ = ["Storage", "TransferStats", "transfer_stats", "reset_transfer_stats", "new_buffer",
           "free_cached_memory", "format_bytes"]

_FLAGS = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
_MAP_RW = cl.map_flags.READ | cl.map_flags.WRITE
# Serialises buffer-state transitions (map, unmap, detach) of storages shared between threads.
_transition = threading.RLock()
_PARKED_BYTES_MAX = 256 << 20
# Host-resident storages up to this size are host-born (see above). Past it, the copy that a
# kernel's first use costs would outweigh the allocation it saves (a parked buffer's map is free).
HOST_BORN_MAX_BYTES = 64 << 10


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
    """Set the process-wide byte counters back to zero."""
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


def format_bytes(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it at least 1 (e.g. ``'1.5 GiB'``)."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} B"


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
    _unmap(device, entry[1])


def _take_parked(device: Device, nbytes: int) -> _ParkedEntry | None:
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
        _unmap(dev, mapping)


def _unmap(device: Device, mapping: np.ndarray) -> None:
    """Enqueue the unmap of a whole-buffer mapping (no wait: the in-order queue orders it)."""
    calls.unmap(device.queue, mapping)


def free_cached_memory() -> None:
    """Release the buffers the pools hold for reuse (live arrays are not affected)."""
    _release_parked()
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


class _Mapping:
    """One buffer mapped read-write for the host (a host-resident storage's state). It is held
    by the storage and by the host views handed out of it; when the last holder lets go it is
    parked for reuse, still mapped, unless it was unmapped for a kernel first."""

    __slots__ = ("device", "nbytes", "buffer", "host", "released", "_exportable")

    def __init__(self, device: Device, nbytes: int, buffer: cl.MemoryObject, host: np.ndarray,
                 exportable: np.ndarray | None = None):
        self.device, self.nbytes, self.buffer, self.host = device, nbytes, buffer, host
        self.released = False
        self._exportable = exportable

    def exportable(self) -> np.ndarray:
        """The mapping's bytes as a read-only ``_HostExport``: the base from which each
        generation of host views gets its parent (see ``_HostExport``)."""
        if self._exportable is None:
            view = self.host[: self.nbytes].view(_HostExport)
            view.flags.writeable = False
            self._exportable = view
        return self._exportable

    def release(self) -> None:
        """Unmap now (a kernel is about to use the buffer)."""
        if not self.released:
            self.released = True
            _unmap(self.device, self.host)

    def __del__(self) -> None:
        if not self.released:
            try:
                _park(self.device, self.nbytes, (self.buffer, self.host, self._exportable))
            except Exception:  # interpreter shutdown: nothing left to give back
                pass


class _HostExport(np.ndarray):
    """The parent of the host views of one mapping: every view handed out keeps it alive, so a
    weak reference to it says whether any view is. NumPy collapses a new view's ``base`` chain
    while the next base has the view's type; a view of a view of this subclass is where the
    collapse of a plain ndarray view stops."""


class Storage:
    """One ``ALLOC_HOST_PTR`` buffer (or, host-born, the host memory that stands for it until a
    kernel needs one), shared by an array and all of its device views."""

    __slots__ = ("device", "nbytes", "_buffer", "_unified", "_host", "_mapping", "_exports",
                 "_read_map", "_read_is_copy", "_write_mapped", "__weakref__")

    def __init__(self, device: Device, nbytes: int, host_resident: bool = False):
        nbytes = int(nbytes)
        self.device = device
        self.nbytes = nbytes
        self._exports: weakref.ref | None = None  # parent of the host views handed out
        self._read_map: weakref.ref | None = None  # discrete devices: the shared READ mapping
        self._read_is_copy = False  # ... or the shared host copy (small buffers)
        self._write_mapped = False
        unified = self._unified = device.info.host_unified_memory
        if host_resident and unified and nbytes <= HOST_BORN_MAX_BYTES:
            self._buffer: cl.MemoryObject | None = None  # host-born: no buffer yet ...
            self._host: np.ndarray | None = np.empty(nbytes or 1, np.uint8)
            self._mapping: _Mapping | None = None  # ... until a buffer exists
            return
        parked = _take_parked(device, nbytes) if unified else None
        if parked is None:
            self._host = None   # the persistent mapping (host-resident) ...
            self._mapping = None  # ... and its owner
            # OpenCL has no zero-size buffers; a 0-byte array still owns a tiny one.
            self._buffer = new_buffer(device, nbytes)
            if host_resident and unified:
                self._to_host()
            return
        buffer, host, exportable = parked
        self._buffer, self._host = buffer, host
        self._mapping = _Mapping(device, nbytes, buffer, host, exportable)
        if not host_resident:
            self._to_device()

    @classmethod
    def adopting(cls, device: Device, host: np.ndarray, nbytes: int | None = None) -> "Storage":
        """A host-born storage whose memory is ``host`` (1-D uint8, at least one byte, that no
        one else writes; ``nbytes`` of it, all by default): a fresh NumPy result taken over
        without a copy, or fresh memory for one (unified memory). The same state as
        ``Storage(device, nbytes, True)`` builds, with one Python frame less."""
        self = object.__new__(cls)
        self.device, self.nbytes = device, host.nbytes if nbytes is None else nbytes
        self._exports = self._read_map = self._mapping = self._buffer = None
        self._read_is_copy = self._write_mapped = False
        self._unified = True
        self._host = host
        return self

    @property
    def buffer(self) -> cl.MemoryObject:
        """The OpenCL buffer (a host-born storage gets one here, mapped: it stays host-resident).
        Kernels take it through :meth:`kernel_buffer`, which also settles the mapping."""
        if self._buffer is None:
            with _transition:
                if self._buffer is None:
                    self._leave_host_memory(map_after=True)
        return self._buffer

    @property
    def host_born(self) -> bool:
        """True while the bytes live in host memory from NumPy's allocator, with no buffer."""
        return self._buffer is None

    # -- states ----------------------------------------------------------------------------------
    @property
    def host_resident(self) -> bool:
        """True while the buffer is mapped read-write for host-path work (unified memory)."""
        return self._host is not None

    def _to_host(self) -> np.ndarray:
        """Map the whole buffer read-write and keep it mapped (unified memory only)."""
        mapped = self._map_whole(self._buffer)
        self._mapping = _Mapping(self.device, self.nbytes, self._buffer, mapped)
        self._host = mapped
        return mapped

    def _map_whole(self, buffer: cl.MemoryObject) -> np.ndarray:
        mapped = calls.map_buffer(self.device.queue, buffer, _MAP_RW, 0, max(self.nbytes, 1))
        count_transfer(maps=1)
        return mapped

    # Transitions run under ``_transition``, but the fast paths read ``_host`` (kernel_buffer,
    # host_bytes) and ``_buffer`` (buffer) without it. So a transition publishes those fields
    # last, once what they point at is ready: a thread that sees ``_host`` cleared must find
    # the buffer written and its unmap enqueued, one that sees ``_buffer`` set must find a
    # buffer holding the bytes.
    def _to_device(self) -> None:
        """Unmap a host-resident buffer so kernels may use it (no wait)."""
        self._mapping.release()
        self._mapping = self._exports = None
        self._host = None

    def has_host_views(self) -> bool:
        """True while host views handed out by :meth:`read_view` are alive and share this
        storage's memory (views of a host copy hold their own snapshot)."""
        ref = self._exports if self._unified else self._read_map
        return ref is not None and not self._read_is_copy and ref() is not None

    def _forget_read_copy(self) -> None:
        """Before a write: a host copy's views keep their snapshot, and the next read copies
        again."""
        if self._read_is_copy:
            self._read_map, self._read_is_copy = None, False

    def _detach(self, copy_contents: bool = True) -> None:
        """Move this storage to a fresh buffer, leaving the old one (and its mapping) to the
        host views that still hold it (rule 2)."""
        old_buffer, old_host = self._buffer, self._host
        if self._unified and old_host is not None:
            # The old memory lives on with the views that hold it (a mapping is parked after
            # them); a host-born storage stays host-born.
            if old_buffer is None:
                fresh, mapping, buffer = np.empty(self.nbytes or 1, np.uint8), None, None
            else:
                buffer = new_buffer(self.device, self.nbytes)
                fresh = self._map_whole(buffer)
                mapping = _Mapping(self.device, self.nbytes, buffer, fresh)
            if copy_contents and self.nbytes:
                np.copyto(fresh[: self.nbytes], old_host[: self.nbytes])
            self._exports, self._mapping = None, mapping
            if buffer is not None:
                self._buffer = buffer
            self._host = fresh
            return
        fresh_buffer = new_buffer(self.device, self.nbytes)
        if copy_contents and self.nbytes:
            calls.copy(self.device.queue, fresh_buffer, old_buffer, byte_count=self.nbytes)
            count_transfer(device_to_device=self.nbytes)
        self._buffer = fresh_buffer
        self._read_map, self._read_is_copy = None, False

    # -- host side -------------------------------------------------------------------------------
    def host_bytes(self) -> np.ndarray:
        """The writable uint8 mapping of a host-resident storage, for host-path results and
        operands whose use NumPy does not keep (unified memory only; no views are recorded)."""
        if self._write_mapped:
            raise RuntimeError("buffer is mapped for writing; leave the map_for_write block first")
        host = self._host
        if host is None:
            with _transition:
                host = self._host if self._host is not None else self._to_host()
        return host

    def host_bytes_for_write(self) -> np.ndarray:
        """Like :meth:`host_bytes`, after detaching from live host views (copy-on-write)."""
        if self._exports is not None and self._exports() is not None:
            with _transition:
                if self._exports is not None and self._exports() is not None:
                    self._detach()
        return self.host_bytes()

    def read_view(self) -> np.ndarray:
        """A read-only uint8 array of the whole buffer that the caller may keep and build views
        on (``np.ndarray(..., buffer=...)``): the mapping is shared by all of them."""
        if self._write_mapped:
            raise RuntimeError("buffer is mapped for writing; leave the map_for_write block first")
        if self._unified:
            parent = self._exports() if self._exports is not None else None
            if parent is None:
                with _transition:
                    parent = self._exports() if self._exports is not None else None
                    if parent is None:
                        host = self.host_bytes()
                        if self._buffer is None:
                            # host-born: the views' base chain keeps the memory alive and
                            # there is no mapping to park; two views, as for a mapping, so
                            # that the views' base collapse stops at the parent
                            export = host[: self.nbytes].view(_HostExport)
                            export.flags.writeable = False
                            parent = export.view(_HostExport)
                        else:
                            parent = self._mapping.exportable().view(_HostExport)
                            parent.mapping = self._mapping  # the views keep the mapping alive
                        self._exports = weakref.ref(parent)
            return parent
        mapped = self._read_map() if self._read_map is not None else None
        if mapped is None:
            with _transition:
                mapped = self._read_map() if self._read_map is not None else None
                if mapped is None:
                    mapped = self._map_read_shared()
        return mapped

    def _map_read_shared(self) -> np.ndarray:
        """Discrete devices: map for reading, shared by all host views until they die. Up to
        ``DeviceInfo.read_copy_max_bytes`` a blocking read into host memory is cheaper than a
        map and its unmap (NVIDIA H100, 16 KiB: 23 us against 33 us), and its views are a
        snapshot that later writes need not detach from."""
        if self.nbytes <= self.device.info.read_copy_max_bytes:
            host = np.empty(self.nbytes, np.uint8)
            calls.copy(self.device.queue, host, self._buffer, is_blocking=True)
            host.flags.writeable = False
            parent = host.view(_HostExport).view(_HostExport)
            self._read_map, self._read_is_copy = weakref.ref(parent), True
            count_transfer(device_to_host=self.nbytes)
            return parent
        mapped = calls.map_buffer(self.device.queue, self._buffer, cl.map_flags.READ, 0,
                                  self.nbytes)
        mapped.flags.writeable = False
        parent = mapped.view(_HostExport).view(_HostExport)
        # The pool must not hand this buffer out again while the mapping's views live; when the
        # last view dies the unmap goes through the driver-call layer, not the garbage collector.
        parent.mapping = self._buffer
        weakref.finalize(parent, _unmap, self.device, mapped).atexit = False  # the queue then
        self._read_map = weakref.ref(parent)
        count_transfer(maps=1, device_to_host=self.nbytes)
        return parent

    @contextlib.contextmanager
    def map_for_write(self, offset: int = 0, nbytes: int | None = None,
                      discard: bool = False) -> Iterator[np.ndarray]:
        """Map ``[offset, offset+nbytes)`` for host writes; kernels are refused until the block
        ends. ``discard=True`` promises that every byte will be overwritten (the old contents
        are not fetched: ``WRITE_INVALIDATE_REGION`` on discrete devices)."""
        nbytes = self.nbytes - offset if nbytes is None else nbytes
        if self._write_mapped:
            raise RuntimeError("buffer is already mapped for writing")
        self._forget_read_copy()
        if self.has_host_views():
            self._detach(copy_contents=not discard)
        if self._unified:
            host = self.host_bytes()
            self._write_mapped = True
            try:
                yield host[offset: offset + nbytes]
            finally:
                self._write_mapped = False
            return
        flags = cl.map_flags.WRITE_INVALIDATE_REGION if discard else _MAP_RW
        start, size = offset, nbytes
        if self.device.info.host_writes_whole_buffer:
            start, size = 0, self._buffer.size
            if offset or nbytes != self.nbytes:
                flags = _MAP_RW  # the rest of the buffer keeps its contents
        mapped = calls.map_buffer(self.device.queue, self._buffer, flags, start, size)
        self._write_mapped = True
        count_transfer(maps=1, device_to_host=0 if discard else nbytes)
        try:
            yield mapped[offset - start: offset - start + nbytes]
        finally:
            calls.unmap(self.device.queue, mapped)
            self._write_mapped = False
            count_transfer(host_to_device=nbytes)

    def write_from(self, host: np.ndarray) -> None:
        """Fill the buffer with ``host``'s elements in C order: one copy, into the mapping."""
        if host.size == 0:
            return
        if self._unified and not self._write_mapped:  # straight into the persistent mapping
            target = self.host_bytes_for_write()
            # a byte copy through memoryviews (~1 us less per call) where NumPy exports the
            # dtype to the buffer protocol (not datetimes, not ml_dtypes' bfloat16)
            if host.flags.c_contiguous and host.dtype.kind in "biufc":
                target.data[:host.nbytes] = host.data.cast("B")
            else:
                np.copyto(np.ndarray(host.shape, host.dtype, buffer=target), host, casting="no")
            with _stats_lock:
                _stats.host_to_device += host.nbytes
            return
        if self._write_mapped:
            raise RuntimeError("buffer is already mapped for writing")
        self._forget_read_copy()
        if self.has_host_views():
            self._detach(copy_contents=False)
        queue = self.device.queue
        size = self._buffer.size if self.device.info.host_writes_whole_buffer else host.nbytes
        mapped = calls.map_buffer(queue, self._buffer, cl.map_flags.WRITE_INVALIDATE_REGION, 0,
                                  size)
        np.copyto(np.ndarray(host.shape, host.dtype, buffer=mapped), host, casting="no")
        calls.unmap(queue, mapped)
        count_transfer(maps=1, host_to_device=host.nbytes)

    # -- device side -----------------------------------------------------------------------------
    def kernel_buffer(self, write: bool = False) -> cl.MemoryObject:
        """The buffer, ready for a kernel that reads it (and writes it when ``write``): unmapped
        from the host, detached from live host views where the rule requires it."""
        if self._write_mapped:
            raise RuntimeError("a kernel cannot use a buffer while it is mapped for writing")
        if self._host is not None:
            with _transition:
                if self._host is not None:
                    if self._buffer is None:
                        self._leave_host_memory(map_after=False)
                    elif self._exports is not None and self._exports() is not None:
                        self._detach_for_kernel()
                    else:
                        self._to_device()
        elif write and self._read_map is not None:
            with _transition:
                self._forget_read_copy()
                if self._read_map is not None and self._read_map() is not None:
                    self._detach()
                else:
                    self._read_map = None
        return self._buffer

    def _detach_for_kernel(self) -> None:
        """Unified memory: give kernels a fresh, unmapped buffer with this storage's bytes."""
        buffer = new_buffer(self.device, self.nbytes)
        if self.nbytes:
            calls.copy(self.device.queue, buffer, self._host[: self.nbytes], is_blocking=True)
            count_transfer(device_to_device=self.nbytes)
        self._buffer = buffer
        self._exports = self._mapping = None  # the views keep the old mapping
        self._host = None

    def _leave_host_memory(self, map_after: bool) -> None:
        """A host-born storage gets its buffer, with its bytes: unmapped for a kernel (one
        blocking write), or mapped (host-resident). Live host views keep the host memory, a
        snapshot that no later write reaches (rule 2)."""
        if not map_after:
            self._detach_for_kernel()
            return
        buffer = new_buffer(self.device, self.nbytes)
        fresh = self._map_whole(buffer)
        if self.nbytes:
            np.copyto(fresh[: self.nbytes], self._host[: self.nbytes])
        self._exports = None
        self._mapping = _Mapping(self.device, self.nbytes, buffer, fresh)
        self._host = fresh
        self._buffer = buffer
