"""The :class:`Storage`: one buffer's states and the transitions between them (the package
docstring states the states and the coherence rule)."""
from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Iterator

import numpy as np
import pyopencl as cl

from ..device import Device
from ..drivers import calls
from .buffers import (MAP_RW, HostExport, Mapping, buffer_holding, new_buffer, take_parked,
                      unmap)
from .transfers import count_transfer

__all__ = ["Storage", "ForeignStorage"]

# Serialises buffer-state transitions (map, unmap, detach) of storages shared between threads.
_transition = threading.RLock()
# Host-resident storages up to ``DeviceInfo.host_born_max_bytes`` (64 KiB, 1 MiB on CPU devices)
# are host-born (see the package docstring). Past it, the copy that a kernel's first use costs
# would outweigh the allocation it saves (a parked buffer's map is free).
_U8 = np.dtype(np.uint8)


def _as_bytes(host: np.ndarray) -> np.ndarray:
    """A storage's host memory as 1-D uint8. A host-born result's memory may be the C-contiguous
    typed array NumPy filled (no byte view made per result: ~0.15 us on every host-path call);
    mappings and other host memory are 1-D uint8 already."""
    if host.ndim == 1:
        return host if host.dtype is _U8 else host.view(_U8)
    return host.reshape(-1).view(_U8)


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
        if host_resident and unified and nbytes <= device.info.host_born_max_bytes:
            self._buffer: cl.MemoryObject | None = None  # host-born: no buffer yet ...
            self._host: np.ndarray | None = np.empty(nbytes or 1, np.uint8)
            self._mapping: Mapping | None = None  # ... until a buffer exists
            return
        parked = take_parked(device, nbytes) if unified else None
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
        self._mapping = Mapping(device, nbytes, buffer, host, exportable)
        if not host_resident:
            self._to_device()

    @classmethod
    def for_output(cls, device: Device, nbytes: int) -> "Storage":
        """A fresh device-resident storage for a kernel to write: the state ``Storage(device,
        nbytes)`` builds, with its branches decided for a discrete device (unified-memory
        devices take that constructor: a parked mapping may serve them)."""
        if device.info.host_unified_memory:
            return cls(device, nbytes)
        self = object.__new__(cls)
        self.device, self.nbytes = device, nbytes
        self._exports = self._read_map = self._host = self._mapping = None
        self._read_is_copy = self._write_mapped = self._unified = False
        self._buffer = new_buffer(device, nbytes)
        return self

    # a freed mapping of this storage's buffer may serve the next storage of its size
    parkable = True

    @classmethod
    def adopting(cls, device: Device, host: np.ndarray, nbytes: int | None = None) -> "Storage":
        """A host-born storage whose memory is ``host`` (1-D uint8, or a C-contiguous array of
        any dtype, at least one byte, that no one else writes; ``nbytes`` of it, all by
        default): a fresh NumPy result taken over without a copy, or fresh memory for one
        (unified memory). The same state as
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
        self._mapping = Mapping(self.device, self.nbytes, self._buffer, mapped,
                                parkable=self.parkable)
        self._host = mapped
        return mapped

    def _map_whole(self, buffer: cl.MemoryObject) -> np.ndarray:
        mapped = calls.map_buffer(self.device.queue, buffer, MAP_RW, 0, max(self.nbytes, 1))
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
                mapping = Mapping(self.device, self.nbytes, buffer, fresh)
            if copy_contents and self.nbytes:
                np.copyto(fresh[: self.nbytes], _as_bytes(old_host)[: self.nbytes])
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
        """The writable host memory of a host-resident storage (its uint8 mapping, or a host-born
        result's own array: build views with ``np.ndarray(..., buffer=...)``), for host-path
        results and operands whose use NumPy does not keep (unified memory only; no views are
        recorded)."""
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
                            raw = _as_bytes(host)
                            if raw.nbytes != self.nbytes:
                                raw = raw[: self.nbytes]
                            export = raw.view(HostExport)
                            export.flags.writeable = False
                            parent = export.view(HostExport)
                        else:
                            parent = self._mapping.exportable().view(HostExport)
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
            parent = host.view(HostExport).view(HostExport)
            self._read_map, self._read_is_copy = weakref.ref(parent), True
            count_transfer(device_to_host=self.nbytes)
            return parent
        mapped = calls.map_buffer(self.device.queue, self._buffer, cl.map_flags.READ, 0,
                                  self.nbytes)
        mapped.flags.writeable = False
        parent = mapped.view(HostExport).view(HostExport)
        # The pool must not hand this buffer out again while the mapping's views live; when the
        # last view dies the unmap goes through the driver-call layer, not the garbage collector.
        parent.mapping = self._buffer
        weakref.finalize(parent, unmap, self.device, mapped).atexit = False  # the queue then
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
            host = _as_bytes(self.host_bytes())
            self._write_mapped = True
            try:
                yield host[offset: offset + nbytes]
            finally:
                self._write_mapped = False
            return
        flags = cl.map_flags.WRITE_INVALIDATE_REGION if discard else MAP_RW
        start, size = offset, nbytes
        if self.device.info.host_writes_whole_buffer:
            start, size = 0, self._buffer.size
            if offset or nbytes != self.nbytes:
                flags = MAP_RW  # the rest of the buffer keeps its contents
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
            target = _as_bytes(self.host_bytes_for_write())
            # a byte copy through memoryviews (~1 us less per call) where NumPy exports the
            # dtype to the buffer protocol (not datetimes, not ml_dtypes' bfloat16)
            if host.flags.c_contiguous and host.dtype.kind in "biufc":
                target.data[:host.nbytes] = host.data.cast("B")
            else:
                np.copyto(np.ndarray(host.shape, host.dtype, buffer=target), host, casting="no")
            count_transfer(host_to_device=host.nbytes)
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
        """Unified memory: give kernels a fresh, unmapped buffer with this storage's bytes
        (small ones created holding them: no queue command to wait for)."""
        if 0 < self.nbytes <= self.device.info.host_born_max_bytes:
            buffer = buffer_holding(self.device, _as_bytes(self._host)[: self.nbytes])
            count_transfer(device_to_device=self.nbytes)
        else:
            buffer = new_buffer(self.device, self.nbytes)
            if self.nbytes:
                calls.copy(self.device.queue, buffer, _as_bytes(self._host)[: self.nbytes],
                           is_blocking=True)
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
            np.copyto(fresh[: self.nbytes], _as_bytes(self._host)[: self.nbytes])
        self._exports = None
        self._mapping = Mapping(self.device, self.nbytes, buffer, fresh)
        self._host = fresh
        self._buffer = buffer


class ForeignStorage(Storage):
    """A storage over a buffer someone else allocated (a pyopencl array's, see
    ``clarray_gemm.asarray``): device-resident, never parked for another storage, and kept
    alive with its ``owner``. Kernels read and write that buffer in place; the sharing ends
    where rule 2 moves the storage (a kernel writes while host views of it are alive: the
    storage goes on in a buffer of its own)."""

    __slots__ = ("owner",)
    parkable = False

    @classmethod
    def wrapping(cls, device: Device, buffer: cl.MemoryObject, owner: object) -> "ForeignStorage":
        self = object.__new__(cls)
        self.device, self.nbytes, self.owner = device, int(buffer.size), owner
        self._exports = self._read_map = self._host = self._mapping = None
        self._read_is_copy = self._write_mapped = False
        self._unified = device.info.host_unified_memory
        self._buffer = buffer
        return self
