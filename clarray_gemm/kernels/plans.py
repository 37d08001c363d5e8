"""The plan cache: a repeated call is one dict hit on a plan built the first time.

A *plan* is everything about a call that depends only on its key (device, operation, dtypes,
shapes, strides, forced kernel and parameters): the chosen kernel or the host path, the reason
``explain_*`` prints, the launch geometry, the kernel objects with their fixed arguments. Building
one is where ranking, tuning lookups and cost models run; running one is a few attribute reads and
one enqueue. The cache is shared by all threads (a dict read is atomic; inserts take a lock) and
bounded: the least recently inserted plans are dropped first.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

from ..device import register_fork_reset

__all__ = ["PlanCache", "clear_all"]

T = TypeVar("T")
_caches: list["PlanCache"] = []


def clear_all() -> None:
    """Drop every cached plan (after a change that plans depend on, e.g. the host-path switch
    or new tuning results)."""
    for cache in _caches:
        cache.clear()


class PlanCache(Generic[T]):
    """A bounded, thread-safe mapping from call keys to plans."""

    def __init__(self, name: str, capacity: int = 4096):
        self.name = name
        self.capacity = capacity
        self._plans: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()
        # The hot paths' lookup: the dict's own bound ``get`` (None on a miss), no Python frame
        # and no builder closure per call; a miss then goes through :meth:`get`.
        self.find: Callable[[Hashable], T | None] = self._plans.get
        self.builds = 0
        _caches.append(self)
        register_fork_reset(self._plans)  # plans hold the parent's kernels and queues

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The plan for ``key``, built by ``build()`` on the first call."""
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        plan = build()
        with self._lock:
            self._plans[key] = plan
            self.builds += 1
            while len(self._plans) > self.capacity:
                self._plans.popitem(last=False)
        return plan

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()

    def __len__(self) -> int:
        return len(self._plans)
