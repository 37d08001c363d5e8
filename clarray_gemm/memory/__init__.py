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
* **host-born** (unified-memory devices, host-resident storages up to
  ``DeviceInfo.host_born_max_bytes``: 1 MiB on CPU devices, 64 KiB elsewhere):
  host memory from NumPy's allocator (a result in C order keeps the typed array NumPy filled;
  ``storage._as_bytes`` gives its bytes) and no OpenCL buffer yet. It behaves as host-resident; the
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
reused while host views of it are alive. ``free_cached_memory()`` gives the held buffers back,
and the kernels' scratch buffers (``register_scratch``).
A request above the device's largest allocation (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``), or one the
driver cannot satisfy after the pool is emptied, raises ``MemoryError``.

Modules: ``transfers`` (the counters), ``buffers`` (allocation, the park of mapped buffers, the
mapping object), ``storage`` (the states and transitions); imports point that way.
"""
from __future__ import annotations

from .buffers import free_cached_memory, new_buffer, register_scratch
from .storage import ForeignStorage, Storage
from .transfers import (TransferStats, count_transfer, format_bytes, reset_transfer_stats,
                        transfer_stats)

__all__ = ["Storage", "ForeignStorage", "TransferStats", "transfer_stats", "reset_transfer_stats",
           "new_buffer", "free_cached_memory", "register_scratch", "format_bytes", "count_transfer"]
