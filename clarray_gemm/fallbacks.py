"""Counts of host fallbacks: the NumPy functions and ufuncs that ran on host views because no
device implementation took them, so a user can see where a program leaves the device.

    >>> cg.reset_host_calls()
    >>> run_my_program(x)
    >>> cg.on_host_calls()          # e.g. {'solve': 1}

The host *path* (NumPy on a unified-memory mapping, chosen because it is faster for small work)
is not a fallback and is not counted; ``explain_*`` reports it.
"""
from __future__ import annotations

import threading
from collections import Counter

__all__ = ["record_host_call", "on_host_calls", "reset_host_calls"]

_counts: Counter[str] = Counter()
_lock = threading.Lock()


def record_host_call(name: str) -> None:
    """Count one host fallback of ``name`` (a NumPy function or ``ufunc.method`` name)."""
    with _lock:
        _counts[name] += 1


def on_host_calls() -> dict[str, int]:
    """Host fallbacks since the last reset, per function name (an empty dict: none)."""
    with _lock:
        return dict(_counts)


def reset_host_calls() -> None:
    """Forget the counted host fallbacks."""
    with _lock:
        _counts.clear()
