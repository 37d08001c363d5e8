"""The one memo helper: every cache of the package (plans, programs, launchers, uploaded
constants, resolved geometries) is a :class:`Memo`: a value built once per key, a bounded,
thread-safe mapping that a forked child empties (its values hold the parent's OpenCL objects).

A hot path reads a memo with ``memo.find(key)`` (the dict's own ``get``: no Python frame, None on
a miss) and builds on a miss with ``memo.get(key, build)``. :func:`memos` lists them all (their ``repr`` gives each
one's size and bound).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

from .forks import register_fork_reset

__all__ = ["Memo", "memos"]

T = TypeVar("T")
_memos: list["Memo"] = []


class Memo(Generic[T]):
    """A named mapping from keys to values built once: at most ``capacity`` entries (None:
    unbounded), the least recently inserted dropped first. ``exclusive`` builds under the
    memo's lock, for values that must not be built twice (a program compiled by two threads at
    once); otherwise two threads missing at once may both build and the later insert wins."""

    def __init__(self, name: str, capacity: int | None = 4096, exclusive: bool = False):
        self.name = name
        self.capacity = capacity
        self.exclusive = exclusive
        self._values: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.RLock()
        # The hot paths' lookup: the dict's own bound ``get`` (None on a miss), no Python frame
        # and no builder closure per call; a miss then goes through :meth:`get`.
        self.find: Callable[[Hashable], T | None] = self._values.get
        self.builds = 0
        _memos.append(self)
        register_fork_reset(self._values)

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value for ``key``, built by ``build()`` on the first call."""
        value = self._values.get(key)
        if value is not None:
            return value
        if self.exclusive:
            with self._lock:
                value = self._values.get(key)
                if value is None:
                    value = build()
                    self._insert(key, value)
            return value
        value = build()
        with self._lock:
            self._insert(key, value)
        return value

    def _insert(self, key: Hashable, value: T) -> None:
        self._values[key] = value
        self.builds += 1
        if self.capacity is not None:
            while len(self._values) > self.capacity:
                self._values.popitem(last=False)

    def values(self) -> list[T]:
        """A snapshot of the values (for a caller that releases what they hold)."""
        with self._lock:
            return list(self._values.values())

    def items(self) -> list[tuple[Hashable, T]]:
        """A snapshot of the (key, value) pairs, oldest first."""
        with self._lock:
            return list(self._values.items())

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        bound = "unbounded" if self.capacity is None else f"at most {self.capacity}"
        return f"Memo({self.name!r}: {len(self)} entries, {bound})"


def memos() -> list[Memo]:
    """Every memo of this process, in the order they were made."""
    return list(_memos)
