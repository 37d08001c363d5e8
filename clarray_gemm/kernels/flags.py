"""Flag words: one int32 per (device, thread) that a kernel sets to tell the host something it
found (a value a fast path cannot carry, an index out of range) without the host clearing it
first. Each call takes a fresh epoch; the kernel stores the epoch it was given, so a word holding
an older epoch means "not this call" and no launch or write ever resets it. One word per thread:
another thread's launches may run between a call's kernel and the read (or gated launch) that
follows it on the same in-order queue.

Group counters: int32 words per (device, thread), zero between launches, that the work-groups
of one launch count themselves on so that the last one can finish the launch's work (a split
reduction's partials summed without a second launch); that last group sets its word back to 0.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np
import pyopencl as cl

from ..device import Device, register_fork_reset
from ..drivers import calls
from .constants import constant

__all__ = ["flag_word", "next_epoch", "group_counters", "finish_in_last_group",
           "LAST_GROUP_MAX_READS", "LAST_GROUP_MAX_BYTES"]

_words: dict[tuple, cl.Buffer] = {}
register_fork_reset(_words)
_counters: dict[tuple, cl.Buffer] = {}
register_fork_reset(_counters)
_epochs = itertools.count(1)


def flag_word(device: Device) -> cl.Buffer:
    """This thread's flag word on ``device`` (zero when made)."""
    key = (device, threading.get_ident())
    buf = _words.get(key)
    if buf is None:
        buf = _words[key] = _zeros(device, 1)
    return buf


def _zeros(device: Device, count: int) -> cl.Buffer:
    # COPY_HOST_PTR rather than a fill: Oclgrind's uninitialized-value checker sees it
    with calls.guard():
        return cl.Buffer(device.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=np.zeros(count, np.int32))


LAST_GROUP_MAX_READS = constant("last_group.max_reads")
"""The most partial results one work-item of a last work-group may read for the group to finish
a split product by default (:func:`finish_in_last_group`'s ``reads``)."""

LAST_GROUP_MAX_BYTES = constant("last_group.max_bytes")
"""The largest operand (bytes) a split reduction finishes in its last work-group by default."""


def finish_in_last_group(info, forced: int = -1, reads: float = 0, nbytes: int = 0) -> bool:
    """Whether a split kernel finishes in its last work-group (``opencl/last_group.h``):
    ``forced`` 1 or 0, or with -1 on GPUs where the last group's work is short: at most
    LAST_GROUP_MAX_READS partial results read per work-item (``reads``) and an operand of at most
    LAST_GROUP_MAX_BYTES (``nbytes``, reductions). The simulator keeps the second launch by
    default: its race checker cannot follow the counters' ordering."""
    if forced in (0, 1):
        return bool(forced)
    return bool(info.is_gpu and not info.is_simulator and reads <= LAST_GROUP_MAX_READS
                and nbytes <= LAST_GROUP_MAX_BYTES)


def group_counters(device: Device, count: int) -> cl.Buffer:
    """This thread's group counters on ``device``: at least ``count`` int32 words, all zero
    (kernels that count on them leave them zero)."""
    key = (device, threading.get_ident())
    buf = _counters.get(key)
    if buf is None or buf.size < 4 * count:
        buf = _counters[key] = _zeros(device, max(count, 1024))
    return buf


def next_epoch() -> np.int32:
    """A positive epoch no earlier call of this process used (until it wraps at 2^31)."""
    return np.int32(next(_epochs) % 0x7FFFFFFF + 1)
