"""OpenCL drivers: registering pip-installed ones, steering their program caches, and the
quarantine that a driver passes before it is used.

:func:`prepare` runs when ``clarray_gemm`` is imported, before any OpenCL call: it registers
Intel's pip CPU runtime (:mod:`.registry`) and points PoCL's and pyopencl's caches into our cache
directory (:mod:`.caches`). It never raises: a failure is a warning and the process goes on with
the drivers the loader finds by itself. :mod:`.vetting` probes each device in a child process
before it is used; :mod:`.build` builds programs with a clear :class:`KernelBuildError`.
"""
from __future__ import annotations

import os
import warnings

from .. import settings
from .build import KernelBuildError
from .registry import Registration

__all__ = ["prepare", "registration", "KernelBuildError"]

_registration: Registration | None = None


def prepare() -> Registration:
    """Register pip drivers and steer the program caches, once per process (never raises)."""
    global _registration
    if _registration is not None:
        return _registration
    _registration = Registration(note="disabled by CLARRAY_GEMM_REGISTER_DRIVERS=0")
    if not settings.register_drivers():
        return _registration
    from . import caches, registry
    cache_dir = settings.cache_dir()
    try:
        _registration = registry.register(cache_dir)
    except Exception as exc:  # a broken install must not stop the import
        _registration = Registration(note=f"registration failed: {exc}")
        warnings.warn(f"clarray_gemm: could not register pip's OpenCL drivers ({exc}); using "
                      "those the OpenCL loader finds by itself", RuntimeWarning, stacklevel=3)
    try:
        caches.steer(cache_dir, os.environ)
    except Exception as exc:
        warnings.warn(f"clarray_gemm: could not set up the program caches in {cache_dir} "
                      f"({exc})", RuntimeWarning, stacklevel=3)
    return _registration


def registration() -> Registration:
    """What :func:`prepare` did in this process."""
    return prepare()
