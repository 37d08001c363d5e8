"""The plan cache: a repeated call is one dict hit on a plan built the first time.

A *plan* is everything about a call that depends only on its key (device, operation, dtypes,
shapes, strides, forced kernel and parameters): the chosen kernel or the host path, the reason
``explain_*`` prints, the launch geometry, the kernel objects with their fixed arguments. Building
one is where ranking, tuning lookups and cost models run; running one is a few attribute reads and
one enqueue. The cache is shared by all threads (a dict read is atomic; inserts take a lock) and
bounded: the least recently inserted plans are dropped first.
"""
from __future__ import annotations

from typing import Generic, TypeVar

from ..memo import Memo

__all__ = ["PlanCache", "clear_all"]

T = TypeVar("T")
_caches: list["PlanCache"] = []


def clear_all() -> None:
    """Drop every cached plan (after a change that plans depend on, e.g. the host-path switch
    or new tuning results)."""
    for cache in _caches:
        cache.clear()


class PlanCache(Memo[T], Generic[T]):
    """The memo of one operation family's plans (bounded, thread-safe, emptied in a forked
    child: plans hold the parent's kernels and queues), cleared with the others by
    :func:`clear_all`."""

    def __init__(self, name: str, capacity: int = 4096):
        super().__init__(name, capacity)
        _caches.append(self)
