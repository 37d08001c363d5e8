"""Fork safety: processes forked after OpenCL was loaded cannot use it.

OpenCL drivers keep threads and device state that ``fork()`` does not copy (PoCL's child hangs on
its first command, even with a new context). In such a child every device call raises
``RuntimeError`` at once, saying so (:func:`check_not_forked`); a child forked before any device
was touched, and any ``spawn``/``forkserver`` child, works normally. Modules that cache
per-process OpenCL objects (memory pools, program and plan caches, the device list itself) hand
them to :func:`register_fork_reset` so that a child starts without them; the parent's objects
are kept alive, never released, in the child (:func:`keep_in_child`), because releasing them
would call into a driver that has no threads behind it.
"""
from __future__ import annotations

import os
from typing import Any, Callable

__all__ = ["register_fork_reset", "check_not_forked", "mark_opencl_loaded", "keep_in_child",
           "FORK_MESSAGE"]

FORK_MESSAGE = (
    "clarray_gemm: this process was forked after its parent loaded OpenCL, and OpenCL drivers "
    "do not survive fork() (their threads and device state are not copied: the first command "
    "would hang). Start worker processes with the 'spawn' or 'forkserver' method, e.g. "
    "multiprocessing.get_context('spawn'), or fork before the parent uses a device.")

_opencl_loaded = False
_forked_after_use = False
_resets: list[Callable[[], None]] = []
_inherited: list[Any] = []


def mark_opencl_loaded() -> None:
    """Record that this process holds OpenCL objects (the device list was built): a child forked
    from now on refuses device calls."""
    global _opencl_loaded
    _opencl_loaded = True


def register_fork_reset(target: "Callable[[], None] | dict") -> None:
    """Forget per-process OpenCL state in a forked child: ``target`` is a callable run right
    after ``fork()`` in the child, or a dict (a cache of programs, kernels, buffers) that is
    emptied there; its values are kept alive, never released, in the child."""
    if isinstance(target, dict):
        def forget(cache: dict = target) -> None:
            _inherited.append(dict(cache))
            cache.clear()
        _resets.append(forget)
    else:
        _resets.append(target)


def keep_in_child(obj: Any) -> None:
    """Keep the parent's OpenCL object ``obj`` alive in a forked child (a reset's leftovers)."""
    _inherited.append(obj)


def check_not_forked() -> None:
    """RuntimeError (:data:`FORK_MESSAGE`) in a child forked after OpenCL was loaded."""
    if _forked_after_use:
        raise RuntimeError(FORK_MESSAGE)


def _after_fork_in_child() -> None:
    global _forked_after_use
    if not _opencl_loaded:
        return  # OpenCL was never loaded: the child starts clean
    _forked_after_use = True
    for reset in _resets:
        reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
