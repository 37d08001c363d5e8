"""The OpenCL floor of the latency benches: what one launch, one host-to-device write and one
blocking map cost through raw pyopencl on the device, with nothing of ours in between.

The launch is a one-work-item kernel from ``opencl/bench_noop.cl`` whose argument is set once, so
each call is ``clEnqueueNDRangeKernel`` + ``clFinish``. Buffers are ``READ_WRITE |
ALLOC_HOST_PTR``, as ours are, and are allocated before timing starts.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ..device import Device
from ..sources import source_text

__all__ = ["RawOpenCL"]

_FLAGS = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR


class RawOpenCL:
    """Raw pyopencl calls on ``device``'s queue: the floor under each latency row."""

    def __init__(self, device: Device):
        self.device = device
        program = cl.Program(device.context, source_text("bench_noop.cl")).build()
        self.kernel = program.bench_noop
        self._scratch = cl.Buffer(device.context, _FLAGS, 64)
        self.kernel.set_arg(0, self._scratch)
        self._buffers: dict[int, cl.Buffer] = {}

    @property
    def queue(self) -> cl.CommandQueue:
        """The device's queue as ours use it now (with or without profiling)."""
        return self.device.queue

    def buffer(self, nbytes: int) -> cl.Buffer:
        """A buffer of ``nbytes`` kept for the floors of that size."""
        if nbytes not in self._buffers:
            self._buffers[nbytes] = cl.Buffer(self.device.context, _FLAGS, max(nbytes, 16))
        return self._buffers[nbytes]

    def launch_finish(self) -> None:
        """One launch of the no-op kernel, then wait for the queue to drain."""
        cl.enqueue_nd_range_kernel(self.queue, self.kernel, (1,), None)
        self.queue.finish()

    def write(self, host: np.ndarray) -> None:
        """A blocking copy of ``host`` into a device buffer of its size."""
        cl.enqueue_copy(self.queue, self.buffer(host.nbytes), host, is_blocking=True)

    def map_read(self, nbytes: int) -> np.ndarray:
        """A blocking map for reading of a ``nbytes`` buffer (unmapped when the view dies)."""
        mapped, _ = cl.enqueue_map_buffer(self.queue, self.buffer(nbytes), cl.map_flags.READ, 0,
                                          (nbytes,), np.uint8, is_blocking=True)
        return mapped
