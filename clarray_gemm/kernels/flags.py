"""Flag words: one int32 per (device, thread) that a kernel sets to tell the host something it
found (a value a fast path cannot carry, an index out of range) without the host clearing it
first. Each call takes a fresh epoch; the kernel stores the epoch it was given, so a word holding
an older epoch means "not this call" and no launch or write ever resets it. One word per thread:
another thread's launches may run between a call's kernel and the read (or gated launch) that
follows it on the same in-order queue.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np
import pyopencl as cl

from ..device import Device, register_fork_reset
from ..drivers import calls

__all__ = ["flag_word", "next_epoch"]

_words: dict[tuple, cl.Buffer] = {}
register_fork_reset(_words)
_epochs = itertools.count(1)


def flag_word(device: Device) -> cl.Buffer:
    """This thread's flag word on ``device`` (zero when made)."""
    key = (device, threading.get_ident())
    buf = _words.get(key)
    if buf is None:
        # COPY_HOST_PTR rather than a fill: Oclgrind's uninitialized-value checker sees it
        with calls.guard():
            buf = _words[key] = cl.Buffer(device.context,
                                          cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                          hostbuf=np.zeros(1, np.int32))
    return buf


def next_epoch() -> np.int32:
    """A positive epoch no earlier call of this process used (until it wraps at 2^31)."""
    return np.int32(next(_epochs) % 0x7FFFFFFF + 1)
